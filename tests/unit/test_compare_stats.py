"""The comparison's statistic and words (judging/stats.py, report/compare.py), checked against
scipy where scipy is exact, against enumeration where it is not, and at the edges."""

from __future__ import annotations

import csv
import math
import random
import statistics
from itertools import combinations, pairwise

import numpy as np
import pytest
from scipy import stats as sps

from nicbench.report.compare import Comparison, comparison_table, fill, judge
from nicbench.judging.words import FASTER, INCONCLUSIVE, NOT_COMPARABLE, SLOWER, UNTESTABLE, WITHIN
from nicbench.report.model import Entry
from nicbench.report.resolution import three_digits
from nicbench.judging.stats import (ALPHA, EXACT_MAX, _doubled_ranks, _rank_p, bh_adjust,
                                   has_ties, hodges_lehmann, mann_whitney_p, method,
                                   repetitions_needed, shift_interval, smallest_p)
from nicbench.judging.stats import testable as can_test
from nicbench.results.summary import write_csv

PCI32_A = [592.0] + [593.0] * 5 + [594.0] * 9      # the pci32 / iperf 2 / MTU 9000
PCI32_B = [594.0] * 15


def _brute_p(a, b):
    """The two-sided rank-sum p by enumerating every split of the pooled values."""
    pooled = a + b
    ranks = sps.rankdata(pooled)                   # mid-ranks
    mean = len(a) * (len(pooled) + 1) / 2
    obs = abs(sum(ranks[: len(a)]) - mean)
    splits = list(combinations(range(len(pooled)), len(a)))
    hits = sum(1 for s in splits if abs(sum(ranks[i] for i in s) - mean) >= obs - 1e-9)
    return hits / len(splits)


def _scipy_exact_with_ties(a, b):
    """scipy's permutation test, every split enumerated, of the same statistic: how far
    run A's mid-rank sum is from its mean."""
    n = len(a) + len(b)

    def far(x, y, axis=-1):
        pooled = np.concatenate([x, y], axis=axis)
        ranks = sps.rankdata(pooled, axis=axis)
        return np.abs(ranks[..., : x.shape[axis]].sum(axis=axis) - x.shape[axis] * (n + 1) / 2)

    res = sps.permutation_test((np.array(a), np.array(b)), far, permutation_type="independent",
                               alternative="greater", n_resamples=np.inf, vectorized=True)
    return float(res.pvalue)


# -- p ------------------------------------------------------------------------------------
def test_tie_free_p_is_scipys_exact_test_by_the_rank_count():
    rng = random.Random(11)
    for _ in range(60):
        a = [rng.uniform(900, 950) for _ in range(rng.randint(1, 15))]
        b = [rng.uniform(905, 955) for _ in range(rng.randint(1, 15))]
        want = sps.mannwhitneyu(a, b, alternative="two-sided", method="exact").pvalue
        assert method(a, b) == "exact"
        assert mann_whitney_p(a, b) == pytest.approx(want, rel=1e-12)
        # the exact count the interval is inverted from gives the same p
        assert _rank_p(_doubled_ranks(a + b), len(a)) == pytest.approx(want, rel=1e-9)


def test_tied_p_is_exact_where_scipys_exact_test_is_not():
    rng = random.Random(7)
    for _ in range(40):
        a = [float(rng.randint(1, 6)) for _ in range(rng.randint(2, 7))]
        b = [float(rng.randint(1, 7)) for _ in range(rng.randint(2, 7))]
        p = mann_whitney_p(a, b)
        assert p == pytest.approx(_scipy_exact_with_ties(a, b), rel=1e-9)
        assert p == pytest.approx(_brute_p(a, b), rel=1e-9)
    # the pci32 row: scipy's "exact" ignores the ties and is not this p
    p = mann_whitney_p(PCI32_A, PCI32_B)
    assert method(PCI32_A, PCI32_B) == "exact, mid-ranks for ties"
    assert p == pytest.approx(0.0168582375, rel=1e-8)
    ignoring_ties = sps.mannwhitneyu(PCI32_A, PCI32_B, method="exact").pvalue
    assert abs(ignoring_ties - p) > 0.01


