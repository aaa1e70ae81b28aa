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
from functools import lru_cache
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from nicbench.config.profile import UntilStable
from nicbench.results.records import TrialRecord
from nicbench.tools.registry import TOOLS
from nicbench.tools.driver import Shape


class Better(StrEnum):
    """Which way a test's figure is better: a rate higher, a round-trip time lower."""

    HIGHER = "higher"
    LOWER = "lower"


def better_of(tool: str, params: Mapping[str, Any] | None = None) -> Better:
    """Which way a test's figure is better, by the test, not only its tool: round trips
    (a latency tool's result shape, or a rate tool run in a round-trip mode: iperf 2's
    ``bounceback: true``) lower; a rate higher. A tool nicbench does not know: higher."""
    known = TOOLS.get(tool)
    if known is not None and known.result is Shape.LATENCY:
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
    got = delivered_share(rec)
    return got is None or got >= 1 - SHORTFALL


def delivered_share(rec: TrialRecord) -> float | None:
    """What arrived as a share of what was offered (None: nothing offered or received to
    compare). A small-packet trial's by the receiver's own count of datagrams (total
    less lost) over its duration against the offered frames/s: iperf prints a rate to 3
    significant digits, 0.43 % at the 11.7 Mbit/s of 81,000 64-byte frames a second,
    and read so a trial that delivered all but 0.2 % failed (seen on the lab)."""
    f, u = rec.frame, rec.udp
    if f is not None and f.offered_pps > 0 and u is not None and u.total is not None \
            and u.lost is not None and rec.duration_s:
        return (u.total - u.lost) / rec.duration_s / f.offered_pps
    if rec.offered_bps and rec.throughput_bps is not None:
        return rec.throughput_bps / rec.offered_bps
    return None


# The confidence of the interval judged: the median's order-statistic interval at 95 %;
# the mean's t-interval at 99 %, as a t-interval looked at after every repetition stops
# where the stdev happens to come out low (seeded simulation of normal noise: at 95 % only
# 94.9 % of stops land within the target of the true mean, at 99 % 98.9 %).
CONFIDENCE = 0.95
MEAN_CONFIDENCE = 0.99


@dataclass(frozen=True)
class Interval:
    """A confidence interval of a figure over repetitions: the median's by order
    statistics (distribution-free, :data:`CONFIDENCE`), the mean's by Student's t
    (:data:`MEAN_CONFIDENCE`)."""

    statistic: str               # "median" | "mean"
    confidence: float
    figure: float
    low: float
    high: float
    n: int

    @property
    def reach_pct(self) -> float:
        """How far the interval reaches from the figure, on its wider side, in % of it."""
        if not self.figure:
            return float("inf")
        return 100.0 * max(self.high - self.figure, self.figure - self.low) / abs(self.figure)

    def words(self) -> str:
        lo = 100.0 * (self.low - self.figure) / abs(self.figure) if self.figure else 0.0
        hi = 100.0 * (self.high - self.figure) / abs(self.figure) if self.figure else 0.0
        return (f"the {self.statistic}'s {100 * self.confidence:g} % interval "
                f"-{abs(lo):.2f}/+{abs(hi):.2f} %")


