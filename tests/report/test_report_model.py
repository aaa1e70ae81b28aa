"""What each chart shows, asserted on its data model (built from data/run-a and run-b).

Expected values are computed from the fixtures' own trials (``trials()`` below reads
data/run-*/trials.jsonl with the store's reader); the limits are R x (m - 52) / (m + 38)
for R = 1 Gbit/s, the rate the lab inventory's adapter descriptions name.
"""

from __future__ import annotations

import csv
import statistics
from pathlib import Path

import pytest

from nicbench.report.model import BarPanel, LinePanel
from nicbench.results.store import RunDir

DATA = Path(__file__).parent / "data"
RUN_A = DATA / "run-a"
RUN_DIRS = [RUN_A, DATA / "run-b"]             # in the order the model fixture loads them

A_GBE, A_NJ, B_GBE, B_STALL = "0/gbe", "0/nojumbo", "1/gbe", "1/stall"
LIMIT_1500 = 1e3 * (1500 - 52) / (1500 + 38)   # 941.482...
LIMIT_9000 = 1e3 * (9000 - 52) / (9000 + 38)   # 990.042...


def trials(entry, mtu, test):
    """The fixture's records of one configuration (entry key "<run index>/<pair>")."""
    i, pair = entry.split("/", 1)
    return [r for r in RunDir(RUN_DIRS[int(i)]).records()
            if r.pair == pair and r.mtu == mtu and r.test == test]


def ok_values(entry, mtu, test, key="throughput_bps", scale=1e6):
    """One configuration's values from its successful trials, in the charts' units."""
    return [getattr(r, key) / scale for r in trials(entry, mtu, test)
            if r.status == "ok" and getattr(r, key) is not None]


def fig(model, fig_id):
    return next(f for f in model.figures if f.id == fig_id)


def bar(panel, entry, mtu):
    return panel.bar(entry, f"{mtu}:mtu{mtu}")


# -- entries ------------------------------------------------------------------------------
def test_entries_are_labelled_model_and_driver_and_the_same_card_twice_by_run(model):
    labels = {e.key: e.label for e in model.entries}
    assert labels == {
        A_GBE: "LX-1000 Gigabit (veth tbf-1g) [run 20261122-030547]",
        A_NJ: "LX-1000NJ Gigabit (macvlan mtu-1500)",
        B_GBE: "LX-1000 Gigabit (veth tbf-1g) [run 20261122-030611]",
        B_STALL: "LX-1000S Gigabit (veth stall-6000)",
    }
    assert any("suffix in brackets" in n for n in model.notes)
    colours = [e.colour for e in model.entries]
    assert len(set(colours)) == len(colours)


def test_same_run_id_in_two_directories_is_told_apart_by_directory_name(copy_run):
    from nicbench.report.build import build
    from nicbench.report.load import load_runs

    night2 = copy_run(RUN_A, "night2")
    report = build(load_runs([RUN_A, night2]))
    gbe = [e.label for e in report.entries if e.pair == "gbe"]
    assert gbe == ["LX-1000 Gigabit (veth tbf-1g) [run-a]",
                   "LX-1000 Gigabit (veth tbf-1g) [night2]"]


def test_link_rate_comes_from_the_inventory_text_and_says_so(model):
    for e in model.entries:
        assert e.rate_bps == 1e9
        assert e.rate_source.startswith("inventory adapter chipset:")
        assert "1000 Mbit/s" in e.rate_source


# -- throughput bars ----------------------------------------------------------------------
def test_iperf3_bars_selected_value_whiskers_n_and_limit(model):
    f = fig(model, "speed-iperf3-tcp")
    assert f.family == "speed" and len(f.panels) == 1
    p = f.panels[0]
    assert [g.label for g in p.groups] == ["MTU 1500", "MTU 9000"]
    assert p.entries == [A_GBE, A_NJ, B_GBE, B_STALL]

    # run A selects best
    v = ok_values(A_GBE, 1500, "iperf3-tcp")
    assert len(v) == 2
    b = bar(p, A_GBE, 1500)
    assert b.value == pytest.approx(max(v))
    assert (b.lo, b.hi) == (pytest.approx(min(v)), pytest.approx(max(v)))
    assert (b.n_ok, b.n, b.status) == (2, 2, "ok")
    assert b.limit == pytest.approx(LIMIT_1500) and b.line_rate == 1000
    assert b.flag == "" and b.text == f"{max(v):.1f} (2/2)"

    # run B selects the median of three
    v = ok_values(B_GBE, 9000, "iperf3-tcp")
    assert len(v) == 3 and statistics.median(v) != statistics.fmean(v)
    b = bar(p, B_GBE, 9000)
    assert b.value == pytest.approx(statistics.median(v))
    assert (b.lo, b.hi) == (pytest.approx(min(v)), pytest.approx(max(v)))
    assert (b.n_ok, b.n) == (3, 3)
    assert b.limit == pytest.approx(LIMIT_9000)


