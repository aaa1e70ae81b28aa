"""Run against run for round trips, on real stored runs (``data/latency``: sockperf, 3
repetitions of gbe and fe; ``data/run-loaded``: iperf 2's bounce-back alone and beside an
iperf3 load, 2 repetitions of gbe and nojumbo), each copied as two "nights": a latency
test gives its p50 and p99 round trip rows, a loaded test its throughput and its probe's
p50 and p99 under load, judged by the throughput's statistic and threshold, the words the
right way round (a lower round trip is better), and a round trip below the wire's minimum
never judged."""

from __future__ import annotations

import csv
import math
import statistics
from pathlib import Path

import pytest

from nicbench.judging import words as judging_words
from nicbench.report import compare
from nicbench.report.build import build
from nicbench.report.compare import Comparison, fill, judge
from nicbench.judging.words import HIGHER_LATENCY, LOWER_LATENCY
from nicbench.report.configs import Index, build_entries
from nicbench.report.load import load_runs
from nicbench.report.model import Entry
from nicbench.report.page import write_tables
from nicbench.results import roundtrips
from nicbench.tools import sockperf

DATA = Path(__file__).parent / "data"


def _rows(copy_run, src: str) -> list[Comparison]:
    runs = load_runs([copy_run(DATA / src, "night-1"), copy_run(DATA / src, "night-2")])
    return compare.compare(Index(runs, build_entries(runs, {})))


def test_sockperf_rows_are_p50_and_p99_over_the_repetitions_and_physics_first(copy_run):
    rows = _rows(copy_run, "latency")
    runs = load_runs([DATA / "latency"])
    got = {(c.a.pair, c.test, c.figure): c for c in rows}
    assert set(got) == {(p, t, f) for p in ("gbe", "fe") for t in ("rtt-udp-64", "rtt-tcp-64")
                        for f in ("p50 round trip", "p99 round trip")}
    for (pair, test, fig), c in got.items():
        field = "p50_us" if fig.startswith("p50") else "p99_us"
        mine = [r for r in runs[0].records
                if r.pair == pair and r.test == test and r.ok and r.latency]
        reps = [getattr(r.latency, field) for r in mine]
        assert c.unit == "us" and c.lower_better
        # the figure beside the statistic: never the lowest repetition (select: best)
        if "block bootstrap" in c.p_method:   # full logs with 8 slices or more a side
            trips = sorted(x for r in mine for x in sockperf.round_trips_us(
                (DATA / "latency" / r.raw["outfile"]).read_text()))
            q = 0.5 if field == "p50_us" else 0.99
            assert c.a_median == pytest.approx(trips[math.ceil(q * len(trips)) - 1], abs=5e-4)
            assert c.a_n == c.b_n >= roundtrips.MIN_SLICES
            # a night against its own copy: no change, and the bootstrap can say so
            assert c.verdict in (judging_words.WITHIN, judging_words.INCONCLUSIVE)
            assert c.shift == 0.0
            assert c.ci_low is not None and c.ci_high is not None
            assert c.ci_low <= 0 <= c.ci_high
            continue
        # else the repetitions' own, as a rate's: 3 against 3
        assert (c.a_n, c.b_n) == (3, 3)
        assert c.a_median == pytest.approx(statistics.median(reps))
        if test == "rtt-udp-64":      # no round trips kept: the value is their median too
            assert c.a_value == pytest.approx(statistics.median(reps))
        if pair == "fe" and test == "rtt-udp-64":   # p50 below the 100 Mbit/s wire's 20.8 us
            assert c.verdict == judging_words.BELOW_FLOOR and c.above_limit
            assert "below the wire's minimum round trip" in c.note and "not judged" in c.note
        else:                         # 3 against 3 cannot reach p < 0.05 (as for a rate)
            assert c.verdict == judging_words.UNTESTABLE
            assert c.threshold == pytest.approx(max(0.01 * c.a_median, 0.001))
    assert any("block bootstrap" in c.p_method for c in rows)


