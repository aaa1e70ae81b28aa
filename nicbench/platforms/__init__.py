"""OS platforms: ``PLATFORMS`` maps the inventory's ``os:`` to the implementation."""

from nicbench.platforms.base import Platform
from nicbench.platforms.linux import LinuxPlatform
from nicbench.platforms.windows import WindowsPlatform

# Annotated: inferred, two classes join to the abstract base, which mypy will not let
# the callers (hosts.py, execution/plan.py) instantiate.
PLATFORMS: dict[str, type[Platform]] = {"linux": LinuxPlatform, "windows": WindowsPlatform}
