"""The report's latency section and verdict row, on a real run (data/latency: sockperf
ping-pong on a private lab's gbe and fe pairs, UDP back to back and TCP paced with every
round trip kept, 3 repetitions each, select best; see data/README.md).

Expected values are taken here from the stored repetitions and raw files, not from the
summary the report reads: a percentile bar is that of every repetition's round trips
pooled where the run kept them (TCP: full logs), else the median of the repetitions' own
(UDP), never the lowest of each percentile taken apart; its whiskers the repetitions'
range; a percentile with fewer than 10 round trips beyond it is blank; the CDF is the
repetition whose median is nearest the pooled one; the verdict names the lowest p99.
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import pytest

from nicbench.report.build import build
from nicbench.report.load import load_runs
from nicbench.report.model import BarPanel, LinePanel
from nicbench.results.records import TrialRecord
from nicbench.tools import sockperf

RUN = Path(__file__).parent / "data" / "latency"


@pytest.fixture(scope="module")
def report():
    return build(load_runs([RUN]))


def records() -> list[TrialRecord]:
    return [TrialRecord.from_dict(json.loads(line))
            for line in (RUN / "trials.jsonl").read_text().splitlines()]


def reps(pair: str, test: str) -> list[TrialRecord]:
    return [r for r in records() if r.pair == pair and r.test == test and r.latency]


def pooled_trips(pair: str, test: str) -> list[float]:
    """Every round trip of every repetition's kept full log, sorted."""
    return sorted(x for r in reps(pair, test)
                  for x in sockperf.round_trips_us((RUN / r.raw["outfile"]).read_text()))


def nearest_rank(xs: list[float], q: float) -> float:
    return xs[math.ceil(q * len(xs)) - 1]


def test_percentile_bars_pool_the_kept_round_trips_and_blank_what_they_cannot_carry(report):
    (fig,) = [f for f in report.figures_of("latency") if f.id == "latency-sockperf-tcp"]
    assert "pooled round trips of 3 repetitions kept whole" in " ".join(fig.notes)
    panels = [p for p in fig.panels if isinstance(p, BarPanel)]
    entry = {e.pair: e.key for e in report.entries}
    for pair in ("gbe", "fe"):
        trips = pooled_trips(pair, "rtt-tcp-64")
        assert 1000 <= len(trips) < 10_000
        for panel, q in zip(panels[:3], (0.5, 0.9, 0.99), strict=True):
            bar = panel.bar(entry[pair])
            assert bar is not None and bar.value == pytest.approx(nearest_rank(trips, q),
                                                                  abs=5e-4)
        blank = panels[3].bar(entry[pair])
        assert blank is not None and blank.value is None
        assert blank.gap == "needs 10,000 round trips"


def test_without_kept_round_trips_a_bar_is_the_repetitions_median_never_their_lowest(report):
    (fig,) = [f for f in report.figures_of("latency") if f.id == "latency-sockperf-udp"]
    assert "median of 3 repetitions' own percentiles, no round trips kept" in " ".join(fig.notes)
    panels = [p for p in fig.panels if isinstance(p, BarPanel)]
    assert [p.title for p in panels] == ["MTU 1500: p50", "MTU 1500: p90", "MTU 1500: p99",
                                         "MTU 1500: p99.9"]
    entry = {e.pair: e.key for e in report.entries}
    for panel, name in zip(panels, ("p50_us", "p90_us", "p99_us", "p999_us"), strict=True):
        for pair in ("gbe", "fe"):
            values = [getattr(r.latency, name) for r in reps(pair, "rtt-udp-64")]
            bar = panel.bar(entry[pair])
            assert bar is not None and len(values) == 3
            if all(r.latency.samples >= 10_000 for r in reps(pair, "rtt-udp-64")) \
                    or name != "p999_us":
                assert bar.value == statistics.median(values)
                assert (bar.lo, bar.hi) == (min(values), max(values))
            else:
                assert bar.value is None
            assert bar.n_ok == 3
    # rows by p99, lowest first
    p99 = {pair: statistics.median(r.latency.p99_us for r in reps(pair, "rtt-udp-64"))
           for pair in ("gbe", "fe")}
    first = min(p99, key=lambda k: p99[k])
    assert panels[0].rows[0].key == entry[first]


def test_the_cdf_is_every_round_trip_of_the_repetition_nearest_the_pooled_median(report):
    (fig,) = [f for f in report.figures_of("latency-cdf") if f.id == "latency-cdf-sockperf-tcp"]
    (panel,) = fig.panels
    assert isinstance(panel, LinePanel) and panel.xlog and panel.ymax == 1.0
    for pair in ("gbe", "fe"):
        mine = reps(pair, "rtt-tcp-64")
        p50 = nearest_rank(pooled_trips(pair, "rtt-tcp-64"), 0.5)
        chosen = min(mine, key=lambda r: (abs(r.latency.p50_us - p50), r.repetition))
        trips = sorted(sockperf.round_trips_us((RUN / chosen.raw["outfile"]).read_text()))
        assert len(trips) == chosen.latency.samples
        (curve,) = [c for c in panel.curves if c.entry == next(
            e.key for e in report.entries if e.pair == pair)]
        assert curve.points[0] == (trips[0], pytest.approx(1 / len(trips)))
        assert curve.points[-1] == (trips[-1], 1.0)
        ys = [y for _, y in curve.points]
        assert ys == sorted(ys)
        assert any(f"every round trip of repetition {chosen.repetition}'s raw full log" in n
                   for n in fig.notes)