@lru_cache(maxsize=4096)
def median_rank(n: int, confidence: float = CONFIDENCE) -> int | None:
    """The k of the median's order-statistic interval [x_(k), x_(n+1-k)] of ``n`` values:
    the largest k whose coverage 1 - 2 P(Binomial(n, 1/2) <= k-1) is at least
    ``confidence``; None where even [min, max] covers less (n < 6 at 95 %)."""
    from scipy.special import bdtr     # the binomial cdf (scipy.stats is slow to import)

    best = None
    for k in range(1, n // 2 + 1):
        if 1.0 - 2.0 * float(bdtr(k - 1, n, 0.5)) >= confidence:
            best = k
        else:
            break
    return best


def interval(values: list[float], statistic: str) -> Interval | None:
    """The interval of the ``statistic`` ("mean"; any other: the median) of ``values``;
    None where there are too few for one."""
    n = len(values)
    if statistic == "mean":
        if n < 2:
            return None
        from scipy.special import stdtrit

        mean = statistics.fmean(values)
        half = float(stdtrit(n - 1, 0.5 + MEAN_CONFIDENCE / 2)) * statistics.stdev(values) / n ** 0.5
        return Interval("mean", MEAN_CONFIDENCE, mean, mean - half, mean + half, n)
    k = median_rank(n)
    if k is None:
        return None
    xs = sorted(values)
    return Interval("median", CONFIDENCE, statistics.median(xs), xs[k - 1], xs[n - k], n)


def stopping_statistic(select: str) -> str:
    """The statistic an until-stable policy judges for a ``select`` rule: the mean for
    mean, else the median (best-of-n has no interval: it grows with n)."""
    return "mean" if select == "mean" else "median"


def fewest_for_interval(select: str) -> int:
    """The fewest successful repetitions that give the statistic judged for ``select``
    an interval: 2 for the mean, 6 for the median."""
    if stopping_statistic(select) == "mean":
        return 2
    return next(n for n in range(1, 100) if median_rank(n) is not None)


# Two modes: among at least GAP_FEWEST figures, the largest gap between the sorted
# figures with at least GAP_SIDE of them (and two) on each side is more than GAP_RATIO
# times the spread within the two sides (their pooled stdev). A gap test rather than a
# dip test: a card's modes are a few tight clusters (a lost offload, another core), and
# the gap against the clusters' own spread is what a reader checks by eye. Seeded
# simulation (tests/unit/test_until_stable_rule.py): of normal and lognormal samples of
# 8 to 60 values at most 2 % are called two-mode; 70/30 modes 4 % apart with 0.3 % noise
# in each are from 20 values on in over 99 %.
GAP_RATIO = 6.0
GAP_FEWEST = 8
GAP_SIDE = 0.1


def two_modes(values: list[float]) -> tuple[float, float] | None:
    """The two modes' medians where ``values`` fall in two groups with a gap between them
    (see GAP_RATIO), else None."""
    n = len(values)
    side = max(2, int(GAP_SIDE * n + 0.999))
    if n < max(GAP_FEWEST, 2 * side):
        return None
    xs = sorted(values)
    gaps = [(xs[i] - xs[i - 1], i) for i in range(side, n - side + 1)]
    gap, at = max(gaps)
    lo, hi = xs[:at], xs[at:]
    ss = sum((v - statistics.fmean(lo)) ** 2 for v in lo) + \
        sum((v - statistics.fmean(hi)) ** 2 for v in hi)
    within = (ss / (n - 2)) ** 0.5
    if gap <= 0 or gap <= GAP_RATIO * within:
        return None
    return statistics.median(lo), statistics.median(hi)


@dataclass(frozen=True)
class Stop:
    """Why a test's repetitions stopped at a point, under an until-stable policy."""

    ran: int                     # repetitions run (failed ones included)
    interval: Interval | None    # of the judged statistic over the successful ones
    stable: bool                 # True: the interval reached the target; False: max reached
    modes: tuple[float, float] | None = None     # two modes seen (their medians)
    select: str = "median"

    @property
    def reach_pct(self) -> float | None:
        return self.interval.reach_pct if self.interval is not None else None

    def words(self) -> str:
        got = "no interval yet (too few succeeded)" if self.interval is None else \
            self.interval.words()
        head = f"stable after {self.ran}" if self.stable else f"max reached ({self.ran})"
        text = f"{head}: {got}"
        if self.modes is not None:
            lo, hi = self.modes
            text += (f"; two modes ({_num(lo)} and {_num(hi)}, "
                     f"{100.0 * (hi - lo) / abs(lo) if lo else 0.0:.1f} % apart)")
        if self.select == "best":
            text += "; the best of n grows with n"
        return text


def _num(v: float) -> str:
    # a rate in bit/s, a round trip in us (figure(): the two a repetition is judged by)
    return f"{v / 1e6:.1f} Mbit/s" if abs(v) >= 1e5 else f"{v:.4g} us"


def rsd_pct(values: list[float]) -> float | None:
    """Relative standard deviation (sample stdev / mean) in %, None under two values."""
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    return 100.0 * statistics.stdev(values) / mean if mean else None


def stopped(values: list[float], ran: int, policy: UntilStable,
            select: str = "median") -> Stop | None:
    """After ``ran`` repetitions of which ``values`` (in order) succeeded: stop here, and
    why, or go on (None). Stop once at least ``min`` succeeded and the interval of
    the judged statistic (:func:`stopping_statistic` of ``select``) reaches at most
    ``until_ci_pct`` % from it, or when ``max`` have run."""
    ci = interval(values, stopping_statistic(select))
    if len(values) >= policy.min and ci is not None and ci.reach_pct <= policy.until_ci_pct:
        return Stop(ran, ci, True, two_modes(values), select)
    if ran >= policy.max:
        return Stop(ran, ci, False, two_modes(values), select)
    return None


def first_stop(recs: Iterable[TrialRecord | None], policy: UntilStable,
               select: str = "median") -> Stop | None:
    """Replay the rule over repetitions in order (1, 2, ...): where the first stop came, or
    None if it has not come (None in ``recs`` ends the replay: a repetition not stored)."""
    values: list[float] = []
    for ran, rec in enumerate(recs, 1):
        if rec is None:
            return None
        value = figure(rec) if rec.ok else None
        if value is not None:
            values.append(value)
        stop = stopped(values, ran, policy, select)
        if stop is not None:
            return stop
    return None
