"""Is run B's figure beyond run A's run-to-run spread? The Mann-Whitney U test, exact.

The stored repetitions of one configuration in two runs are two small samples (2 to 15
values each, often with ties: iperf 2 prints whole Mbit/s). The two-sided Mann-Whitney U
test (the Wilcoxon rank-sum test) asks whether one sample tends to be larger than the
other without assuming a distribution. Its p-value is computed exactly here, from the
permutation distribution of the rank sum with mid-ranks for ties: every way of choosing
which ``len(a)`` of the pooled values are "run A" is equally likely if the runs do not
differ, and p is the share of those ways whose rank sum is at least as far from its mean
as the one observed. Counting the ways is a small dynamic programme over (values taken,
rank sum), exact in integers (ranks are doubled so mid-ranks stay integers).

Above ``EXACT_MAX`` pooled values the normal approximation with the tie correction is
used (and said, by :func:`method`).

Small samples cannot show a difference however large it is: with 2 and 3 repetitions the
smallest two-sided p possible is 0.2 (:func:`smallest_p`); the report says so rather than
calling such runs equal.
"""

from __future__ import annotations

import math
from math import comb

ALPHA = 0.05
EXACT_MAX = 60           # pooled values up to which p is exact (the DP stays small)
NAME = "two-sided Mann-Whitney U test on the repetitions (exact, mid-ranks for ties)"


def _doubled_ranks(values: list[float]) -> list[int]:
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


def method(n_a: int, n_b: int) -> str:
    return "exact" if n_a + n_b <= EXACT_MAX else "normal approximation"


def mann_whitney_p(a: list[float], b: list[float]) -> float | None:
    """Two-sided p-value that samples ``a`` and ``b`` come from the same distribution;
    None if either is empty."""
    if not a or not b:
        return None
    pooled = list(a) + list(b)
    ranks = _doubled_ranks(pooled)
    n, n_a = len(pooled), len(a)
    observed = sum(ranks[:n_a])
    mean2 = n_a * (n + 1)                       # E[doubled rank sum] = n_a (n + 1)
    if n > EXACT_MAX:
        return _normal_p(ranks, n_a, observed, mean2)
    # ways[k][s]: ways to pick k of the values seen so far with doubled rank sum s
    top = sum(sorted(ranks)[-n_a:])
    ways = [[0] * (top + 1) for _ in range(n_a + 1)]
    ways[0][0] = 1
    for r in ranks:
        for k in range(min(n_a, n) - 1, -1, -1):
            row, nxt = ways[k], ways[k + 1]
            for s in range(top - r, -1, -1):
                if row[s]:
                    nxt[s + r] += row[s]
    far = abs(observed - mean2)
    hits = sum(count for s, count in enumerate(ways[n_a]) if abs(s - mean2) >= far)
    return min(1.0, hits / comb(n, n_a))


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
