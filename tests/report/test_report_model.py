"""What each chart shows, asserted on its data model (built from data/run-a and run-b).

Expected values are computed from the fixtures' own trials (``trials()`` below reads
data/run-*/trials.jsonl with the store's reader); the limits are R x (m - 52) / (m + 38)
for R = 1 Gbit/s, the rate the lab inventory's adapter descriptions name. Run A keeps the
best of 2 repetitions, run B the median of 3.
"""

from __future__ import annotations

import csv
import json
import statistics
from pathlib import Path

import pytest

from nicbench.report.colours import PALETTE, adapter_colour, contrast, luminance, shade
from nicbench.report.model import BarPanel, HeatPanel, LinePanel, ScatterPanel
from nicbench.results.records import CpuPart
from nicbench.results.rundir import RunDir

DATA = Path(__file__).parent / "data"
RUN_A, RUN_B = DATA / "run-a", DATA / "run-b"
RUN_DIRS = [RUN_A, RUN_B]             # in the order the model fixture loads them

A_GBE, A_NJ, B_GBE, B_STALL = "0/gbe", "0/nojumbo", "1/gbe", "1/stall"
LIMIT = {1500: 1e3 * (1500 - 52) / (1500 + 38), 9000: 1e3 * (9000 - 52) / (9000 + 38)}
RULE = {"0": "best", "1": "median"}


def trials(entry, mtu, test):
    """The fixture's records of one configuration (entry key "<run index>/<pair>")."""
    i, pair = entry.split("/", 1)
    return [r for r in RunDir(RUN_DIRS[int(i)]).records()
            if r.pair == pair and r.mtu == mtu and r.test == test]


def oks(entry, mtu, test):
    return [r for r in trials(entry, mtu, test) if r.status == "ok"]


def ok_values(entry, mtu, test, key="throughput_bps", scale=1e6):
    """One configuration's values from its successful trials, in the charts' units."""
    values = [key.of(r) if isinstance(key, CpuPart) else getattr(r, key)
              for r in oks(entry, mtu, test)]
    return [v / scale for v in values if v is not None]


