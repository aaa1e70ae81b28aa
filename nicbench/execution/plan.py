"""``--plan``: every command a run would send, per host and in order, without connecting.

The real engine plans: a :class:`~nicbench.execution.runner.Runner` runs over *planning
hosts*, the real platform classes over a :class:`PlanConnection` that records each
command and answers like a healthy host (every interface up at MTU 1500, every setting
taken, every tool installed and listening at once), so the commands shown are exactly
the ones the platform code builds: tuning, checks, each tool's receiver and sender with
its ports, and the restore. Trials are planned, not judged: the trial function builds
the tool's command lines with its driver and sends them through the platform's own
three steps, then records a trial that passed (so a UDP search plans its first path).

Nothing is written where the user can see it: the run's files go to a temporary
directory that is removed afterwards.
"""

from __future__ import annotations

import json
import re
import shlex
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Callable, Sequence

from nicbench.config.inventory import Inventory
from nicbench.config.profile import Profile, TestSpec
from nicbench.execution import events as ev
from nicbench.execution.measure import measure_for
from nicbench.execution.runner import Runner
from nicbench.execution.trial import (LISTEN_TIMEOUT_S, TrialContext, beside_params,
                                      client_timeout_s, server_end, trial_names)
from nicbench.platforms import PLATFORMS
from nicbench.platforms.base import Platform, PlatformOptions
from nicbench.platforms.linux import LinuxPlatform
from nicbench.remote.command import display
from nicbench.remote.connection import Connection
from nicbench.remote.result import Result
from nicbench.remote.shell import SHELLS, posix_scripts
from nicbench.physics import ethernet
from nicbench.results.records import Kind, RoleResult, Status, TrialRecord
from nicbench.tools.base import UdpStats
from nicbench.tools.driver import Endpoints, Plan
from nicbench.tools.registry import TOOLS

# What a trial costs beyond the tool's own run (bench/overhead.py measures it on the lab)
# and what a point costs to tune, check and restore, for the estimate.
TRIAL_OVERHEAD_S = 0.1
POINT_OVERHEAD_S = 1.0
# What one powershell.exe start costs a Windows host. "Hundreds of ms" is the design's
# expectation (docs/windows.md, design 1), not yet measured on a real host. A run starts
# one warm PowerShell per host (remote/warm_powershell.py), which runs every command and
# starts the background tools itself: a host's starts are its sessions, one at its first
# command and one more after each reboot (the session ends with the connection); a trial
# makes none. The plan counts them and charges each this much.
POWERSHELL_START_S = 0.3
RESTART = "shutdown.exe"
# A tool that does not say how long it runs (netPIPE, netio): a guess for the estimate,
# bounded by the test's timeout.
UNKNOWN_TOOL_S = 15.0


@dataclass
class Sent:
    host: str
    where: str          # "gbe mtu9000 iperf3-tcp #1", "setup", "restore"
    command: str


@dataclass
class PlanLog:
    """Everything sent, in order, and where in the run it was."""

    sent: list[Sent] = field(default_factory=list)
    where: str = "setup"


class PlanLoopError(RuntimeError):
    """Planning went round a wait that should have ended at once (a bug, not input)."""


# -- a host that answers as a healthy one ----------------------------------------------------
_SCRIPT_NAMES = {text: name for name, text in posix_scripts().items()}
_STAT = "cpu  100 0 100 1000 0 0 0 0 0 0"


def shown(argv: Sequence[str]) -> str:
    """A command as the plan shows it: nicbench's own scripts by their file name."""
    words = list(argv)
    if len(words) >= 4 and words[:2] == ["sh", "-c"] and words[2] in _SCRIPT_NAMES:
        return f"[{_SCRIPT_NAMES[words[2]]}] " + " ".join(shlex.quote(w) for w in words[4:])
    return display(words)


