"""The inventory: hosts, adapters and the pairs of hosts that test an adapter."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field

from nicbench.config.fields import (FilePath, Float, HostAddress, Int, IpAddress, Name, Rate,
                                    Strict, ToolName, UserName, is_linux_ifname,
                                    is_windows_ifname)
from nicbench.config.jump import parse_proxy_jump
from nicbench.config.source import Where
from nicbench.errors import ConfigError, UsageError


def _proxy_jump(value: Any) -> Any:
    parse_proxy_jump(value)       # ValueError says what is wrong
    return value


ProxyJump = Annotated[str, AfterValidator(_proxy_jump)]


class SshSettings(Strict):
    """How to reach a host. With ``config`` (an OpenSSH client config such as
    ~/.ssh/config), what the host's entry there says fills in what is not written here;
    what is written here wins (see remote/ssh_config.py)."""

    port: Int = Field(22, ge=1, le=65535)
    user: UserName = "root"
    key_file: FilePath | None = None
    # Required, unless the config gives UserKnownHostsFile: host keys are always verified.
    known_hosts: FilePath | None = None
    connect_timeout_s: Float = Field(10.0, ge=0.5, le=300)
    # How long a run waits for a host whose SSH connection dropped to come back (sshd
    # restarted, a network blip) before it records the host as lost and goes on.
    reconnect_s: Float = Field(60.0, ge=0, le=3600)
    config: FilePath | None = None        # an ssh_config file
    alias: Name | None = None             # its Host entry for this host (default: address)
    proxy_jump: ProxyJump | None = None   # [user@]host[:port],... or none
    allow_agent: bool | None = None       # default: yes with a config (as ssh), else no
    identities_only: bool | None = None

    def explicit(self, key: str) -> Any:
        """The value if the file wrote it, else None (defaults give way to ssh_config)."""
        return getattr(self, key) if key in self.model_fields_set else None


class Host(Strict):
    name: Name
    address: HostAddress | None = None    # required unless ssh.alias names it
    os: Literal["linux", "windows"] = "linux"
    ssh: SshSettings
    tools: dict[ToolName, FilePath] = Field(default_factory=dict,
                                           description="tool name -> executable path on the host")


class Driver(Strict):
    name: str
    version: str | None = None
    notes: str | None = None


class Adapter(Strict):
    id: Name
    vendor: str
    model: str
    chipset: str | None = None
    bus: str | None = None
    driver: Driver
    notes: str | None = None
    emulated: bool = False
    # The line rate of the adapter's link (1gbit, 100mbit): the report draws the
    # theoretical goodput from it. Not what the card achieves: a 32-bit PCI card is still
    # on a Gigabit link.
    link_rate: Rate | None = None

    @property
    def label(self) -> str:
        """'model (driver version)', the way every chart names an entry."""
        drv = self.driver.name + (f" {self.driver.version}" if self.driver.version else "")
        return f"{self.model} ({drv})"


class Side(Strict):
    host: Name
    interface: str
    address: IpAddress


class Pair(Strict):
    name: Name
    adapter: Name
    a: Side
    b: Side
    receiver: Literal["a", "b"] = "a"

    @property
    def receiver_side(self) -> Side:
        return self.a if self.receiver == "a" else self.b

    @property
    def sender_side(self) -> Side:
        return self.b if self.receiver == "a" else self.a


class Inventory(Strict):
    format_version: Literal[1] = 1
    hosts: list[Host] = Field(min_length=1)
    adapters: list[Adapter] = Field(default_factory=list)
    pairs: list[Pair] = Field(default_factory=list)

    # Set by the loader, not by the file.
    base_dir: str = Field(".", exclude=True)
    file: str = Field("", exclude=True)

    def host(self, name: str) -> Host:
        for h in self.hosts:
            if h.name == name:
                return h
        raise UsageError(f"unknown host '{name}' (hosts in {self.file or 'the inventory'}: "
                         f"{', '.join(h.name for h in self.hosts)})")

    def adapter(self, adapter_id: str) -> Adapter:
        for a in self.adapters:
            if a.id == adapter_id:
                return a
        raise UsageError(f"unknown adapter '{adapter_id}' (adapters in "
                         f"{self.file or 'the inventory'}: "
                         f"{', '.join(a.id for a in self.adapters)})")

    def pair(self, name: str) -> Pair:
        """The pair of that name; a name the file does not have is the user's mistake."""
        for p in self.pairs:
            if p.name == name:
                return p
        raise UsageError(f"unknown pair '{name}' (pairs in {self.file or 'the inventory'}: "
                         f"{', '.join(p.name for p in self.pairs)})")

    def path(self, value: str) -> str:
        """A path from the file, resolved against the inventory's directory."""
        p = Path(value).expanduser()
        return str(p if p.is_absolute() else Path(self.base_dir) / p)


