"""The highest UDP rate that gets through, two ways.

``sweep`` is the reviews' method (Jan 2003, Windows section): offer 200 Mbit/s, then 210,
... up to 800, and record the highest rate actually received. ``bisect`` (the Feb 2003
review's "successive approximation") finds, with the same resolution, the highest offered
rate that arrives in full with loss at or under ``loss_pct``, in a handful of trials
instead of (stop-start)/step (bench/udp_search.py: 3 against 61 on the lab). Both return
every trial they made; the caller stores them all.

``frame_rate_search`` is the small-packet search's (issue 30): in frames per second, to a
resolution of the result, each rate settled by full-length trials (its docstring).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
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


# -- the frame-rate search (RFC 2544 throughput, narrowed as MLRsearch narrows) ------------
@dataclass(frozen=True)
class Verdict:
    """What one trial told a frame-rate search: whether it passed the bound's loss (and
    delivered what was offered), the frames per second that arrived, and whether the
    receiver counted a frame lost (a trial may fail by delivering short alone: the
    sender did not offer the rate, which a longer trial may yet do)."""

    passed: bool
    received_pps: float | None
    lost: bool = True


# (offered frames/s, a confirmation at full length?) -> what the trial told
RateTrial = Callable[[int, bool], Verdict]


@dataclass
class Known:
    """What a search starts from (another bound's trials): the highest rate a short trial
    passed at (``lo``) and the lowest above it one failed at (``hi``, with what arrived
    there), and the rates full-length trials passed and failed at."""

    lo: int | None = None
    hi: int | None = None
    hi_received: float | None = None
    hi_lost: bool = True             # the failure at hi lost frames (else delivered short)
    full_passed: set[int] = field(default_factory=set)
    full_failed: set[int] = field(default_factory=set)


@dataclass(frozen=True)
class RateFound:
    """A bound's outcome: the highest rate a full-length trial passed at (None: none did)
    and the bracket's top ``hi``, the lowest rate that failed above it (at full length
    where one was made, else a short trial; None: the rate is the top), and the trials
    this search made."""

    rate: int | None
    hi: int | None
    short_trials: int
    confirmations: int


MAX_SHORT_TRIALS = 24     # one bound's short trials: a line rate 10,000 x the floor, 1 %


def frame_rate_search(trial: RateTrial, *, top: int, resolution_pct: float,
                      confirm_tries: int, zero_loss: bool, known: Known | None = None,
                      floor: int = 1, max_short: int = MAX_SHORT_TRIALS) -> RateFound:
    """One bound's rate on a link whose top (line) rate is ``top`` frames/s.

    1. Short trials narrow ``lo`` (passed) and ``hi`` (failed) until ``hi - lo`` is at
       most ``resolution_pct`` of ``lo``: of the result, not of the line rate. With no
       rate known the top is offered first; below a failure the next offer is what
       arrived there (the link's ceiling, a first guess) or a step under it, the step
       doubling while rates fail (MLRsearch's external search); above a pass a step
       over it, doubling while rates pass; then halving. A failure is never offered
       again: one trial, one answer.
    2. The same at full length (RFC 2544's final determination), from ``lo``: it is
       confirmed by a full-length trial, or the failure steps down (to what arrived, or a
       step under, the step doubling) and confirms again; above a confirmed rate a step
       up is tried at full length, so that both ends of the bracket stand on full-length
       trials, halving until the resolution. Under a zero-loss bound (the NDR) a short
       trial that lost a frame is the bracket's top already (a frame lost in 1 s is lost
       in 10); one that only delivered short is not (iperf 2's sender starts slowly and
       catches up over a longer trial: on the lab's fe link 1 s trials at 80,000
       frames/s delivered 53,000-63,000, 5 s trials all 80,000); under a loss ratio (the
       PDR) no short failure is (a ratio averages over the trial). At most
       ``confirm_tries`` full-length trials; a bound none of them passed has no rate.
    """
    k = known or Known()
    r = resolution_pct / 100
    lo, hi, hint, hi_lost, short = _short_trials(trial, top, r, k, floor, max_short)
    conf, top_fail, tries = _full_trials(trial, top, r, k, zero_loss and hi_lost, lo, hi,
                                         hint, floor, confirm_tries, _Step(r, not hi_lost))
    return RateFound(conf, top_fail, short, tries)


def _short_trials(trial: RateTrial, top: int, r: float, k: Known, floor: int,
                  max_short: int) -> tuple[int | None, int | None, float | None, bool, int]:
    """Step 1: short trials narrow the bracket to ``r`` of its lower end; (lo, hi, what
    arrived at hi, whether frames were lost there, trials made)."""
    lo, hi, hint = k.lo, k.hi, k.hi_received
    hi_lost = k.hi_lost
    short = 0
    if lo is None and hi is None and not k.full_passed:
        v = trial(top, False)
        short += 1
        if v.passed:
            lo = top
        else:
            hi, hint, hi_lost = top, v.received_pps, v.lost
    down = up = r
    while short < max_short and hi is not None and not _narrow(lo, hi, r):
        if lo is None:
            cand = _below(hi, down, hint)
            down *= 2
            if cand < floor:
                break
        else:
            cand = min((lo + hi) // 2, math.ceil(lo * (1 + up)))
        cand = min(max(cand, (lo or 0) + 1), hi - 1)
        v = trial(cand, False)
        short += 1
        if v.passed:
            lo, up = cand, up * 2
        else:
            hi, hint, hi_lost, up = cand, v.received_pps, v.lost, r
    return lo, hi, hint, hi_lost, short


def _full_trials(trial: RateTrial, top: int, r: float, k: Known, zero_loss: bool,
                 lo: int | None, hi: int | None, hint: float | None, floor: int,
                 confirm_tries: int, step: _Step) -> tuple[int | None, int | None, int]:
    """Step 2: full-length trials confirm the rate (or step down) and close the bracket
    above it; (the confirmed rate, the lowest failure above it, trials made).
    ``zero_loss``: the short trials' failure at ``hi`` lost frames under a zero-loss
    bound, so it is the bracket's top at full length too."""
    conf = max(k.full_passed, default=None)
    fails = [f for f in k.full_failed if conf is None or f > conf]
    if zero_loss and hi is not None and (conf is None or hi > conf):
        fails.append(hi)    # a frame lost in a short trial is one lost in a longer one
    fhi = min(fails, default=None)
    tries = 0
    while tries < confirm_tries:
        if conf is not None and (conf >= top or (fhi is not None and _narrow(conf, fhi, r))):
            break
        cand: int | None = lo              # the short trials' rate, at full length
        step.last = ""
        if lo is None or (conf is not None and lo <= conf) or (fhi is not None and lo >= fhi):
            cand = step.next(conf, fhi, hint, top)
        if cand is None or cand < floor or (conf is not None and cand <= conf) \
                or (fhi is not None and cand >= fhi):
            break
        v = trial(cand, True)
        tries += 1
        step.told(v.passed)
        if v.passed:
            conf = cand
        else:
            fhi, hint = cand, v.received_pps
    top_fail = fhi if fhi is not None else hi if hi is not None and conf is not None \
        and hi > conf else None
    return conf, top_fail, tries


class _Step:
    """The next full-length offer where the short trials' rate has been tried:

    - none confirmed: under the failure, what arrived there or a step under it, the step
      doubling (MLRsearch's external search down);
    - confirmed with no failure above: a step of the resolution up, doubling while they
      pass; where the short trials failed only by delivering short (``jump``) and the
      first step passed too, they understated the rate (a sender that starts slowly
      delivers more over a longer trial), and the line rate is offered: what arrives
      there bounds it;
    - between a confirmed rate and a failure: what arrived at the failure (the ceiling as
      the receiver counted it), but at least a step of the resolution above the
      confirmed rate and at most halfway to the failure; once such a step passed (what
      arrived understated the rate: a sender that another's load slowed), steps of twice
      the resolution up, doubling while they pass, never beyond halfway.
    """

    def __init__(self, r: float, jump: bool):
        self.r = r
        self.jump = jump
        self.up = r
        self.down = r
        self.last = ""             # what the last offer was: "up", or another
        self.upped = False         # a step up passed with no failure above
        self.stepped = False       # a step up to what arrived passed: growing from here
        self.grow = 2 * r          # ... by this share, doubling while it passes

    def next(self, conf: int | None, fhi: int | None, hint: float | None,
             top: int) -> int | None:
        self.last = ""
        if conf is None:
            if fhi is None:
                return None
            cand = _below(fhi, self.down, hint)
            self.down *= 2
            return cand
        if fhi is None:
            self.last = "up"
            if self.upped and self.jump:
                return top
            return min(math.ceil(conf * (1 + self.up)), top)
        mid = (conf + fhi) // 2
        if self.stepped:
            self.last = "grow"
            return min(mid, math.ceil(conf * (1 + self.grow)))
        if hint is None:
            return mid
        step = math.ceil(conf * (1 + self.r))
        cand = min(mid, max(step, math.floor(hint)))
        self.last = "step" if cand == step else ""
        return cand

    def told(self, passed: bool) -> None:
        self.upped = self.upped or (passed and self.last == "up")
        if passed and self.last == "up":
            self.up *= 2
        self.stepped = self.stepped or (passed and self.last == "step")
        if passed and self.last == "grow":
            self.grow *= 2


def _narrow(lo: int | None, hi: int | None, r: float) -> bool:
    """Is the bracket within the resolution of its lower end (or closed at the top)?"""
    return hi is None or (lo is not None and hi - lo <= max(1.0, lo * r))


def _below(rate: int, step: float, received: float | None) -> int:
    """The next offer under a failure at ``rate``: a step under it, or what arrived there
    if that is lower (the link's ceiling, as the receiver counted it)."""
    cand = math.floor(rate / (1 + step))
    if received is not None and 0 < received < cand:
        cand = math.floor(received)
    return cand
