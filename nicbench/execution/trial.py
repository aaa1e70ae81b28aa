"""One trial on a pair: receiver up, sender run, both outputs kept, the outcome judged.

Failure is detected, never assumed away: a non-zero exit, the tool's own error text, a
timeout (the tool is killed on its host), output that cannot be read, and a transfer that
moved almost nothing (iperf exits 0 over a dead link) all give a failed trial with a
reason. Every trial is returned as a record, failed or not, with its raw output saved.
"""

from __future__ import annotations

import re
import time
import uuid
from dataclasses import dataclass
from typing import Any

from nicbench.errors import (CommandTimeout, ConnectError, HostKeyError, NicbenchError,
                             ParseError, RemoteError, ResultsWriteError)
from nicbench.interrupts import interrupts_held
from nicbench.remote.result import Result
from nicbench.platforms.base import Finishing, Platform, ServerEnd
from nicbench.platforms.tuning import TuningSession
from nicbench.remote.command import display
from nicbench.remote.connection import Background
from nicbench.results.records import Failure, Kind, Status, TrialRecord
from nicbench.results.store import RunDir
from nicbench.tools.driver import Driver, Endpoints, Plan
from nicbench.tools.registry import TOOLS

# A transfer slower than this moved "nothing or almost nothing": a dead or stalled link.
DEAD_LINK_BPS = 1_000_000
LISTEN_TIMEOUT_S = 10.0
TIMEOUT_MARGIN_S = 15.0
SERVER_EXIT_WAIT_S = 5.0


@dataclass
class TrialContext:
    run_dir: RunDir
    run_id: str
    pair: str
    adapter: str
    adapter_label: str
    point: str
    mtu: int
    receiver: Platform
    sender: Platform
    receiver_addr: str
    sender_addr: str
    # Where every process and file a trial makes on a host is journaled before it is
    # made, so that a controller that dies leaves a way to clean up (None: not kept).
    journal: TuningSession | None = None

    def expect(self, *items: tuple[Platform, str, str, int | None]) -> None:
        """Journal (platform, path, what, port) of each path before anything makes it."""
        if self.journal is not None:
            self.journal.expect_all(list(items))

    def cleared(self, *gone: tuple[Platform, str]) -> None:
        if self.journal is not None and gone:
            self.journal.cleared_all([(p.host, path) for p, path in gone])