class PlanConnection(Connection):
    """Records every command; answers as a healthy Linux host would."""

    def __init__(self, host: str, log: PlanLog, interfaces: dict[str, str], shell: str):
        super().__init__(host, SHELLS[shell]())
        self.log = log
        self.interfaces = interfaces          # name -> address
        self.mtu: dict[str, int] = dict.fromkeys(interfaces, 1500)
        self.sysctl: dict[str, str] = {}

    def _exec(self, argv: Sequence[str], timeout: float,
              pidfile: str | None = None) -> Result:
        words = list(argv)
        command = shown(words)     # nicbench's scripts by name, here and in errors
        self.log.sent.append(Sent(self.host, self.log.where, command))
        out, rc = self._answer(words)
        return Result(host=self.host, command=command, stdout=out, stderr="",
                      exit_status=rc, duration_s=0.0, argv=tuple(words))

    def _answer(self, w: list[str]) -> tuple[str, int]:
        script = _SCRIPT_NAMES.get(w[2], "") if w[:2] == ["sh", "-c"] and len(w) > 2 else ""
        if script == "server_start.sh":
            return f"4242 {w[4]}\nlistening yes\nended no\n{_STAT}\n", 0
        if script == "client_run.sh":
            return "", 0
        if script == "server_finish.sh":
            return f"@@nicbench-cpu1@@ {_STAT}\n@@nicbench-out@@\n\n@@nicbench-err@@\n" \
                   "\n@@nicbench-rc@@\n0\n", 0
        if script == "reap.sh":
            return "".join(f"gone {p}\n" for p in w[4:]), 0
        if w[:2] == ["sh", "-c"] and "uname -r" in w[2]:
            return f"(planned)\n{self.host}\n\n\n", 0
        if w[:3] == ["ip", "-j", "-d"] and w[-1] in self.interfaces:
            iface = w[-1]
            return json.dumps([{"ifname": iface, "mtu": self.mtu[iface], "max_mtu": 65535,
                                "operstate": "UP", "flags": ["UP", "LOWER_UP"],
                                "addr_info": [{"local": self.interfaces[iface]}]}]), 0
        if w[0] == "cat" and w[1].startswith("/sys/class/net/"):
            return f"{self.mtu.get(w[1].split('/')[4], 1500)}\n", 0
        if w[:3] == ["ip", "link", "set"]:
            self.mtu[w[4]] = int(w[6])
            return "", 0
        if w[:2] == ["sysctl", "-n"]:
            return self.sysctl.get(w[2], "(current)") + "\n", 0
        if w[:2] == ["sysctl", "-w"]:
            name, _, value = w[2].partition("=")
            self.sysctl[name] = value
            return "", 0
        if w[0] == "head" and "/proc/stat" in w:
            return _STAT + "\n", 0
        if w[0] == "dpkg-query":
            return "(planned)", 0
        if w[0] == "ethtool":
            return "", 1
        return "", 0


class _WindowsPlanAnswer:
    """Planning answers for a Windows host: the scripted Windows host (which answers the
    decoded scripts as real Windows prints them) with every frame size accepted, back
    from a reboot at the first probe, and servers that print a report (so a trial takes
    its usual path, and the plan counts its usual process starts); every script recorded
    decoded. The probe after a restart is shown with the bounds of the wait it
    stands for (``wait``: the platform's). A second probe for one restart means the wait
    is looping: the plan stops there, before it fills the memory with probes."""

    def __init__(self, name: str, log: PlanLog, host: Any):
        self.name, self.log, self.host = name, log, host
        self.wait: Callable[[], str] = lambda: ""
        self._probes: int | None = None       # boot-time probes since the last restart

    def __call__(self, call: Any) -> Any:
        from nicbench.remote.powershell import script_body

        script = script_body(call.argv)
        if call.label == "shutdown.exe":
            self._probes = 0
        elif call.label == "last-boot" and self._probes is not None:
            self._probes += 1
            if self._probes > 1:
                raise PlanLoopError(f"{self.name}: the planned reboot was waited for with "
                                    "a second probe; the planning host should be back at "
                                    "the first (a reboot-wait that loops)")
            script = f"# {self.wait()}\n{script}"
        else:
            self._probes = None
        self.log.sent.append(Sent(self.name, self.log.where, script))
        return self.host(call)

    def reconnect(self) -> None:
        self.host.reconnect()


