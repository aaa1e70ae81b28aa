"""A tool's outputs judged: its figures read by its own driver, and why it did not
measure when it did not (its own error text, a non-zero exit, output that cannot be
read, no figure, a transfer that moved almost nothing over a dead link). A latency
tool's figure is its round trips (``latency``), which it gives instead of a rate."""

from __future__ import annotations

import re

from nicbench.errors import ParseError
from nicbench.remote.result import Result
from nicbench.results.records import Failure, RoleResult, Status, TrialRecord
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


def judge(out: Outcome, driver: Driver, client: Result, client_text: str,
          server_text: str, outfile_text: str | None) -> None:
    try:
        parsed = driver.interpret(client_text, server_text, outfile_text, out.protocol)
    except ParseError as exc:
        if client.exit_status:
            out.fail(Failure.EXIT_STATUS, f"exit {client.exit_status}: "
                     f"{client.tail() or 'output not understood: ' + exc.one_line()}")
        else:
            out.fail(Failure.UNPARSED, f"output not understood: {exc.one_line()}")
        return
    out.version = parsed.version or out.version
    out.throughput_bps = parsed.throughput_bps
    out.sent_bps = parsed.sent_bps
    out.duration_s = parsed.duration_s
    if isinstance(out, TrialRecord):
        out.cpu_tool_pct = parsed.cpu_pct
    out.udp = parsed.udp
    out.latency = parsed.latency
    if isinstance(out, TrialRecord):
        out.bidir = parsed.bidir
        out.points = list(parsed.points)
        out.extra = {k: v for k, v in parsed.extra.items()
                     if isinstance(v, (str, int, float, bool)) or v is None}
    if parsed.error:
        out.fail(Failure.NO_RECEIVER_REPORT if parsed.no_receiver_report
                 else Failure.TOOL_ERROR,
                 f"tool error: {parsed.error}")
    elif client.exit_status:
        out.fail(Failure.EXIT_STATUS, f"exit {client.exit_status}: {client.tail()}")
    elif parsed.latency is not None:
        # A latency run is judged by its round trips: its few bytes are no rate.
        if parsed.latency.samples > 0:
            out.status = Status.OK
        else:
            out.fail(Failure.NO_RESULT, "no round trip completed")
    elif parsed.throughput_bps is None:
        out.fail(Failure.NO_RESULT, "no throughput in the output")
    elif parsed.throughput_bps < dead_link_bps(out.offered_bps if isinstance(out, TrialRecord)
                                               else None):
        out.fail(Failure.DEAD_LINK,
                 f"transfer moved almost nothing ({parsed.throughput_bps:.0f} bit/s): "
                 "the link is dead or stalled")
    else:
        out.status = Status.OK
