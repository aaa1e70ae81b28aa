"""A trial held to its own plan before it counts.

A tool can exit 0 and print a figure for a transfer that was not the one planned: the
test link went down for a few seconds during a 1 s iperf3 trial and it printed 15.8
Mbit/s over 14.3 s. Such a trial is failed here, with the reason, so a resume measures
it again (failures are measured again unless ``--keep-failed``). Three checks, in this
order (the first that fails names the failure):

- **the link went down** (:attr:`Failure.LINK_DOWN`): the test interface's carrier
  changed on either host between the readings around the transfer, or it is not up
  after it;
- **it ran far past its plan** (:attr:`Failure.OVERRAN`): the tool's own duration is
  more than ``max(OVERRUN_MIN_S, OVERRUN_SHARE x planned)`` beyond the duration its
  driver planned (iperf3: ``-t`` plus ``--omit``); tools that plan none (netPIPE,
  netio) are not held to one;
- **it moved far less than it says** (:attr:`Failure.SHORT_TRANSFER`): on either host
  the test interface carried (sent plus received: a direction-free count, headers and
  other traffic included, so it can only be larger) less than ``MOVED_SHARE`` of the
  bytes the tool says reached the receiver (its rate times its duration).

A check whose readings a host cannot give (counters missing on an OS, a platform that
reads none, a counter that went backwards) is not available: never a failure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from nicbench.platforms.base import LinkCounters
from nicbench.execution.judge import Judgement
from nicbench.results.records import Failure
from nicbench.tools.base import ParsedRun

OVERRUN_MIN_S = 2.0
OVERRUN_SHARE = 0.5
MOVED_SHARE = 0.5


@dataclass(frozen=True)
class LinkWindow:
    """One host's test interface read before and after a trial's transfer."""

    host: str
    iface: str
    before: LinkCounters | None
    after: LinkCounters | None


_Check = Callable[[ParsedRun, "float | None", Sequence[LinkWindow]],
                  "tuple[Failure, str] | None"]


def held_to_plan(j: Judgement, planned_s: float | None,
                 links: Sequence[LinkWindow]) -> Judgement:
    """``j``, failed if it was ok and its trial lost its link, overran its plan or moved
    too little; a trial failed as a dead link whose carrier went down says so (the
    cause, not the symptom)."""
    if j.parsed is None:
        return j
    if j.ok:
        checks: tuple[_Check, ...] = (_link_down, _overran, _short)
    elif j.failure is Failure.DEAD_LINK:
        checks = (_link_down,)
    else:
        return j
    for check in checks:
        found = check(j.parsed, planned_s, links)
        if found is not None:
            return j.failing(*found)
    return j


def overrun_limit_s(planned_s: float) -> float:
    """How long a trial planned for ``planned_s`` may run before it overran."""
    return planned_s + max(OVERRUN_MIN_S, OVERRUN_SHARE * planned_s)


def _link_down(run: ParsedRun, planned_s: float | None,
               links: Sequence[LinkWindow]) -> tuple[Failure, str] | None:
    for w in links:
        if w.before is None or w.after is None:
            continue
        b, a = w.before, w.after
        changes = _delta(b.carrier_changes, a.carrier_changes)
        downs = _delta(b.carrier_down, a.carrier_down)
        if changes or downs or a.up is False:
            said = (f"carrier lost {downs} time{'s' * (downs != 1)}" if downs
                    else f"carrier changed {changes} time{'s' * (changes != 1)}" if changes
                    else "down after the transfer")
            return (Failure.LINK_DOWN,
                    f"link down during the trial ({w.host} {w.iface}: {said})")
    return None


def _overran(run: ParsedRun, planned_s: float | None,
             links: Sequence[LinkWindow]) -> tuple[Failure, str] | None:
    ran = run.duration_s
    if not planned_s or ran is None or ran <= overrun_limit_s(planned_s):
        return None
    return (Failure.OVERRAN, f"ran {ran:.1f} s of a planned {planned_s:g} s (more than "
                             f"{overrun_limit_s(planned_s):g} s is not the trial planned)")


def _short(run: ParsedRun, planned_s: float | None,
           links: Sequence[LinkWindow]) -> tuple[Failure, str] | None:
    if run.throughput_bps is None or not run.duration_s or run.points:
        return None
    said = run.throughput_bps * run.duration_s / 8
    for w in links:
        moved = _moved(w)
        if moved is not None and moved < MOVED_SHARE * said:
            return (Failure.SHORT_TRANSFER,
                    f"moved {moved:,} bytes where the tool says {said:,.0f} "
                    f"({w.host} {w.iface} sent and received)")
    return None


def _delta(before: int | None, after: int | None) -> int | None:
    """A counter's growth; None where it is not read or went backwards (reset)."""
    if before is None or after is None or after < before:
        return None
    return after - before


def _moved(w: LinkWindow) -> int | None:
    if w.before is None or w.after is None:
        return None
    tx = _delta(w.before.tx_bytes, w.after.tx_bytes)
    rx = _delta(w.before.rx_bytes, w.after.rx_bytes)
    return None if tx is None or rx is None else tx + rx