def test_large_tied_samples_use_scipys_normal_approximation():
    rng = random.Random(5)
    a = [float(rng.randint(930, 940)) for _ in range(40)]
    b = [float(rng.randint(931, 941)) for _ in range(40)]
    assert method(a, b) == "normal approximation"
    want = sps.mannwhitneyu(a, b, method="asymptotic", use_continuity=True).pvalue
    assert mann_whitney_p(a, b) == pytest.approx(want, rel=1e-12)
    # the same formula as the interval's own for large samples
    assert _rank_p(_doubled_ranks(a + b), len(a)) == pytest.approx(want, rel=1e-9)



# -- above EXACT_MAX pooled values: the normal approximation ------------------------------
def _large_samples(seed: int, tied: bool) -> tuple[list[float], list[float]]:
    """Two samples of 61 to 200 values in all, of unequal sizes, B shifted by up to a few
    spreads (p from ~1 down to ~1e-20); tied: whole Mbit/s over a range of 4 to 12."""
    rng = random.Random(seed)
    n_a = rng.randint(25, 100)
    n_b = max(EXACT_MAX + 1 - n_a, rng.randint(25, 100))
    shift = rng.choice([0.0, 0.2, 0.5, 1.0, 3.0])
    if tied:
        width = rng.randint(4, 12)
        a = [float(900 + rng.randint(0, width)) for _ in range(n_a)]
        b = [float(900 + round(shift * width / 3) + rng.randint(0, width)) for _ in range(n_b)]
    else:
        a = [rng.gauss(930.0, 4.0) for _ in range(n_a)]
        b = [rng.gauss(930.0 + 4.0 * shift, 4.0) for _ in range(n_b)]
    return a, b


@pytest.mark.parametrize("tied", [False, True], ids=["untied", "tied"])
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6, 7, 8])
def test_normal_approximation_is_scipys_asymptotic_test(seed, tied):
    """Above 60 pooled values p is the normal approximation with the tie correction and the
    continuity correction, two-sided: scipy's method="asymptotic". Both of nicbench's ways to
    it must be scipy's: mann_whitney_p (which calls scipy) and _rank_p (its own formula on
    doubled mid-ranks, which the shift's interval is inverted from)."""
    a, b = _large_samples(seed, tied)
    assert len(a) + len(b) > EXACT_MAX and has_ties(a, b) == tied
    assert method(a, b) == "normal approximation"
    want = float(sps.mannwhitneyu(a, b, alternative="two-sided", method="asymptotic",
                                  use_continuity=True).pvalue)
    assert mann_whitney_p(a, b) == pytest.approx(want, rel=1e-12)
    assert _rank_p(_doubled_ranks(a + b), len(a)) == pytest.approx(want, rel=1e-9, abs=1e-300)
    # and the same with the runs swapped: two-sided, so the same p
    assert _rank_p(_doubled_ranks(b + a), len(b)) == pytest.approx(want, rel=1e-9, abs=1e-300)


def test_normal_approximation_differs_from_a_test_without_either_correction():
    """The corrections matter at these sizes: without the tie correction, or without the
    continuity correction, scipy's p is another number, and nicbench's is not that one."""
    a, b = _large_samples(4, tied=True)
    ours = _rank_p(_doubled_ranks(a + b), len(a))
    no_continuity = sps.mannwhitneyu(a, b, method="asymptotic", use_continuity=False).pvalue
    assert abs(ours - no_continuity) > 1e-3 * ours
    # without the tie correction: the variance of untied ranks, n_a n_b (n + 1) / 12
    n_a, n_b = len(a), len(b)
    u = sps.mannwhitneyu(a, b, method="asymptotic").statistic
    z = (abs(u - n_a * n_b / 2) - 0.5) / math.sqrt(n_a * n_b * (n_a + n_b + 1) / 12)
    assert abs(ours - math.erfc(z / math.sqrt(2))) > 1e-3 * ours