def test_bounceback_and_its_probe_under_load_are_compared_beside_the_load(copy_run):
    rows = _rows(copy_run, "run-loaded")
    by = {(c.a.pair, c.test): [c.figure for c in rows if (c.a.pair, c.test) == (c.a.pair,
                                                                                  c.test)]
          for c in rows}
    for pair in ("gbe", "nojumbo"):
        assert [c.figure for c in rows if c.a.pair == pair] == [
            "p50 round trip", "p99 round trip", "throughput", "probe p50 under load",
            "probe p99 under load"], by
    probe = next(c for c in rows if c.a.pair == "gbe" and c.figure == "probe p99 under load")
    runs = load_runs([DATA / "run-loaded"])
    want = [b.latency.p99_us for r in runs[0].records if r.pair == "gbe"
            and r.test == "rtt-loaded" and r.ok for b in r.beside if b.latency]
    assert probe.a_median == pytest.approx(statistics.median(want))
    # the bounce-back histogram's bin is the resolution: no finer change is a change
    assert probe.resolution == 100.0 and probe.threshold >= 100.0


def test_a_lower_round_trip_reads_as_lower_latency_not_slower():
    a, b = _entry(0), _entry(1)
    lower = fill(Comparison(a=a, b=b, test="rtt", point="mtu1500", mtu=1500,
                            figure="p99 round trip"),
                 [100.0 + k for k in range(8)], [50.0 + k for k in range(8)], 0.001)
    higher = fill(Comparison(a=a, b=b, test="rtt2", point="mtu1500", mtu=1500,
                             figure="p50 round trip"),
                  [100.0 + k for k in range(8)], [150.0 + k for k in range(8)], 0.001)
    rate = fill(Comparison(a=a, b=b, test="tcp", point="mtu1500", mtu=1500),
                [100.0 + k for k in range(8)], [150.0 + k for k in range(8)], 0.001)
    judge([lower, higher, rate])
    assert (lower.verdict, higher.verdict, rate.verdict) == (LOWER_LATENCY, HIGHER_LATENCY,
                                                             judging_words.FASTER)
    assert lower.shift < 0 < higher.shift


def _entry(run: int) -> Entry:
    label = "AB"[run]
    return Entry(key=f"{run}/gbe", run_index=run, run_label=label, run_id=label,
                 run_name=label, pair="gbe", adapter="gbe", adapter_label="Gigabit card")


def test_comparison_csv_keeps_round_trips_in_their_own_unit(copy_run, tmp_path):
    runs = load_runs([copy_run(DATA / "run-loaded", "night-1"),
                      copy_run(DATA / "run-loaded", "night-2")])
    report = build(runs)
    write_tables(report, tmp_path)
    with open(tmp_path / "tables" / "comparison.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    rtt = [r for r in rows if r["figure"] != "throughput"]
    assert rtt and all(r["a_median_bps"] == "" and float(r["a_median_us"]) > 0 for r in rtt)
    rate = [r for r in rows if r["figure"] == "throughput"]
    assert rate and all(r["a_median_us"] == "" and float(r["a_median_bps"]) > 1e8
                        for r in rate)
    (t,) = report.tables_of("comparison")
    assert {row[t.columns.index("figure")] for row in t.rows} == {
        "p50 round trip, us", "p99 round trip, us", "throughput, Mbit/s",
        "probe p50 under load, us", "probe p99 under load, us"}


def test_the_comparison_chart_has_a_chart_per_figure_saying_which_way_is_better(copy_run):
    from nicbench.report.figures.comparison import comparison_charts

    runs = load_runs([copy_run(DATA / "run-loaded", "night-1"),
                      copy_run(DATA / "run-loaded", "night-2")])
    charts = {c.id: c for c in comparison_charts(Index(runs, build_entries(runs, {})))}
    assert set(charts) == {"comparison-rtt-idle-p50-round-trip",
                           "comparison-rtt-idle-p99-round-trip", "comparison-rtt-loaded",
                           "comparison-rtt-loaded-probe-p50-under-load",
                           "comparison-rtt-loaded-probe-p99-under-load"}
    for cid, chart in charts.items():
        lower = "round-trip" in cid or "under-load" in cid
        assert all(("lower is better" in p.xlabel) == lower for p in chart.panels)
