"""What every part of a trial shares: the :class:`TrialContext` (the pair, the point, the
two hosts and the journal), a trial's names, and the bounds its tools run within.

``execution/plan.py`` plans trials with the same names, bounds and server ends.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from nicbench.platforms.base import Platform, ServerEnd
from nicbench.platforms.tuning import TuningSession
from nicbench.results.records import Kind
from nicbench.results.rundir import RunDir
from nicbench.tools.driver import Plan

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
    # The point's variables (points[].vars): what "$name" in the params of the tools
    # beside a test's own stands for (the test's own params come resolved).
    point_vars: dict[str, Any] = field(default_factory=dict)
    # The test interfaces, whose counters hold a trial to its plan (execution/conformance);
    # None: not read.
    receiver_iface: str | None = None
    sender_iface: str | None = None

    def expect(self, *items: tuple[Platform, str, str, int | None]) -> None:
        """Journal (platform, path, what, port) of each path before anything makes it."""
        if self.journal is not None:
            self.journal.expect_all(list(items))

    def cleared(self, *gone: tuple[Platform, str]) -> None:
        if self.journal is not None and gone:
            self.journal.cleared_all([(p.host, path) for p, path in gone])


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