def test_normal_approximation_at_its_edges():
    # 61 values, the first size above the exact test; no difference at all: p = 1
    a = [float(v) for v in range(30)]
    b = [float(v) + 0.5 for v in range(31)]
    assert method(a, b) == "normal approximation"
    want = sps.mannwhitneyu(a, b, method="asymptotic").pvalue
    assert mann_whitney_p(a, b) == pytest.approx(want, rel=1e-12)
    assert _rank_p(_doubled_ranks(a + b), len(a)) == pytest.approx(want, rel=1e-9)
    # |U - mean| under the continuity correction's half: scipy clips p to 1, and so do we
    same = [float(v) for v in range(40)]
    assert sps.mannwhitneyu(same, same, method="asymptotic").pvalue == 1.0
    assert _rank_p(_doubled_ranks(same + same), 40) == 1.0
    # every value the same: no spread; scipy's variance is 0 (p is nan), nicbench says 1
    flat = [941.0] * 35
    assert mann_whitney_p(flat, flat) == 1.0 and _rank_p(_doubled_ranks(flat * 2), 35) == 1.0


@pytest.mark.parametrize("seed", [31, 32, 33])
def test_large_sample_interval_is_what_the_asymptotic_test_does_not_reject(seed):
    """Above 60 values the interval is inverted from the normal approximation: between two
    pairwise differences, the shifts inside are those scipy's asymptotic test does not
    reject at 5 %, checked at the differences around each bound."""
    rng = random.Random(seed)
    a = [rng.gauss(930.0, 4.0) for _ in range(rng.randint(31, 45))]
    b = [rng.gauss(932.0, 4.0) for _ in range(rng.randint(31, 45))]
    s = shift_interval(a, b)
    assert s.low is not None and s.high is not None and s.low <= s.estimate <= s.high
    d = sorted({y - x for x in a for y in b})
    i, j = d.index(s.low), d.index(s.high)

    def p_at(shift: float) -> float:
        return float(sps.mannwhitneyu(a, [y - shift for y in b], method="asymptotic").pvalue)

    assert p_at((d[i] + d[i + 1]) / 2) >= ALPHA > p_at((d[i - 1] + d[i]) / 2)
    assert p_at((d[j - 1] + d[j]) / 2) >= ALPHA > p_at((d[j] + d[j + 1]) / 2)
    p = mann_whitney_p(a, b)
    assert (s.low <= 0 <= s.high) == (p >= ALPHA)

def test_smallest_p_and_the_repetitions_it_takes():
    assert smallest_p(1, 1) == 1.0
    assert smallest_p(2, 2) == pytest.approx(1 / 3)
    assert smallest_p(2, 3) == pytest.approx(0.2)
    assert smallest_p(15, 15) == pytest.approx(1.29e-08, rel=1e-2)
    assert mann_whitney_p([1.0, 2.0], [3.0, 4.0, 5.0]) == pytest.approx(0.2)
    assert mann_whitney_p([], [1.0]) is None
    # 3 against 3 cannot (0.1), 4 against 4 can (0.029); one repetition against any
    # number cannot: 1 against 40 reaches 2 / 41 < 0.05 only by one figure's rank
    assert smallest_p(1, 40) < ALPHA and not can_test(1, 40) and can_test(2, 8)
    assert repetitions_needed(1) == (4, None)
    assert repetitions_needed(2) == (4, 8)
    assert repetitions_needed(3) == (4, 5)


# -- the shift and its interval -------------------------------------------------------------
def test_hodges_lehmann_is_the_median_of_the_pairwise_differences():
    rng = random.Random(3)
    for _ in range(20):
        a = [rng.uniform(0, 10) for _ in range(rng.randint(1, 9))]
        b = [rng.uniform(0, 10) for _ in range(rng.randint(1, 9))]
        assert hodges_lehmann(a, b) == pytest.approx(
            statistics.median(y - x for x in a for y in b))
    assert hodges_lehmann(PCI32_A, PCI32_B) == 0.0         # equal medians, shift 0


def test_tie_free_interval_is_what_scipys_exact_test_does_not_reject():
    """Between two pairwise differences run B shifted has no tie, so scipy's exact test
    applies: the interval must be exactly the shifts it does not reject at 5 %."""
    rng = random.Random(21)
    for _ in range(25):
        a = [rng.uniform(900, 950) for _ in range(rng.randint(4, 12))]
        b = [rng.uniform(905, 960) for _ in range(rng.randint(4, 12))]
        s = shift_interval(a, b)
        assert s.low is not None and s.high is not None
        d = sorted({y - x for x in a for y in b})
        for lo, hi in pairwise(d):
            mid = (lo + hi) / 2
            p = sps.mannwhitneyu(a, [y - mid for y in b], method="exact").pvalue
            inside = s.low <= lo and hi <= s.high
            assert (p >= ALPHA) == inside, (lo, hi, p, s)
        # the classic Bauer interval: the k-th smallest and largest difference
        n = len(a) * len(b)
        k = d.index(s.low) + 1
        assert d[n - k] == s.high
        assert s.low <= s.estimate <= s.high