class PlanHosts:
    """Planning hosts for a Runner: the inventory's platform classes over PlanConnections,
    made with the profile's ``options`` as HostPool makes them for a run."""

    def __init__(self, inventory: Inventory, log: PlanLog,
                 options: PlatformOptions | None = None):
        self.inventory = inventory
        self.log = log
        self.options = options or PlatformOptions()
        self._platforms: dict[str, Platform] = {}
        self._pair: Any = None     # the scripted Windows hosts, when there are any

    def platform(self, name: str) -> Platform:
        if name not in self._platforms:
            host = self.inventory.host(name)
            interfaces = {side.interface: side.address for p in self.inventory.pairs
                          for side in (p.a, p.b) if side.host == name}
            if host.os == "windows":
                self._platforms[name] = self._windows(name, interfaces, host.tools)
            else:
                conn = PlanConnection(name, self.log, interfaces, "posix")
                plat = PLATFORMS[host.os](conn, tools=host.tools, options=self.options)
                if isinstance(plat, LinuxPlatform):
                    plat.finish_on_a_thread = False
                self._platforms[name] = plat
        return self._platforms[name]

    def _windows(self, name: str, interfaces: dict[str, str],
                 tools: dict[str, str]) -> Platform:
        from nicbench.platforms.fake_windows import (FakeAdapter, FakeWindowsHost,
                                                     FakeWindowsPair, ToolRun)
        from nicbench.platforms.windows import WindowsPlatform
        from nicbench.remote.fake import ReplayConnection
        from nicbench.remote.powershell import WindowsShell

        if self._pair is None:
            self._pair = FakeWindowsPair(outside=self._outside)
        host = self._pair.add(FakeWindowsHost(
            name, {i: FakeAdapter(addresses=(a,), numeric=(1514, 16128, 1))
                   for i, a in interfaces.items()},
            tool_run=lambda h, argv: ToolRun(server="(planned)\n"), down_probes=0))
        answer = _WindowsPlanAnswer(name, self.log, host)
        conn = ReplayConnection(name, WindowsShell(), answer)
        plat = WindowsPlatform(conn, tools=tools, options=self.options)
        answer.wait = lambda: f"wait for the reboot: this probe {plat.reboot_wait.text()}"
        return plat

    def _outside(self, address: str) -> int | None:
        """A planned Linux peer of a Windows host, as its pings see it: the MTU its
        interface has at this point of the plan (1500 until it is planned)."""
        for pair in self.inventory.pairs:
            for side in (pair.a, pair.b):
                if side.address == address and \
                        self.inventory.host(side.host).os != "windows":
                    plat = self._platforms.get(side.host)
                    conn = plat.conn if plat is not None else None
                    return conn.mtu.get(side.interface, 1500) \
                        if isinstance(conn, PlanConnection) else 1500
        return None

    def close(self) -> None:
        pass


# -- trials, planned ---------------------------------------------------------------------
class PlanTrial:
    """The Runner's trial function in a plan (see :meth:`__call__`)."""

    def __init__(self, log: PlanLog):
        self.log = log

    def __call__(self, ctx: TrialContext, test: TestSpec, params: dict[str, Any], *,
                 repetition: int, kind: Kind = Kind.REPETITION,
                 offered_bps: int | None = None, timeout_s: float = 120.0) -> TrialRecord:
        self.log.where = f"{ctx.pair} {ctx.point} {test.name} #{repetition}" + (
            f" offered {offered_bps / 1e6:g} Mbit/s" if offered_bps else "") + (
            _frames_offered(params, offered_bps) if test.frame_search else "")
        try:
            return plan_trial(ctx, test, params, repetition=repetition, kind=kind,
                              offered_bps=offered_bps, timeout_s=timeout_s)
        finally:
            self.log.where = f"{ctx.pair} {ctx.point}"


def _frames_offered(params: dict[str, Any], offered_bps: int | None) -> str:
    """A small-packet probe's frame size and frame rate, as the search offers them."""
    payload = params.get("length")
    if not isinstance(payload, int) or not offered_bps:
        return ""
    return (f" ({payload + ethernet.FRAME_OVERHEAD} B frames, "
            f"{offered_bps // (payload * 8):,} frames/s)")


