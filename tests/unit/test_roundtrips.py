"""A latency configuration's round trips pooled over its repetitions (results/roundtrips.py):
percentiles only where enough round trips lie beyond them, order-statistics intervals,
histogram bins as ranges, and the block bootstrap that compares two runs. Real captures
of sockperf 3.7 and iperf 2.1.8 (tests/golden/captures)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binom

from nicbench.results import roundtrips
from nicbench.results.records import Kind, Status, TrialRecord
from nicbench.results.summary import summary_rows
from nicbench.tools import sockperf
from nicbench.tools.base import Latency

CAPTURES = Path(__file__).resolve().parents[1] / "golden" / "captures"
FULL_LOG = CAPTURES / "sockperf_lab_udp_m64_t1_mps5000_fulllog.csv"
BB_IDLE = CAPTURES / "iperf2_bounceback_lab_gbe_idle_client.txt"


def test_a_percentile_needs_ten_round_trips_beyond_it():
    assert roundtrips.needed(0.99) == 1000
    assert roundtrips.needed(0.999) == 10_000
    assert roundtrips.needed(0.5) == 20


@pytest.mark.parametrize("n,q", [(1000, 0.99), (10_000, 0.999), (45_000, 0.5), (2000, 0.9)])
def test_the_rank_interval_covers_the_quantile_at_least_95_percent(n, q):
    lo, hi = roundtrips.rank_interval(n, q)
    assert 1 <= lo < roundtrips._rank(n, q) <= hi <= n
    # the quantile lies in [X(lo), X(hi)] when lo <= B < hi, B ~ Binomial(n, q)
    coverage = binom.cdf(hi - 1, n, q) - binom.cdf(lo - 1, n, q)
    assert coverage >= 0.95


def test_the_full_log_is_read_with_every_round_trip_and_its_time_slices():
    text = FULL_LOG.read_text()
    trips = roundtrips.read_full_log(text)
    every = sockperf.round_trips_us(text)
    assert trips.n == len(every) == sockperf.parse(text).latency.samples
    assert trips.exact is not None and np.all(np.diff(trips.exact) >= 0)
    assert sum(s.size for s in trips.slices) == trips.n
    assert 3 <= len(trips.slices) <= 5           # a 1 s run (0.6 s valid) in 0.25 s slices
    assert list(np.concatenate(trips.slices)) == pytest.approx(every, rel=1e-6)


def test_p999_is_blank_for_want_of_round_trips_and_printed_once_enough_are_pooled():
    one = roundtrips.read_full_log(FULL_LOG.read_text())
    assert 1000 <= one.n < 10_000
    alone = roundtrips.pooled([one])
    assert alone is not None
    assert alone["p99"].printed and not alone["p99.9"].printed
    assert alone["p99.9"].figure() == f"needs 10,000 round trips (has {one.n:,})"
    reps = math.ceil(10_000 / one.n)
    many = roundtrips.pooled([one] * reps)
    assert many is not None and many.n == reps * one.n
    p999 = many["p99.9"]
    assert p999.printed and p999.ci_low is not None and p999.ci_high is not None
    assert p999.ci_low <= (p999.low or 0) <= p999.ci_high
    # the pooled figure is the nearest-rank quantile of everything, not a repetition's
    pooled_all = np.sort(np.concatenate([one.exact] * reps))
    assert p999.low == pytest.approx(float(pooled_all[math.ceil(0.999 * pooled_all.size) - 1]))


def test_the_pooled_figure_is_not_the_lowest_repetition_of_each_percentile():
    one = roundtrips.read_full_log(FULL_LOG.read_text())
    assert one.exact is not None
    fast = roundtrips.Trips(exact=np.sort(one.exact * 0.5))
    both = roundtrips.pooled([one, fast])
    assert both is not None
    p99 = both["p99"]
    assert p99.reps == 2 and p99.reps_low is not None and p99.reps_high is not None
    assert p99.reps_low < (p99.low or 0) <= p99.reps_high     # between, not the min
    assert p99.reps_low == pytest.approx(fast.quantile(0.99)[0])


def test_a_histogram_gives_bins_never_a_point_inside_them():
    trips = roundtrips.read_histogram(BB_IDLE.read_text())
    assert trips.binned and trips.n == 1000
    pooled = roundtrips.pooled([trips, trips], [(1000, 42.0), (1000, 42.0)])
    assert pooled is not None and pooled.source == "histogram" and pooled.n == 2000
    p50 = pooled["p50"]
    assert (p50.low, p50.high) == (19.0, 100.0) and p50.figure() == "19.0-100.0"
    assert pooled.mean_us == 42.0
    assert pooled["p99"].printed and not pooled["p99.9"].printed   # 2000 < 10,000


def test_without_kept_round_trips_the_figure_is_the_median_of_the_repetitions():
    lats = [(15_000, {"p50_us": 40.0, "p90_us": 50.0, "p99_us": 90.0, "p999_us": 300.0}),
            (15_000, {"p50_us": 42.0, "p90_us": 52.0, "p99_us": 95.0, "p999_us": 200.0}),
            (8_000, {"p50_us": 41.0, "p90_us": 51.0, "p99_us": 80.0, "p999_us": 100.0})]
    p = roundtrips.from_summaries(lats)
    assert p is not None and p.source == "summaries"
    assert p["p99"].low == 90.0 and (p["p99"].reps_low, p["p99"].reps_high) == (80.0, 95.0)
    assert not p["p99.9"].printed        # one repetition had under 10,000


def _rec(rep: int, raw: dict[str, str], lat: Latency) -> TrialRecord:
    return TrialRecord(run_id="r", trial_id=f"t{rep}", pair="gbe", adapter="gbe",
                       adapter_label="g", tool="sockperf", test="rtt", protocol="udp",
                       point="mtu1500", mtu=1500, repetition=rep, kind=Kind.REPETITION,
                       status=Status.OK, raw=raw, latency=lat)


def test_the_summary_row_pools_the_kept_full_logs_of_its_repetitions(tmp_path):
    text = FULL_LOG.read_text()
    lat = sockperf.parse(text).latency
    assert lat is not None
    (tmp_path / "raw").mkdir()
    recs = []
    for rep in (1, 2, 3, 4):
        rel = f"raw/t{rep}.outfile.txt"
        (tmp_path / rel).write_text(text)
        recs.append(_rec(rep, {"outfile": rel}, lat))
    row, = summary_rows(recs, None, tmp_path)
    assert row.latency_source == "full log" and row.latency_samples == 4 * lat.samples
    assert row.p999_us is not None and row.p999_ci_low_us is not None
    # without the run's files: the repetitions' own, and p99.9 blank (each under 10,000)
    bare, = summary_rows(recs, None, None)
    assert bare.latency_source == "summaries" and bare.p999_us is None
    assert bare.p99_us == lat.p99_us


def _slices(rng: np.random.Generator, scale: float, k: int = 16) -> list[np.ndarray]:
    return [rng.exponential(scale, 2000).astype(np.float32) + 20 for _ in range(k)]


def test_the_block_bootstrap_sees_a_ten_percent_change_and_not_a_null_one():
    rng = np.random.default_rng(1)
    a, same, slower = _slices(rng, 40.0), _slices(rng, 40.0), _slices(rng, 48.0)
    moved = roundtrips.compare_percentile(a, slower, 0.99, resamples=300)
    assert moved is not None and moved.p < 0.05 and moved.ci_low_us > 0
    still = roundtrips.compare_percentile(a, same, 0.99, resamples=300)
    assert still is not None and still.ci_low_us < 0 < still.ci_high_us


def test_too_few_slices_are_not_compared():
    rng = np.random.default_rng(2)
    assert roundtrips.compare_percentile(_slices(rng, 40.0, 3), _slices(rng, 40.0), 0.5) is None


# -- two real repetitions of one configuration (captured on a private lab, 2026-11-28) --
SOCK_REPS = [CAPTURES / f"sockperf_lab_gbe_udp_m64_t1_mps5000_r{i}_fulllog.csv" for i in (1, 2)]
BB_REPS = [CAPTURES / f"iperf2_bounceback_lab_gbe_p005_t4_r{i}_client.txt" for i in (1, 2)]


def test_two_real_repetitions_pool_into_one_sample_with_its_count():
    parts = [roundtrips.read_full_log(p.read_text()) for p in SOCK_REPS]
    own = [sockperf.parse(p.read_text()).latency for p in SOCK_REPS]
    assert [t.n for t in parts] == [lat.samples for lat in own]
    pooled = roundtrips.pooled(parts, [(lat.samples, lat.mean_us) for lat in own])
    assert pooled is not None and pooled.n == sum(lat.samples for lat in own) == 5492
    # p99 from 5,492 round trips; p99.9 would need 10,000
    p99, p999 = pooled["p99"], pooled["p99.9"]
    assert p99.printed and p999.figure() == "needs 10,000 round trips (has 5,492)"
    every = np.sort(np.concatenate([t.exact for t in parts if t.exact is not None]))
    assert p99.low == pytest.approx(float(every[math.ceil(0.99 * every.size) - 1]))
    # the range: each repetition's own nearest-rank p99 (sockperf prints its own rank)
    each = [float(np.sort(t.exact)[math.ceil(0.99 * t.n) - 1]) for t in parts
            if t.exact is not None]
    assert (p99.reps_low, p99.reps_high) == (pytest.approx(min(each)), pytest.approx(max(each)))
    assert p99.reps_low is not None and p99.reps_low < p99.reps_high
    assert p99.ci_low is not None and p99.ci_high is not None
    assert p99.ci_low <= (p99.low or 0) <= p99.ci_high
    # the mean: iperf's and sockperf's own, weighted by their counts
    assert pooled.mean_us == pytest.approx(
        sum(lat.samples * (lat.mean_us or 0) for lat in own) / pooled.n)


def test_two_real_bounce_back_repetitions_pool_their_histograms():
    parts = [roundtrips.read_histogram(p.read_text()) for p in BB_REPS]
    assert sum(t.n for t in parts) == 1590
    pooled = roundtrips.pooled(parts)
    assert pooled is not None and pooled.source == "histogram"
    p99 = pooled["p99"]
    assert p99.printed and p99.binned and p99.high is not None and p99.low is not None
    assert p99.high - p99.low <= 100.0                      # one 100 us bin
    assert p99.reps == 0       # 800 a repetition: none has a p99 of its own
    assert not pooled["p99.9"].printed


def test_the_rank_interval_is_scipys_binomial_quantiles():
    """The order-statistics ranks come from the binomial cdf without scipy.stats (half a
    second to import, which a report of one run does not pay): the same ranks."""
    import random

    from scipy.stats import binom

    from nicbench.results.roundtrips import rank_interval

    rng = random.Random(30)
    for _ in range(300):
        n, q = rng.randint(1, 200_000), rng.choice([0.5, 0.9, 0.99, 0.999, rng.random()])
        lo = int(binom.ppf(0.025, n, q))
        hi = int(binom.ppf(0.975, n, q)) + 1
        assert rank_interval(n, q) == (max(1, lo), min(n, hi))
