"""The report's throughput against streams, and both directions at once, from a real run
of ``profiles/lab-streams.yaml`` (``data/streams``, see data/README.md): one chart per
adapter and family, the values the records hold, the link's limits (twice the limit for
both directions together on a full-duplex link), points above them flagged and named,
the table, the page's section and the publication figure.
"""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path

import pytest

from nicbench.report.build import build
from nicbench.report.load import load_runs
from nicbench.report.model import LinePanel
from nicbench.physics.link import goodput_bps
from nicbench.results.plausible import above_bound, timing_error_s
from nicbench.results.records import TrialRecord
from nicbench.tools.registry import TOOLS

STREAMS = Path(__file__).parent / "data" / "streams"
PAIRS = ("gbe", "pci32", "fe")


def records(run: Path) -> list[TrialRecord]:
    return [TrialRecord.from_dict(json.loads(line))
            for line in (run / "trials.jsonl").read_text().splitlines()]


def best(recs: list[TrialRecord], pair: str, test: str) -> TrialRecord:
    mine = [r for r in recs if r.pair == pair and r.test == test and r.ok]
    return max(mine, key=lambda r: r.throughput_bps or 0.0)


@pytest.fixture(scope="module")
def report():
    return build(load_runs([STREAMS]))


def figure(report, family: str, pair: str):
    return next(f for f in report.figures_of("streams")
                if f.id == f"streams-{family}-iperf3-tcp-0-{pair}")


def test_one_chart_per_adapter_and_family(report):
    ids = sorted(f.id for f in report.figures_of("streams"))
    assert ids == sorted(f"streams-{fam}-iperf3-tcp-0-{p}" for fam in ("tcp", "bidir")
                         for p in PAIRS)


def test_the_curve_is_the_speed_charts_figure_at_each_stream_count(report):
    recs = records(STREAMS)
    for pair in PAIRS:
        fig = figure(report, "tcp", pair)
        [panel] = fig.panels
        assert isinstance(panel, LinePanel) and panel.xunit == "streams"
        [curve] = panel.curves
        assert curve.label == "MTU 1500"
        want = [(float(n), best(recs, pair, f"tcp-streams{n}").throughput_bps / 1e6)
                for n in (1, 2, 4, 8)]
        assert [x for x, _ in curve.points] == [x for x, _ in want]
        assert [y for _, y in curve.points] == pytest.approx([y for _, y in want])
        # every stream count within the link's goodput: nothing flagged on the lab
        assert curve.flagged == [] and fig.notes == []
        limit = goodput_bps({"gbe": 1e9, "pci32": 1e9, "fe": 1e8}[pair], 1500) / 1e6
        assert [r.y for r in panel.references if r.dash == "6 3"] == pytest.approx([limit])


def test_both_directions_and_their_sum_against_twice_the_limit(report):
    recs = records(STREAMS)
    fig = figure(report, "bidir", "fe")
    each, both = fig.panels
    assert (each.title, both.title) == ("each direction", "both directions together")
    forward, reverse = each.curves
    assert (forward.label, reverse.label) == ("forward", "reverse") and reverse.dash
    for k, n in enumerate((1, 4)):
        rec = best(recs, "fe", f"bidir-streams{n}")
        assert rec.bidir is not None and rec.bidir.reverse_bps is not None
        assert forward.points[k] == pytest.approx((n, rec.bidir.forward_bps / 1e6))
        assert reverse.points[k] == pytest.approx((n, rec.bidir.reverse_bps / 1e6))
        assert both.curves[0].points[k] == pytest.approx(
            (n, (rec.bidir.forward_bps + rec.bidir.reverse_bps) / 1e6))
    limit = goodput_bps(1e8, 1500) / 1e6
    assert sorted(r.y for r in both.references) == pytest.approx([2 * limit, 200.0])
    assert sorted(r.y for r in each.references) == pytest.approx([limit, 100.0])
    # fe carried nearly its rate each way at once: more than one direction's limit in all
    assert all(y > 1.8 * limit for _, y in both.curves[0].points)


