"""Fake hosts: the platform seam in memory, for engine tests without root and for dry runs.

A :class:`FakeHosts` is what a :class:`~nicbench.execution.runner.Runner` takes instead of
SSH connections (as httpx takes a mock transport). Its platforms keep MTUs and sysctls in
memory, refuse what a test tells them to refuse (with the words a real kernel uses), and
run tools by asking the test's ``answer`` function what the tool printed. Every call is
logged, so a test can assert on what the engine did and in which order.

Nothing here pretends to measure: the outputs a test answers with should be real captured
tool outputs (``tests/golden/captures``), so the engine's parsing and judging run for real.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from collections.abc import Callable, Mapping, Sequence

from nicbench.errors import CommandTimeout, TuningError, TuningErrorKind
from nicbench.platforms.base import (ClientRun, CpuTimes, HostFacts, InterfaceFacts,
                                     LinkCounters, Platform, PlatformOptions, ServerEnd,
                                     ServerFinish)
from nicbench.platforms.linux import LinuxPlatform
from nicbench.remote.connection import DEFAULT_TIMEOUT_S, Background
from nicbench.remote.fake import FakeConnection
from nicbench.remote.result import Result, make_result


@dataclass(frozen=True)
class FakeCpu:
    """What a host's CPU did over a fake tool run, % of all its CPUs: busy in all, and the
    tool's own share (its client on the sender, its server on the receiver)."""

    busy: float
    tool: float


# CPU time a fake tool run spans, in the hosts' counter units: the run moves each host's
# counters by this much (so busy % = the figure given, exactly, and nothing else moves).
FAKE_RUN_TICKS = 1000.0


@dataclass
class Answer:
    """What a fake tool run printed: the client's output and exit status, and what the
    server printed by the time it was stopped. ``timeout``: the client never ended.

    ``sender`` / ``receiver``: what each host's CPU did over the run (None: a host whose
    counters read 25 % busy between any two readings and no tool share, as fakes always
    did). Given, the host's counters move only with its runs, by exactly that."""

    client: str = ""
    server: str = ""
    exit_status: int = 0
    timeout: bool = False
    outfile: str | None = None
    sender: FakeCpu | None = None
    receiver: FakeCpu | None = None
    # What the test link did while the tool ran (faults a test asks for): the bytes it
    # carried each way (plenty by default: headers and all), and how many times its
    # carrier went down and came back.
    moved_bytes: int = 1 << 40
    carrier_flaps: int = 0


@dataclass(frozen=True)
class ToolCall:
    """A client command the engine ran on a fake host, with the state it ran in."""

    host: str
    argv: tuple[str, ...]
    mtu: dict[str, int]          # interface -> MTU on the sending host at that moment
    server_argv: tuple[str, ...]


Answerer = Callable[[ToolCall], Answer]


@dataclass
class FakeInterface:
    mtu: int = 1500
    max_mtu: int = 65535
    addresses: tuple[str, ...] = ()
    state: str = "up"
    # A refusal the kernel would print for MTUs above max_mtu.
    refusal: str = "RTNETLINK answers: Invalid argument"
    # Its counters (link_counters), which each tool run moves as its Answer says;
    # counters=False: an OS that gives none.
    counters: bool = True
    carrier_changes: int = 1
    carrier_down: int = 0
    tx_bytes: int = 0
    rx_bytes: int = 0
    # What its facts say of its driver (a test that changes them between runs sees the
    # difference in the manifests: history's setup differences).
    driver: str | None = None
    driver_version: str | None = None
    firmware: str | None = None

    def carried(self, answer: Answer) -> None:
        self.tx_bytes += answer.moved_bytes
        self.rx_bytes += answer.moved_bytes
        self.carrier_changes += 2 * answer.carrier_flaps
        self.carrier_down += answer.carrier_flaps


class FakeBackground(Background):
    """A started server: it listens at once and prints what the answer says it printed."""

    def __init__(self, platform: FakePlatform, argv: list[str]):
        super().__init__(platform.conn, argv, pid=platform.next_pid(), workdir="/fake")
        self.platform = platform
        self.output = ""
        self.running = True
        self.tool_ticks: float | None = None    # its CPU time, where an answer gave it

    def is_running(self) -> bool:
        return self.running

    def wait(self, timeout: float) -> bool:
        return not self.running

    def ended(self, wait_s: float = 0.0) -> bool:
        return not self.running

    def stop_after_output(self, pattern: str, count: int, wait_s: float,
                          signal: str = "TERM") -> str:
        self.running = False
        return "stopped"

    def stop(self, grace_s: float = 2.0, signal: str = "TERM") -> None:
        self.running = False

    def collect(self) -> Result:
        if self._collected is None:
            self.running = False
            self.platform.log.append((self.platform.host, "collect", self.argv[0]))
            self._collected = make_result(self.platform.host, self.argv, stdout=self.output,
                                          exit_status=None)
            self.platform.servers.remove(self)
        return self._collected