def run_trial(ctx: TrialContext, test, params: dict[str, Any], *, repetition: int,
              kind: Kind = Kind.REPETITION, offered_bps: int | None = None,
              timeout_s: float = 120.0) -> TrialRecord:
    driver = TOOLS[test.tool].driver
    trial_id, tag = trial_names(ctx, test.name, kind, repetition, offered_bps)
    # Paths on the hosts, unique to this attempt (a trial retried, or resumed after a
    # crash, never meets what an earlier attempt left).
    stem = f"nicbench-{tag}-{uuid.uuid4().hex[:8]}"
    server_dir = ctx.receiver.scratch_file(stem + ".d")
    client_pid = ctx.sender.scratch_file(stem + ".pid")
    ends = Endpoints(ctx.receiver_addr, ctx.sender_addr, test.protocol, offered_bps,
                     receiver_os=ctx.receiver.os_name, sender_os=ctx.sender.os_name,
                     client_file=ctx.sender.scratch_file(stem + ".out"))
    rec = TrialRecord(
        run_id=ctx.run_id, trial_id=trial_id, pair=ctx.pair, adapter=ctx.adapter,
        adapter_label=ctx.adapter_label, tool=test.tool, test=test.name,
        protocol=test.protocol, point=ctx.point, mtu=ctx.mtu, repetition=repetition,
        kind=kind, status=Status.FAILED, offered_bps=offered_bps,
        hosts={"receiver": ctx.receiver.host, "sender": ctx.sender.host},
        started_at=time.time())
    t0 = time.monotonic()
    client_paths: list[str] = []
    client_state = "not started"
    server_asked = False
    server: Background | None = None
    finishing: Finishing | None = None
    client_text = server_text = ""
    outfile_text: str | None = None
    try:
        plan = driver.plan(ctx.receiver.executable(test.tool), ctx.sender.executable(test.tool),
                           params, ends, tag)
        rec.commands = {"server": display(plan.server), "client": display(plan.client)}
        rec.version = _tool_version(ctx.sender, test.tool)
        client_timeout = client_timeout_s(plan, timeout_s)
        # Every path the trial will make, journaled in one write before any is made.
        client_paths.append(client_pid)
        journaled = [(ctx.receiver, server_dir, f"server {display(plan.server)}", plan.port),
                     (ctx.sender, client_pid, f"client {display(plan.client)}", None)]
        if plan.client_outfile:
            client_paths.append(plan.client_outfile)
            journaled.append((ctx.sender, plan.client_outfile,
                              f"output of {plan.client[0]}", None))
        ctx.expect(*journaled)
        server_asked = True     # from here a lost connection may leave a server behind
        with interrupts_held():     # a Ctrl-C here would leave a server nobody stops
            started = ctx.receiver.start_server(plan.server, server_dir, plan.port,
                                                plan.listen_protocol, LISTEN_TIMEOUT_S)
            server = started.server
        if not started.listening and not started.ended:
            rec.fail(Failure.NOT_LISTENING, f"{ctx.receiver.host}: nothing listened on "
                     f"{plan.listen_protocol} port {plan.port} within {LISTEN_TIMEOUT_S:g} s")
            return rec
        # Something listens on the port, but it may not be our server: one that could not
        # bind (another tool holds the port; NPtcp binds every address) has ended by now,
        # and the client would measure whatever does listen there.
        if started.ended:
            res = server.collect()
            server_text = res.stdout + res.stderr
            rec.exit_status["server"] = res.exit_status
            rec.fail(Failure.SERVER_ENDED,
                     f"the receiver's server ended before the transfer (exit "
                     f"{res.exit_status}): {_error_words(res.stdout + chr(10) + res.stderr)}")
            return rec
        client_state = "running"
        # The receiver's finish is begun with the client; where the two are on different
        # connections it waits there while the client runs.
        finishing = ctx.receiver.begin_finish(
            server, server_end(plan, timeout_s, overlap=ctx.receiver.conn is not ctx.sender.conn))
        try:
            ran = ctx.sender.run_client(plan.client, client_timeout, client_pid,
                                        plan.client_outfile)
        except CommandTimeout as exc:
            client_text = exc.result.stdout + exc.result.stderr
            rec.fail(Failure.TIMEOUT,
                     f"timeout: the sender ran past {client_timeout:g} s and was killed")
            _reap(ctx, ctx.sender, client_paths)
            client_state = "reaped"
            return rec
        client_state = "ended"
        client = ran.result
        client_text = client.stdout + (("\n" + client.stderr) if client.stderr.strip() else "")
        rec.exit_status["client"] = client.exit_status
        outfile_text = ran.outfile
        finish = finishing.result()
        server_text = finish.result.stdout + (("\n" + finish.result.stderr)
                                              if finish.result.stderr.strip() else "")
        rec.exit_status["server"] = finish.result.exit_status
        if ran.cpu0 and ran.cpu1:
            rec.cpu_sender_pct = ran.cpu1.busy_pct_since(ran.cpu0)
        if started.cpu and finish.cpu:
            rec.cpu_receiver_pct = finish.cpu.busy_pct_since(started.cpu)
        _judge(rec, driver, client, client_text, server_text, outfile_text)
        return rec
    except ResultsWriteError:
        raise       # the run cannot store results: stop it, do not record a failure
    except NicbenchError as exc:
        if rec.failure is None:
            lost = isinstance(exc, (ConnectError, HostKeyError))
            rec.fail(Failure.HOST_LOST if lost else
                     Failure.REMOTE if isinstance(exc, RemoteError) else Failure.TOOL_ERROR,
                     exc.one_line())
        return rec
    finally:
        if finishing is not None:
            with interrupts_held():
                finishing.abandon()     # a finish still under way (an error, Ctrl-C)
        if server is not None and not server.collected:
            try:
                with interrupts_held():
                    server.stop(grace_s=1.0)
                    res = server.collect()
                server_text = server_text or (res.stdout + res.stderr)
            except NicbenchError:
                pass
        # What is gone, in one journal write: the client's paths when its script removed
        # them as it ended, or it never started; the server's directory once collect
        # removed it, or it was never asked for. A client that ran past its time was
        # reaped (and cleared) above; a client or server whose connection was lost stays
        # journaled for the run's final restore.
        gone = [(ctx.sender, p) for p in client_paths
                if client_state in ("not started", "ended")]
        if not server_asked or (server is not None and server.collected):
            gone.append((ctx.receiver, server_dir))
        ctx.cleared(*gone)
        rec.raw = {role: ctx.run_dir.write_raw(trial_id, role, text)
                   for role, text in (("client", client_text), ("server", server_text),
                                      ("outfile", outfile_text)) if text}
        rec.wall_s = time.monotonic() - t0
        rec.ended_at = time.time()


