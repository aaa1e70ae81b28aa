"""Is run B's figure beyond run A's run-to-run spread, and by how much? Mann-Whitney, exact.

The stored repetitions of one configuration in two runs are two small samples (2 to 30
values each, often with ties: iperf 2 prints three significant digits, whole Mbit/s near
a gigabit). Three numbers come from them, all from the same rank test so that they cannot
disagree:

- **p**: the two-sided Mann-Whitney U test (the Wilcoxon rank-sum test), whether one
  sample tends to be larger than the other, without assuming a distribution. Without
  ties it is scipy's exact test (``scipy.stats.mannwhitneyu(method="exact")``). With ties
  scipy's exact test is not exact (it ignores them), so it is computed here from the
  permutation distribution of the rank sum with mid-ranks: every way of choosing which
  ``len(a)`` of the pooled values are "run A" is equally likely if the runs do not differ,
  and p is the share of those ways whose rank sum is at least as far from its mean as the
  one observed. Counting the ways is a small dynamic programme over (values taken, rank
  sum), exact in integers (ranks are doubled so mid-ranks stay integers). Above
  ``EXACT_MAX`` pooled values: the normal approximation with the tie correction (scipy's
  ``method="asymptotic"``), and :func:`method` says so.
- **the shift**: the Hodges-Lehmann estimate, the median of all ``len(a) x len(b)``
  pairwise differences B - A.
- **its 95 % confidence interval**: every shift ``d`` that the same test (ties handled the
  same way) does not reject at 5 % when ``d`` is taken off run B's values. Without ties
  this is the classic exact interval from the Mann-Whitney distribution (Bauer 1972);
  with ties it is its exact conditional form, and the shifts not rejected can be
  half-open ((0, 5]: the tie at 0 itself makes p smaller), so the interval is their
  closure. Either way 0 lies inside the interval only when p >= 0.05.

Small samples cannot show a difference however large it is: with 2 and 3 repetitions the
smallest two-sided p possible is 0.2 (:func:`smallest_p`); :func:`repetitions_needed`
says how many would do. Across the rows of one comparison the p-values are adjusted by
Benjamini-Hochberg (``scipy.stats.false_discovery_control``): :func:`bh_adjust`.
"""

from __future__ import annotations

import math
import statistics
from bisect import bisect_left
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from math import comb
from collections.abc import Sequence

import numpy as np

# scipy.stats is imported where a test needs it (0.5 s): ``nicbench figures`` builds the
# report's models without a single Mann-Whitney test and should not pay for it


def _sps():
    from scipy import stats

    return stats

ALPHA = 0.05
EXACT_MAX = 60           # pooled values up to which p is exact (C(60, 30) fits in int64)
POINTS_MAX = 64          # differences up to which the interval tests every one of them
NAME = "two-sided Mann-Whitney U test on the repetitions (exact, mid-ranks for ties)"
SHIFT_NAME = ("Hodges-Lehmann shift (median of all pairwise B - A differences) with its "
              "exact 95 % confidence interval from the same test")


def _doubled_ranks(values: Sequence[float]) -> list[int]:
    """Twice the mid-rank of each value (ranks 1..n): integers even with ties."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = i + j + 2          # 2 x mean of ranks i+1 .. j+1
        i = j + 1
    return ranks


def has_ties(a: Sequence[float], b: Sequence[float]) -> bool:
    pooled = list(a) + list(b)
    return len(set(pooled)) < len(pooled)


def method(a: Sequence[float], b: Sequence[float]) -> str:
    """How :func:`mann_whitney_p` computes p for these samples."""
    if len(a) + len(b) > EXACT_MAX:
        return "normal approximation"
    return "exact, mid-ranks for ties" if has_ties(a, b) else "exact"


def mann_whitney_p(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Two-sided p-value that samples ``a`` and ``b`` come from the same distribution;
    None if either is empty."""
    if not a or not b:
        return None
    if len(a) + len(b) > EXACT_MAX:
        if len(set(a) | set(b)) == 1:
            return 1.0                      # no spread at all: nothing to tell apart
        res = _sps().mannwhitneyu(list(a), list(b), alternative="two-sided",
                               method="asymptotic", use_continuity=True)
        return min(1.0, float(res.pvalue))
    # exact, with or without ties: the rank sum's own permutation distribution (without
    # ties it is scipy's exact test, tests/unit/test_compare_stats.py; no scipy to import,
    # so a verdict's ties among one run's cards cost no 0.5 s of imports)
    return _rank_p(_doubled_ranks(list(a) + list(b)), len(a))


