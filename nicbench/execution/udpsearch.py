"""The highest UDP rate that gets through, two ways.

``sweep`` is the reviews' method (Jan 2003, Windows section): offer 200 Mbit/s, then 210,
... up to 800, and record the highest rate actually received. ``bisect`` (the Feb 2003
review's "successive approximation") finds, with the same resolution, the highest offered
rate that arrives in full with loss at or under ``loss_pct``, in a handful of trials
instead of (stop-start)/step (bench/udp_search.py: 3 against 61 on the lab). Both return
every trial they made; the caller stores them all.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable

from nicbench.results.policy import passes
from nicbench.results.records import Status, TrialRecord

Trial = Callable[[int], TrialRecord]  # offered bit/s -> a finished trial


@dataclass
class SearchResult:
    method: str
    best_bps: float | None        # the highest received rate that counts
    best_offered_bps: int | None
    trials: list[TrialRecord]


def sweep(trial: Trial, start: int, stop: int, step: int, max_trials: int = 1000) -> SearchResult:
    trials: list[TrialRecord] = []
    rate = start
    while rate <= stop and len(trials) < max_trials:
        trials.append(trial(rate))
        rate += step
    best = max((t for t in trials if t.ok), key=lambda t: t.throughput_bps or 0.0,
               default=None)
    return SearchResult("sweep", best.throughput_bps if best else None,
                        int(best.offered_bps or 0) if best else None, trials)


def bisect(trial: Trial, start: int, stop: int, step: int, loss_pct: float,
           max_trials: int = 64) -> SearchResult:
    """Successive approximation (the Feb 2003 review's method) on the grid start + k*step.

    1. Offer ``stop``. If it passes, that is the answer. If it fails, what the receiver
       got is the link's ceiling, a first guess: the grid rate just under it is probed,
       and from there the search climbs a step at a time while rates pass (one or two
       probes: above the ceiling nothing passes).
    2. If the guess fails too, an ordinary bisection between ``start`` and the guess.
    3. A failing probe below the ceiling is offered once more before it counts: loss on
       an idle link is a burst (a busy CPU, a full socket buffer), not the limit, and a
       single one would otherwise send the bisection into the lower half for good.

    On a well-behaved link this takes 4 or 5 trials for the sweep's 61.
    """
    trials: list[TrialRecord] = []
    passed: list[TrialRecord] = []

    def measure(rate: int) -> bool:
        rec = trial(rate)
        trials.append(rec)
        if passes(rec, loss_pct):
            passed.append(rec)
            return True
        return False

    if measure(stop):
        return _bisect_result(passed, trials)
    top = trials[0]
    ceiling = top.throughput_bps if top.status is Status.OK and top.throughput_bps else None
    steps = (stop - start) // step

    def probe(i: int) -> bool:
        rate = start + i * step
        if measure(rate):
            return True
        # Offer a failure below what the link has been seen to carry once more.
        retry = ceiling is not None and rate < ceiling and len(trials) < max_trials
        return retry and measure(rate)

    guess = min(int((ceiling - start) // step), steps - 1) if ceiling else -1
    # Invariant: index lo passes (or is below the range), hi fails.
    lo, hi = -1, steps
    if guess >= 0 and probe(guess):
        lo = guess
        while lo + 1 < hi and len(trials) < max_trials and probe(lo + 1):
            lo += 1
        hi = lo + 1
    else:
        if guess >= 0:
            hi = guess
        if hi > 0 and probe(0):
            lo = 0
    while hi - lo > 1 and len(trials) < max_trials:
        mid = (lo + hi) // 2
        if probe(mid):
            lo = mid
        else:
            hi = mid
    return _bisect_result(passed, trials)


def _bisect_result(passed: list[TrialRecord], trials: list[TrialRecord]) -> SearchResult:
    best = max(passed, key=lambda t: t.offered_bps or 0.0, default=None)
    return SearchResult("bisect", best.throughput_bps if best else None,
                        int(best.offered_bps or 0) if best else None, trials)
