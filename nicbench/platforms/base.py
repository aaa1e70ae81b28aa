"""What nicbench needs from a host's OS, whatever the OS: the platform seam.

A platform reads facts, applies a setting and puts it back, samples CPU time, and waits
for a port to listen. ``linux.py`` implements it with ip/ifconfig, ethtool, sysctl and
/proc; a Windows platform implements the same over PowerShell. ``PLATFORMS`` maps the
inventory's ``os:`` to the class.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from nicbench.remote.connection import Connection


@dataclass(frozen=True)
class InterfaceFacts:
    name: str
    mtu: int
    max_mtu: int | None
    state: str               # "up", "down", "lowerlayerdown", ...
    carrier: bool
    kind: str | None = None  # veth, macvlan, ... (None for a plain NIC)
    lower: str | None = None # the device under a macvlan/vlan
    driver: str | None = None
    driver_version: str | None = None
    firmware: str | None = None
    bus_info: str | None = None
    offloads: dict[str, bool] = field(default_factory=dict)
    addresses: tuple[str, ...] = ()


@dataclass(frozen=True)
class HostFacts:
    os: str
    kernel: str
    cpu_model: str | None
    cpus: int | None
    hostname: str | None = None


@dataclass(frozen=True)
class CpuTimes:
    """Cumulative CPU time counters; busy % between two snapshots."""

    busy: float
    total: float

    def busy_pct_since(self, earlier: "CpuTimes") -> float | None:
        dt = self.total - earlier.total
        if dt <= 0:
            return None
        return max(0.0, min(100.0, 100.0 * (self.busy - earlier.busy) / dt))


def same_sysctl_value(a: object, b: object) -> bool:
    """sysctl prints vectors tab-separated and takes them space-separated: equal words."""
    return str(a).split() == str(b).split()


class Platform(ABC):
    os_name = "?"

    def __init__(self, conn: Connection):
        self.conn = conn

    @property
    def host(self) -> str:
        return self.conn.host

    @abstractmethod
    def host_facts(self) -> HostFacts: ...

    @abstractmethod
    def interface_facts(self, iface: str) -> InterfaceFacts: ...

    @abstractmethod
    def get_mtu(self, iface: str) -> int: ...

    @abstractmethod
    def set_mtu(self, iface: str, mtu: int) -> None:
        """Set and read back; TuningError with the OS's own words if refused."""

    @abstractmethod
    def verify_path_mtu(self, iface: str, peer: str, mtu: int) -> None:
        """Prove a full-size unfragmented packet crosses the test link; TuningError if not."""

    @abstractmethod
    def reaches(self, iface: str, peer: str) -> bool:
        """One ping of ``peer`` out of ``iface`` is answered."""

    @abstractmethod
    def get_sysctl(self, name: str) -> str: ...

    @abstractmethod
    def set_sysctl(self, name: str, value: str) -> None: ...

    @abstractmethod
    def cpu_times(self) -> CpuTimes: ...

    @abstractmethod
    def wait_listening(self, port: int, protocol: str, timeout_s: float) -> None:
        """Return once something listens on the port; raise TrialError after timeout_s."""

    @abstractmethod
    def executable(self, tool: str) -> str:
        """The tool's executable on this host (the inventory's hosts[].tools, else the
        platform's default name)."""

    @abstractmethod
    def tool_version(self, tool: str, executable: str | None = None) -> str | None:
        """The tool's version (of ``executable``, default :meth:`executable`), None if it
        is not installed."""