def trial_names(ctx: TrialContext, test_name: str, kind: Kind, repetition: int,
                offered_bps: int | None) -> tuple[str, str]:
    """A trial's id (its key in trials.jsonl: pair, point, test, kind and repetition, and
    the offered rate of a UDP search probe) and the tag its paths on the hosts carry."""
    trial_id = f"{ctx.pair}.{ctx.point}.{test_name}.{kind.value[0]}{repetition}" + (
        f".{offered_bps // 1000}k" if offered_bps else "")
    return trial_id, trial_id.replace("/", "_")


def client_timeout_s(plan: Plan, timeout_s: float) -> float:
    """How long the sender may run: the tool's own duration and a margin where it says
    how long it runs, else the test's timeout."""
    return (plan.expected_s + TIMEOUT_MARGIN_S) if plan.expected_s else timeout_s


_ERROR_LINE = re.compile(r"error|fail|unable|cannot|denied|in use|refused", re.I)
_JSON_ERROR = re.compile(r'^"error"\s*:\s*"(?P<text>.*)",?$')


def _error_words(text: str) -> str:
    """The line of a tool's output that says what went wrong (iperf3 -J: its "error"
    value), else its last lines."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if _ERROR_LINE.search(ln):
            m = _JSON_ERROR.match(ln)
            return m["text"] if m else ln
    return " | ".join(lines[-3:]) or "no output"


def _reap(ctx: TrialContext, platform: Platform, paths: list[str]) -> None:
    """Remove what a killed command left at once (else the run's end does it)."""
    try:
        platform.reap(paths)
    except NicbenchError:
        return
    ctx.cleared(*[(platform, path) for path in paths])


def _tool_version(platform: Platform, tool: str) -> str | None:
    """The installed tool's version, for tools whose output does not print it (iperf 2
    clients, NPtcp). The run probed it for the manifest already; the platform caches it."""
    try:
        return platform.tool_version(tool, platform.executable(tool))
    except NicbenchError:
        return None


def server_end(plan: Plan, timeout_s: float = 120.0, overlap: bool = True) -> ServerEnd:
    """How the platform ends the server of a tool's plan; with the client's run time and
    limit where that end may be waited for while the client runs (``overlap``: the two
    ends are on different connections)."""
    # Only an end that comes by itself (an exit, a report) can be waited for alongside;
    # a settle time starts when the client has ended.
    ends_itself = plan.server_exits or plan.report_re is not None
    client = ({"client_s": plan.expected_s, "client_limit_s": client_timeout_s(plan, timeout_s)}
              if overlap and plan.finish_overlaps and plan.expected_s and ends_itself else {})
    if plan.server_exits:
        return ServerEnd(True, None, 1, SERVER_EXIT_WAIT_S, plan.stop_signal, **client)
    return ServerEnd(False, plan.report_re, plan.report_count,
                     plan.report_wait_s if plan.report_re else plan.settle_s, plan.stop_signal,
                     **client)


def _judge(rec: TrialRecord, driver: Driver, client: Result, client_text: str,
           server_text: str, outfile_text: str | None) -> None:
    try:
        parsed = driver.interpret(client_text, server_text, outfile_text, rec.protocol)
    except ParseError as exc:
        if client.exit_status:
            rec.fail(Failure.EXIT_STATUS, f"exit {client.exit_status}: "
                     f"{client.tail() or 'output not understood: ' + exc.one_line()}")
        else:
            rec.fail(Failure.UNPARSED, f"output not understood: {exc.one_line()}")
        return
    rec.version = parsed.version or rec.version
    rec.throughput_bps = parsed.throughput_bps
    rec.sent_bps = parsed.sent_bps
    rec.duration_s = parsed.duration_s
    rec.cpu_tool_pct = parsed.cpu_pct
    rec.udp = parsed.udp
    rec.points = list(parsed.points)
    rec.extra = {k: v for k, v in parsed.extra.items()
                 if isinstance(v, (str, int, float, bool)) or v is None}
    if parsed.error:
        rec.fail(Failure.NO_RECEIVER_REPORT if parsed.no_receiver_report
                 else Failure.TOOL_ERROR,
                 f"tool error: {parsed.error}")
    elif client.exit_status:
        rec.fail(Failure.EXIT_STATUS, f"exit {client.exit_status}: {client.tail()}")
    elif parsed.throughput_bps is None:
        rec.fail(Failure.NO_RESULT, "no throughput in the output")
    elif parsed.throughput_bps < DEAD_LINK_BPS:
        rec.fail(Failure.DEAD_LINK,
                 f"transfer moved almost nothing ({parsed.throughput_bps:.0f} bit/s): "
                 "the link is dead or stalled")
    else:
        rec.status = Status.OK