def cross_check(inv: Inventory, where: Where) -> list[ConfigError]:
    """What one model cannot see alone: references, uniqueness, per-OS name rules."""
    errors: list[ConfigError] = []

    def unique(items: list, key: str, label: str) -> None:
        seen: dict[str, int] = {}
        for i, item in enumerate(items):
            value = getattr(item, key)
            if value in seen:
                errors.append(where.error((label, i, key),
                                          f"duplicate {key} '{value}' (also {label}[{seen[value]}])"))
            seen.setdefault(value, i)

    unique(inv.hosts, "name", "hosts")
    unique(inv.adapters, "id", "adapters")
    unique(inv.pairs, "name", "pairs")
    for i, h in enumerate(inv.hosts):
        errors += _check_ssh(h, ("hosts", i), where)
    hosts = {h.name: h for h in inv.hosts}
    adapter_ids = [a.id for a in inv.adapters]
    for i, pair in enumerate(inv.pairs):
        if pair.adapter not in adapter_ids:
            errors.append(where.error(("pairs", i, "adapter"),
                                      f"unknown adapter '{pair.adapter}' "
                                      f"(adapters: {', '.join(adapter_ids) or 'none'})"))
        for side_name in ("a", "b"):
            side = getattr(pair, side_name)
            host = hosts.get(side.host)
            if host is None:
                errors.append(where.error(("pairs", i, side_name, "host"),
                                          f"unknown host '{side.host}' (hosts: {', '.join(hosts)})"))
                continue
            ok = is_windows_ifname(side.interface) if host.os == "windows" \
                else is_linux_ifname(side.interface)
            if not ok:
                rule = ("a name of letters, digits, space and _ ( ) . # * -, an ifIndex, or "
                        "an interface GUID {...}" if host.os == "windows"
                        else "at most 15 of letters, digits and _ . @ : -")
                errors.append(where.error(("pairs", i, side_name, "interface"),
                                          f"{side.interface!r} is not a valid {host.os} "
                                          f"interface name ({rule})"))
        if pair.a.host == pair.b.host:
            errors.append(where.error(("pairs", i, "b", "host"),
                                      f"both sides are on host '{pair.a.host}' "
                                      "(a pair needs two hosts)"))
        if pair.a.address == pair.b.address:
            errors.append(where.error(("pairs", i, "b", "address"),
                                      f"both sides have test address {pair.a.address}"))
    return errors


def _check_ssh(host: Host, at: tuple, where: Where) -> list[ConfigError]:
    ssh = host.ssh
    errors = []
    if host.address is None and ssh.alias is None:
        errors.append(where.error((*at, "address"), "required key is missing (or set "
                                  "ssh.alias to the host's entry in ssh.config)"))
    if ssh.alias is not None and ssh.config is None:
        errors.append(where.error((*at, "ssh", "alias"), "an alias names a Host of an "
                                  "ssh_config file: set ssh.config too (e.g. ~/.ssh/config)"))
    if ssh.known_hosts is None and ssh.config is None:
        errors.append(where.error((*at, "ssh", "known_hosts"), "required key is missing"))
    return errors