def test_refused_and_stalled_configurations_are_gaps_that_say_why(model):
    p = fig(model, "speed-iperf3-tcp").panels[0]
    refused = bar(p, A_NJ, 9000)
    assert refused.value is None and refused.status == "skipped"
    assert refused.gap == "refused" and refused.text == "refused"
    stalled = bar(p, B_STALL, 9000)
    # two failed repetitions, then one given up: 0 of 3
    assert stalled.value is None and stalled.status == "failed"
    assert (stalled.n_ok, stalled.n) == (0, 3)
    assert stalled.gap == "stalled" and stalled.text == "stalled (0/3)"


def test_two_iperf2_tests_of_one_profile_get_one_chart_each(model):
    speed = [f.id for f in model.figures_of("speed")]
    assert speed == ["speed-iperf2-tcp-iperf2-l8k", "speed-iperf2-tcp-iperf2-l64k",
                     "speed-iperf3-tcp"]
    p = fig(model, "speed-iperf2-tcp-iperf2-l64k").panels[0]
    v = ok_values(A_NJ, 1500, "iperf2-l64k")
    b = bar(p, A_NJ, 1500)
    assert (b.value, b.lo, b.hi) == (max(v), min(v), max(v))
    # iperf 2 prints whole Mbit/s: a repetition just above the 990.04 limit (991) is
    # rounding, not flagged
    v = ok_values(A_GBE, 9000, "iperf2-l8k")
    assert LIMIT_9000 < max(v) < LIMIT_9000 * 1.01
    b = bar(fig(model, "speed-iperf2-tcp-iperf2-l8k").panels[0], A_GBE, 9000)
    assert b.hi == max(v) and b.flag == ""
    assert all(f.entries == [A_GBE, A_NJ] for f in model.figures
               if f.id.startswith("speed-iperf2"))


def test_a_lower_link_rate_flags_values_above_it(runs):
    from nicbench.report.build import build

    report = build(runs, {"gbe": 100e6})
    b = bar(fig(report, "speed-iperf3-tcp").panels[0], A_GBE, 1500)
    assert b.limit == pytest.approx(LIMIT_1500 / 10)
    assert b.flag.startswith("LX-1000 Gigabit (veth tbf-1g) [run 20261122-030547], MTU 1500: ")
    assert "above the line rate itself (100 Mbit/s)" in b.flag
    assert b.text.startswith("! ")
    assert any(b.flag in n for n in fig(report, "speed-iperf3-tcp").notes)
    e = next(e for e in report.entries if e.key == A_GBE)
    assert e.rate_source == "--link-rate gbe"
    # the nojumbo pair keeps the rate of its inventory text
    assert bar(fig(report, "speed-iperf3-tcp").panels[0], A_NJ, 1500).flag == ""


# -- CPU ----------------------------------------------------------------------------------
def test_cpu_panels_per_host_and_the_tools_own_figure(model):
    f = fig(model, "cpu-iperf3-tcp")
    assert [p.title for p in f.panels] == ["sending host", "receiving host",
                                           "iperf3's own figure"]
    send, recv, tool = f.panels
    def cpu(key):
        return ok_values(A_GBE, 1500, "iperf3-tcp", key, scale=1)

    b = bar(send, A_GBE, 1500)
    assert b.value == pytest.approx(statistics.fmean(cpu("cpu_sender_pct")))
    assert (b.lo, b.hi) == (pytest.approx(min(cpu("cpu_sender_pct"))),
                            pytest.approx(max(cpu("cpu_sender_pct"))))
    assert bar(recv, A_GBE, 1500).value == pytest.approx(statistics.fmean(cpu("cpu_receiver_pct")))
    assert bar(tool, A_GBE, 1500).value == pytest.approx(statistics.fmean(cpu("cpu_tool_pct")))
    assert any("cpu_utilization_percent host_total" in n and "client side" in n
               for n in f.notes)
    assert any("same machine" in n for n in f.notes)       # lab hosts share one kernel
    assert bar(send, A_NJ, 9000).gap == "refused"
    # iperf 2 prints no CPU figure: two panels only
    assert len(fig(model, "cpu-iperf2-tcp-iperf2-l8k").panels) == 2