@lru_cache(maxsize=4096)
def _null_counts(scores: tuple[int, ...], n_a: int) -> np.ndarray:
    """counts[s]: how many ways of choosing ``n_a`` of the (sorted) doubled ranks
    ``scores`` sum to s. Exact: every count is at most C(n, n_a) < 2^63 for n <= 60."""
    n, top = len(scores), sum(scores[-n_a:])
    ways = np.zeros((n_a + 1, top + 1), dtype=np.int64)
    ways[0, 0] = 1
    reach = 0                                   # the largest sum taken so far
    for i, r in enumerate(scores):
        reach = min(reach + r, top)
        # ways[k + 1][s + r] += ways[k][s], all k at once from the values before this one;
        # only the k that can still make n_a with the values left, only the sums reached
        lo, hi = max(0, n_a - (n - i)), min(i + 1, n_a)
        ways[lo + 1:hi + 1, r:reach + 1] += ways[lo:hi, :reach + 1 - r].copy()
    return ways[n_a]


def _rank_p(ranks: list[int], n_a: int) -> float:
    """The two-sided p of the doubled ranks, the first ``n_a`` of them run A's: exact up
    to ``EXACT_MAX`` values, else the normal approximation with the tie correction."""
    n = len(ranks)
    observed = sum(ranks[:n_a])
    mean2 = n_a * (n + 1)                       # E[doubled rank sum] = n_a (n + 1)
    if n > EXACT_MAX:
        return _normal_p(ranks, n_a, observed, mean2)
    return _exact_p(tuple(sorted(ranks)), n_a, observed)


def _exact_p(scores: tuple[int, ...], n_a: int, observed: int) -> float:
    """The exact two-sided p of a doubled rank sum ``observed`` of ``n_a`` of the sorted
    doubled ranks ``scores``."""
    n = len(scores)
    mean2 = n_a * (n + 1)
    counts = _null_counts(scores, n_a)
    far = abs(observed - mean2)
    sums = np.arange(len(counts))
    hits = int(counts[np.abs(sums - mean2) >= far].sum())
    return min(1.0, hits / comb(n, n_a))


@lru_cache(maxsize=256)
def _p_table(scores: tuple[int, ...], n_a: int) -> tuple[float, ...]:
    """:func:`_exact_p` of every doubled rank sum from 0 to the largest, at once: entry s
    is the p of an observed sum s (the same integer counts, summed once)."""
    n = len(scores)
    mean2 = n_a * (n + 1)
    counts = _null_counts(scores, n_a)
    dist = np.abs(np.arange(len(counts)) - mean2)
    order = np.argsort(-dist, kind="stable")
    total = comb(n, n_a)
    out = [0.0] * len(counts)
    hits, i = 0, 0
    while i < len(order):          # sums as far from the mean or further, counted once
        j = i
        while j < len(order) and dist[order[j]] == dist[order[i]]:
            hits += int(counts[order[j]])
            j += 1
        for k in order[i:j]:
            out[int(k)] = min(1.0, hits / total)
        i = j
    return tuple(out)


def _normal_p(ranks: list[int], n_a: int, observed: int, mean2: int) -> float:
    n = len(ranks)
    n_b = n - n_a
    ties: dict[int, int] = {}
    for r in ranks:
        ties[r] = ties.get(r, 0) + 1
    tie_term = sum(t ** 3 - t for t in ties.values()) / (n * (n - 1))
    var = n_a * n_b / 12.0 * ((n + 1) - tie_term)
    if var <= 0:
        return 1.0
    z = (abs(observed - mean2) / 2.0 - 0.5) / math.sqrt(var)   # continuity correction
    return min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2.0)))


def smallest_p(n_a: int, n_b: int) -> float:
    """The smallest two-sided p the test can give for samples of these sizes (no ties):
    2 / C(n_a + n_b, n_a)."""
    if n_a == 0 or n_b == 0:
        return 1.0
    return min(1.0, 2 / comb(n_a + n_b, n_a))