class FakePlatform(LinuxPlatform):
    """A Linux host in memory: every method the engine calls is answered here, none by
    a command (the connection is a FakeConnection that answers nothing useful)."""

    # A trial's steps as the seam composes them from the single operations below, not
    # Linux's one-call scripts (with the tools' own CPU time where an answer gave it).
    start_server = Platform.start_server
    # The finish when the client has ended (Linux's overlapped one runs its script over
    # the connection, which here answers nothing: no server output, no CPU).
    begin_finish = Platform.begin_finish
    _client_ticks: float | None     # the client's CPU time, where an answer gave it

    def run_client(self, argv: Sequence[str], timeout: float, pidfile: str | None,
                   outfile: str | None, link: str | None = None) -> ClientRun:
        self._client_ticks = None
        ran = Platform.run_client(self, argv, timeout, pidfile, outfile, link)
        return replace(ran, tool_ticks=self._client_ticks)

    def finish_server(self, server: Background, end: ServerEnd,
                      link: str | None = None) -> ServerFinish:
        finish = Platform.finish_server(self, server, end, link)
        ticks = server.tool_ticks if isinstance(server, FakeBackground) else None
        return replace(finish, tool_ticks=ticks)

    def __init__(self, name: str, hosts: FakeHosts,
                 interfaces: Mapping[str, FakeInterface],
                 sysctls: Mapping[str, str] | None = None,
                 tools: Mapping[str, str] | None = None):
        super().__init__(FakeConnection(name), tools, hosts.options)
        self.hosts = hosts
        self.log = hosts.log
        self.interfaces = dict(interfaces)
        self.sysctls = dict(sysctls or {})
        self.servers: list[FakeBackground] = []
        self._pid = 1000
        self._busy = 0.0
        self._total = 0.0
        self._client_ticks = None
        self.cpu_given = False     # an answer gave this host's CPU: counters move by runs only
        self.lost = False   # set by a test: the host stops answering
        self.missing: set[str] = set()   # set by a test: tools not installed here
        self.versions: dict[str, str] = {}   # set by a test: a tool's version here ("fake")
        self.lost_for = 0   # ... and comes back at the next reconnect, this many times

    def reconnect(self, timeout_s: float) -> None:
        self.log.append((self.host, "reconnect", timeout_s))
        if self.lost_for > 0:
            self.lost_for -= 1
            self.lost = False
            return
        self._alive()

    def next_pid(self) -> int:
        self._pid += 1
        return self._pid

    def _alive(self) -> None:
        if self.lost:
            from nicbench.errors import ConnectError
            raise ConnectError(self.host, "cannot reach the host: Connection refused",
                               "is the host up?")

    # -- settings -------------------------------------------------------------------------
    def _iface(self, iface: str) -> FakeInterface:
        if iface not in self.interfaces:
            raise TuningError(self.host, "interface", iface,
                              f'Device "{iface}" does not exist.', kind=TuningErrorKind.INTERFACE)
        return self.interfaces[iface]

    def get_mtu(self, iface: str) -> int:
        self._alive()
        return self._iface(iface).mtu

    def set_mtu(self, iface: str, mtu: int) -> None:
        self._alive()
        self.log.append((self.host, "mtu", iface, mtu))
        i = self._iface(iface)
        if mtu > i.max_mtu:
            raise TuningError(self.host, f"MTU of {iface}", mtu, i.refusal)
        i.mtu = mtu

    def verify_path_mtu(self, iface: str, peer: str, mtu: int) -> None:
        self._alive()
        other = self.hosts.peer_mtu(peer)
        if other is not None and other < mtu:
            raise TuningError(self.host, f"path MTU to {peer}", mtu,
                              f"no reply to a {mtu}-byte packet with DF set",
                              kind=TuningErrorKind.PATH)

    def reaches(self, iface: str, peer: str) -> bool:
        return not self.lost

    def get_sysctl(self, name: str) -> str:
        self._alive()
        return self.sysctls[name]

    def set_sysctl(self, name: str, value: str) -> None:
        self._alive()
        self.log.append((self.host, "sysctl", name, value))
        if name not in self.sysctls:
            raise TuningError(self.host, name, value,
                              f"sysctl: cannot stat /proc/sys/{name.replace('.', '/')}: "
                              "No such file or directory", kind=TuningErrorKind.OTHER)
        self.sysctls[name] = value

    # -- facts ----------------------------------------------------------------------------
    def host_facts(self) -> HostFacts:
        self._alive()
        return HostFacts(os="linux", kernel="fake", cpu_model=None, cpus=1, hostname=self.host)

    def interface_facts(self, iface: str) -> InterfaceFacts:
        self._alive()
        i = self._iface(iface)
        return InterfaceFacts(name=iface, mtu=i.mtu, max_mtu=i.max_mtu, state=i.state,
                              carrier=i.state == "up", addresses=i.addresses,
                              driver=i.driver, driver_version=i.driver_version,
                              firmware=i.firmware)

    def link_counters(self, iface: str) -> LinkCounters | None:
        self._alive()
        i = self._iface(iface)
        if not i.counters:
            return None
        return LinkCounters(carrier_changes=i.carrier_changes, carrier_down=i.carrier_down,
                            up=i.state == "up", tx_bytes=i.tx_bytes, rx_bytes=i.rx_bytes)

    def cpu_times(self) -> CpuTimes:
        if not self.cpu_given:
            self._busy += 1.0
            self._total += 4.0
        return CpuTimes(busy=self._busy, total=self._total, irq=0.0, softirq=0.0)

    def spend(self, cpu: FakeCpu) -> float:
        """A run's CPU on this host (see :class:`Answer`): its counters move by one run's
        ticks; the tool's own ticks are returned."""
        self.cpu_given = True
        self._busy += cpu.busy * FAKE_RUN_TICKS / 100.0
        self._total += FAKE_RUN_TICKS
        return cpu.tool * FAKE_RUN_TICKS / 100.0

    def probe_version(self, tool: str, exe: str) -> str | None:
        return None if tool in self.missing else self.versions.get(tool, "fake")

    def scratch_file(self, name: str) -> str:
        return f"/fake/{name}"

    # -- processes ------------------------------------------------------------------------
    def start(self, argv: Sequence[str], workdir: str) -> Background:
        self._alive()
        self.log.append((self.host, "start", argv[0]))
        server = FakeBackground(self, list(argv))
        self.servers.append(server)
        return server

    def wait_listening(self, port: int, protocol: str, timeout_s: float) -> None:
        self._alive()

    def run(self, argv: Sequence[str], *, timeout: float = DEFAULT_TIMEOUT_S,
            warn: bool = False, pidfile: str | None = None) -> Result:
        self._alive()
        self.log.append((self.host, "run", argv[0]))
        receiver = self.hosts.server_for(self, argv)
        call = ToolCall(host=self.host, argv=tuple(argv),
                        mtu={n: i.mtu for n, i in self.interfaces.items()},
                        server_argv=tuple(receiver.argv) if receiver else ())
        answer = self.hosts.answer(call)
        if receiver is not None:
            receiver.output = answer.server
            if answer.receiver is not None:
                receiver.tool_ticks = receiver.platform.spend(answer.receiver)
        if answer.sender is not None:
            self._client_ticks = self.spend(answer.sender)
        for plat in (self, receiver.platform if receiver is not None else None):
            for i in (plat.interfaces.values() if plat is not None else ()):
                i.carried(answer)
        self.hosts.outfiles[self.host] = answer.outfile
        result = make_result(self.host, argv, stdout=answer.client,
                             exit_status=None if answer.timeout else answer.exit_status,
                             timed_out=answer.timeout, started_at=time.time())
        if answer.timeout:
            raise CommandTimeout(result, timeout)
        return result

    def reap(self, paths: Sequence[str]) -> dict[str, str]:
        self._alive()
        self.log.append((self.host, "reap", tuple(paths)))
        return dict.fromkeys(paths, "gone")

    def read_and_remove(self, path: str) -> str | None:
        return self.hosts.outfiles.pop(self.host, None)


