"""What nicbench needs from a host's OS, whatever the OS: the platform seam.

A platform reads facts, applies a setting and puts it back, samples CPU time, and waits
for a port to listen. ``linux.py`` implements it with ip/ifconfig, ethtool, sysctl and
/proc; a Windows platform implements the same over PowerShell. ``PLATFORMS`` maps the
inventory's ``os:`` to the class. Facts are the frozen dataclasses of ``results/facts.py``
(the manifest keeps them as they are); settings are of a :class:`SettingKind`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import assert_never

from nicbench.errors import NicbenchError, RemoteError, TrialError, UsageError
from nicbench.config.profile import Profile, RegistryPolicy
from nicbench.remote.connection import DEFAULT_TIMEOUT_S, Background, Connection
from nicbench.remote.result import Result
from nicbench.results.facts import HostFacts, InterfaceFacts
from nicbench.results.records import CpuSplit
from nicbench.tools.registry import TOOLS



@dataclass(frozen=True)
class PlatformOptions:
    """What a run's profile tells every host's platform when it is made (``HostPool``,
    the plan's hosts, the fakes): how long a reboot may take, and whether registry values
    the OS ignores are written anyway. A platform with neither (Linux) ignores them."""

    reboot_timeout_s: float = 1800.0       # PKB allows 40 minutes (commit 21668d163)
    registry_policy: RegistryPolicy = "apply"

    @classmethod
    def of(cls, profile: Profile) -> PlatformOptions:
        return cls(reboot_timeout_s=profile.reboot_timeout_s,
                   registry_policy=profile.registry_policy)


class SettingKind(StrEnum):
    """The kinds of host settings a platform reads and sets (``get_setting``/``set_setting``)
    and the tuning journal puts back; the value is what the journal file says."""

    MTU = "mtu"                 # key: interface; every platform
    SYSCTL = "sysctl"           # key: sysctl name; Linux
    JUMBO = "jumbo"             # key: interface; Windows: the driver's jumbo frame size
    REGISTRY = "registry"       # key: a Tcpip\Parameters value name; Windows
    FIREWALL = "firewall"       # key: the rule's name, value: its ports; Windows
    REBOOT = "reboot"           # a journal marker: putting it back reboots (Windows)


@dataclass(frozen=True)
class CpuTimes:
    """Cumulative CPU time counters of a host, all CPUs (Linux: /proc/stat's first line,
    clock ticks); busy % between two snapshots. ``irq`` and ``softirq`` (part of busy:
    interrupts and the kernel's deferred network work, which no process is charged for)
    where the platform reads them, else None."""

    busy: float
    total: float
    irq: float | None = None
    softirq: float | None = None

    def busy_pct_since(self, earlier: CpuTimes) -> float | None:
        dt = self.total - earlier.total
        if dt <= 0:
            return None
        return max(0.0, min(100.0, 100.0 * (self.busy - earlier.busy) / dt))

    def share_pct_since(self, earlier: CpuTimes, ticks: float) -> float | None:
        """``ticks`` of CPU time (in this counter's units) as a % of all CPUs' time since
        ``earlier``: a process's own share, in the units of :meth:`busy_pct_since`."""
        dt = self.total - earlier.total
        return 100.0 * ticks / dt if dt > 0 else None

    def interrupt_pct_since(self, earlier: CpuTimes) -> float | None:
        """irq + softirq as a % of all CPUs' time since ``earlier`` (None: not read)."""
        if None in (self.irq, self.softirq, earlier.irq, earlier.softirq):
            return None
        ticks = ((self.irq or 0.0) + (self.softirq or 0.0)
                 - (earlier.irq or 0.0) - (earlier.softirq or 0.0))
        return self.share_pct_since(earlier, ticks)


def cpu_split(before: CpuTimes | None, after: CpuTimes | None,
              tool_ticks: float | None) -> CpuSplit:
    """The host's CPU between two readings, and the tool's part of it where its CPU time
    (``tool_ticks``, the units of the readings) is known.

    ``other`` is a lower bound, clamped at 0: a kernel with tick-based CPU accounting and
    no IRQ time accounting (CONFIG_IRQ_TIME_ACCOUNTING unset, as on the lab's machine)
    charges a tick spent in softirq to /proc/stat's softirq and to the task it interrupted
    alike, so the network work a tool's own sends and receives raise is counted twice in
    tool + softirq (on the lab the receiver read 56 % busy, its server 27 %, softirq 43 %).
    Other load above the bound is then surely there."""
    if before is None or after is None:
        return CpuSplit(None)
    busy = after.busy_pct_since(before)
    if busy is None or tool_ticks is None:
        return CpuSplit(busy)
    tool = after.share_pct_since(before, tool_ticks)
    irq = after.interrupt_pct_since(before)
    other = max(0.0, busy - tool - irq) if tool is not None and irq is not None else None
    return CpuSplit(busy, tool, other)


@dataclass(frozen=True)
class LinkCounters:
    """A test interface's counters at one moment (Linux: /sys/class/net/IF): how often
    its carrier changed and went down, whether it is up, and the bytes it sent and
    received. A field the OS does not give is None; a platform that reads none of them
    gives no LinkCounters at all (None: "not available", never a failure)."""

    carrier_changes: int | None = None
    carrier_down: int | None = None
    up: bool | None = None
    tx_bytes: int | None = None
    rx_bytes: int | None = None


@dataclass(frozen=True)
class ServerStart:
    """A trial's server, started: did something listen on its port, had it ended
    already (it could not bind), the host's CPU time as the transfer starts, and the
    counters of the test interface asked for (``link``) then."""

    server: Background
    listening: bool
    ended: bool
    cpu: CpuTimes | None
    link: LinkCounters | None = None


@dataclass(frozen=True)
class ClientRun:
    """A trial's client, run: its result, the host's CPU time just before and after it,
    the text of the file it wrote its figures to (None: none asked, or none there), and
    the client's own CPU time in the units of those (None where the platform cannot
    read it)."""

    result: Result
    cpu0: CpuTimes | None
    cpu1: CpuTimes | None
    outfile: str | None
    tool_ticks: float | None = None
    # The test interface's counters just before and after the client (None: not asked
    # for, or not available on this OS).
    link0: LinkCounters | None = None
    link1: LinkCounters | None = None


@dataclass(frozen=True)
class ServerEnd:
    """How a trial's server ends once its client is done (from the tool's Plan): it exits
    by itself; or it is stopped once its output holds ``report_count`` lines matching
    ``report_re`` (within ``wait_s``); or after ``wait_s``. A port it may still hold is
    the next start's to wait for (Linux: server_start.sh)."""

    exits: bool
    report_re: str | None
    report_count: int
    wait_s: float
    stop_signal: str
    # Set where that end may be waited for while the client still runs (see
    # :meth:`Platform.begin_finish`): how long the client should take, and at most.
    client_s: float | None = None
    client_limit_s: float | None = None


@dataclass(frozen=True)
class ServerFinish:
    result: Result               # its output, error output and exit status
    cpu: CpuTimes | None         # the host's CPU time as the transfer has just ended
    # The host's CPU time as the transfer began, where the finish was under way then
    # (an overlapped finish; else the server's start is the window's start).
    cpu0: CpuTimes | None = None
    tool_ticks: float | None = None   # the server's own CPU time (units of ``cpu``)
    link: LinkCounters | None = None  # the test interface's counters with ``cpu``


class Finishing:
    """A trial's server finish, begun as its client starts (:meth:`Platform.begin_finish`).

    This one does the whole finish when asked for its result, after the client; a
    platform may overlap it with the client instead (Linux)."""

    overlapped = False     # already on its way while the client runs

    def __init__(self, platform: Platform, server: Background, end: ServerEnd,
                 link: str | None = None):
        self.platform = platform
        self.server = server
        self.end = end
        self.link = link

    def result(self) -> ServerFinish:
        """The finish, once the client has ended (however it ended)."""
        return self.platform.finish_server(self.server, self.end, link=self.link)

    def under_way(self) -> bool:
        """Is it running now, on its own (an overlapped finish before its end)?"""
        return False

    def abandon(self) -> None:
        """The trial stops without asking for the result (an error, Ctrl-C): end what
        is under way, within a bounded time. The caller then stops and collects a server
        that is still not collected."""


def same_sysctl_value(a: object, b: object) -> bool:
    """sysctl prints vectors tab-separated and takes them space-separated: equal words."""
    return str(a).split() == str(b).split()


class Platform(ABC):
    """One host's OS, over one connection. Subclasses implement the abstract methods; the
    rest (running and starting commands, tool executables and versions) is shared."""

    os_name = "?"

    def __init__(self, conn: Connection, tools: Mapping[str, str] | None = None,
                 options: PlatformOptions | None = None):
        self.conn = conn
        self.options = options or PlatformOptions()
        # tool -> executable: the registry's default for this OS, then the inventory's
        # hosts[].tools.
        self.tools: dict[str, str] = {
            **{name: t.executables[self.os_name] for name, t in TOOLS.items()
               if self.os_name in t.executables},
            **(tools or {})}
        self._versions: dict[str, str | None] = {}

    @property
    def host(self) -> str:
        return self.conn.host

    def reconnect(self, timeout_s: float) -> None:
        """Reach the host again after its connection was lost (see
        :meth:`Connection.reconnect`)."""
        self.conn.reconnect(timeout_s)

    # -- commands -------------------------------------------------------------------
    def run(self, argv: Sequence[str], *, timeout: float = DEFAULT_TIMEOUT_S,
            warn: bool = False, pidfile: str | None = None) -> Result:
        return self.conn.run(argv, timeout=timeout, warn=warn, pidfile=pidfile)

    def start(self, argv: Sequence[str], workdir: str) -> Background:
        """Start a tool in the background on this host in the new directory ``workdir``
        (see :meth:`Connection.start`)."""
        return self.conn.start(argv, workdir)

    def reap(self, paths: Sequence[str]) -> dict[str, str]:
        """Stop and remove what a crashed controller left (background directories, pid
        files): path -> "stopped" | "gone" | "none"."""
        if not paths:
            return {}
        res = self.conn.run(self.conn.shell.reap_argv(list(paths)), warn=True, timeout=30)
        out = {}
        for line in res.stdout.splitlines():
            what, _, path = line.partition(" ")
            if what in ("stopped", "gone", "none"):
                out[path] = what
        missing = [p for p in paths if p not in out]
        if missing:
            raise RemoteError(self.host, f"could not clean up {', '.join(missing)}: "
                                         f"{res.tail() or 'no answer'}")
        return out

    def read_and_remove(self, path: str) -> str | None:
        """The text of a file a tool wrote on this host (None if there is none), then the
        file is gone."""
        res = self.conn.run(self.conn.shell.read_and_remove_argv(path), warn=True)
        return res.stdout or None

    # -- a trial's three steps: one remote call each where the platform can ------------
    # The defaults compose the seam's single operations (several calls); a platform may
    # do each step in one call (Linux: remote/scripts/server_start.sh, client_run.sh,
    # server_finish.sh), which is most of a trial's cost beyond the tool's own run.
    # ``link``: a test interface whose counters (:meth:`link_counters`) the step reads as
    # well, where the platform can; the trial holds the transfer to them.
    def start_server(self, argv: Sequence[str], workdir: str, port: int, protocol: str,
                     listen_timeout_s: float, link: str | None = None) -> ServerStart:
        server = self.start(argv, workdir)
        try:
            self.wait_listening(port, protocol, listen_timeout_s)
        except TrialError:
            return ServerStart(server, listening=False, ended=server.ended(), cpu=None)
        ended = server.ended()
        if ended:
            return ServerStart(server, True, ended, None)
        return ServerStart(server, True, ended, self._cpu_or_none(), self._link_or_none(link))

    def run_client(self, argv: Sequence[str], timeout: float, pidfile: str | None,
                   outfile: str | None, link: str | None = None) -> ClientRun:
        """Run the client (CommandTimeout if it runs past ``timeout``)."""
        link0 = self._link_or_none(link)
        cpu0 = self._cpu_or_none()
        res = self.run(argv, timeout=timeout, warn=True, pidfile=pidfile)
        cpu1 = self._cpu_or_none()
        link1 = self._link_or_none(link)
        text = self.read_and_remove(outfile) if outfile else None
        return ClientRun(res, cpu0, cpu1, text, link0=link0, link1=link1)

    def finish_server(self, server: Background, end: ServerEnd,
                      link: str | None = None) -> ServerFinish:
        cpu = self._cpu_or_none()
        counters = self._link_or_none(link)
        if end.exits:
            ended = server.ended(wait_s=end.wait_s)
        elif end.report_re:
            ended = server.stop_after_output(end.report_re, end.report_count, end.wait_s,
                                             end.stop_signal) in ("stopped", "exited")
        else:
            ended = server.wait(end.wait_s)
        if not ended:
            server.stop(grace_s=2.0, signal=end.stop_signal)
        return ServerFinish(server.collect(), cpu, link=counters)

    def begin_finish(self, server: Background, end: ServerEnd,
                     link: str | None = None) -> Finishing:
        """Called as the client is about to start: the server's finish, which the trial
        asks for once the client has ended. Here it all happens then."""
        return Finishing(self, server, end, link)

    def _cpu_or_none(self) -> CpuTimes | None:
        try:
            return self.cpu_times()
        except NicbenchError:
            return None

    def _link_or_none(self, iface: str | None) -> LinkCounters | None:
        if iface is None:
            return None
        try:
            return self.link_counters(iface)
        except NicbenchError:
            return None

    def link_counters(self, iface: str) -> LinkCounters | None:
        """The test interface's counters now; None where this OS gives none (the checks
        that need them are then not available, never failed). A platform whose trial
        steps are single calls reads them inside those calls (Linux) instead."""
        return None

    @abstractmethod
    def scratch_file(self, name: str) -> str:
        """A path on this host where a tool may write a file named ``name`` for the
        controller to read back (:meth:`read_and_remove`)."""

    # -- facts ----------------------------------------------------------------------
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
    def cpu_times(self) -> CpuTimes: ...

    @abstractmethod
    def wait_listening(self, port: int, protocol: str, timeout_s: float) -> None:
        """Return once something listens on the port; raise TrialError after timeout_s."""

    # -- settings, as the tuning journal sees them -----------------------------------
    # Subclasses handle their own kinds in a ``match`` over every SettingKind and pass the
    # others here, so a new kind is a decision each platform must make (assert_never).
    def get_setting(self, kind: SettingKind, key: str) -> str | None:
        """A setting's current value as text (None: it does not exist). Every platform
        has ``mtu`` (key: interface); subclasses add their own kinds."""
        match kind:
            case SettingKind.MTU:
                return str(self.get_mtu(key))
            case (SettingKind.SYSCTL | SettingKind.JUMBO | SettingKind.REGISTRY
                  | SettingKind.FIREWALL | SettingKind.REBOOT):
                raise UsageError(f"{self.host}: {self.os_name} hosts have no '{kind}' settings")
            case _:
                assert_never(kind)

    def set_setting(self, kind: SettingKind, key: str, value: str | None) -> None:
        """Set (None: delete) a setting and read it back; TuningError if refused."""
        match kind:
            case SettingKind.MTU if value is not None:
                self.set_mtu(key, int(value))
            case (SettingKind.MTU | SettingKind.SYSCTL | SettingKind.JUMBO
                  | SettingKind.REGISTRY | SettingKind.FIREWALL | SettingKind.REBOOT):
                raise UsageError(f"{self.host}: {self.os_name} hosts cannot set '{kind}' "
                                 f"to {value}")
            case _:
                assert_never(kind)

    def same_setting(self, kind: SettingKind, a: str | None, b: str | None) -> bool:
        return a == b

    def mtu_setting(self, iface: str, mtu: int) -> tuple[SettingKind, str, str]:
        """The setting (kind, key, value) that gives ``iface`` the IP MTU ``mtu``: the
        MTU itself here; Windows sets the driver's jumbo frame size instead."""
        return SettingKind.MTU, iface, str(int(mtu))

    def supports(self, kind: SettingKind) -> bool:
        """Does this host have settings of ``kind`` (beyond mtu)?"""
        return kind in self.SETTING_KINDS

    SETTING_KINDS: tuple[SettingKind, ...] = ()

    def registry_ignored(self, name: str) -> bool:
        """Does this OS ignore the ``registry`` value ``name`` (written or not, it changes
        nothing)? What is done about it is ``options.registry_policy``. Here: no value
        is ignored (an OS without a registry has none to ignore)."""
        return False

    # -- tools ----------------------------------------------------------------------
    def executable(self, tool: str) -> str:
        """The tool's executable on this host (the inventory's hosts[].tools, else the
        registry's default name for this OS)."""
        try:
            return self.tools[tool]
        except KeyError:
            raise UsageError(f"{self.host}: {tool} has no {self.os_name} executable; set "
                             f"hosts[].tools.{tool} in the inventory") from None

    def tool_version(self, tool: str, executable: str | None = None) -> str | None:
        """The tool's version (of ``executable``, default :meth:`executable`), None if it
        is not installed; asked once per executable."""
        exe = executable or self.executable(tool)
        if exe not in self._versions:
            self._versions[exe] = self.probe_version(tool, exe)
        return self._versions[exe]

    @abstractmethod
    def probe_version(self, tool: str, exe: str) -> str | None:
        """Ask the host: the version of ``exe``, "unknown" if it says none, None if it is
        not installed."""