# A run needs this many repetitions to be tested at all: one repetition says nothing of
# its run's spread, and 1 against 40 reaches p < 0.05 (2 / 41) only by ranking that one
# figure outside all 40 others: a single figure's luck, not a run's.
MIN_EACH = 2


def testable(n_a: int, n_b: int) -> bool:
    """Can samples of these sizes give p < ALPHA at all, with at least ``MIN_EACH``
    repetitions in each run?"""
    return min(n_a, n_b) >= MIN_EACH and smallest_p(n_a, n_b) < ALPHA


def repetitions_needed(n_a: int, limit: int = 1000) -> tuple[int, int | None]:
    """(the fewest repetitions in each run that can give p < ALPHA, the fewest in run B
    against run A's ``n_a``; None beyond ``limit`` or when ``n_a`` is below
    ``MIN_EACH``)."""
    each = next(n for n in range(1, limit) if testable(n, n))
    b_only = (next((m for m in range(1, limit) if testable(n_a, m)), None)
              if n_a >= MIN_EACH else None)
    return each, b_only


# A sample-size estimate is "likely" at this power: the chance that an interval of that
# many repetitions per run settles a shift like the one observed.
SETTLE_POWER = 0.8
SETTLE_MAX = 1000         # beyond this, "more than 1000": repetitions will not settle it


def spread(a: Sequence[float], b: Sequence[float], resolution: float = 0.0) -> float:
    """The repetitions' standard deviation, pooled over both runs (each about its own
    mean); never below what the printed resolution hides (``resolution / sqrt(12)``, the
    spread of a rounding error)."""
    dev = [x - statistics.fmean(s) for s in (a, b) if len(s) > 1 for x in s]
    dof = sum(len(s) - 1 for s in (a, b) if len(s) > 1)
    pooled = math.sqrt(sum(d * d for d in dev) / dof) if dof > 0 else 0.0
    return max(pooled, resolution / math.sqrt(12.0))


def repetitions_to_settle(a: Sequence[float], b: Sequence[float], shift: float,
                          threshold: float, resolution: float = 0.0,
                          interval: tuple[float | None, float | None] | None = None
                          ) -> int | None:
    """How many repetitions per run would likely (``SETTLE_POWER``) put the 95 % interval
    of a shift like ``shift`` wholly beyond or wholly inside +-``threshold``: the interval
    must shrink to a half-width of ``margin = | |shift| - threshold |``, and a half-width
    shrinks as sqrt(1/n_a + 1/n_b). From the observed ``interval`` where it is bounded
    (the rank test's own, robust to an odd repetition), else from the repetitions'
    :func:`spread` (the normal half-width 1.96 sigma sqrt(1/n_a + 1/n_b), times
    sqrt(pi / 3) for the rank test's efficiency); either way scaled by (z_0.975 +
    z_power) / z_0.975 so that an interval that wide would likely clear the margin, not
    only half the time. Never fewer than the sizes that can be tested at all; None when
    no number would: the shift sits on the threshold."""
    margin = abs(abs(shift) - threshold)
    each, _ = repetitions_needed(0)
    n_a, n_b = len(a), len(b)
    if n_a == 0 or n_b == 0:
        return None
    scale = math.sqrt(1.0 / n_a + 1.0 / n_b)
    z = statistics.NormalDist().inv_cdf(1 - ALPHA / 2)
    if interval is not None and interval[0] is not None and interval[1] is not None:
        half = (interval[1] - interval[0]) / 2.0
    else:
        half = z * spread(a, b, resolution) * math.sqrt(math.pi / 3.0) * scale
    if half == 0.0:
        return each
    if margin == 0.0:
        return None
    k = (z + statistics.NormalDist().inv_cdf(SETTLE_POWER)) / z
    n = math.ceil(2.0 * (half * k / (margin * scale)) ** 2)
    return max(n, each)


# -- the shift and its interval -----------------------------------------------------------
@dataclass(frozen=True)
class Shift:
    """B - A: the Hodges-Lehmann estimate and its confidence interval, in the samples'
    unit; a bound is None where the test cannot exclude any shift on that side."""

    estimate: float
    low: float | None
    high: float | None


