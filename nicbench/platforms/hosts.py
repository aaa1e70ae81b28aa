"""Connections and platforms for the inventory's hosts, one connection per host, reused."""

from __future__ import annotations

from nicbench.config.inventory import Host, Inventory
from nicbench.errors import UsageError
from nicbench.platforms import PLATFORMS
from nicbench.platforms.base import Platform
from nicbench.remote.connection import Connection
from nicbench.remote.ssh import SshConnection, SshTarget, preflight


def ssh_target(inventory: Inventory, host: Host) -> SshTarget:
    """Where and how to reach an inventory host over SSH, paths resolved against the file."""
    return SshTarget(
        name=host.name, address=host.address, port=host.ssh.port, user=host.ssh.user,
        key_file=inventory.path(host.ssh.key_file) if host.ssh.key_file else None,
        known_hosts=inventory.path(host.ssh.known_hosts),
        connect_timeout_s=host.ssh.connect_timeout_s,
        shell="powershell" if host.os == "windows" else "posix")


class HostPool:
    """One connection and one platform per host, made on first use, closed together.

    Over SSH (no ``connect`` given), every host's SSH settings are checked locally when the
    pool is made (known_hosts and key files, the agent), so bad local input ends the
    command with one ConfigError line (exit 2) before any host is contacted, instead of
    surfacing as one pair's problem half-way."""

    def __init__(self, inventory: Inventory, *, trust_new_keys: bool = False,
                 connect=None):
        self.inventory = inventory
        self.trust_new_keys = trust_new_keys
        self._connect = connect or self._ssh
        self._conns: dict[str, Connection] = {}
        self._platforms: dict[str, Platform] = {}
        self._targets: dict[str, SshTarget] = {}
        if connect is None:
            for host in inventory.hosts:
                target = ssh_target(inventory, host)
                preflight(target)
                self._targets[host.name] = target

    def _ssh(self, host: Host) -> Connection:
        target = self._targets.get(host.name) or ssh_target(self.inventory, host)
        return SshConnection(target, trust_new_keys=self.trust_new_keys)

    def connection(self, name: str) -> Connection:
        if name not in self._conns:
            self._conns[name] = self._connect(self.inventory.host(name))
        return self._conns[name]

    def platform(self, name: str) -> Platform:
        if name not in self._platforms:
            host = self.inventory.host(name)
            cls = PLATFORMS.get(host.os)
            if cls is None:
                raise UsageError(f"{name}: os '{host.os}' hosts are not supported yet "
                                 f"(supported: {', '.join(PLATFORMS)})")
            self._platforms[name] = cls(self.connection(name), tools=host.tools)
        return self._platforms[name]

    def close(self) -> None:
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()
        self._platforms.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
