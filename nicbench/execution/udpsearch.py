"""The highest UDP rate that gets through, two ways.

``sweep`` is the reviews' method (Jan 2003, Windows section): offer 200 Mbit/s, then 210,
... up to 800, and record the highest rate actually received. ``bisect`` finds, with the
same resolution, the highest offered rate whose loss stays at or under ``loss_pct``, in
about log2((stop-start)/step) trials instead of (stop-start)/step. Both return every trial
they made; the caller stores them all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from nicbench.results.store import TrialRecord

Trial = Callable[[int], TrialRecord]  # offered bit/s -> a finished trial


@dataclass
class SearchResult:
    method: str
    best_bps: float | None        # the highest received rate that counts
    best_offered_bps: int | None
    trials: list[TrialRecord]


def within_loss(status: str, udp: dict | None, throughput_bps: float | None,
                offered_bps: float | None, loss_pct: float) -> bool:
    """A trial counts when it succeeded and lost at most ``loss_pct`` (the receiver's
    lost/total where it reports one, else received against offered)."""
    udp = udp or {}
    loss = udp.get("loss_pct")
    if loss is None and throughput_bps is not None and offered_bps:
        loss = max(0.0, 100.0 * (1 - throughput_bps / offered_bps))
    return status == "ok" and loss is not None and loss <= loss_pct


def passes(rec: TrialRecord, loss_pct: float) -> bool:
    return within_loss(rec.status, rec.udp, rec.throughput_bps, rec.offered_bps, loss_pct)


def sweep(trial: Trial, start: int, stop: int, step: int, max_trials: int = 1000) -> SearchResult:
    trials: list[TrialRecord] = []
    rate = start
    while rate <= stop and len(trials) < max_trials:
        trials.append(trial(rate))
        rate += step
    ok = [t for t in trials if t.status == "ok" and t.throughput_bps is not None]
    best = max(ok, key=lambda t: t.throughput_bps, default=None)
    return SearchResult("sweep", best.throughput_bps if best else None,
                        int(best.offered_bps) if best else None, trials)


def bisect(trial: Trial, start: int, stop: int, step: int, loss_pct: float,
           max_trials: int = 64) -> SearchResult:
    trials: list[TrialRecord] = []
    passed: list[TrialRecord] = []

    def probe(rate: int) -> bool:
        rec = trial(rate)
        trials.append(rec)
        if passes(rec, loss_pct):
            passed.append(rec)
            return True
        return False

    # Invariant: lo passes (or is below the range), hi fails (or is above it).
    steps = (stop - start) // step
    if probe(stop):
        lo_i, hi_i = steps, steps + 1
    elif not probe(start):
        lo_i, hi_i = -1, 0
    else:
        lo_i, hi_i = 0, steps
    while hi_i - lo_i > 1 and len(trials) < max_trials:
        mid = (lo_i + hi_i) // 2
        if probe(start + mid * step):
            lo_i = mid
        else:
            hi_i = mid
    best = max(passed, key=lambda t: t.offered_bps, default=None)
    return SearchResult("bisect", best.throughput_bps if best else None,
                        int(best.offered_bps) if best else None, trials)