def plan_trial(ctx: TrialContext, test: TestSpec, params: dict[str, Any], *,
               repetition: int, kind: Kind = Kind.REPETITION,
               offered_bps: int | None = None, timeout_s: float = 120.0) -> TrialRecord:
    """What run_trial sends, without judging anything: each role's argv from its tool's
    driver, through the platforms' own three steps, in the order the trial sends them
    (every server, the finishes that overlap their clients, every client, then the
    finishes that come after the clients)."""
    trial_id, name = trial_names(ctx, test.name, kind, repetition, offered_bps)
    tag = f"nicbench-{name}-@trial@"
    roles = [(test.tool, test.protocol, params, offered_bps, tag)] + [
        (spec.tool, spec.protocol, beside_params(ctx, spec), None, f"{tag}.{spec.role}")
        for spec in test.beside]
    plans = [_plan_role(ctx, tool, protocol, p, rate, stem, name)
             for tool, protocol, p, rate, stem in roles]
    stems = [r[4] for r in roles]
    finishes = []
    for plan, stem in zip(plans, stems, strict=True):
        started = ctx.receiver.start_server(plan.server, ctx.receiver.scratch_file(stem + ".d"),
                                            plan.port, plan.listen_protocol, LISTEN_TIMEOUT_S)
        end = server_end(plan, timeout_s, overlap=ctx.receiver.conn is not ctx.sender.conn)
        finishes.append((started, end))
    later = []
    for started, end in finishes:
        finishing = ctx.receiver.begin_finish(started.server, end)
        if finishing.overlapped:     # sent as the clients start: shown before them
            finishing.result()
        else:
            later.append(finishing)
    # the clients as the trial starts them: those beside the load on their threads, then
    # the load's
    for i in [*range(1, len(plans)), 0]:
        ctx.sender.run_client(plans[i].client, client_timeout_s(plans[i], timeout_s),
                              ctx.sender.scratch_file(stems[i] + ".pid"),
                              plans[i].client_outfile)
    for finishing in later:
        finishing.result()
    now = time.time()
    plan = plans[0]
    return TrialRecord(
        run_id=ctx.run_id, trial_id=trial_id, pair=ctx.pair, adapter=ctx.adapter,
        adapter_label=ctx.adapter_label, tool=test.tool, test=test.name,
        protocol=test.protocol, point=ctx.point, mtu=ctx.mtu, repetition=repetition,
        kind=kind, status=Status.OK, offered_bps=offered_bps,
        throughput_bps=float(offered_bps or 1e9),
        # no counts: delivery is then the rate against the offered one, all of it
        udp=UdpStats(lost=0, total=None, loss_pct=0.0),
        duration_s=plan.expected_s, commands={"server": display(plan.server),
                                              "client": display(plan.client)},
        started_at=now, ended_at=now,
        beside=[RoleResult(spec.role, spec.tool, spec.protocol, Status.OK,
                           commands={"server": display(p.server), "client": display(p.client)})
                for spec, p in zip(test.beside, plans[1:], strict=True)])


def _plan_role(ctx: TrialContext, tool: str, protocol: str, params: dict[str, Any],
               offered_bps: int | None, stem: str, name: str) -> Plan:
    ends = Endpoints(ctx.receiver_addr, ctx.sender_addr, protocol, offered_bps,
                     receiver_os=ctx.receiver.os_name, sender_os=ctx.sender.os_name,
                     client_file=ctx.sender.scratch_file(stem + ".out"))
    return TOOLS[tool].driver.plan(ctx.receiver.executable(tool), ctx.sender.executable(tool),
                                   params, ends, name)


# -- the plan ---------------------------------------------------------------------------
@dataclass
class RunPlan:
    profile: Profile
    pairs: list[str]
    sent: list[Sent]
    trials: int
    tool_s: float
    estimate_s: float
    schedule: list[Slot]             # when each pair would run
    trials_planned: list[TrialCommands] = field(default_factory=list)
    # Tests whose repetitions stop once the figure is stable plan a range: the fewest
    # trials and time (every test stable at its min), the above being the most.
    trials_min: int | None = None
    estimate_min_s: float | None = None
    # Points the planning hosts refused, each with why: (pair, point, reason).
    skipped: list[tuple[str, str, str]] = field(default_factory=list)
    # powershell.exe starts on Windows hosts: in all (each host's warm sessions), and in
    # the trials (none: the sessions run them); the trials on pairs with a Windows host.
    windows_starts: int = 0
    windows_trials: int = 0
    windows_trial_starts: int = 0


@dataclass(frozen=True)
class TrialCommands:
    """A planned trial's tool commands, as a run stores them in trials.jsonl (paths of
    the trial's own files end in ``@trial@`` where a run has a random token)."""

    pair: str
    point: str
    test: str
    repetition: int | None
    offered_bps: float | None
    server: str
    client: str


def same_commands(planned: str, ran: str) -> bool:
    """Is a command a run stored the planned one (its per-attempt token aside)?"""
    return re.sub(r"-[0-9a-f]{8}(\.\w+)", r"-@trial@\1", ran) == planned


