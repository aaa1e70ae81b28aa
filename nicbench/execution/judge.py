"""A tool's outputs judged: its figures read by its own driver, and why it did not
measure when it did not (its own error text, a non-zero exit, output that cannot be
read, no figure, a transfer that moved almost nothing over a dead link). A latency
tool's figure is its round trips (``latency``), which it gives instead of a rate."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from nicbench.errors import ParseError
from nicbench.remote.result import Result
from nicbench.results.records import Cpu, CpuSplit, Failure, RoleResult, Status, TrialRecord
from nicbench.tools.base import ParsedRun
from nicbench.tools.driver import Driver

# A transfer slower than this moved "nothing or almost nothing": a dead or stalled link;
# a UDP trial offered less than 100 times it, less than DEAD_LINK_SHARE of its offer (a
# small-packet search offers 214 kbit/s, 1 % of Fast Ethernet's line rate at 64 bytes).
DEAD_LINK_BPS = 1_000_000
DEAD_LINK_SHARE = 0.01


def dead_link_bps(offered_bps: float | None) -> float:
    """Below this rate a transfer moved almost nothing."""
    return DEAD_LINK_BPS if not offered_bps else min(DEAD_LINK_BPS,
                                                     offered_bps * DEAD_LINK_SHARE)

# Where a tool's outcome goes: the trial's record for the test's own tool, a RoleResult
# for a tool beside it.
Outcome = TrialRecord | RoleResult

_ERROR_LINE = re.compile(r"error|fail|unable|cannot|denied|in use|refused", re.I)
_JSON_ERROR = re.compile(r'^"error"\s*:\s*"(?P<text>.*)",?$')


def error_words(text: str) -> str:
    """The line of a tool's output that says what went wrong (iperf3 -J: its "error"
    value), else its last lines."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if _ERROR_LINE.search(ln):
            m = _JSON_ERROR.match(ln)
            return m["text"] if m else ln
    return " | ".join(lines[-3:]) or "no output"


@dataclass(frozen=True)
class Judgement:
    """One tool's outputs judged: what it printed (None where there was nothing to read)
    and whether it stands. Made by :func:`judge`, failed further by the checks after it
    (``conformance.held_to_plan``), and written to the record once, by :func:`apply`."""

    parsed: ParsedRun | None
    status: Status
    failure: Failure | None = None
    reason: str | None = None
    # the hosts' CPU over the transfer (the test's own tool only): sender, receiver
    cpu: tuple[CpuSplit, CpuSplit] | None = None

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    def failing(self, failure: Failure, reason: str) -> Judgement:
        return replace(self, status=Status.FAILED, failure=failure, reason=reason)


def not_read(failure: Failure, reason: str) -> Judgement:
    """Outputs that were not read (over the output cap, say)."""
    return Judgement(None, Status.FAILED, failure, reason)


def judge(driver: Driver, client: Result, client_text: str, server_text: str,
          outfile_text: str | None, protocol: str,
          offered_bps: float | None = None) -> Judgement:
    """The outputs read by the tool's own driver, and whether they stand: the tool's own
    error, a non-zero exit, no figure, or a transfer that moved almost nothing over a
    dead link fail it."""
    try:
        parsed = driver.interpret(client_text, server_text, outfile_text, protocol)
    except ParseError as exc:
        if client.exit_status:
            return not_read(Failure.EXIT_STATUS, f"exit {client.exit_status}: "
                            f"{client.tail() or 'output not understood: ' + exc.one_line()}")
        return not_read(Failure.UNPARSED, f"output not understood: {exc.one_line()}")
    j = Judgement(parsed, Status.OK)
    if parsed.error:
        return j.failing(Failure.NO_RECEIVER_REPORT if parsed.no_receiver_report
                         else Failure.TOOL_ERROR, f"tool error: {parsed.error}")
    if client.exit_status:
        return j.failing(Failure.EXIT_STATUS, f"exit {client.exit_status}: {client.tail()}")
    if parsed.latency is not None:
        # A latency run is judged by its round trips: its few bytes are no rate.
        return j if parsed.latency.samples > 0 else j.failing(Failure.NO_RESULT,
                                                              "no round trip completed")
    if parsed.throughput_bps is None:
        return j.failing(Failure.NO_RESULT, "no throughput in the output")
    if parsed.throughput_bps < dead_link_bps(offered_bps):
        return j.failing(Failure.DEAD_LINK,
                         f"transfer moved almost nothing ({parsed.throughput_bps:.0f} "
                         "bit/s): the link is dead or stalled")
    return j


def apply(out: Outcome, j: Judgement) -> None:
    """The one place a judgement is written to its outcome: the figures it read (also
    those of a failed run, as the tool printed them), its CPU, then its status."""
    if j.cpu is not None and isinstance(out, TrialRecord):
        out.cpu = Cpu.of(*j.cpu)
    parsed = j.parsed
    if parsed is not None:
        out.version = parsed.version or out.version
        out.throughput_bps = parsed.throughput_bps
        out.sent_bps = parsed.sent_bps
        out.duration_s = parsed.duration_s
        out.udp = parsed.udp
        out.latency = parsed.latency
        if isinstance(out, TrialRecord):
            out.cpu_tool_pct = parsed.cpu_pct
            out.bidir = parsed.bidir
            out.points = list(parsed.points)
            out.extra = {k: v for k, v in parsed.extra.items()
                         if isinstance(v, (str, int, float, bool)) or v is None}
    if j.ok:
        out.status = Status.OK
    else:
        assert j.failure is not None and j.reason is not None
        out.fail(j.failure, j.reason)