def test_a_direction_above_its_limit_is_flagged_and_named(tmp_path):
    run = tmp_path / "streams"
    shutil.copytree(STREAMS, run)
    lines = []
    for line in (run / "trials.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec["pair"] == "fe" and rec["test"] == "bidir-streams1":
            rec["bidir"]["reverse_bps"] = 150e6          # more than 100 Mbit/s carries
        lines.append(json.dumps(rec))
    (run / "trials.jsonl").write_text("\n".join(lines) + "\n")
    report = build(load_runs([run]))
    fig = figure(report, "bidir", "fe")
    each, both = fig.panels
    assert each.curves[1].flagged == [(1.0, 150.0)] and each.curves[0].flagged == []
    assert both.curves[0].flagged and both.curves[0].flagged[0][0] == 1.0
    assert any(n.startswith("LX-100 Fast Ethernet (macvlan fe-100m), reverse, 1 streams: "
                            "150.0 Mbit/s is 59.3 % above its limit of 94.1 Mbit/s")
               and n.endswith("not ranked.") for n in fig.notes), fig.notes
    assert any("both directions, 1 streams" in n for n in fig.notes)
    [table] = [t for t in report.tables_of("streams") if "bidir" in t.id]
    row = next(r for r, e in zip(table.rows, table.row_entries, strict=True)
               if r[2] == 1 and "fe" in (e or ""))
    assert row[-1] == "reverse, both"


def test_the_table_lists_every_point_with_its_limit(report):
    tcp, bidir = sorted(report.tables_of("streams"), key=lambda t: "bidir" not in t.id)[::-1]
    assert len(tcp.rows) == 3 * 4 and len(bidir.rows) == 3 * 2
    assert bidir.columns[4:7] == ["forward Mbit/s", "reverse Mbit/s", "both directions Mbit/s"]
    assert [r[2] for r in tcp.rows[:4]] == [1, 2, 4, 8]
    assert all(r[-1] == "" for r in tcp.rows + bidir.rows)


def test_the_raw_output_gives_the_records_two_directions():
    rec = next(r for r in records(STREAMS) if r.pair == "fe" and r.test == "bidir-streams1"
               and r.repetition == 1)
    text = {end: (STREAMS / rel).read_text() for end, rel in rec.raw.items()}
    parsed = TOOLS["iperf3"].driver.interpret(text["client"], text["server"], None, "tcp")
    assert parsed.bidir == rec.bidir and parsed.throughput_bps == rec.throughput_bps
    assert "--bidir" in rec.commands["client"]


def test_the_page_has_the_section_and_the_figure_its_data(tmp_path):
    from conftest import write_report

    from nicbench.report.figures.plan import rows_of, units
    from nicbench.report.figures.style import card_colours, palette, style_files

    report, page = write_report(tmp_path / "out", [STREAMS])
    html = page.read_text()
    data = (tmp_path / "out" / "tables" / "figure-streams-tcp-iperf3-tcp-0-gbe.csv").read_text()
    assert data.splitlines()[0] == "panel,curve,streams,mbit_s,above_limit"
    assert '<section id="streams">' in html and "Throughput against parallel streams" in html
    svg = next(f.svg for f in report.figures_of("streams") if f.id.endswith("tcp-0-fe"))
    assert "8 streams" in svg and "MTU 1500" in svg
    colours = card_colours(report.entries, palette(style_files(None)))
    unit = next(u for u in units(report.publication, []) if u.stem == "streams-tcp-iperf3-tcp-0-gbe")
    rows = rows_of(unit, colours)
    assert [(r[6], r[7]) for r in rows] == [(n, "streams") for n in (1, 2, 4, 8)]


def test_the_publication_figure_plots_the_models_curves():
    import matplotlib.pyplot as plt

    from nicbench.report.figures.draw import figure_of
    from nicbench.report.figures.plan import units
    from nicbench.report.figures.style import card_colours, palette, style_files

    runs = load_runs([STREAMS])
    report = build(runs)
    styles = style_files(None)
    colours = card_colours(report.entries, palette(styles))
    unit = next(u for u in units(report.publication, []) if u.stem == "streams-bidir-iperf3-tcp-0-fe")
    with plt.style.context(styles):
        mfig = figure_of(unit, colours)
    lines = {a.get_gid(): a for a in mfig.findobj(
        lambda a: str(a.get_gid() or "").startswith("curve|"))}
    model = {cv.label: cv.points for p in unit.figure.panels for cv in p.curves}
    assert {g.rsplit("|", 1)[1] for g in lines} == set(model)
    for gid, line in lines.items():
        xs, ys = line.get_data()
        want = model[gid.rsplit("|", 1)[1]]
        assert list(xs) == [x for x, _ in want]
        assert list(ys) == pytest.approx([y for _, y in want])
    plt.close(mfig)


def test_a_bidirectional_test_not_swept_is_a_family_of_its_own(tmp_path):
    run = tmp_path / "streams"
    shutil.copytree(STREAMS, run)
    manifest = json.loads((run / "manifest.json").read_text())
    for test in manifest["profile"]["tests"]:
        if test["name"].startswith("bidir"):
            del test["swept"]        # as if written as two plain bidir tests
    (run / "manifest.json").write_text(json.dumps(manifest))
    report = build(load_runs([run]))
    fe = sorted(f.id for f in report.figures_of("streams") if f.id.endswith("-fe"))
    assert fe == ["streams-bidir-streams1-iperf3-tcp-0-fe", "streams-bidir-streams4-iperf3-tcp-0-fe",
                  "streams-tcp-iperf3-tcp-0-fe"]
    one = next(f for f in report.figures_of("streams") if f.id == fe[1])
    assert [cv.points[0][0] for cv in one.panels[0].curves] == [4.0, 4.0]


def test_a_sweep_is_one_verdict_method_each_adapter_at_its_best_value(report):
    """The tests one sweep made are one method of the verdict (the test as written), each
    adapter's best figure over its stream counts within the wire's limit, named with the
    count it was reached at, as a point is; not a ranking per stream count."""
    recs = records(STREAMS)
    titles = {s.method for s in report.verdict}
    assert titles == {"iperf3 TCP: test tcp", "iperf3 TCP: test bidir"}
    (t,) = [t for t in report.tables_of("verdict") if t.title == "iperf3 TCP: test tcp"]
    rows = {e: dict(zip(t.columns, r, strict=True)) for r, e in zip(t.rows, t.row_entries,
                                                                     strict=True)}
    for e in report.entries:
        tests = {f"tcp-streams{n}": n for n in (1, 2, 4, 8)}
        limit = goodput_bps(e.rate_bps, 1500, "tcp", True) if e.rate_bps else None
        bests = {n: best(recs, e.pair, name) for name, n in tests.items()}
        figures = {n: r.throughput_bps / 1e6 for n, r in bests.items()}
        # within the limit by the bound's rule: iperf3's JSON prints in full, its timing
        # error is 10 ms over each test's duration (its repetitions' median)
        durations = {n: statistics.median(r.duration_s for r in recs if r.pair == e.pair
                                          and r.test == name and r.ok and r.duration_s)
                     for name, n in tests.items()}
        physical = {n: v for n, v in figures.items()
                    if not above_bound(v * 1e6, limit, 0.0, timing_error_s("iperf3"),
                                       durations[n])}
        n = max(physical, key=lambda k: physical[k])
        row = rows[e.key]
        assert row["Mbit/s"] == f"{physical[n]:.1f}"
        assert row["at"] == f"MTU 1500, streams {n}"
    # competition ranks: a tied rank is shared and the next skips it
    ranks = sorted((int(str(r["#"]).removesuffix(" (tied)")), str(r["#"]))
                   for r in rows.values() if r["#"] != "")
    for k, (rank, text) in enumerate(ranks, 1):
        assert rank <= k and (rank == k or text.endswith("(tied)"))