def make_plan(profile: Profile, inventory: Inventory, pairs: list[str] | None = None,
              parallel: int = 1) -> RunPlan:
    log = PlanLog()
    skipped: list[tuple[str, str, str]] = []

    def where(event: ev.Event) -> None:
        if isinstance(event, ev.PairStarted):
            log.where = f"{event.pair} setup"
        elif isinstance(event, ev.PointStarted):
            log.where = f"{event.pair} {event.point}"
        elif isinstance(event, ev.PointSkipped):
            skipped.append((event.pair, event.point, event.reason))

    commands: list[TrialCommands] = []

    def planned(r: TrialRecord) -> None:     # each record as stored, in file order
        if r.commands:
            commands.append(TrialCommands(r.pair, r.point, r.test, r.repetition,
                                          r.offered_bps, r.commands["server"],
                                          r.commands["client"]))

    with tempfile.TemporaryDirectory(prefix="nicbench-plan-") as tmp:
        hosts = PlanHosts(inventory, log, PlatformOptions.of(profile))
        runner = Runner(profile, inventory, Path(tmp) / "run", pairs=pairs, hosts=hosts,
                        trial=PlanTrial(log), listener=where,
                        sinks=[planned], scratch=True)
        runner.run()
        chosen = [p.name for p in runner.pairs]
        trials = runner.progress.total
    starts = windows_starts(log.sent, inventory)
    windows_trials = sum(1 for c in commands if _has_windows(inventory, c.pair))
    starts_s = starts * POWERSHELL_START_S
    tool_s, estimate, schedule = _estimate(profile, inventory, chosen, parallel, trials,
                                           profile.planned_trials, starts_s)
    plan = RunPlan(profile, chosen, log.sent, trials, tool_s, estimate, schedule, commands,
                   skipped=skipped, windows_starts=starts, windows_trials=windows_trials,
                   windows_trial_starts=0)
    fewest = sum(measure_for(profile, t).planned_min() for pt in profile.points
                 for t in profile.tests_at(pt)) * len(chosen)
    if fewest != trials:
        plan.trials_min = fewest
        plan.estimate_min_s = _estimate(profile, inventory, chosen, parallel, fewest,
                                        lambda t: measure_for(profile, t).planned_min(),
                                        starts_s)[1]
    return plan


def windows_starts(sent: list[Sent], inventory: Inventory) -> int:
    """powershell.exe starts a run makes on its Windows hosts: each host's warm session,
    started by its first command, and again after each reboot (one per restart sent).
    Nothing else starts one: the sessions run every command and start the background
    tools themselves (counted through the scripted host: test_windows_starts.py)."""
    windows = {h.name for h in inventory.hosts if h.os == "windows"}
    mine = [s for s in sent if s.host in windows]
    return len({s.host for s in mine}) + sum(f"\n& '{RESTART}' " in s.command for s in mine)


def _has_windows(inventory: Inventory, pair: str) -> bool:
    p = inventory.pair(pair)
    return "windows" in (inventory.host(p.a.host).os, inventory.host(p.b.host).os)

def _estimate(profile: Profile, inventory: Inventory, chosen: list[str], parallel: int,
              trials: int, per_test: Callable[[TestSpec], int], starts_s: float = 0.0
              ) -> tuple[float, float, list[Slot]]:
    """Tool time, the whole run's time and the pairs' schedule for ``trials`` trials
    (``starts_s``: what the Windows hosts' process starts add)."""
    per_pair_tools = sum(per_test(t) * _tool_s(profile, t) + _confirm_s(profile, t)
                         for pt in profile.points for t in profile.tests_at(pt))
    tool_s = per_pair_tools * len(chosen)
    per_pair = (tool_s + trials * TRIAL_OVERHEAD_S + starts_s
                + sum(1 for pt in profile.points if profile.tests_at(pt)) * len(chosen)
                * POINT_OVERHEAD_S) / max(1, len(chosen))
    schedule = schedule_pairs(inventory, chosen, parallel, per_pair)
    return tool_s, max((s.end_s for s in schedule), default=0.0), schedule