@dataclass
class FakeHosts:
    """Fake hosts by name, for a Runner's ``hosts=``: ``add`` each, then run. Their
    platforms are made with ``options``, as HostPool makes them from a profile."""

    answer: Answerer
    options: PlatformOptions = field(default_factory=PlatformOptions)
    log: list[tuple] = field(default_factory=list)
    platforms: dict[str, FakePlatform] = field(default_factory=dict)
    outfiles: dict[str, str | None] = field(default_factory=dict)
    closed: int = 0

    def add(self, name: str, interfaces: Mapping[str, FakeInterface],
            sysctls: Mapping[str, str] | None = None) -> FakePlatform:
        self.platforms[name] = FakePlatform(name, self, interfaces, sysctls)
        return self.platforms[name]

    def platform(self, name: str) -> Platform:
        return self.platforms[name]

    def close(self) -> None:
        self.closed += 1

    def peer_mtu(self, address: str) -> int | None:
        for p in self.platforms.values():
            for i in p.interfaces.values():
                if address in i.addresses:
                    return i.mtu
        return None

    def server_for(self, sender: FakePlatform, argv: Sequence[str] = ()) -> FakeBackground | None:
        """The server a client on ``sender`` talks to: the one running on the host whose
        test address the client names (pairs measured at once each have their own), else
        the one running on another host."""
        running = [p for p in self.platforms.values() if p is not sender and p.servers]
        for p in running:
            if any(a in argv for i in p.interfaces.values() for a in i.addresses):
                return p.servers[-1]
        return running[0].servers[-1] if running else None