def test_tied_interval_holds_zero_only_when_p_is_not_below_005():
    """With ties the shifts not rejected can be half-open ((0, 5]: at 0 itself the tie
    makes p smaller than just beside it); the interval is their closure, so 0 may be its
    end when p < 0.05, never inside it."""
    rng = random.Random(8)
    for _ in range(40):
        a = [float(rng.randint(590, 596)) for _ in range(rng.randint(4, 15))]
        b = [float(rng.randint(591, 597)) for _ in range(rng.randint(4, 15))]
        s = shift_interval(a, b)
        p = mann_whitney_p(a, b)
        assert s.low is not None and s.high is not None
        if p >= ALPHA:
            assert s.low <= 0 <= s.high, (a, b, p, s)
        else:
            assert not s.low < 0 < s.high, (a, b, p, s)
        # the bounds are differences of the figures themselves
        diffs = {y - x for x in a for y in b}
        assert s.low in diffs and s.high in diffs


def test_interval_of_untestable_sizes_is_unbounded():
    s = shift_interval([1.0], [2.0])
    assert (s.estimate, s.low, s.high) == (1.0, None, None)
    s = shift_interval([1.0, 2.0], [3.0, 4.0])
    assert (s.low, s.high) == (None, None)


def test_benjamini_hochberg_by_hand():
    ps = [0.01, 0.04, 0.03, 0.2]
    # sorted 0.01 0.03 0.04 0.2 -> x 4/1, 4/2, 4/3, 4/4, then the running minimum from the top
    assert bh_adjust(ps) == pytest.approx([0.04, 0.04 * 4 / 3, 0.04 * 4 / 3, 0.2])
    assert bh_adjust([]) == []


def test_printed_resolution_is_the_third_digit():
    assert three_digits(943e6) == pytest.approx(1e6)
    assert three_digits(94.1e6) == pytest.approx(1e5)
    assert three_digits(2.40e9) == pytest.approx(1e7)


# -- the words ------------------------------------------------------------------------------
def _entry(run: int) -> Entry:
    label = "AB"[run]
    return Entry(key=f"{run}/pci32", run_index=run, run_label=label, run_id=label,
                 run_name=label, pair="pci32", adapter="pci32", adapter_label="PCI32 card")


def _rows(*samples, resolution=0.0, min_change=1.0):
    """One comparison's rows of (A, B) samples in Mbit/s, judged together."""
    rows = [fill(Comparison(a=_entry(0), b=_entry(1), test=f"t{i}", point="mtu9000",
                            mtu=9000), list(a), list(b), resolution, min_change)
            for i, (a, b) in enumerate(samples)]
    judge(rows)
    return rows


def test_equal_medians_are_not_slower():
    """The issue's row: p 0.017 but B's median equals A's and its shift is 0."""
    (r,) = _rows((PCI32_A, PCI32_B), resolution=1.0)
    assert r.a_median == r.b_median == 594.0 and r.shift == 0.0
    assert r.p == pytest.approx(0.0169, abs=1e-4)
    # [0, +1] Mbit/s lies inside the threshold of 1 % (5.94 Mbit/s): within, not slower
    assert (r.ci_low, r.ci_high) == (0.0, 1.0)
    assert r.verdict == WITHIN and r.words == "within ±1.00 %"
    assert "lies inside ±1.00 %" in r.note


def test_a_clear_shift_is_faster_or_slower_by_its_sign():
    a = [100.0, 101.0, 102.0, 103.0, 104.0]
    (up, down) = _rows((a, [x + 10.5 for x in a]), (a, [x - 10.5 for x in a]))
    assert (up.verdict, down.verdict) == (FASTER, SLOWER)
    assert up.shift == pytest.approx(10.5) and down.shift == pytest.approx(-10.5)
    assert up.p_adjusted == pytest.approx(2 / 252 * 1.0)    # 2 rows, both 0.0079
    assert up.change_pct == pytest.approx(100 * 10.5 / 102)


