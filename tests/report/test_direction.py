"""Which way is better is the test's, not only its tool's: iperf 2 is a rate tool, but its
bounce-back mode gives round trips, and every reader of a bounce-back repetition treats it
as lower-is-better as it treats sockperf's (summary.csv, the run's printed summary,
until-stable, the verdict). On the real run ``data/run-loaded`` (rtt-idle: iperf
2 --bounceback alone, 2 repetitions of gbe and nojumbo, select best)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from nicbench.config.profile import UntilStable
from nicbench.report.build import build
from nicbench.report.load import load_runs
from nicbench.results.policy import (Better, better_of, better_of_record, figure,
                                     first_stop, interval)
from nicbench.results.records import Kind

RUN = Path(__file__).parent / "data" / "run-loaded"


def _idle(run, pair: str):
    return sorted((r for r in run.records if r.pair == pair and r.test == "rtt-idle"
                   and r.kind is Kind.REPETITION), key=lambda r: r.repetition)


def test_the_direction_is_the_tests_not_only_the_tools():
    assert better_of("iperf2", {"bounceback": True}) is Better.LOWER
    assert better_of("iperf2", {"length": "64K"}) is Better.HIGHER
    assert better_of("sockperf") is Better.LOWER and better_of("iperf3") is Better.HIGHER
    (run,) = load_runs([RUN])
    idle = _idle(run, "gbe")[0]
    load = next(r for r in run.records if r.test == "rtt-loaded" and r.ok)
    assert better_of_record(idle) is Better.LOWER and better_of_record(load) is Better.HIGHER


def test_bounce_back_repetitions_are_pooled_as_bins_in_summary_csv():
    # no longer each percentile's lowest repetition (select: best): the two repetitions'
    # histograms pooled, each percentile the bin its rank falls in (its upper edge)
    (run,) = load_runs([RUN])
    for pair in ("gbe", "nojumbo"):
        reps = _idle(run, pair)
        (row,) = [r for r in run.summary if r.pair == pair and r.test == "rtt-idle"]
        assert row.select == "best" and row.selected_bps is None    # no rate
        assert row.latency_source == "histogram"
        assert row.latency_samples == sum(r.latency.samples for r in reps) < 10_000
        assert row.p999_us is None                   # p99.9 needs 10,000 round trips
        for field in ("p50", "p90", "p99"):
            value = getattr(row, f"{field}_us")
            values = [getattr(r.latency, f"{field}_us") for r in reps]
            assert min(values) <= value <= max(values)   # between the repetitions' bins
        assert row.p99_low_us is not None and 0 < row.p99_us - row.p99_low_us <= 100.0
        assert row.max_us == max(r.latency.max_us for r in reps)
        # the repetitions' own medians are bins too: their range spans the bins' edges
        assert row.p50_min_us is not None and row.p50_min_us < row.p50_max_us
        assert row.p50_min_us <= min(r.latency.min_us for r in reps if r.latency.min_us) + 100


def test_until_stable_replays_the_bounce_back_median_round_trips():
    (run,) = load_runs([RUN])
    reps = _idle(run, "gbe")
    # the rule judges a round-trip repetition by its median round trip
    values = [figure(r) for r in reps]
    assert values == [r.latency.p50_us for r in reps] and len(values) == 2
    ci = interval(values, "mean")
    assert ci is not None and abs(ci.figure - sum(values) / 2) < 1e-9
    assert interval(values, "median") is None          # the median's needs 6
    # two stored repetitions are not a stop under a min of 5, whatever the target
    assert first_stop(reps, UntilStable(min=5, max=10, until_ci_pct=50.0), "mean") is None


def test_the_printed_summary_gives_bounce_back_round_trips_not_an_empty_rate(capsys):
    from nicbench.cli.run import _ended

    (run,) = load_runs([RUN])
    runner = SimpleNamespace(summary=run.summary, unmeasured={}, lost={}, problems=[])
    args = SimpleNamespace(report=False)
    _ended(args, runner, SimpleNamespace(path=RUN))
    text = capsys.readouterr().out
    idle = [ln for ln in text.splitlines() if "rtt-idle" in ln]
    assert len(idle) == 2
    for pair in ("gbe", "nojumbo"):
        (row,) = [r for r in run.summary if r.pair == pair and r.test == "rtt-idle"]
        (line,) = [ln for ln in idle if ln.split()[0] == pair]
        assert f"{row.p50_us:.1f}" in line and f"{row.p99_us:.1f}" in line


def test_the_verdict_ranks_bounce_back_round_trips_lowest_first_never_as_a_rate():
    report = build(load_runs([RUN]))
    (run,) = load_runs([RUN])
    rows = {p: next(r for r in run.summary if r.pair == p and r.test == "rtt-idle")
            for p in ("gbe", "nojumbo")}
    first = min(rows, key=lambda p: rows[p].p99_us)
    label = next(e.label for e in report.entries if e.pair == first)
    (s,) = [s for s in report.verdict if s.method == "iperf 2 TCP"]
    low = rows[first].p99_low_us
    assert s.text.startswith(f"iperf 2 TCP: lowest tail latency {label}, p99 "
                             f"{low:.1f}-{rows[first].p99_us:.1f} us at MTU 1500 (pooled "
                             "histograms of 2 repetitions")
    assert not [x for x in report.verdict if "fastest" in x.text and "iperf 2" in x.text]
    # the table gives each percentile as its bin, with the count and the interval
    (t,) = [t for t in report.tables_of("latency") if t.id == "latency-iperf2-tcp"]
    for row in t.rows:
        pair = next(e.pair for e in report.entries if e.label == row[0])
        r = rows[pair]
        assert row[t.columns.index("p99")] == f"{r.p99_low_us:.1f}-{r.p99_us:.1f}"
        assert row[t.columns.index("p99.9")].startswith("needs 10,000 round trips (has ")
        assert row[t.columns.index("round trips")] == r.latency_samples