# -- netPIPE --------------------------------------------------------------------------------
def test_netpipe_per_adapter_one_curve_per_mtu(model):
    figs = {f.id: f for f in model.figures_of("netpipe-adapter")}
    assert set(figs) == {"netpipe-adapter-0-gbe", "netpipe-adapter-0-nojumbo",
                         "netpipe-adapter-1-gbe", "netpipe-adapter-1-stall"}
    p = figs["netpipe-adapter-0-gbe"].panels[0]
    assert isinstance(p, LinePanel) and p.xlog
    assert [s.label for s in p.series] == ["MTU 1500", "MTU 9000"]
    assert {s.entry for s in p.series} == {A_GBE}            # the adapter's one colour
    assert len({(s.linestyle, s.marker) for s in p.series}) == 2
    s1500 = p.series[0]
    (r1,) = [r for r in trials(A_GBE, 1500, "netpipe") if r.status == "ok"]
    expected = sorted((float(q["size_bytes"]), q["throughput_bps"] / 1e6) for q in r1.points)
    assert len(expected) == 70
    assert s1500.points == [(x, pytest.approx(y)) for x, y in expected]
    refs = {r.label: r.y for r in p.references}
    assert refs["goodput limit, MTU 1500: 941.5"] == pytest.approx(LIMIT_1500)
    assert refs["goodput limit, MTU 9000: 990.0"] == pytest.approx(LIMIT_9000)
    assert refs["line rate 1000 Mbit/s"] == 1000
    # the nojumbo card has no MTU 9000 curve: refused
    assert [s.label for s in figs["netpipe-adapter-0-nojumbo"].panels[0].series] == ["MTU 1500"]
    # the stall card's MTU 9000 run timed out: no curve
    assert [s.label for s in figs["netpipe-adapter-1-stall"].panels[0].series] == ["MTU 1500"]


def test_netpipe_above_the_line_rate_is_flagged_and_explained(model):
    f = fig(model, "netpipe-adapter-0-gbe")
    s1500 = f.panels[0].series[0]
    assert s1500.flagged, "the lab's netPIPE curves exceed the line rate"
    assert all(y > LIMIT_1500 * 1.01 for _, y in s1500.flagged)
    assert all(y <= LIMIT_1500 * 1.01 for x, y in s1500.points if (x, y) not in s1500.flagged)
    assert any("above the line rate 1000 Mbit/s" in n for n in f.notes)
    assert any("token bucket" in n and "per-frame serialization" in n for n in f.notes)


def test_netpipe_per_mtu_one_curve_per_adapter(model):
    figs = {f.id: f for f in model.figures_of("netpipe-mtu")}
    assert set(figs) == {"netpipe-mtu-1500-mtu1500", "netpipe-mtu-9000-mtu9000"}
    assert [s.entry for s in figs["netpipe-mtu-1500-mtu1500"].panels[0].series] == \
        [A_GBE, A_NJ, B_GBE, B_STALL]
    p9000 = figs["netpipe-mtu-9000-mtu9000"].panels[0]
    assert [s.entry for s in p9000.series] == [A_GBE, B_GBE]
    assert [s.label for s in p9000.series] == [
        "LX-1000 Gigabit (veth tbf-1g) [run 20261122-030547]",
        "LX-1000 Gigabit (veth tbf-1g) [run 20261122-030611]"]
    (r1,) = trials(B_GBE, 9000, "netpipe")
    last = max(r1.points, key=lambda q: q["size_bytes"])
    assert p9000.series[1].points[-1] == (float(last["size_bytes"]),
                                          pytest.approx(last["throughput_bps"] / 1e6))
    assert [r.y for r in p9000.references] == [pytest.approx(LIMIT_9000)]


def test_netpipe_peak_bars(model):
    f = fig(model, "netpipe-peak")
    p = f.panels[0]
    assert isinstance(p, BarPanel)
    (peak,) = ok_values(A_GBE, 9000, "netpipe")     # one repetition: its curve's peak
    b = bar(p, A_GBE, 9000)
    assert b.value == pytest.approx(peak)
    assert (b.n_ok, b.n) == (1, 1)
    assert b.flag and "above the line rate itself (1000 Mbit/s)" in b.flag
    assert bar(p, A_NJ, 9000).gap == "refused"
    assert bar(p, B_STALL, 9000).gap == "timed out"
    t = next(t for t in model.tables if t.family == "netpipe-peak")
    row = next(r for r, e in zip(t.rows, t.row_entries) if e == A_GBE and r[1] == "MTU 9000")
    assert row[2] == f"{peak:.1f}" and row[6].startswith("+")


