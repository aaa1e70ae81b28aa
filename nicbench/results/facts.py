"""What a run records about its hosts and their test interfaces (``manifest.json``).

The platforms report these (``Platform.host_facts``, ``Platform.interface_facts``) and the
manifest keeps them as they are, typed: a Linux host's facts are :class:`HostFacts`, a
Windows host's :class:`WindowsHostFacts`, which adds what only Windows has (and likewise
for interfaces). In the file each is the JSON object of its fields, in field order; a
stored object is read back as the class whose fields it has (:data:`StoredHostFacts`,
:data:`StoredInterfaceFacts`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated, Any

from pydantic import Discriminator, Tag


class LinkState(StrEnum):
    """Whether an interface can carry a test, from the OS's own word for its state
    (:attr:`InterfaceFacts.state`: Linux's operstate, Windows' adapter status), which
    stays as the OS said it. ``unknown`` is what Linux says of links without carrier
    detection (veth in a namespace, some virtual NICs): usable."""

    UP = "up"
    UNKNOWN = "unknown"
    DOWN = "down"           # any other word: down, lowerlayerdown, disconnected, disabled ...

    @classmethod
    def of(cls, state: str) -> LinkState:
        word = state.strip().lower()
        return cls(word) if word in (cls.UP, cls.UNKNOWN) else cls.DOWN


@dataclass(frozen=True)
class InterfaceFacts:
    name: str
    mtu: int
    max_mtu: int | None
    state: str               # the OS's word, lower case: "up", "down", "lowerlayerdown", ...
    carrier: bool
    kind: str | None = None  # veth, macvlan, ... (None for a plain NIC)
    lower: str | None = None # the device under a macvlan/vlan
    driver: str | None = None
    driver_version: str | None = None
    firmware: str | None = None
    bus_info: str | None = None
    offloads: dict[str, bool] = field(default_factory=dict)
    addresses: tuple[str, ...] = ()
    # What shapes the interface's frames, read from the host's root qdisc (on the
    # interface, or on the device under a macvlan): "tbf rate 500mbit" on a lab link. None
    # where nothing shapes it (a NIC's mq/fq_codel), and then absent from the manifest.
    shaping: str | None = None

    @property
    def link(self) -> LinkState:
        return LinkState.of(self.state)


@dataclass(frozen=True)
class HostFacts:
    os: str
    kernel: str
    cpu_model: str | None
    cpus: int | None
    hostname: str | None = None
    memory_bytes: int | None = None      # physical memory; None: not read on this OS
    os_build: str | None = None          # Linux: /etc/os-release's PRETTY_NAME


@dataclass(frozen=True)
class WindowsHostFacts(HostFacts):
    caption: str = ""
    version: str = ""
    build: str = ""
    last_boot: str = ""
    defender_realtime: bool | None = None
    autotuning: str | None = None
    cpu_counters: int | None = None   # processors the raw counters cover (cpu_times)
    # Set by the run, not probed: what became of the profile's registry values (applied,
    # skipped as ignored by this Windows); absent from the file until there are some.
    registry_notes: tuple[str, ...] | None = None


@dataclass(frozen=True)
class WindowsInterfaceFacts(InterfaceFacts):
    driver_provider: str | None = None
    description: str | None = None
    if_index: int | None = None
    guid: str | None = None
    link_speed: str | None = None
    jumbo_keyword: str | None = None
    jumbo_value: str | None = None
    jumbo_valid: tuple[str, ...] = ()
    jumbo_range: tuple[int | None, int | None, int | None] | None = None


def _host_tag(value: Any) -> str | None:
    if isinstance(value, HostFacts):
        return "windows" if isinstance(value, WindowsHostFacts) else "host"
    if isinstance(value, dict):
        return "windows" if value.get("os") == "windows" else "host"
    return None


_WINDOWS_INTERFACE_ONLY = frozenset(WindowsInterfaceFacts.__dataclass_fields__) \
    - frozenset(InterfaceFacts.__dataclass_fields__)


def _interface_tag(value: Any) -> str | None:
    if isinstance(value, InterfaceFacts):
        return "windows" if isinstance(value, WindowsInterfaceFacts) else "interface"
    if isinstance(value, dict):
        return "windows" if _WINDOWS_INTERFACE_ONLY & set(value) else "interface"
    return None


# A host's or an interface's facts as the manifest validates and writes them: the class
# is picked by the facts themselves (``os``, or the Windows-only fields), on reading and
# on writing, so a Windows host keeps its own fields both ways.
StoredHostFacts = Annotated[
    Annotated[HostFacts, Tag("host")] | Annotated[WindowsHostFacts, Tag("windows")],
    Discriminator(_host_tag)]
StoredInterfaceFacts = Annotated[
    Annotated[InterfaceFacts, Tag("interface")]
    | Annotated[WindowsInterfaceFacts, Tag("windows")],
    Discriminator(_interface_tag)]
