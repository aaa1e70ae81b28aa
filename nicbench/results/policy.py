"""Rules about stored trials: selection over repetitions, and when a UDP trial counts.

The reviews ran each TCP test 15 times and kept the best; netio averaged 10 runs. The
selected value follows the profile's ``select`` (best | mean | median); a summary always
carries best, median, mean, min, max and stdev, so a reader sees the spread.

A UDP trial counts (:func:`passes`) when it lost at most the search's ``loss_pct`` and
arrived in full. The engine's search and every reader of stored trials (summary, report)
apply the same rule, from here.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from nicbench.results.records import TrialRecord


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


def summarize(values: list[float]) -> Summary:
    if not values:
        return Summary(None, None, None, None, None, None)
    return Summary(
        best=max(values),
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