def eta_prior(profile: Profile, inventory: Inventory, pairs: list[str],
              parallel: int = 1) -> tuple[float, dict[str, float]]:
    """What a run's ETA starts from: --plan's estimate of the whole run (without its
    simulated run: the same formula over the planned trials), and the planned seconds of
    one trial of each test, scaled so that the run's trials add up to that estimate (the
    points' tuning and the pairs' schedule spread over them)."""
    trials = profile.trials_per_pair * len(pairs)
    _, estimate, _ = _estimate(profile, inventory, pairs, parallel, trials,
                               profile.planned_trials)
    own = {t.name: _tool_s(profile, t) + TRIAL_OVERHEAD_S for pt in profile.points
           for t in profile.tests_at(pt)}
    planned = sum(profile.planned_trials(t) * own[t.name] for pt in profile.points
                  for t in profile.tests_at(pt)) * len(pairs)
    scale = estimate / planned if planned > 0 else 0.0
    return estimate, {name: s * scale for name, s in own.items()}


def _confirm_s(profile: Profile, test: TestSpec) -> float:
    """What a small-packet search's full-length trials add beyond a short trial's time."""
    fs = test.frame_search
    if fs is None:
        return 0.0
    return fs.planned_confirmations * max(0.0, fs.confirm_s - _tool_s(profile, test))


def _tool_s(profile: Profile, test: TestSpec) -> float:
    p = TOOLS[test.tool].params.model_validate(
        {k: v for k, v in test.params.items() if not str(v).startswith("$")})
    duration = getattr(p, "duration_s", None)
    if duration:
        # a tool's own start and end beyond its time (sockperf's), where its params say
        fixed = float(getattr(type(p), "fixed_overhead_s", 0.0))
        return float(duration) + float(getattr(p, "omit_s", 0) or 0) + fixed
    return min(UNKNOWN_TOOL_S, profile.timeout_for(test))


@dataclass(frozen=True)
class Slot:
    pair: str
    start_s: float
    end_s: float


def schedule_pairs(inventory: Inventory, pairs: list[str], parallel: int,
                   duration_s: float = 1.0) -> list[Slot]:
    """When each pair would run, by execution/schedule.py's rule: of the pairs waiting,
    the first in order whose hosts are all free starts as soon as a place is free (at
    most ``parallel`` at once), each taking ``duration_s``."""
    waiting = list(pairs)
    hosts = {n: {inventory.pair(n).a.host, inventory.pair(n).b.host} for n in pairs}
    running: list[Slot] = []
    done: list[Slot] = []
    now = 0.0
    while waiting:
        busy = set().union(*(hosts[s.pair] for s in running)) if running else set()
        ready = next((n for n in waiting if not hosts[n] & busy), None)
        if ready is not None and len(running) < max(1, parallel):
            waiting.remove(ready)
            running.append(Slot(ready, now, now + duration_s))
            continue
        first = min(running, key=lambda s: s.end_s)
        running.remove(first)
        done.append(first)
        now = first.end_s
    return sorted(done + running, key=lambda s: (s.start_s, pairs.index(s.pair)))


def render(plan: RunPlan) -> list[str]:
    """The plan as lines: a header, then per host every command in order; identical
    commands of consecutive repetitions are shown once with their count."""
    p = plan.profile
    out = [f"plan: {p.name} on {len(plan.pairs)} pairs ({', '.join(plan.pairs)}), "
           f"{len(p.points)} points, {len(p.tests)} tests: " + (
               f"{plan.trials} trials" if plan.trials_min is None else
               f"{plan.trials_min} to {plan.trials} trials (repetitions until stable)"),
           "estimated time: " + ("" if plan.estimate_min_s is None else
                                 f"{duration_text(plan.estimate_min_s)} to ")
           + f"{duration_text(plan.estimate_s)} (tools {duration_text(plan.tool_s)}, "
           f"harness ~{TRIAL_OVERHEAD_S:g} s per trial and ~{POINT_OVERHEAD_S:g} s per "
           "point" + _windows_cost(plan) + "; a UDP bisection's trials depend on what it "
           "measures)",
           "schedule: " + ", ".join(f"{s.pair} {duration_text(s.start_s)}-"
                                    f"{duration_text(s.end_s)}" for s in plan.schedule)]
    out += [_frame_search_line(t) for t in p.tests if t.frame_search]
    only: dict[tuple[str, ...], list[str]] = {}
    for t in p.tests:
        if t.points is not None:
            only.setdefault(tuple(t.points), []).append(t.name)
    out += [f"only at {', '.join(at)}: {', '.join(names)}" for at, names in only.items()]
    # A point the hosts would refuse: planned, not run, and said why (the trials it
    # would have run are in the count above, as a run counts them).
    out += [f"skipped: {pair} {point}: {reason}" for pair, point, reason in plan.skipped]
    hosts = list(dict.fromkeys(s.host for s in plan.sent))
    for host in hosts:
        out += ["", f"== {host}"]
        mine = [s for s in plan.sent if s.host == host]
        out += _collapsed(mine)
    return out