# -- tables -------------------------------------------------------------------------------
def test_iperf_tests_at_several_lengths_make_a_netio_style_table(model):
    (t,) = model.tables_of("iperf-length")
    assert t.columns == ["adapter", "point", "-l 8K KB/s", "-l 64K KB/s", "CPU % sender",
                         "CPU % receiver"]
    rows = {(e, r[1]): r for r, e in zip(t.rows, t.row_entries)}
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
    assert refused.status == "skipped"
    assert refused.kernel_message == "RTNETLINK answers: Invalid argument"
    assert refused.reasons == [("nbr-a: MTU of nojumbo 9000: RTNETLINK answers: Invalid argument",
                                1)]
    stall = fails[(B_STALL, 9000, "iperf3-tcp")]
    assert (stall.status, stall.n_ok, stall.n) == ("failed", 0, 3)
    reasons = [r for r, _ in stall.reasons]
    assert any("the link is dead or stalled" in r for r in reasons)
    assert any("1 repetitions not run after 2 consecutive failures" in r for r in reasons)
    assert fails[(B_STALL, 9000, "netpipe")].reasons == [
        ("timeout: the sender ran past 5 s and was killed", 1)]


def test_summary_table_has_every_configuration(model, runs):
    (t,) = model.tables_of("summary")
    # as many rows as the runs' own summary.csv files have
    written = 0
    for d in RUN_DIRS:
        with open(d / "summary.csv", newline="") as fh:
            written += len(list(csv.DictReader(fh)))
    assert len(t.rows) == sum(len(r.summary) for r in runs) == written
    row = next(r for r, e in zip(t.rows, t.row_entries)
               if e == B_GBE and r[1] == "iperf3-tcp" and r[3] == "MTU 9000")
    median = statistics.median(ok_values(B_GBE, 9000, "iperf3-tcp"))
    assert row[2:8] == ["iperf3 TCP", "MTU 9000", "ok", "3/3", "median", f"{median:.1f}"]
    assert [r[1] for r in t.rows][:8] == ["iperf2-l8k"] * 4 + ["iperf2-l64k"] * 4


def test_setup_has_hosts_versions_and_the_exact_commands(model):
    a = model.setup[0]
    assert a["run_id"] == "20261122-030547" and a["profile"] == "report-fixture-a"
    assert set(a["hosts"]) == {"nbr-a", "nbr-b"}
    assert a["hosts"]["nbr-a"]["kernel"]
    assert a["tools"]["nbr-a"]["iperf3"] == "3.12"
    cmd = next(c for c in a["commands"] if c["test"] == "iperf2-l8k" and c["point"] == "MTU 1500"
               and c["entry"].startswith("LX-1000 Gigabit"))
    assert cmd["client"] == "iperf -c 198.18.0.1 -B 198.18.0.2 -p 5001 -l 8192 -e -t 1"
    assert cmd["trials"] == 2


# -- a UDP search (synthetic records: the lab fixture has none) -----------------------------
def test_udp_search_bar_is_the_rate_found_without_whisker(tmp_path):
    import json
    from dataclasses import asdict

    from nicbench.report.build import build
    from nicbench.report.load import load_runs
    from nicbench.config.inventory import Inventory
    from nicbench.config.profile import Profile
    from nicbench.results.manifest import Manifest
    from nicbench.results.records import TrialRecord

    run = tmp_path / "udp"
    run.mkdir()
    recs = []
    for k, (offered, got) in enumerate([(200e6, 199.5e6), (300e6, 299e6), (400e6, 350e6)], 1):
        recs.append(TrialRecord(
            run_id="u1", trial_id=f"gbe.mtu1500.udp.u{k}", pair="gbe", adapter="lab-gbe",
            adapter_label="LX-1000 Gigabit (veth tbf-1g)", tool="iperf2", test="udp",
            protocol="udp", point="mtu1500", mtu=1500, repetition=k, kind="udp-search",
            status="ok", offered_bps=offered, throughput_bps=got, search_method="sweep"))
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
    assert f.title == "iperf 2 UDP throughput"
    b = bar(f.panels[0], "0/gbe", 1500)
    assert b.value == 350.0 and b.lo is None and b.hi is None
    assert (b.n_ok, b.n) == (3, 3) and b.text == "350.0 (search, 3 trials)"
    assert b.limit == pytest.approx(1e3 * (1500 - 28) / (1500 + 38))   # UDP: IP 20 + UDP 8
    assert "UDP search sweep" in f.caption
