"""Connections and platforms for the inventory's hosts, one connection per host, reused."""

from __future__ import annotations

import threading
from dataclasses import replace

from nicbench.config.inventory import Host, Inventory
from nicbench.errors import ConfigError, UsageError
from nicbench.platforms import PLATFORMS
from nicbench.platforms.base import Platform, PlatformOptions
from nicbench.remote.connection import Connection
from nicbench.remote.ssh import SshConnection, SshTarget, preflight
from nicbench.remote.ssh_config import HostSettings, resolve


def ssh_target(inventory: Inventory, host: Host) -> SshTarget:
    """Where and how to reach an inventory host over SSH: the inventory's values, then its
    ssh_config's (if it names one), paths resolved against the inventory's directory.
    Raises ConfigError (exit 2) for a problem in either file."""
    ssh = host.ssh

    def path(value: str | None) -> str | None:
        return inventory.path(value) if value else None

    settings = HostSettings(
        name=host.name, address=host.address, alias=ssh.alias, config=path(ssh.config),
        port=ssh.explicit("port"), user=ssh.explicit("user"), key_file=path(ssh.key_file),
        known_hosts=path(ssh.known_hosts), proxy_jump=ssh.proxy_jump,
        allow_agent=ssh.allow_agent, identities_only=ssh.identities_only,
        connect_timeout_s=ssh.explicit("connect_timeout_s"),
        shell="powershell" if host.os == "windows" else "posix")
    if ssh.config is None:
        # Without an ssh_config nothing gives way: the model's defaults are the values.
        settings = replace(settings, port=ssh.port, user=ssh.user,
                           connect_timeout_s=ssh.connect_timeout_s)
    try:
        return resolve(settings)
    except ConfigError as exc:
        if exc.file:            # a problem in the ssh_config: that file is named
            raise
        index = inventory.hosts.index(host)
        raise ConfigError(exc.message, file=inventory.file or None,
                          key=f"hosts[{index}].{exc.key or 'ssh'}") from exc


class HostPool:
    """One connection and one platform per host, made on first use, closed together.

    Over SSH (no ``connect`` given), every host's SSH settings are resolved and checked
    locally when the pool is made (ssh_config, known_hosts and key files, the agent), so
    bad local input ends the command with one ConfigError line (exit 2) before any host
    is contacted, instead of surfacing as one pair's problem half-way.

    Pairs measured at the same time ask for their hosts from their own threads: the dicts
    are guarded by a lock, and a connection is made outside it (a host slow to answer
    does not hold up the others' hosts); one host is only ever used by one thread at a
    time (the scheduler never runs two pairs that share a host).

    Every platform is made with ``options``: a run's profile's (``PlatformOptions.of``),
    so a Windows host waits for its reboots as long as the profile says, in the run, on
    resume and in ``nicbench restore``; the defaults where no profile is involved."""

    def __init__(self, inventory: Inventory, *, trust_new_keys: bool = False,
                 connect=None, options: PlatformOptions | None = None):
        self.inventory = inventory
        self.trust_new_keys = trust_new_keys
        self.options = options or PlatformOptions()
        self._connect = connect or self._ssh
        self._conns: dict[str, Connection] = {}
        self._platforms: dict[str, Platform] = {}
        self._targets: dict[str, SshTarget] = {}
        self._lock = threading.Lock()
        if connect is None:
            for host in inventory.hosts:
                target = ssh_target(inventory, host)
                preflight(target)
                self._targets[host.name] = target

    def _ssh(self, host: Host) -> Connection:
        target = self._targets.get(host.name) or ssh_target(self.inventory, host)
        return SshConnection(target, trust_new_keys=self.trust_new_keys)

    def connection(self, name: str) -> Connection:
        with self._lock:
            conn = self._conns.get(name)
        if conn is None:
            made = self._connect(self.inventory.host(name))
            with self._lock:
                conn = self._conns.setdefault(name, made)
            if conn is not made:
                made.close()
        return conn

    def platform(self, name: str) -> Platform:
        with self._lock:
            plat = self._platforms.get(name)
        if plat is None:
            host = self.inventory.host(name)
            cls = PLATFORMS.get(host.os)
            if cls is None:
                raise UsageError(f"{name}: os '{host.os}' hosts are not supported "
                                 f"(supported: {', '.join(PLATFORMS)})")
            made = cls(self.connection(name), tools=host.tools, options=self.options)
            with self._lock:
                plat = self._platforms.setdefault(name, made)
        return plat

    def close(self) -> None:
        with self._lock:
            conns = list(self._conns.values())
            self._conns.clear()
            self._platforms.clear()
        for conn in conns:
            conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