def test_the_cdf_s_csv_keeps_each_round_trip_in_us_and_its_share(report):
    """The page's CSV beside the CDF: the round trip as measured (not cut to a whole us)
    and the share at or below it, under their own names (not netPIPE's block size)."""
    from nicbench.report.page import figure_rows

    (fig,) = [f for f in report.figures_of("latency-cdf") if f.id == "latency-cdf-sockperf-tcp"]
    cols, rows = figure_rows(report, fig)
    assert cols == ["panel", "curve", "us", "fraction", "above_limit"]
    assert [(r[2], r[3]) for r in rows] == [pt for c in fig.panels[0].curves for pt in c.points]
    assert any(r[2] != int(r[2]) for r in rows)


def test_without_per_sample_output_the_cdf_says_it_is_the_printed_percentiles(report):
    (fig,) = [f for f in report.figures_of("latency-cdf") if f.id == "latency-cdf-sockperf-udp"]
    assert all("printed percentiles" in n for n in fig.notes) and len(fig.notes) == 2
    (panel,) = fig.panels
    assert isinstance(panel, LinePanel)
    for curve in panel.curves:
        assert curve.points[-1][1] == 1.0 and (0.5 in [y for _, y in curve.points])


# The wire's shortest round trip of a 64-byte message at the fe card's 100 Mbit/s, by hand:
# UDP (14 + 20 + 8 + 64 + 4) + 20 = 130 bytes each way, 2 x 130 x 8 / 1e8 s = 20.8 us; TCP
# with timestamps (14 + 20 + 32 + 64 + 4) + 20 = 154 bytes, 24.64 us. The lab's fe link
# (tbf: no serialization) reads below both; gbe's floor is a tenth of them.
FE_FLOOR_US = {"rtt-udp-64": 20.8, "rtt-tcp-64": 24.64}


def test_the_verdict_names_the_lowest_tail_latency_and_flags_the_impossible(report):
    gbe = next(e.label for e in report.entries if e.pair == "gbe")
    fe = next(e.label for e in report.entries if e.pair == "fe")
    # UDP: the repetitions' median (no round trips kept); fe's reads below the wire
    test, title = "rtt-udp-64", "sockperf UDP"
    fe_p50 = statistics.median(r.latency.p50_us for r in reps("fe", test))
    p99 = statistics.median(r.latency.p99_us for r in reps("gbe", test))
    assert fe_p50 < FE_FLOOR_US[test]
    (s,) = [s for s in report.verdict if s.method == title]
    assert s.text.startswith(f"{title}: lowest tail latency {gbe}, p99 {p99:.1f} us at "
                             "MTU 1500 (median of 3 repetitions' own percentiles")
    assert (f"Below the wire's minimum round trip; not ranked: {fe} p50 {fe_p50:.1f} us "
            f"below the wire's minimum round trip {FE_FLOOR_US[test]:.2f} us on this lab."
            in s.text)
    (t,) = [t for t in report.tables_of("verdict") if t.title == f"{title}: lowest tail latency"]
    assert [(row[0], row[1]) for row in t.rows] == [("1", gbe), ("", fe)]
    assert t.rows[1][-1].endswith("on this lab; not ranked")
    # TCP: pooled round trips. The lowest repetition's p50 read below fe's wire; the
    # pooled p50 of all 3 does not: both ranked, by their pooled p99
    test, title = "rtt-tcp-64", "sockperf TCP"
    assert min(r.latency.p50_us for r in reps("fe", test)) < FE_FLOOR_US[test]
    assert nearest_rank(pooled_trips("fe", test), 0.5) > FE_FLOOR_US[test]
    p99s = {pair: nearest_rank(pooled_trips(pair, test), 0.99) for pair in ("gbe", "fe")}
    top = min(p99s, key=lambda k: p99s[k])
    label = gbe if top == "gbe" else fe
    (s,) = [s for s in report.verdict if s.method == title]
    assert s.text.startswith(f"{title}: lowest tail latency {label}, p99 {p99s[top]:.1f} us "
                             "at MTU 1500 (pooled round trips of 3 repetitions")
    (fig,) = [f for f in report.figures_of("latency") if f.id == "latency-sockperf-udp"]
    p50 = fig.panels[0]
    assert isinstance(p50, BarPanel) and p50.title.endswith("p50")
    fe_bar = p50.bar(next(e.key for e in report.entries if e.pair == "fe"))
    assert fe_bar is not None and fe_bar.limit == pytest.approx(20.8) and fe_bar.flag
    # round trips are not ranked as throughput: no rate verdict, speed or CPU chart
    assert not [s for s in report.verdict if "fastest" in s.text or "nothing was measured"
                in s.text]
    assert not report.figures_of("speed") and not report.figures_of("cpu")