def test_an_interval_touching_the_threshold_is_not_beyond_it():
    """5 against 5, B = A + 10.5: the 95 % interval is [7.5, 13.5] (the 3rd smallest and
    largest difference). A threshold of exactly 7.5 is touched, not cleared."""
    a = [100.0, 101.0, 102.0, 103.0, 104.0]
    b = [x + 10.5 for x in a]
    (r,) = _rows((a, b), resolution=7.5, min_change=0.0)
    assert (r.ci_low, r.ci_high) == (7.5, 13.5)
    assert r.verdict == INCONCLUSIVE and "reaches across the threshold" in r.note
    (r,) = _rows((a, b), resolution=7.49, min_change=0.0)
    assert r.verdict == FASTER
    # the same by --min-change: 7.5 / 102 of A's median is 7.35 %
    (r,) = _rows((a, b), min_change=7.4)
    assert r.verdict == INCONCLUSIVE
    (r,) = _rows((a, b), min_change=7.3)
    assert r.verdict == FASTER


def test_one_and_two_repetitions_are_not_testable():
    (one, two, two_eight) = _rows(([940.0], [990.0]), ([940.0, 941.0], [990.0, 991.0]),
                                  ([940.0, 941.0], [990.0 + k for k in range(8)]))
    assert one.verdict == two.verdict == UNTESTABLE
    assert "the smallest p possible is 1" in one.note
    assert "at least 4 in each run" in one.note and "run A's 1" not in one.note
    # one repetition against 40, far apart: p 2 / 41 < 0.05, yet not testable
    (forty,) = _rows(([940.0], [990.0 + k / 10 for k in range(40)]))
    assert forty.p == pytest.approx(2 / 41) and forty.verdict == UNTESTABLE
    assert "a run of one repetition says nothing of its spread" in forty.note
    assert "the smallest p possible is 0.33" in two.note
    assert "or 8 in run B" in two.note
    assert one.p_adjusted is None and two.p_adjusted is None
    # 2 against 8 can: the only row in the adjustment, and clearly faster
    assert two_eight.verdict == FASTER and two_eight.p_adjusted == two_eight.p


def test_significant_alone_is_not_after_adjustment():
    a = [100.0, 101.0, 102.0, 103.0, 104.0]
    shifted = [x + 10.5 for x in a]                     # p 0.0079 alone
    rows = _rows(*([(a, shifted)] + [(a, [x + 0.25 for x in a])] * 9))
    assert rows[0].p == pytest.approx(2 / 252)
    assert rows[0].p_adjusted == pytest.approx(min(1.0, 10 * 2 / 252))   # 0.079
    assert rows[0].verdict == INCONCLUSIVE and "adjusted for the rows" in rows[0].note
    # +0.25 Mbit/s on 5 against 5: the interval [-2.75, +3.25] reaches across ±1.02
    assert all(r.verdict == INCONCLUSIVE for r in rows[1:])


def test_not_comparable_without_repetitions():
    r = Comparison(a=_entry(0), b=_entry(1), test="t", point="mtu9000", mtu=9000)
    judge([r])
    assert r.verdict == NOT_COMPARABLE


def test_p_values_are_written_in_full_precision(tmp_path):
    a = [900.0 + k for k in range(15)]
    (r,) = _rows((a, [x + 100.0 for x in a]))
    assert r.p == pytest.approx(1.2894e-08, rel=1e-3)
    t = comparison_table([r])
    write_csv(tmp_path / "c.csv", t.csv_columns, t.csv_rows)
    with open(tmp_path / "c.csv", newline="") as fh:
        (row,) = csv.DictReader(fh)
    assert float(row["p_value"]) == pytest.approx(r.p, rel=1e-12)
    assert row["p_value"].startswith("1.289") and "e-08" in row["p_value"]
    assert float(row["p_adjusted"]) == pytest.approx(r.p, rel=1e-12)
    assert row["verdict"] == FASTER
    assert float(row["ci_low_pct"]) > 1.0