def _frame_search_line(test: TestSpec) -> str:
    """What a small-packet search plans per pair and point (only profiles that have one
    print it, so the others' plans stay as they were)."""
    fs = test.frame_search
    assert fs is not None
    per_frame = fs.planned_trials // len(fs.frames)
    full = fs.planned_confirmations // len(fs.frames)
    short = test.params.get("duration_s")
    of = f"{short:g} s " if isinstance(short, (int, float)) else ""
    return (f"small-packet search {test.name}: frames {', '.join(map(str, fs.frames))} B "
            f"(those the point's MTU carries); per frame an NDR (0 % loss) and a PDR "
            f"({fs.pdr_loss_pct:g} % loss) search, {of}trials narrowing to "
            f"{fs.resolution_pct:g} % of the rate found, settled by trials of "
            f"{fs.confirm_s:g} s (at most {fs.confirm_tries} a bound): about {per_frame} "
            f"trials per frame ({full} of {fs.confirm_s:g} s), {fs.planned_trials} per "
            f"point, at most {fs.most_trials}")


def _windows_cost(plan: RunPlan) -> str:
    if not plan.windows_starts:
        return ""
    per = plan.windows_trial_starts / max(1, plan.windows_trials)
    return (f", plus on Windows {plan.windows_starts} powershell.exe starts (one PowerShell "
            f"per host, again after each reboot; {per:.3g} per trial) at "
            f"~{POWERSHELL_START_S:g} s each, "
            f"{duration_text(plan.windows_starts * POWERSHELL_START_S)} in all (an expected "
            "cost, not yet measured on a real host)")


_REP = re.compile(r" #\d+")


def _collapsed(sent: list[Sent]) -> list[str]:
    lines: list[str] = []
    i = 0
    while i < len(sent):
        s = sent[i]
        # a block of one trial's commands, repeated with only the repetition number
        # (and its #N in the paths) changing
        if "#" in s.where:
            block = list(_trial_block(sent, i))
            n = len(block)
            reps = 1
            while _same_block(sent[i:i + n], sent[i + reps * n:i + (reps + 1) * n]):
                reps += 1
            for x in block:
                lines.append(_line(x))
            if reps > 1:
                lines.append(f"   ... and {reps - 1} more repetitions of the same")
            i += reps * n
            continue
        lines.append(_line(s))
        i += 1
    return lines


def _line(s: Sent) -> str:
    """One command; a script of several lines (PowerShell) indented under its place."""
    first, *rest = s.command.strip("\n").split("\n")
    return "\n".join([f"   [{s.where}] {first}"] + [f"       {r}" for r in rest])


def _trial_block(sent: list[Sent], i: int) -> list[Sent]:
    where = sent[i].where
    j = i
    while j < len(sent) and sent[j].where == where:
        j += 1
    return sent[i:j]


_PER_TRIAL = [(re.compile(r"\.[ru]\d+(\.\d+k)?-@trial@"), ".<rep>-@trial@"),
              (re.compile(r"\$Id = '\d+'"), "$Id = '<pid>'")]


def _norm(s: Sent) -> tuple[str, str]:
    """A command with what differs from one repetition to the next taken out: the
    repetition's number in its paths and a started process's id."""
    command = s.command
    for pattern, into in _PER_TRIAL:
        command = pattern.sub(into, command)
    return _REP.sub(" #N", s.where), command


def _same_block(a: list[Sent], b: list[Sent]) -> bool:
    return bool(a) and len(a) == len(b) and [_norm(x) for x in a] == [_norm(y) for y in b]


def duration_text(s: float) -> str:
    s = round(s)
    if s >= 3600:
        return f"{s // 3600} h {s % 3600 // 60:02d} min"
    return f"{s // 60} min {s % 60:02d} s" if s >= 60 else f"{s} s"