def hodges_lehmann(a: Sequence[float], b: Sequence[float]) -> float:
    """The median of all pairwise differences b_j - a_i."""
    return float(np.median(np.subtract.outer(np.asarray(b, float), np.asarray(a, float))))


def _grid(a: Sequence[float], b: Sequence[float]) -> tuple[list[int], list[int], float]:
    """The samples as integers on a grid fine enough for every figure (a billionth of the
    largest), doubled so that a midpoint between two differences is on the grid too:
    shifting run B by a difference then makes exactly the tie it should."""
    top = max(abs(v) for v in [*a, *b])
    q = 10.0 ** (math.floor(math.log10(top)) - 9) if top > 0 else 1.0
    return [2 * round(v / q) for v in a], [2 * round(v / q) for v in b], q / 2


def shift_interval(a: Sequence[float], b: Sequence[float], alpha: float = ALPHA) -> Shift:
    """The Hodges-Lehmann shift B - A and the exact ``1 - alpha`` confidence interval: the
    hull of the shifts the test does not reject. The test changes only where a shift makes
    a tie (at a pairwise difference), so it is evaluated once between each two differences
    and, where there are few differences (tied figures) at every difference, else at the
    differences just outside the accepted ones, outward until one is rejected."""
    est = hodges_lehmann(a, b)
    ia, ib, _q = _grid(a, b)
    # each difference on the grid, and the figures' own difference it stands for
    real = {y - x: float(v) - float(u) for y, v in zip(ib, b, strict=True)
            for x, u in zip(ia, a, strict=True)}
    diffs = sorted(real)
    n_a = len(ia)
    # Where neither sample has a tie of its own, a shift between two differences leaves
    # the pooled values untied: run A's rank sum is then n_a (n_a + 1) / 2 plus the number
    # of differences below the shift, and the exact p follows without ranking (the same
    # count as ranking them: a simulation judges thousands of rows)
    untied = len(set(ia)) == len(ia) and len(set(ib)) == len(ib)
    every = sorted(y - x for y in ib for x in ia)
    n = len(ia) + len(ib)
    plain = tuple(range(2, 2 * n + 1, 2))

    def accepted(d: int) -> bool:
        if untied and d not in real:
            observed = n_a * (n_a + 1) + 2 * bisect_left(every, d)
            if n <= EXACT_MAX:
                return _p_table(plain, n_a)[observed] >= alpha
            # _normal_p without ties: no tie term
            z = (abs(observed - n_a * (n + 1)) / 2.0 - 0.5) / math.sqrt(
                n_a * (n - n_a) / 12.0 * (n + 1))
            return min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2.0))) >= alpha
        return _rank_p(_doubled_ranks(ia + [y - d for y in ib]), n_a) >= alpha

    # between each two differences, and beyond both ends: (lowest, highest shift it stands for)
    gaps: list[tuple[float, float, int]] = [(-math.inf, diffs[0], diffs[0] - 2)]
    gaps += [(d1, d2, (d1 + d2) // 2) for d1, d2 in pairwise(diffs)]
    gaps.append((diffs[-1], math.inf, diffs[-1] + 2))
    ok = [g for g in gaps if accepted(g[2])]
    low = min((g[0] for g in ok), default=math.inf)
    high = max((g[1] for g in ok), default=-math.inf)
    if len(diffs) <= POINTS_MAX:
        for d in diffs:
            if (d < low or d > high) and accepted(d):
                low, high = min(low, d), max(high, d)
    else:
        below = [d for d in reversed(diffs) if d < low] if ok else []
        above = [d for d in diffs if d > high] if ok else []
        for side in (below, above):
            for d in side:
                if not accepted(d):
                    break
                low, high = min(low, d), max(high, d)
    if low > high:                # nothing accepted: cannot happen (p = 1 near the middle)
        return Shift(est, est, est)
    return Shift(est, None if low == -math.inf else real[int(low)],
                 None if high == math.inf else real[int(high)])


def bh_adjust(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (the false discovery rate), in the same order."""
    if not p_values:
        return []
    return [min(1.0, float(v)) for v in _sps().false_discovery_control(list(p_values),
                                                                     method="bh")]