def test_two_adapters_within_physics_are_ranked_and_the_test_says_what_it_can_tell(copy_run):
    # --link-rate fe=1gbit: both read as Gigabit, so both are within the wire's physics
    rep = build(load_runs([copy_run(RUN, "gigabit")]), rates={"lab-gbe": 1e9, "lab-fe": 1e9})
    (s,) = [s for s in rep.verdict if s.method == "sockperf UDP"]
    assert "Below the wire's minimum" not in s.text
    assert "3 against 3 repetitions cannot tell the first two apart (the smallest p " \
        "possible is 0.10)." in s.text


def test_the_latency_table_keeps_the_spread_of_the_medians(report):
    (t,) = [t for t in report.tables_of("latency") if t.id == "latency-sockperf-udp"]
    for row in t.rows:
        pair = next(e.pair for e in report.entries if e.label == row[0])
        medians = [r.latency.p50_us for r in reps(pair, "rtt-udp-64")]
        assert row[9] == f"{min(medians):.1f}-{max(medians):.1f}"
        assert row[10] == sum(r.latency.samples for r in reps(pair, "rtt-udp-64"))


def test_publication_figures_plot_the_same_round_trips_in_microseconds(tmp_path):
    import csv
    import subprocess
    import sys

    out = tmp_path / "figs"
    proc = subprocess.run([sys.executable, "-m", "nicbench.cli", "figures", str(RUN), "--out",
                           str(out), "--format", "png"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    with open(out / "figures.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    p50 = [r for r in rows if r["file"] == "latency-sockperf-udp-mtu-1500-p50"]
    assert (out / "latency-sockperf-udp-mtu-1500-p50.png").is_file()
    for r in p50:
        pair = "gbe" if "Gigabit" in r["label"] else "fe"
        values = [x.latency.p50_us for x in reps(pair, "rtt-udp-64")]
        assert r["unit"] == "us" and float(r["value"]) == statistics.median(values)
        assert (float(r["low"]), float(r["high"])) == (min(values), max(values))
    cdf = [r for r in rows if r["figure"] == "latency-cdf-sockperf-tcp"]
    assert cdf and all(r["x_unit"] == "us" and r["unit"] == "fraction" for r in cdf)
    assert max(float(r["value"]) for r in cdf) == 1.0


def test_round_trips_are_compared_run_against_run_as_round_trips(copy_run):
    from nicbench.judging import words as judging_words
    from nicbench.report import compare
    from nicbench.report.configs import Index, build_entries

    runs = load_runs([copy_run(RUN, "night-1"), copy_run(RUN, "night-2")])
    ix = Index(runs, build_entries(runs, {}))
    rows = compare.compare(ix)      # p50 and p99 per adapter and test, never a rate's words
    assert len(rows) == 8 and {c.figure for c in rows} == {"p50 round trip", "p99 round trip"}
    assert not {c.verdict for c in rows} & {judging_words.FASTER, judging_words.SLOWER}
    report = build(runs)           # both nights in the latency section, and the verdict
    (t,) = [t for t in report.tables_of("latency") if t.id == "latency-sockperf-udp"]
    assert len(t.rows) == 4


def test_a_latency_panel_drawn_alone_has_only_the_marks_it_shows():
    """A publication file of one percentile panel: its legend names the wire's minimum
    round trip only where the panel draws it (p50), and the repetitions' whiskers only
    where a bar has them."""
    import matplotlib.pyplot as plt

    from nicbench.report.figures.bars import draw
    from nicbench.report.figures.style import Colours

    report = build(load_runs([RUN]))
    (fig,) = [f for f in report.figures if f.id == "latency-sockperf-udp"]
    seen = {}
    for k, panel in enumerate(fig.panels):
        assert isinstance(panel, BarPanel)
        mfig = draw(fig, k, Colours())
        try:
            seen[panel.title.rsplit(": ", 1)[1]] = (
                [t.get_text() for lg in mfig.legends for t in lg.get_texts()], panel)
        finally:
            plt.close(mfig)
    assert set(seen) >= {"p50", "p99"}
    for name, (texts, panel) in seen.items():
        has_limit = any(b.limit for b in panel.bars)
        assert has_limit == (name == "p50"), name
        assert any("minimum round trip" in t for t in texts) == has_limit, (name, texts)
        has_whisker = any(b.lo is not None for b in panel.bars)
        assert any("repetitions' own" in t for t in texts) == has_whisker, (name, texts)