def shown(entry, mtu, test):
    """The repetition(s) whose throughput the chart shows: the best (run A) or the median
    one (run B, three repetitions)."""
    recs = sorted(oks(entry, mtu, test), key=lambda r: r.throughput_bps)
    if RULE[entry.split("/")[0]] == "best":
        return [recs[-1]]
    assert len(recs) % 2 == 1
    return [recs[len(recs) // 2]]


def selected(entry, mtu, test):
    v = ok_values(entry, mtu, test)
    return max(v) if RULE[entry.split("/")[0]] == "best" else statistics.median(v)


def fig(model, fig_id):
    return next(f for f in model.figures if f.id == fig_id)


def panel(figure, title):
    return next(p for p in figure.panels if p.title == title)


# -- entries, labels and colours ----------------------------------------------------------
def test_entries_are_labelled_model_driver_and_run_label(model):
    labels = {e.key: e.label for e in model.entries}
    assert labels == {
        A_GBE: "LX-1000 Gigabit (veth tbf-1g) [A]",
        A_NJ: "LX-1000NJ Gigabit (macvlan mtu-1500)",
        B_GBE: "LX-1000 Gigabit (veth tbf-1g) [B]",
        B_STALL: "LX-1000S Gigabit (veth stall-6000)",
    }
    assert any("suffix in brackets" in n for n in model.notes)


def test_colour_comes_from_the_adapter_id_and_later_runs_are_shades_of_it(model):
    e = {x.key: x for x in model.entries}
    for x in model.entries:
        assert x.base_colour == adapter_colour(x.adapter) and x.base_colour in PALETTE
    assert e[A_GBE].colour == e[A_GBE].base_colour
    assert e[B_GBE].base_colour == e[A_GBE].base_colour
    assert e[B_GBE].colour == shade(e[A_GBE].base_colour, 1) != e[A_GBE].colour
    assert luminance(e[B_GBE].colour) > luminance(e[A_GBE].colour)   # a lighter shade
    assert e[B_GBE].marker == e[A_GBE].marker                          # the same card
    # three cards, three colours and three markers
    assert len({e[k].base_colour for k in (A_GBE, A_NJ, B_STALL)}) == 3
    assert len({e[k].marker for k in (A_GBE, A_NJ, B_STALL)}) == 3


def test_colours_are_stable_across_two_reports():
    from nicbench.report.build import build
    from nicbench.report.load import load_runs

    both = {e.key: e for e in build(load_runs(RUN_DIRS)).entries}
    alone_b = {e.pair: e for e in build(load_runs([RUN_B])).entries}
    # run B alone: its gbe is the first (only) entry of the card: the card's own colour,
    # the same as run A's gbe in the two-run report; the stall card's colour does not move
    assert alone_b["gbe"].colour == both[A_GBE].colour
    assert alone_b["stall"].colour == both[B_STALL].colour
    assert alone_b["stall"].marker == both[B_STALL].marker


def test_a_run_gets_a_short_label_of_its_own(copy_run):
    from nicbench.report.build import build
    from nicbench.report.load import load_runs

    runs = load_runs(RUN_DIRS, labels=["A=driver-7.1", "run-b=night 2"])
    assert [r.label for r in runs] == ["driver-7.1", "night 2"]
    gbe = [e.label for e in build(runs).entries if e.pair == "gbe"]
    assert gbe == ["LX-1000 Gigabit (veth tbf-1g) [driver-7.1]",
                   "LX-1000 Gigabit (veth tbf-1g) [night 2]"]
    # the same run id in two directories: still A and B
    night2 = copy_run(RUN_A, "night2")
    gbe = [e.label for e in build(load_runs([RUN_A, night2])).entries if e.pair == "gbe"]
    assert gbe == ["LX-1000 Gigabit (veth tbf-1g) [A]", "LX-1000 Gigabit (veth tbf-1g) [B]"]


@pytest.mark.parametrize("labels,message", [
    (["A"], "--label 'A': give RUN=LABEL, e.g. A=driver-7.1"),
    (["C=x"], "--label 'C=x': no run 'C' (runs: A=run-a, B=run-b)"),
    (["A=x", "A=y"], "--label 'A=y': run A already has the label 'x'"),
    (["A=x", "B=x"], "--label: two runs are labelled 'x'; give each its own label"),
    (["A=" + "x" * 41], "the label is 41 characters; keep it to 40"),
])
def test_bad_labels_are_one_clear_line(labels, message):
    from nicbench.errors import UsageError
    from nicbench.report.load import load_runs

    with pytest.raises(UsageError) as exc:
        load_runs(RUN_DIRS, labels=labels)
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_link_rate_comes_from_the_inventory_text_and_says_so(model):
    for e in model.entries:
        assert e.rate_bps == 1e9
        assert e.rate_source.startswith("inventory adapter chipset:")
        assert "1000 Mbit/s" in e.rate_source


# -- speed: rankings per MTU ----------------------------------------------------------------
def test_speed_chart_is_a_ranking_per_mtu_with_whiskers_limits_and_counts(model):
    f = fig(model, "speed-iperf3-tcp")
    assert f.family == "speed" and [p.title for p in f.panels] == ["MTU 1500", "MTU 9000"]
    for mtu in (1500, 9000):
        p = panel(f, f"MTU {mtu}")
        assert isinstance(p, BarPanel)
        assert p.sorted_by == "fastest first; above the limit after, not ranked"
        # rows fastest first; a card's runs side by side, placed by the better one
        values = {k: selected(k, mtu, "iperf3-tcp") if oks(k, mtu, "iperf3-tcp") else None
                  for k in (A_GBE, A_NJ, B_GBE, B_STALL)}
        card = {A_GBE: "gbe", B_GBE: "gbe", A_NJ: "nj", B_STALL: "stall"}
        best_of_card = {c: max((v for k, v in values.items() if card[k] == c and v),
                               default=-1) for c in set(card.values())}
        expected = sorted(values, key=lambda k: (-best_of_card[card[k]], card[k], k))
        assert [r.key for r in p.rows] == expected
        for key in (A_GBE, B_GBE):
            b = p.bar(key)
            v = ok_values(key, mtu, "iperf3-tcp")
            assert b.value == pytest.approx(selected(key, mtu, "iperf3-tcp"))
            assert (b.lo, b.hi) == (pytest.approx(min(v)), pytest.approx(max(v)))
            assert (b.n_ok, b.n, b.status) == (len(v), len(v), "ok")
            assert b.text == f"{b.value:.1f} · {len(v)}/{len(v)}"
            assert b.limit == pytest.approx(LIMIT[mtu]) and b.line_rate == 1000
            # the whisker is drawn in an ink that shows on the bar
            assert contrast(b.whisker, b.fill) >= 3
    # run A's best of 2 reaches the top of its whisker, run B's median does not
    assert panel(f, "MTU 1500").bar(A_GBE).value == panel(f, "MTU 1500").bar(A_GBE).hi
    # one axis for both MTUs, ending 1.1 x the highest limit, value or whisker
    top = max(x for p in f.panels for b in p.bars for x in (b.value, b.hi, b.limit)
              if x is not None)
    assert all(p.xmax == pytest.approx(1.1 * top) for p in f.panels)
    assert 1.09 * LIMIT[9000] < f.panels[0].xmax < 1.12 * LIMIT[9000]
    # rows are labelled: the legend names the marks, never the adapters
    assert [i.shape for i in f.legend] == ["limit", "whisker"]


def test_gaps_say_what_happened_with_counts(model):
    p = panel(fig(model, "speed-iperf3-tcp"), "MTU 9000")
    refused = p.bar(A_NJ)
    assert (refused.value, refused.status, refused.gap) == (None, "skipped", "refused")
    assert refused.text == "refused 0/2 (2 not run)"
    stalled = p.bar(B_STALL)
    # two failed repetitions, then one given up: 0 of 3
    assert (stalled.value, stalled.status, stalled.gap) == (None, "failed", "stalled")
    assert stalled.text == "stalled 0/3 (2 failed, 1 not run)"
    plateau = panel(fig(model, "netpipe-plateau"), "MTU 9000")
    assert plateau.bar(B_STALL).text == "timed out 0/1 (1 failed)"
    assert plateau.bar(A_NJ).text == "refused 0/1 (1 not run)"


def _format2(rec: dict, **changes) -> dict:
    rec = {**rec, **changes, "format_version": 2}
    for k in ("kernel_message", "not_run"):
        rec.setdefault(k, (rec.get("extra") or {}).get(k))
    return rec


def test_one_word_per_event_whatever_the_tool(copy_run):
    """The stall card's MTU 9000 stall as iperf 2 reports it (the receiver printed no
    report) and as iperf3 does (the transfer moved almost nothing): both 'stalled'."""
    from nicbench.report.build import build
    from nicbench.report.load import load_runs

    run = copy_run(RUN_B, "stall-both-tools")
    lines = [json.loads(x) for x in (run / "trials.jsonl").read_text().splitlines()]
    extra = []
    for r in lines:
        if r["pair"] == "stall" and r["point"] == "mtu9000" and r["test"] == "iperf3-tcp":
            if r["kind"] == "repetition":
                extra.append(_format2(
                    r, tool="iperf2", test="iperf2-tcp", failure="no-receiver-report",
                    trial_id=r["trial_id"].replace("iperf3", "iperf2"),
                    reason="tool error: the receiver printed no report: the transfer did not "
                           "complete"))
            else:
                extra.append(_format2(r, tool="iperf2", test="iperf2-tcp",
                                      failure="given-up"))
    (run / "trials.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines + extra))
    report = build(load_runs([run]))
    words = {f.id: panel(f, "MTU 9000").bar("0/stall").gap
             for f in report.figures_of("speed")}
    assert words == {"speed-iperf2-tcp": "stalled", "speed-iperf3-tcp": "stalled"}


def test_refused_only_when_the_setting_was_refused(copy_run):
    """A point the kernel accepted but the path did not carry is not 'refused'."""
    from nicbench.report.build import build
    from nicbench.report.load import load_runs

    run = copy_run(RUN_A, "path-check")
    lines = [json.loads(x) for x in (run / "trials.jsonl").read_text().splitlines()]
    for k, r in enumerate(lines):
        if r["kind"] == "skipped":
            lines[k] = _format2(r, failure="path-check", kernel_message=None,
                                reason="path MTU 9000 not carried: ping -M do -s 8972 failed")
    (run / "trials.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    report = build(load_runs([run]))
    b = panel(fig(report, "speed-iperf3-tcp"), "MTU 9000").bar("0/nojumbo")
    assert b.gap == "path check failed" and b.text == "path check failed 0/2 (2 not run)"


def test_two_iperf2_tests_of_one_profile_get_one_chart_each(model):
    speed = [f.id for f in model.figures_of("speed")]
    assert speed == ["speed-iperf2-tcp-iperf2-l8k", "speed-iperf2-tcp-iperf2-l64k",
                     "speed-iperf3-tcp"]
    b = panel(fig(model, "speed-iperf2-tcp-iperf2-l64k"), "MTU 1500").bar(A_NJ)
    v = ok_values(A_NJ, 1500, "iperf2-l64k")
    assert (b.value, b.lo, b.hi) == (max(v), min(v), max(v))
    # iperf 2 prints whole Mbit/s: a repetition just above the 990.04 limit (991) is
    # rounding, not flagged
    v = ok_values(A_GBE, 9000, "iperf2-l8k")
    assert LIMIT[9000] < max(v) < LIMIT[9000] * 1.01
    b = panel(fig(model, "speed-iperf2-tcp-iperf2-l8k"), "MTU 9000").bar(A_GBE)
    assert b.hi == max(v) and b.flag == ""
    assert all(f.entries == [A_GBE, A_NJ] for f in model.figures
               if f.id.startswith("speed-iperf2"))


def test_a_lower_link_rate_flags_values_above_it(runs):
    from nicbench.report.build import build

    report = build(runs, {"gbe": 100e6})
    f = fig(report, "speed-iperf3-tcp")
    b = panel(f, "MTU 1500").bar(A_GBE)
    assert b.limit == pytest.approx(LIMIT[1500] / 10)
    assert b.flag.startswith("LX-1000 Gigabit (veth tbf-1g) [A], MTU 1500: ")
    assert "above the line rate itself (100 Mbit/s)" in b.flag
    assert b.text.startswith("! ")
    assert any(b.flag in n for n in f.notes)
    assert f.legend[-1].shape == "flag"
    assert next(e for e in report.entries if e.key == A_GBE).rate_source == "--link-rate gbe"
    # the nojumbo pair keeps the rate of its inventory text
    assert panel(f, "MTU 1500").bar(A_NJ).flag == ""


def test_heatmap_adapters_by_points(model):
    f = fig(model, "heatmap-iperf3-tcp")
    (p,) = f.panels
    assert isinstance(p, HeatPanel) and p.columns == ["MTU 1500", "MTU 9000"]
    cells = {(r.key, col): c for r, line in zip(p.rows, p.cells, strict=False)
             for col, c in zip(p.columns, line, strict=False)}
    for key in (A_GBE, B_GBE):
        for mtu in (1500, 9000):
            c = cells[(key, f"MTU {mtu}")]
            assert c.value == pytest.approx(selected(key, mtu, "iperf3-tcp"))
            assert c.text == f"{c.value:.0f}"
    assert cells[(A_NJ, "MTU 9000")].text == "refused"
    assert cells[(B_STALL, "MTU 9000")].text == "stalled"
    # lighter is faster: the scale runs from the lowest value to the highest
    measured = sorted((c for c in cells.values() if c.value is not None), key=lambda c: c.value)
    assert luminance(measured[0].fill) < luminance(measured[-1].fill)
    assert (p.vmin, p.vmax) == (measured[0].value, measured[-1].value)


# -- CPU and cost ---------------------------------------------------------------------------
def _med(entry, mtu, test, key):
    """The median of a CPU field over every successful repetition: the configuration's
    CPU cost."""
    return statistics.median(ok_values(entry, mtu, test, key, scale=1))


def test_cpu_is_the_median_over_every_repetition_on_an_axis_ending_at_100(model):
    f = fig(model, "cpu-iperf3-tcp")
    assert [p.title for p in f.panels] == ["MTU 1500", "MTU 9000"]
    assert all(p.xmax == 100.0 and [s.key for s in p.series] == ["sender", "receiver"]
               for p in f.panels)
    for key in (A_GBE, B_GBE):
        for mtu in (1500, 9000):
            p = panel(f, f"MTU {mtu}")
            snd, rcv = p.bar(key, "sender"), p.bar(key, "receiver")
            cpu_snd = _med(key, mtu, "iperf3-tcp", CpuPart.SENDER_BUSY)
            assert snd.value == pytest.approx(cpu_snd)
            assert rcv.value == pytest.approx(
                _med(key, mtu, "iperf3-tcp", CpuPart.RECEIVER_BUSY))
            assert snd.mark == pytest.approx(_med(key, mtu, "iperf3-tcp", CpuPart.TOOL_OWN))
            all_snd = ok_values(key, mtu, "iperf3-tcp", CpuPart.SENDER_BUSY, scale=1)
            assert (snd.lo, snd.hi) == (pytest.approx(min(all_snd)),
                                        pytest.approx(max(all_snd)))
            assert snd.text == f"{cpu_snd:.0f} %"
    # not the CPU of the repetition whose throughput is shown (the fastest of best-of-2)
    (fastest,) = shown(A_GBE, 9000, "iperf3-tcp")
    assert panel(f, "MTU 9000").bar(A_GBE, "sender").value != pytest.approx(
        CpuPart.SENDER_BUSY.of(fastest))
    # the statistic is named once, in a note under the chart, not in its caption
    assert "median over all successful repetitions" in " ".join(f.notes)
    assert "median" not in f.caption
    assert panel(f, "MTU 9000").bar(A_NJ, "sender").gap == "refused"
    assert any("cpu_utilization_percent host_total" in n and "client side" in n
               for n in f.notes)
    # lab hosts share one kernel: said once, atop the CPU section, not under each chart
    assert not any("same machine" in n for n in f.notes)
    (cpu,) = [s for s in model.sections if s.section.id == "cpu"]
    assert cpu.blocks[0].css == "note" and "same machine" in cpu.blocks[0].text
    # iperf 2 prints no CPU figure of its own: no marks
    f2 = fig(model, "cpu-iperf2-tcp-iperf2-l8k")
    assert all(b.mark is None for p in f2.panels for b in p.bars)


def test_cost_chart_speed_against_the_busier_host(model):
    f = fig(model, "cost-iperf3-tcp")
    p = panel(f, "MTU 9000")
    assert isinstance(p, ScatterPanel) and p.xmax == 100.0
    dots = {d.entry: d for d in p.dots}
    assert set(dots) == {A_GBE, B_GBE}                      # the gaps have no dot
    for key in (A_GBE, B_GBE):
        assert dots[key].x == pytest.approx(max(
            _med(key, 9000, "iperf3-tcp", CpuPart.SENDER_BUSY),
            _med(key, 9000, "iperf3-tcp", CpuPart.RECEIVER_BUSY)))
        assert dots[key].y == pytest.approx(selected(key, 9000, "iperf3-tcp"))


# -- netPIPE ----------------------------------------------------------------------------------
def _plateau(rec) -> float:
    largest = max(p.size_bytes for p in rec.points)
    return statistics.median(p.throughput_bps for p in rec.points
                             if p.size_bytes >= largest / 2) / 1e6


def test_netpipe_per_adapter_one_colour_per_mtu(model):
    figs = {f.id: f for f in model.figures_of("netpipe-adapter")}
    assert set(figs) == {"netpipe-gbe", "netpipe-nojumbo",
                         "netpipe-b-gbe", "netpipe-b-stall"}
    p = figs["netpipe-gbe"].panels[0]
    assert isinstance(p, LinePanel) and p.xlog
    assert [c.label for c in p.curves] == ["MTU 1500", "MTU 9000"]
    # one colour (and marker) per MTU, the same in every adapter's chart, none an adapter's
    colour = {c.label: (c.colour, c.marker) for c in p.curves}
    assert len(set(colour.values())) == 2
    for f in figs.values():
        for c in f.panels[0].curves:
            assert (c.colour, c.marker) == colour[c.label]
    assert not {c for c, _ in colour.values()} & {e.colour for e in model.entries}
    assert luminance(colour["MTU 1500"][0]) < luminance(colour["MTU 9000"][0])
    (r1,) = oks(A_GBE, 1500, "netpipe")
    expected = sorted((float(q.size_bytes), q.throughput_bps / 1e6) for q in r1.points)
    assert len(expected) == 70
    assert p.curves[0].points == [(x, pytest.approx(y)) for x, y in expected]
    refs = {r.label: r.y for r in p.references}
    assert refs["goodput limit, MTU 1500: 941.5"] == pytest.approx(LIMIT[1500])
    assert refs["goodput limit, MTU 9000: 990.0"] == pytest.approx(LIMIT[9000])
    assert refs["line rate 1000 Mbit/s"] == 1000
    # who is missing is named under the chart, with what happened
    assert figs["netpipe-nojumbo"].missing == ["MTU 9000: refused 0/1 (1 not run)"]
    assert figs["netpipe-b-stall"].missing == ["MTU 9000: timed out 0/1 (1 failed)"]
    # netPIPE's unit is said once, in "How to read this report", not in every caption
    assert "2^20 bit/s" not in figs["netpipe-gbe"].caption
    from nicbench.report.page import _method_items
    assert any("2^20 bit/s" in text for _, text in _method_items(model))


def test_netpipe_above_the_line_rate_is_flagged_and_explained(model):
    f = fig(model, "netpipe-gbe")
    c1500 = f.panels[0].curves[0]
    assert c1500.flagged, "the lab's netPIPE curves exceed the line rate"
    # above the limit by more than netPIPE's printed resolution and its timing error over
    # a timed trial (10 us of 0.25 s): not by a fixed 1 %
    from nicbench.tools.netpipe import TIMING_ERROR_S, TRIAL_S
    bound = LIMIT[1500] * (1 + TIMING_ERROR_S / TRIAL_S) + 0.01 * 1.048576
    assert all(y > bound for _, y in c1500.flagged)
    assert all(y <= bound for x, y in c1500.points if (x, y) not in c1500.flagged)
    assert any("above the line rate 1000 Mbit/s" in n for n in f.notes)
    assert any("token bucket" in n and "per-frame serialization" in n for n in f.notes)


def test_netpipe_per_mtu_one_curve_per_adapter_and_the_missing_named(model):
    figs = {f.id: f for f in model.figures_of("netpipe-mtu")}
    assert set(figs) == {"netpipe-mtu1500", "netpipe-mtu9000"}
    p1500 = figs["netpipe-mtu1500"].panels[0]
    assert {c.entry for c in p1500.curves} == {A_GBE, A_NJ, B_GBE, B_STALL}
    colours = {e.key: e.colour for e in model.entries}
    assert all(c.colour == colours[c.entry] for c in p1500.curves)
    f9000 = figs["netpipe-mtu9000"]
    assert [c.entry for c in f9000.panels[0].curves] in ([A_GBE, B_GBE], [B_GBE, A_GBE])
    assert f9000.missing == ["LX-1000NJ Gigabit (macvlan mtu-1500): refused 0/1 (1 not run)",
                             "LX-1000S Gigabit (veth stall-6000): timed out 0/1 (1 failed)"]
    assert next(r.y for r in f9000.panels[0].references) == pytest.approx(LIMIT[9000])


def test_netpipe_bar_is_the_sustained_plateau_not_the_burst(model):
    f = fig(model, "netpipe-plateau")
    assert f.family == "netpipe-plateau"
    for key in (A_GBE, B_GBE):
        for mtu in (1500, 9000):
            (rec,) = oks(key, mtu, "netpipe")
            b = panel(f, f"MTU {mtu}").bar(key)
            assert b.value == pytest.approx(_plateau(rec))
            assert b.value < max(q.throughput_bps for q in rec.points) / 1e6
    assert "plateau" in f.caption
    t = next(t for t in model.tables if t.id == "netpipe-plateau")
    row = next(r for r, e in zip(t.rows, t.row_entries, strict=False) if e == A_GBE and r[1] == "MTU 9000")
    (rec,) = oks(A_GBE, 9000, "netpipe")
    burst = max(rec.points, key=lambda q: q.throughput_bps)
    assert row[2] == f"{_plateau(rec):.1f}"
    assert row[4:6] == [f"{burst.throughput_bps / 1e6:.1f}", burst.size_bytes]
    # the fixture's curves stop at 16 KB, inside the lab's burst: flagged and explained
    assert panel(f, "MTU 9000").bar(A_GBE).flag
    assert any("token bucket" in n for n in f.notes)


# -- verdict --------------------------------------------------------------------------------
def test_verdict_per_adapter_and_method(model):
    (t,) = [t for t in model.tables_of("verdict") if t.id == "verdict-iperf3-tcp"]
    rows = {e: r for r, e in zip(t.rows, t.row_entries, strict=False)}
    assert t.row_entries[0] == max(
        (A_GBE, B_GBE, A_NJ, B_STALL),
        key=lambda k: max(selected(k, m, "iperf3-tcp") for m in (1500, 9000)
                          if oks(k, m, "iperf3-tcp")))
    for key in (A_GBE, B_GBE):
        best_mtu = max((1500, 9000), key=lambda m: selected(key, m, "iperf3-tcp"))
        v = selected(key, best_mtu, "iperf3-tcp")
        recs = oks(key, best_mtu, "iperf3-tcp")
        snd = _med(key, best_mtu, "iperf3-tcp", CpuPart.SENDER_BUSY)
        rcv = _med(key, best_mtu, "iperf3-tcp", CpuPart.RECEIVER_BUSY)
        r = rows[key]
        assert r[2:4] == [f"{v:.1f}", f"MTU {best_mtu}"]
        assert r[5] == f"{100 * v / LIMIT[best_mtu]:.1f}"
        # the page's short columns; every detail in the table's CSV
        short = dict(zip(t.columns, r, strict=True))
        assert [short["CPU send %"], short["CPU recv %"]] == [f"{snd:.0f}", f"{rcv:.0f}"]
        col = dict(zip(t.csv_columns, t.csv_rows[t.row_entries.index(key)], strict=True))
        assert [col["CPU sender %"], col["CPU receiver %"]] == [f"{snd:.0f}", f"{rcv:.0f}"]
        # iperf3's exact figures: every repetition counts, not only the one selected
        assert col["CPU repetitions"] == ", ".join(str(x.repetition) for x in
                                                   sorted(recs, key=lambda x: x.repetition))
        assert col["Mbit/s per CPU %"].startswith(f"{v / max(snd, rcv):.1f}")
    full = {e: r for r, e in zip(t.csv_rows, t.row_entries, strict=True)}
    assert full[A_NJ][-1] == "MTU 9000: refused 0/2 (2 not run)"
    assert full[B_STALL][-1] == "MTU 9000: stalled 0/3 (2 failed, 1 not run)"
    assert rows[A_NJ][-1] == "refused at MTU 9000"
    assert rows[B_STALL][-1] == "stalled at MTU 9000"
    s = next(s for s in model.verdict if s.method == "iperf3 TCP")
    top = model.entry(t.row_entries[0]).label
    assert s.text.startswith(f"iperf3 TCP: {top} fastest, ")
    assert "Not measured: " in s.text and "refused at MTU 9000" in s.text
    assert "stalled at MTU 9000" in s.text


# -- comparison -------------------------------------------------------------------------------
def _brute_p(a, b):
    """The two-sided rank-sum p by enumerating every split of the pooled values."""
    from itertools import combinations

    pooled = a + b
    order = sorted(pooled)
    rank = {v: (order.index(v) + 1 + len(order) - order[::-1].index(v)) / 2 for v in pooled}
    n_a, mean = len(a), len(a) * (len(pooled) + 1) / 2
    obs = abs(sum(rank[v] for v in a) - mean)
    splits = list(combinations(range(len(pooled)), n_a))
    hits = sum(1 for s in splits if abs(sum(rank[pooled[i]] for i in s) - mean) >= obs - 1e-9)
    return hits / len(splits)


def test_mann_whitney_is_exact_with_ties():
    import random

    from nicbench.judging.stats import mann_whitney_p, smallest_p

    rng = random.Random(7)
    for _ in range(150):
        a = [float(rng.randint(1, 6)) for _ in range(rng.randint(1, 6))]
        b = [float(rng.randint(1, 7)) for _ in range(rng.randint(1, 6))]
        assert mann_whitney_p(a, b) == pytest.approx(_brute_p(a, b))
    assert smallest_p(2, 3) == pytest.approx(0.2)
    assert mann_whitney_p([1.0, 2.0], [3.0, 4.0, 5.0]) == pytest.approx(0.2)
    assert mann_whitney_p(list(range(15)), [x + 100.0 for x in range(15)]) < 1e-7
    assert mann_whitney_p([], [1.0]) is None


def test_comparison_pairs_the_card_by_id_and_tests_the_repetitions(model):
    (t,) = model.tables_of("comparison")
    cols = t.csv_columns
    rows = {(r[cols.index("test")], r[cols.index("point")]): r for r in t.csv_rows}
    assert {"adapter", "test", "point", "a_bps", "b_bps", "change_pct", "p_value",
            "verdict"} <= set(cols)
    # only the gbe card is in both runs
    assert {r[cols.index("adapter_id")] for r in t.csv_rows} == {"lab-gbe"}
    for mtu in (1500, 9000):
        r = dict(zip(cols, rows[("iperf3-tcp", f"mtu{mtu}")], strict=True))
        a = ok_values(A_GBE, mtu, "iperf3-tcp")
        b = ok_values(B_GBE, mtu, "iperf3-tcp")
        # the statistic is on all the repetitions, whatever each run selects
        assert r["a_median_bps"] == pytest.approx(statistics.median(a) * 1e6, abs=0.1)
        assert r["b_median_bps"] == pytest.approx(statistics.median(b) * 1e6, abs=0.1)
        shift = statistics.median(y - x for x in a for y in b)
        assert r["change_pct"] == pytest.approx(100 * shift / statistics.median(a), abs=1e-3)
        assert r["p_value"] == pytest.approx(_brute_p(a, b), abs=1e-12)
        assert r["verdict"] == "not testable"
        assert "the smallest p possible is 0.2" in r["note"]
    for test in ("iperf2-l8k", "iperf2-l64k"):
        r = dict(zip(cols, rows[(test, "mtu1500")], strict=True))
        assert r["verdict"] == "not comparable" and "not measured in run B" in r["note"]
    warned = {w.what for w in model.warnings if w.difference}
    assert warned == {"selection rule", "repetitions"}
    sel = next(w for w in model.warnings if w.what == "selection rule")
    assert "A keeps the best of 2, B the median of 3" in sel.text


def test_a_faster_run_is_called_faster(copy_run):
    """Run B's gbe slowed to 85 % of what it measured, against the same run at 95 %
    (both within the wire's limit): with 6 against 6 repetitions (p 0.002, the interval
    well beyond 1 %) the faster one is called faster, and the other way slower."""
    from nicbench.report.build import build
    from nicbench.report.load import load_runs

    def repeat(src, name, factor, copies):
        run = copy_run(src, name)
        out = []
        for line in (run / "trials.jsonl").read_text().splitlines():
            r = json.loads(line)
            if r["pair"] != "gbe" or r["test"] != "iperf3-tcp" or r["kind"] != "repetition":
                continue
            for k in range(copies):
                out.append({**r, "repetition": (r["repetition"] - 1) * copies + k + 1,
                            "trial_id": f"{r['trial_id']}.{k}",
                            "throughput_bps": r["throughput_bps"] * factor * (1 + k / 1e4)})
        (run / "trials.jsonl").write_text("".join(json.dumps(r) + "\n" for r in out))
        # as if the profile had planned them: a repetition beyond its count is refused
        manifest = json.loads((run / "manifest.json").read_text())
        manifest["profile"]["repetitions"] *= copies
        (run / "manifest.json").write_text(json.dumps(manifest))
        return run

    slow = repeat(RUN_B, "slow", 0.85, 2)     # 6 repetitions
    fast = repeat(RUN_B, "fast", 0.95, 2)
    (t,) = build(load_runs([slow, fast])).tables_of("comparison")
    cols = t.csv_columns
    verdicts = {r[cols.index("point")]: r[cols.index("verdict")] for r in t.csv_rows}
    assert verdicts == {"mtu1500": "faster", "mtu9000": "faster"}
    (t,) = build(load_runs([fast, slow])).tables_of("comparison")
    assert {r[cols.index("verdict")] for r in t.csv_rows} == {"slower"}


def test_what_differs_between_the_runs_is_listed_by_host_and_marked_on_its_rows(copy_run):
    """Run B moved to an Intel Xeon with more memory recorded and a newer iperf3 on one
    host; run A's manifest is an old one that never recorded memory."""
    from nicbench.report.build import build
    from nicbench.report.load import load_runs

    b = copy_run(RUN_B, "xeon")
    m = json.loads((b / "manifest.json").read_text())
    for facts in m["hosts"].values():
        facts["cpu_model"] = "Intel(R) Xeon(R) Gold 6338"
        facts["memory_bytes"] = 64 << 30
    m["tools"]["nbr-b"]["iperf3"] = "3.16"
    (b / "manifest.json").write_text(json.dumps(m))
    report = build(load_runs([RUN_A, b]))
    lines = [(w.group, w.what, w.text) for w in report.warnings]
    for host in ("nbr-a", "nbr-b"):
        assert (f"runs A and B, host {host}", "CPU model",
                "AMD EPYC in A, Intel(R) Xeon(R) Gold 6338 in B") in lines
    assert ("runs A and B, host nbr-b", "iperf3 version", "3.12 in A, 3.16 in B") in lines
    # grouped: every line of a host together
    groups = [g for g, _, _ in lines]
    assert all(groups.index(g) == i or groups[i - 1] == g for i, g in enumerate(groups))
    # memory only in B: not recorded, not a difference
    assert not any(w == "memory" for _, w, _ in lines)
    missing = next(t for _, w, t in lines if w.startswith("not recorded"))
    assert "memory (run A)" in missing and "ring sizes (runs A and B)" in missing
    same = next(t for _, w, t in lines if w == "no differences found in")
    assert "kernel" in same and "CPU model" not in same
    (t,) = report.tables_of("comparison")
    cols = t.csv_columns
    for r in t.csv_rows:
        row = dict(zip(cols, r, strict=True))
        # both hosts' CPU model differs: named once
        assert row["differs"].count("CPU model (CPU %, CPU-bound throughput)") == 1
        assert ("iperf3 version (parser)" in row["differs"]) == (row["test"] == "iperf3-tcp")
    (d,) = report.tables_of("comparison-differences")
    assert ["A and B", "host nbr-b", "iperf3 version", "3.12", "3.16", "parser"] in d.rows


def test_two_runs_with_the_same_setup_say_none_found(copy_run):
    from nicbench.report.build import build
    from nicbench.report.load import load_runs

    report = build(load_runs([RUN_B, copy_run(RUN_B, "again")]))
    assert [w.what for w in report.warnings] == [
        "no differences found in", "not recorded (not counted as a difference)"]
    assert not any(w.difference for w in report.warnings)
    assert report.warnings[0].text.startswith("CPU model, CPU count, kernel, driver (inventory)")


def test_a_run_without_manifest_is_said_once_and_nothing_is_guessed(copy_run):
    from nicbench.report.build import build
    from nicbench.report.load import load_runs

    b = copy_run(RUN_B, "bare")
    (b / "manifest.json").unlink()
    report = build(load_runs([RUN_A, b], lambda _: None))
    (first, *rest) = report.warnings
    assert first.what == "no manifest" and first.text.startswith("run B has no manifest")
    assert not any(w.difference for w in rest)
    assert "neither run" not in " ".join(w.text for w in rest)


# -- tables ---------------------------------------------------------------------------------
def test_iperf_tests_at_several_lengths_make_a_netio_style_table(model):
    (t,) = model.tables_of("iperf-length")
    assert t.columns == ["adapter", "point", "-l 8K KB/s", "-l 64K KB/s", "CPU % sender",
                         "CPU % receiver"]
    rows = {(e, r[1]): r for r, e in zip(t.rows, t.row_entries, strict=False)}
    # KB/s of each test's best (run A selects best): bit/s / 8 / 1024
    kbs = [f"{max(ok_values(A_GBE, 1500, t, scale=8 * 1024)):.0f}"
           for t in ("iperf2-l8k", "iperf2-l64k")]
    assert rows[(A_GBE, "MTU 1500")][2:4] == kbs
    assert rows[(A_NJ, "MTU 9000")][2:4] == ["skipped", "skipped"]


def test_failed_and_skipped_configurations_with_their_reasons(model):
    fails = {(f.entry, f.mtu, f.test): f for f in model.failures}
    assert set(fails) == {(A_NJ, 9000, t) for t in ("iperf3-tcp", "iperf2-l8k", "iperf2-l64k",
                                                     "netpipe")} | \
        {(B_STALL, 9000, "iperf3-tcp"), (B_STALL, 9000, "netpipe")}
    refused = fails[(A_NJ, 9000, "iperf3-tcp")]
    assert (refused.status, refused.word) == ("skipped", "refused")
    assert refused.kernel_message == "RTNETLINK answers: Invalid argument"
    assert refused.reasons == [("nbr-a: MTU of nojumbo 9000: RTNETLINK answers: Invalid argument",
                                1)]
    stall = fails[(B_STALL, 9000, "iperf3-tcp")]
    assert (stall.status, stall.word, stall.counts) == ("failed", "stalled",
                                                        "0/3 (2 failed, 1 not run)")
    reasons = [r for r, _ in stall.reasons]
    assert any("the link is dead or stalled" in r for r in reasons)
    assert any("1 repetitions not run after 2 consecutive failures" in r for r in reasons)
    assert fails[(B_STALL, 9000, "netpipe")].reasons == [
        ("timeout: the sender ran past 5 s and was killed", 1)]


def test_summary_table_has_every_configuration(model, runs):
    (t,) = model.tables_of("summary")
    written = 0
    for d in RUN_DIRS:
        with open(d / "summary.csv", newline="") as fh:
            written += len(list(csv.DictReader(fh)))
    assert len(t.rows) == sum(len(r.summary) for r in runs) == written
    row = next(r for r, e in zip(t.rows, t.row_entries, strict=False)
               if e == B_GBE and r[1] == "iperf3-tcp" and r[3] == "MTU 9000")
    median = statistics.median(ok_values(B_GBE, 9000, "iperf3-tcp"))
    assert row[2:8] == ["iperf3 TCP", "MTU 9000", "ok", "3/3", "median", f"{median:.1f}"]
    assert [r[1] for r in t.rows][:8] == ["iperf2-l8k"] * 4 + ["iperf2-l64k"] * 4


def test_setup_has_hosts_versions_and_the_exact_commands(model):
    a = model.setup[0]
    assert (a.run_id, a.label, a.data_dir) == ("20261122-030547", "A", "data/A-run-a")
    facts = dict(a.facts)
    assert facts["profile"].startswith("report-fixture-a")
    assert not any(v.startswith("/") for v in facts.values())     # no local paths
    assert {h[0] for h in a.hosts} == {"nbr-a", "nbr-b"}
    assert all(h[2] for h in a.hosts)                             # kernels
    assert any("iperf3=3.12" in h[6] for h in a.hosts)
    cmd = next(c for c in a.commands if c.test == "iperf2-l8k" and c.point == "MTU 1500"
               and c.entry.startswith("LX-1000 Gigabit"))
    assert cmd.client == "iperf -c 198.18.0.1 -B 198.18.0.2 -p 5001 -l 8192 -e -t 1"
    assert cmd.trials == 2
    np = next(c for c in a.commands if c.test == "netpipe" and c.point == "MTU 1500"
              and c.entry.startswith("LX-1000 Gigabit"))
    assert np.raw.startswith("data/A-run-a/raw/") and (RUN_A / np.raw.split("/", 2)[2]).is_file()


# -- a UDP search (synthetic records: the lab fixture has none) ---------------------------
def test_udp_search_bar_is_the_rate_found_without_whisker(tmp_path):
    from dataclasses import asdict

    from nicbench.config.inventory import Inventory
    from nicbench.config.profile import Profile
    from nicbench.report.build import build
    from nicbench.report.load import load_runs
    from nicbench.results.manifest import Manifest
    from nicbench.results.records import Cpu, CpuSplit, Kind, Status, TrialRecord

    run = tmp_path / "udp"
    run.mkdir()
    recs = []
    for k, (offered, got) in enumerate([(200e6, 199.5e6), (300e6, 299e6), (400e6, 350e6)], 1):
        recs.append(TrialRecord(
            run_id="u1", trial_id=f"gbe.mtu1500.udp.u{k}", pair="gbe", adapter="lab-gbe",
            adapter_label="LX-1000 Gigabit (veth tbf-1g)", tool="iperf2", test="udp",
            protocol="udp", point="mtu1500", mtu=1500, repetition=k, kind=Kind.UDP_SEARCH,
            status=Status.OK, offered_bps=offered, throughput_bps=got, search_method="sweep",
            cpu=Cpu(CpuSplit(10.0 * k), CpuSplit(5.0 * k))))
    (run / "trials.jsonl").write_text("".join(json.dumps(asdict(r)) + "\n" for r in recs))
    Manifest(run_id="u1", nicbench_version="test", pairs=["gbe"],
             profile=Profile.model_validate({
                 "name": "udp", "source": "a UDP sweep", "mtu": [1500],
                 "tests": [{"name": "udp", "tool": "iperf2", "protocol": "udp",
                            "udp_search": {"method": "sweep"}}]}),
             inventory=Inventory.model_validate({
                 "hosts": [{"name": n, "address": "198.19.1.2", "ssh": {"known_hosts": "k"}}
                           for n in ("a", "b")],
                 "adapters": [{"id": "lab-gbe", "vendor": "lab", "model": "LX-1000 Gigabit",
                               "chipset": "shaped to 1000 Mbit/s", "driver": {"name": "veth"}}],
                 "pairs": [{"name": "gbe", "adapter": "lab-gbe",
                            "a": {"host": "a", "interface": "gbe", "address": "198.18.0.1"},
                            "b": {"host": "b", "interface": "gbe", "address": "198.18.0.2"}}]}),
             ).write(run / "manifest.json")
    report = build(load_runs([run]))
    f = fig(report, "speed-iperf2-udp")
    assert f.title == "iperf 2 UDP: throughput"
    b = panel(f, "MTU 1500").bar("0/gbe")
    assert b.value == 350.0 and b.lo is None and b.hi is None
    assert (b.n_ok, b.n) == (3, 3) and b.text == "350.0 · search, 3 trials"
    assert b.limit == pytest.approx(1e3 * (1500 - 28) / (1500 + 38))   # UDP: IP 20 + UDP 8
    assert "UDP search sweep" in f.caption
    # the CPU shown is that of the trial at the rate found
    cpu = panel(fig(report, "cpu-iperf2-udp"), "MTU 1500")
    assert cpu.bar("0/gbe", "sender").value == 30.0
    assert "the trial at the rate found" in " ".join(fig(report, "cpu-iperf2-udp").notes)


# -- 50 adapters ------------------------------------------------------------------------------
def test_fifty_adapters_stay_readable(tmp_path):
    """Run A's gbe card cloned into 50 adapters: rankings of 50 rows with no adapter
    legend, a heatmap of 50 rows, curve charts of at most 8 curves per panel."""
    from nicbench.report.build import build
    from nicbench.report.load import load_runs
    from nicbench.results.manifest import Manifest

    run = tmp_path / "fifty"
    run.mkdir()
    m = Manifest.read(RUN_A / "manifest.json")
    gbe_pair = next(p for p in m.inventory.pairs if p.name == "gbe")
    gbe_adapter = next(a for a in m.inventory.adapters if a.id == "lab-gbe")
    pairs, adapters, lines = [], [], []
    base = [json.loads(x) for x in (RUN_A / "trials.jsonl").read_text().splitlines()
            if json.loads(x)["pair"] == "gbe"]
    for k in range(50):
        aid, pname = f"card-{k:02d}", f"p{k:02d}"
        adapters.append(gbe_adapter.model_copy(update={"id": aid, "model": f"Card {k:02d}"}))
        pairs.append(gbe_pair.model_copy(update={"name": pname, "adapter": aid}))
        for r in base:
            scale = 1 - k / 200
            lines.append({**r, "pair": pname, "adapter": aid,
                          "adapter_label": f"Card {k:02d} (veth tbf-1g)",
                          "throughput_bps": r["throughput_bps"] * scale
                          if r["throughput_bps"] else None})
    inv = m.inventory.model_copy(update={"adapters": adapters, "pairs": pairs})
    m.model_copy(update={"inventory": inv, "pairs": [p.name for p in pairs]}).write(
        run / "manifest.json")
    (run / "trials.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    report = build(load_runs([run]))
    f = fig(report, "speed-iperf3-tcp")
    for p in f.panels:
        assert len(p.rows) == 50
        vals = [p.bar(r.key).value for r in p.rows]
        assert vals == sorted(vals, reverse=True)              # a ranking
    assert len(f.legend) <= 3
    (h,) = fig(report, "heatmap-iperf3-tcp").panels
    assert len(h.rows) == 50 and len(h.columns) == 2
    for f in report.figures_of("netpipe-mtu"):
        assert all(len(p.curves) <= 8 for p in f.panels)
        assert sum(len(p.curves) for p in f.panels) == 50
    cost = fig(report, "cost-iperf3-tcp")
    assert not cost.legend                                     # 50 dots: no legend of 50


# -- the main job: nicbench run lab-roundup on the lab ------------------------------------------
ROUNDUP = DATA / "roundup"


@pytest.fixture(scope="module")
def roundup():
    from nicbench.report.build import build
    from nicbench.report.load import load_runs

    return build(load_runs([ROUNDUP]))


def test_main_job_gaps_name_the_event_the_same_way_for_every_tool(roundup):
    """The lab's stall card at MTU 9000: iperf3 saw a transfer that moved almost nothing,
    iperf 2 a receiver that printed no report; both 'stalled', with the counts of 15. At
    16000 the kernel took the MTU and the path did not carry it: not 'refused'."""
    gaps = {}
    for f in roundup.figures_of("speed") + roundup.figures_of("netpipe-plateau"):
        for p in f.panels:
            for b in p.bars:
                if b.value is None:
                    gaps[(f.id, b.row, p.title)] = b.text
    assert gaps[("speed-iperf3-tcp", "0/stall", "MTU 9000")] == \
        "stalled 0/15 (3 failed, 12 not run)"
    assert gaps[("speed-iperf2-tcp", "0/stall", "MTU 9000")] == \
        "stalled 0/15 (3 failed, 12 not run)"
    assert gaps[("netpipe-plateau", "0/stall", "MTU 9000")] == "timed out 0/1 (1 failed)"
    assert gaps[("speed-iperf3-tcp", "0/stall", "MTU 16000")] == \
        "path check failed 0/15 (15 not run)"
    for pair in ("nojumbo", "fe"):
        for mtu in (6000, 9000, 16000):
            assert gaps[("speed-iperf3-tcp", f"0/{pair}", f"MTU {mtu}")] == \
                "refused 0/15 (15 not run)"
    refused = {k for k, v in gaps.items() if v.startswith("refused")}
    assert all(k[1] in ("0/nojumbo", "0/fe") for k in refused)


def test_main_job_report_does_not_lead_with_a_chart_above_the_wire(roundup):
    """netPIPE's bar is its plateau: near the wire at the large blocks, not the lab's
    ~2 Gbit/s bursts of small messages (which stay in the table)."""
    f = fig(roundup, "netpipe-plateau")
    bars = [b for p in f.panels for b in p.bars if b.value is not None]
    assert len(bars) == 12
    assert sum(1 for b in bars if b.flag) < len(bars) / 2
    assert all(b.value <= 1.05 * b.limit for b in bars)
    t = next(t for t in roundup.tables if t.id == "netpipe-plateau")
    bursts = [float(r[4]) for r in t.rows if r[4]]
    assert max(bursts) > 1.5 * max(b.limit for b in bars)       # what the old peak chart drew
    # the speed axes show the jumbo-frame gain: they end near 1.1 x the top, not at 1.45 x
    s = fig(roundup, "speed-iperf3-tcp")
    top = max(x for p in s.panels for b in p.bars for x in (b.value, b.hi, b.limit) if x)
    assert s.panels[0].xmax == pytest.approx(1.1 * top)
    # every method has its sentence, fastest card first, with where and at what cost
    assert [v.method for v in roundup.verdict] == ["iperf 2 TCP", "iperf3 TCP", "netPIPE TCP"]
    for v in roundup.verdict:
        if v.method != "netPIPE TCP":
            assert v.text.startswith(f"{v.method}: LX-1000 Gigabit (veth tbf-1g) fastest, ")
            assert "% of the wire's limit" in v.text and "CPU " in v.text
        assert "LX-1000NJ Gigabit (macvlan mtu-1500) refused at MTU 6000, 9000, 16000" in v.text
    # netPIPE: gbe's plateaus at MTU 1500, 6000 and 9000 are above the wire's limit (the
    # lab's token bucket): named as such with the largest block beside them, not ranked;
    # nor is the next gigabit card crowned for its lower figure: the link is not ranked
    (np_,) = [v for v in roundup.verdict if v.method == "netPIPE TCP"]
    assert np_.text.startswith("netPIPE TCP: nothing ranked. Not ranked: the method could "
                               "not rank the 1000 Mbit/s link on this setup: LX-1000 "
                               "Gigabit (veth tbf-1g) read above the wire's limit; measured ")
    above = np_.text[np_.text.index("Above the wire's limit on this lab; not ranked: "):]
    assert "LX-1000 Gigabit (veth tbf-1g) 955.8 Mbit/s at MTU 1500" in above
    assert "1014.6 Mbit/s at MTU 9000 (102.5 % of the limit; largest block 1009.9 at " \
           "1048576 bytes)" in above
    from nicbench.report.netpipe import LAB_NETPIPE_RANGE
    assert LAB_NETPIPE_RANGE in f.notes             # the measured range, as README says it
    (t,) = [t for t in roundup.tables_of("verdict") if t.id == "verdict-netpipe-tcp"]
    for r in t.rows:
        col = dict(zip(t.columns, r, strict=True))
        if col["#"] != "":
            assert float(col["% of limit"]) <= 101.0


def test_a_resumed_run_is_reported_from_the_records_that_stand(copy_run):
    """trials.jsonl is append-only: a resume that measured the stall card's first MTU 9000
    repetition again appended a success; that record supersedes the failure, and the
    given-up marker of the configuration, as in the engine's own summary."""
    from nicbench.report.build import build
    from nicbench.report.load import load_runs

    run = copy_run(RUN_B, "resumed")
    lines = [json.loads(x) for x in (run / "trials.jsonl").read_text().splitlines()]
    first = next(r for r in lines if r["pair"] == "stall" and r["point"] == "mtu9000"
                 and r["test"] == "iperf3-tcp" and r["repetition"] == 1)
    again = _format2(first, status="ok", failure=None, reason=None, throughput_bps=5.0e8)
    (run / "trials.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [*lines, again]))
    report = build(load_runs([run]))
    b = panel(fig(report, "speed-iperf3-tcp"), "MTU 9000").bar("0/stall")
    assert (b.value, b.n_ok, b.n) == (500.0, 1, 2)
    assert b.text == "500.0 · 1/2 (1 failed)"


def test_the_main_job_against_a_slower_night_keeps_every_word_honest(copy_run):
    """The roundup (15 repetitions, netPIPE once) against a copy in which the gbe card is
    3 % slower in every iperf3 repetition and nothing else changed (3 % faster would put
    it above the wire's limit, where nothing is judged): gbe's iperf3 rows are slower
    where its repetitions are steadier than that, every other row within noise (identical
    figures), not testable, or above the limit (netPIPE's plateaus on the lab); no word
    contradicts its shift, no faster/slower interval reaches inside the threshold."""
    from nicbench.report.build import build
    from nicbench.report.load import load_runs

    night = copy_run(ROUNDUP, "night-2")
    lines = [json.loads(line) for line in (night / "trials.jsonl").read_text().splitlines()]
    for r in lines:
        if r["pair"] == "gbe" and r["tool"] == "iperf3" and r.get("throughput_bps"):
            r["throughput_bps"] *= 0.97
    (night / "trials.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    report = build(load_runs([ROUNDUP, night]))
    (t,) = report.tables_of("comparison")
    rows = [dict(zip(t.csv_columns, r, strict=True)) for r in t.csv_rows]
    for r in rows:
        if r["verdict"] in ("faster", "slower"):
            sign = 1 if r["verdict"] == "faster" else -1
            assert sign * r["shift_bps"] > 0
            assert sign * r["ci_low_pct" if sign > 0 else "ci_high_pct"] > r["threshold_pct"]
            assert r["p_adjusted"] < 0.05
        if (r["n_a"], r["n_b"]) == (1, 1):
            assert r["verdict"] in ("not testable", "above the limit")
        if r["verdict"] in ("not testable", "not comparable", "above the limit"):
            continue
        # an equivalence test's reading of the interval (widened where fully tied)
        lo, hi, thr = r["ci_low_pct"], r["ci_high_pct"], r["threshold_pct"]
        if r["interval_widened"]:
            res = 100 * r["resolution_bps"] / r["a_median_bps"]
            lo, hi = lo - res, hi + res
        inside = lo is not None and hi is not None and -thr <= lo and hi <= thr
        beyond = (lo is not None and lo > thr) or (hi is not None and hi < -thr)
        assert (r["verdict"] == "within") == inside, r
        if beyond:
            assert r["verdict"] in ("faster", "slower", "inconclusive"), r
        if r["verdict"] == "inconclusive":
            assert any(w in r["note"] for w in ("would likely settle it", "sits on",
                                                "more than 1000 repetitions"))
    words = {(r["adapter_id"], r["test"], r["point"]): r["verdict"] for r in rows}
    gbe_iperf3 = {k: v for k, v in words.items() if k[0] == "lab-gbe" and k[1] == "iperf3-tcp"}
    assert {k[2]: v for k, v in gbe_iperf3.items()} == {
        "mtu1500": "inconclusive", "mtu6000": "slower", "mtu9000": "slower",
        "mtu16000": "slower"}
    # at MTU 1500 the repetitions themselves spread far wider than 3 %: 3 % is not shown
    a = [r["throughput_bps"] for r in lines if r["pair"] == "gbe" and r["tool"] == "iperf3"
         and r["point"] == "mtu1500" and r.get("throughput_bps")]
    assert (max(a) - min(a)) / statistics.median(a) > 0.10
    settle = next(r["settle_repetitions"] for r in rows if r["adapter_id"] == "lab-gbe"
                  and r["test"] == "iperf3-tcp" and r["point"] == "mtu1500")
    assert settle is None or settle > 15
    others = {v for k, v in words.items() if k not in gbe_iperf3}
    assert others == {"within", "inconclusive", "not testable", "not comparable",
                      "above the limit"}
    assert not any(w.difference for w in report.warnings)


def test_main_job_verdict_cpu_over_every_repetition_and_nothing_above_ranked(roundup):
    """The roundup's verdict (15 repetitions, best kept): the CPU of every best-of-15 row
    comes from at least 5 repetitions (all that succeeded, not the fastest alone); no
    ranked figure is above its limit by the bound's rule; ranks are competition ranks,
    tied ones marked."""
    from nicbench.report.configs import Index, build_entries
    from nicbench.report.load import load_runs
    from nicbench.report.verdict import verdicts

    (t,) = [t for t in roundup.tables if t.family == "verdict-csv"]
    rows = [dict(zip(t.columns, r, strict=True)) for r in t.rows]
    best_of_15 = [r for r in rows if r["verdict_row"] == "fastest"
                  and str(r["figure"]).startswith("best of 15")]
    assert best_of_15
    for r in best_of_15:
        assert len(str(r["cpu_repetitions"]).split(",")) >= 5, r
        assert str(r["cpu_statistic"]).startswith("median over all ")
    runs = load_runs([ROUNDUP])
    ix = Index(runs, build_entries(runs, {}))
    for method, vs in verdicts(ix).items():
        ranked = [v for v in vs if v.rank is not None]
        for v in ranked:
            assert v.best is not None and not v.best.above_limit(v.value), (method, v)
        for k, v in enumerate(ranked, 1):
            assert v.rank <= k and (v.rank == k or v.tied)
