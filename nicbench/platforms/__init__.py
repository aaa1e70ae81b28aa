"""OS platforms: ``PLATFORMS`` maps the inventory's ``os:`` to the implementation."""

from nicbench.platforms.linux import LinuxPlatform

PLATFORMS = {"linux": LinuxPlatform}
