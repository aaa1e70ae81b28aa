"""Rules about stored trials: selection over repetitions, when a UDP trial counts, and when
repetitions under an until-stable policy stop.

The reviews ran each TCP test 15 times and kept the best; netio averaged 10 runs. The
selected value follows the profile's ``select`` (best | mean | median); a summary always
carries best, median, mean, min, max and stdev, so a reader sees the spread.

A UDP trial counts (:func:`passes`) when it lost at most the search's ``loss_pct`` and
arrived in full. The engine's search and every reader of stored trials (summary, report)
apply the same rule, from here.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from nicbench.config.profile import UntilStable
from nicbench.results.records import TrialRecord
from nicbench.tools.registry import TOOLS


class Better(StrEnum):
    """Which way a test's figure is better: a rate higher, a round-trip time lower."""

    HIGHER = "higher"
    LOWER = "lower"


def better_of(tool: str, params: Mapping[str, Any] | None = None) -> Better:
    """Which way a test's figure is better, by the test, not only its tool: round trips
    (a latency tool's result shape, or a rate tool run in a round-trip mode: iperf 2's
    ``bounceback: true``) lower; a rate higher. A tool nicbench does not know: higher."""
    known = TOOLS.get(tool)
    if known is not None and known.result == "latency":
        return Better.LOWER
    return Better.LOWER if params and params.get("bounceback") is True else Better.HIGHER


def better_of_record(rec: TrialRecord) -> Better:
    """Which way a stored repetition's figure (:func:`figure`) is better: a repetition
    that holds round trips (whatever tool made them) lower, else higher."""
    return Better.LOWER if rec.latency is not None else Better.HIGHER


def figure(rec: TrialRecord) -> float | None:
    """The one number a repetition is selected and judged stable by: a latency trial's
    median round trip (us), else its throughput (bit/s)."""
    if rec.latency is not None:
        return rec.latency.p50_us
    return rec.throughput_bps


@dataclass(frozen=True)
class Summary:
    best: float | None
    median: float | None
    mean: float | None
    min: float | None
    max: float | None
    stdev: float | None

    def selected(self, rule: str) -> float | None:
        """best | mean | median; any other rule (a UDP search's) takes the best."""
        return {"mean": self.mean, "median": self.median}.get(rule, self.best)


def summarize(values: list[float], better: Better = Better.HIGHER) -> Summary:
    """The spread of ``values``; ``best`` is the highest, or for a lower-is-better figure
    (``Better.LOWER``: round trips) the lowest."""
    if not values:
        return Summary(None, None, None, None, None, None)
    return Summary(
        best=min(values) if better is Better.LOWER else max(values),
        median=statistics.median(values), mean=statistics.fmean(values),
        min=min(values), max=max(values),
        stdev=statistics.stdev(values) if len(values) > 1 else 0.0)


# A rate counts only if it also arrived: a sender held back by its own queue (the socket
# blocks instead of dropping) loses nothing yet delivers far less than it was asked to.
# 0.5 % leaves room for iperf's rates printed to 3 significant digits (at most 0.25 %
# from 200 Mbit/s up) while a step of 10 Mbit/s above a ceiling near 600 (1.7 %) fails.
SHORTFALL = 0.005


def passes(rec: TrialRecord, loss_pct: float) -> bool:
    """A UDP trial counts when it succeeded, lost at most ``loss_pct`` (the receiver's
    lost/total where it reports one, else received against offered), and delivered the
    offered rate (within ``SHORTFALL``)."""
    loss = rec.udp.loss_pct if rec.udp is not None else None
    if loss is None and rec.throughput_bps is not None and rec.offered_bps:
        loss = max(0.0, 100.0 * (1 - rec.throughput_bps / rec.offered_bps))
    if not rec.ok or loss is None or loss > loss_pct:
        return False
    return not (rec.offered_bps and rec.throughput_bps is not None and rec.throughput_bps < rec.offered_bps * (1 - SHORTFALL))


@dataclass(frozen=True)
class Stop:
    """Why a test's repetitions stopped at a point, under an until-stable policy."""

    ran: int                     # repetitions run (failed ones included)
    rsd_pct: float | None        # relative spread of the successful ones, None under two
    stable: bool                 # True: the spread reached the target; False: max reached

    def words(self) -> str:
        spread = "no spread (fewer than two succeeded)" if self.rsd_pct is None else \
            f"{self.rsd_pct:.2f} % spread"
        if self.stable:
            return f"stable at {self.rsd_pct:.2f} % after {self.ran}"
        return f"max reached ({self.ran}) at {spread}"


def rsd_pct(values: list[float]) -> float | None:
    """Relative standard deviation (sample stdev / mean) in %, None under two values."""
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    return 100.0 * statistics.stdev(values) / mean if mean else None


def stopped(values: list[float], ran: int, policy: UntilStable) -> Stop | None:
    """After ``ran`` repetitions of which ``values`` (in order) succeeded: stop here, and
    why, or go on (None). Stop once at least ``min`` succeeded and their relative spread is
    at most ``until_rsd_pct``, or when ``max`` have run."""
    spread = rsd_pct(values)
    if len(values) >= policy.min and spread is not None and spread <= policy.until_rsd_pct:
        return Stop(ran, spread, stable=True)
    if ran >= policy.max:
        return Stop(ran, spread, stable=False)
    return None


def first_stop(recs: Iterable[TrialRecord | None], policy: UntilStable) -> Stop | None:
    """Replay the rule over repetitions in order (1, 2, ...): where the first stop came, or
    None if it has not come (None in ``recs`` ends the replay: a repetition not stored)."""
    values: list[float] = []
    for ran, rec in enumerate(recs, 1):
        if rec is None:
            return None
        value = figure(rec) if rec.ok else None
        if value is not None:
            values.append(value)
        stop = stopped(values, ran, policy)
        if stop is not None:
            return stop
    return None
