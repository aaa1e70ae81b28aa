"""What the report writes: SVG figures, CSV tables (verdict.csv, comparison.csv), the runs'
files, and a page whose every reference exists; escaping of text from results; the print
and dark-mode CSS; --single-file; netio tables; a run without manifest."""

from __future__ import annotations

import csv
import html
import json
import re
import statistics
import xml.etree.ElementTree as ET
from dataclasses import asdict
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import REFERENCE, write_report
from nicbench.results.records import CpuPart
from test_report_model import (A_GBE, A_NJ, B_GBE, B_STALL, LIMIT, RUN_A, RUN_B, oks,
                               ok_values, selected)

GOLDEN = Path(__file__).parents[1] / "golden"
SVG_NS = "{http://www.w3.org/2000/svg}"


class Refs(HTMLParser):
    """Every src/href of a page, every id, the tags used and the figures."""

    def __init__(self):
        super().__init__()
        self.refs: list[tuple[str, str, str]] = []
        self.ids: list[str] = []
        self.tags: set[str] = set()
        self.figures: list[dict] = []
        self.h2: list[str] = []
        self._in_h2 = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.add(tag)
        if "id" in a:
            self.ids.append(a["id"])
        if tag == "figure":
            self.figures.append(a)
        self._in_h2 = tag == "h2"
        for key in ("src", "href"):
            if key in a:
                self.refs.append((tag, key, a[key]))

    def handle_data(self, data):
        if self._in_h2:
            self.h2.append(data)
            self._in_h2 = False


def parse_page(text: str) -> Refs:
    p = Refs()
    p.feed(text)
    return p


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


# -- figures --------------------------------------------------------------------------------
def test_every_figure_is_one_svg_file_with_readable_text(rendered):
    report, page = rendered
    out = page.parent
    families = {f.family for f in report.figures}
    assert families == {"speed", "heatmap", "cpu", "cost", "netpipe-adapter", "netpipe-mtu",
                        "netpipe-plateau", "published"}
    assert sorted(p.name for p in (out / "figures").iterdir()) == \
        sorted(f"{f.id}.svg" for f in report.figures)          # written once, SVG only
    for f in report.figures:
        root = ET.parse(out / f.files["svg"]).getroot()
        assert root.tag == SVG_NS + "svg"
        assert (int(root.get("width")), int(root.get("height"))) == f.size_px
        assert f.size_px[0] == 720 and f.size_px[1] > 60
        assert root.find(SVG_NS + "title").text == f.title
        sizes = [float(t.get("font-size")) for t in root.iter(SVG_NS + "text")]
        # at least 8 pt (11 px) at the size the page draws it, which fits A4 in print
        assert sizes and min(sizes) >= 11, f.id
        # value labels are horizontal: only the y axis title is turned
        turned = [t for t in root.iter(SVG_NS + "text") if t.get("transform")]
        assert all("rotate(-90" in t.get("transform") for t in turned)
        assert len(turned) <= len(f.panels)


def test_each_adapter_keeps_its_colour_in_every_chart(rendered):
    """A chart that draws adapters uses the colour of each adapter it shows, and no other
    adapter's (per-adapter netPIPE charts draw MTUs, not adapters)."""
    report, page = rendered
    colours = {e.key: e.colour for e in report.entries}
    assert len(set(colours.values())) == len(colours)
    for f in report.figures:
        if f.family in ("netpipe-adapter", "published") and not f.entries:
            continue
        svg = (page.parent / f.files["svg"]).read_text().lower()
        for key, colour in colours.items():
            if f.family == "netpipe-adapter":
                assert colour not in svg, (f.id, key)
            elif key in f.entries:
                assert colour in svg, (f.id, key)
            else:
                assert colour not in svg, (f.id, key)


# -- the page ---------------------------------------------------------------------------------
def test_every_reference_of_the_page_exists_and_nothing_is_remote(rendered):
    report, page = rendered
    text = page.read_text()
    refs = parse_page(text)
    assert refs.refs, "the page references its figures and tables"
    for tag, key, value in refs.refs:
        assert not re.match(r"^[a-z][a-z0-9+.-]*:", value, re.I), f"{tag} {key}={value}"
        if value.startswith("#"):
            assert value[1:] in refs.ids, f"broken anchor {value}"
        else:
            assert (page.parent / value).is_file(), f"missing {value}"
    assert "link" not in refs.tags
    # one script, inline and ours (the card finder and sortable tables), loading nothing
    assert text.count("<script") == 1 and "<script src" not in text
    from importlib import resources
    ours = resources.files("nicbench.report").joinpath("templates/report.js").read_text()
    assert ours.strip().replace("</", "<\\/") in text
    assert len(refs.ids) == len(set(refs.ids))
    imgs = [v for t, k, v in refs.refs if t == "img"]
    assert sorted(imgs) == sorted(f.files["svg"] for f in report.figures)
    assert {f["data-family"] for f in refs.figures} == {f.family for f in report.figures}


def test_the_verdict_comes_first_then_the_comparison(rendered):
    report, page = rendered
    text = page.read_text()
    refs = parse_page(text)
    assert refs.h2[:4] == ["Verdict", "Run against run", "Rankings per method",
                           "Adapters in this report"]
    verdict = text[text.index('<section id="verdict">'):text.index('<section id="comparison">')]
    assert "<img" not in verdict                      # the first screen is words and figures
    # per method one row: the fastest card and its figure, as the verdict's rows rank them
    assert report.glance is not None
    for row in report.glance.rows:
        for cell in (row.method, row.fastest, row.figure):
            assert html.escape(cell, quote=False) in verdict
    assert text.index('<section id="verdict">') < text.index("<figure")
    comparison = text[text.index('<section id="comparison">'):
                      text.index('<section id="adapters">')]
    # the method differences stand next to the table
    assert comparison.index('<ul class="warn">') < comparison.index('<table')
    assert "A keeps the best of 2, B the median of 3" in comparison


def test_the_page_has_contents_failures_and_setup(rendered):
    report, page = rendered
    text = page.read_text()
    refs = parse_page(text)
    assert {"toc", "verdict", "comparison", "adapters", "throughput", "cpu", "netpipe", "published",
            "size-tables", "summary", "failures", "setup", "method"} <= set(refs.ids)
    assert "RTNETLINK answers: Invalid argument" in text
    assert "timeout: the sender ran past 5 s and was killed" in text
    assert "iperf -c 198.18.0.1 -B 198.18.0.2 -p 5001 -l 8192 -e -t 1" in text
    assert "2^20 bit/s" in text
    for e in report.entries:
        assert html.escape(e.label) in text


def test_no_path_of_this_machine_in_the_page(rendered):
    _report, page = rendered
    text = page.read_text()
    for local in (str(RUN_A.resolve()), str(RUN_B.resolve()), str(page.parent),
                  str(Path.cwd()), str(Path.home())):
        assert local not in text
    assert not re.search(r'(href|src)="/', text)


def test_the_runs_files_travel_with_the_report(rendered):
    report, page = rendered
    for s in report.setup:
        d = page.parent / s.data_dir
        src = RUN_A if s.index == 0 else RUN_B
        for name in ("trials.jsonl", "summary.csv"):
            assert (d / name).read_bytes() == (src / name).read_bytes()
        # the manifest as written, but without this machine's paths (the inventory's
        # directory, its SSH files, where the profile and inventory were): file names only
        copy, orig = (json.loads((x / "manifest.json").read_text()) for x in (d, src))
        assert "/tmp/nbr-lab" in (src / "manifest.json").read_text()
        assert "/" not in json.dumps({k: copy[k] for k in ("profile_file", "inventory_file")})
        assert "inventory_dir" not in copy
        for host in copy["inventory"]["hosts"]:
            assert host["ssh"]["key_file"] == "id_ed25519"
            assert host["ssh"]["known_hosts"] == "known_hosts"
        for key in ("profile_file", "inventory_file", "inventory"):
            orig.pop(key), copy.pop(key)
        assert copy == orig
        raw = sorted(p.name for p in (src / "raw").iterdir())
        assert raw and sorted(p.name for p in (d / "raw").iterdir()) == raw
        # every raw output a command row links to is there
        for c in s.commands:
            if c.raw:
                assert (page.parent / c.raw).is_file()


def test_print_dark_and_narrow_css(rendered):
    _, page = rendered
    css = re.search(r"<style>(.*?)</style>", page.read_text(), re.S).group(1)
    assert "@page{size:A4" in css
    print_css = css[css.index("@media print"):]
    # tables fit the page: full width, cells wrap, long words break; nothing scrolls
    assert "table{font-size:7pt;width:100%" in print_css
    assert "overflow-wrap:anywhere" in print_css and ".scroll{overflow:visible}" in print_css
    # headings stay with what follows, figures and rows are not cut
    assert "h2,h3,h4{break-after:avoid" in css
    assert "tr,figure{break-inside:avoid" in print_css
    assert "@media (prefers-color-scheme:dark)" in css
    assert "@media (max-width:760px)" in css
    assert '<meta name="color-scheme" content="light dark">' in page.read_text()


# -- CSV --------------------------------------------------------------------------------------
def test_csv_tables_hold_what_the_charts_and_tables_show(rendered):
    report, page = rendered
    out = page.parent
    for t in report.tables:
        with open(out / t.files["csv"], newline="") as fh:
            rows = list(csv.reader(fh))
        assert rows[0] == (t.csv_columns or t.columns)
        assert len(rows) == len(t.csv_rows or t.rows) + 1
    f = next(f for f in report.figures if f.id == "speed-iperf3-tcp")
    rows = read_csv(out / f.files["csv"])
    assert len(rows) == sum(len(p.bars) for p in f.panels)
    gap = next(r for r in rows if r["adapter"] == "LX-1000NJ Gigabit (macvlan mtu-1500)"
               and r["panel"] == "MTU 9000")
    assert gap["value"] == "" and gap["gap"] == "refused" and gap["status"] == "skipped"
    assert gap["label"] == "refused 0/2 (2 not run)"


def test_verdict_csv(rendered):
    report, page = rendered
    rows = read_csv(page.parent / "tables" / "verdict.csv")
    assert {"adapter", "test", "point", "selected_bps", "limit_pct", "cpu_sender_pct",
            "cpu_receiver_pct", "mbit_per_cpu_pct", "status"} <= set(rows[0])
    labels = {e.key: e.label for e in report.entries}
    by = {(r["adapter"], r["test"]): r for r in rows}
    # one row per adapter and method
    # one row per adapter and method: two iperf 2 tests of run A's 2 adapters, iperf3 and
    # netPIPE of all 4
    assert len(rows) == len(by) == 2 * 2 + 4 + 4
    for key in (A_GBE, A_NJ, B_GBE, B_STALL):
        r = by[(labels[key], "iperf3-tcp")]
        mtus = [m for m in (1500, 9000) if oks(key, m, "iperf3-tcp")]
        best = max(mtus, key=lambda m: selected(key, m, "iperf3-tcp"))
        v = selected(key, best, "iperf3-tcp")
        recs = sorted(oks(key, best, "iperf3-tcp"), key=lambda x: x.repetition)
        snd = statistics.median(CpuPart.SENDER_BUSY.of(x) for x in recs)
        rcv = statistics.median(CpuPart.RECEIVER_BUSY.of(x) for x in recs)
        assert r["point"] == f"mtu{best}"
        assert float(r["selected_bps"]) == pytest.approx(v * 1e6, abs=0.1)
        assert float(r["limit_pct"]) == pytest.approx(100 * v / LIMIT[best], abs=0.01)
        assert float(r["cpu_sender_pct"]) == pytest.approx(snd, abs=0.01)
        assert float(r["cpu_receiver_pct"]) == pytest.approx(rcv, abs=0.01)
        assert float(r["mbit_per_cpu_pct"]) == pytest.approx(v / max(snd, rcv), abs=0.001)
        assert r["status"] == ("ok" if len(mtus) == 2 else "partial")
        # the configuration's CPU: every successful repetition, named
        assert r["cpu_repetitions"] == ",".join(str(x.repetition) for x in recs)
        assert r["cpu_statistic"] == f"median over all {len(recs)} successful repetitions"
    # iperf 2 prints three significant figures; the CPU is still every repetition's
    for key in (A_GBE, A_NJ):
        for test in ("iperf2-l8k", "iperf2-l64k"):
            r = by[(labels[key], test)]
            mtu = int(r["point"].removeprefix("mtu"))
            recs = sorted(oks(key, mtu, test), key=lambda x: x.repetition)
            assert r["cpu_repetitions"] == ",".join(str(x.repetition) for x in recs)
            assert float(r["cpu_sender_pct"]) == pytest.approx(
                statistics.median(CpuPart.SENDER_BUSY.of(x) for x in recs), abs=0.01)
    assert by[(labels[A_NJ], "iperf3-tcp")]["not_measured"] == \
        "MTU 9000: refused 0/2 (2 not run)"
    assert by[(labels[B_STALL], "netpipe")]["not_measured"] == \
        "MTU 9000: timed out 0/1 (1 failed)"
    assert by[(labels[A_GBE], "netpipe")]["figure"] == "plateau"
    # 2 and 3 repetitions cannot show a change by the comparison's rule: one shared rank
    iperf3 = [r for r in rows if r["test"] == "iperf3-tcp"]
    assert [r["rank"] for r in iperf3] == ["1", "1", "1", "1"]
    assert all(r["tied"] == "yes" for r in iperf3)


def test_comparison_csv(rendered):
    _report, page = rendered
    rows = read_csv(page.parent / "tables" / "comparison.csv")
    assert {"adapter", "test", "point", "n_a", "n_b", "a_median_bps", "b_median_bps", "a_bps",
            "b_bps", "shift_bps", "change_pct", "ci_low_pct", "ci_high_pct", "p_value",
            "p_adjusted", "verdict"} <= set(rows[0])
    assert {r["verdict"] for r in rows} <= {"faster", "slower", "within", "inconclusive",
                                            "not testable", "not comparable", "above the limit"}
    # A figure beyond the wire's limit is not a measurement of the card: never judged.
    above = [r for r in rows if r["verdict"] == "above the limit"]
    assert above and all("above the wire's limit" in r["note"] and r["p_adjusted"] == ""
                         for r in above), [(r["test"], r["point"]) for r in above]
    r = next(r for r in rows if r["test"] == "iperf3-tcp" and r["point"] == "mtu9000")
    a, b = ok_values(A_GBE, 9000, "iperf3-tcp"), ok_values(B_GBE, 9000, "iperf3-tcp")
    assert (r["adapter"], r["a_run"], r["b_run"]) == ("LX-1000 Gigabit (veth tbf-1g)", "A", "B")
    assert float(r["a_median_bps"]) == pytest.approx(statistics.median(a) * 1e6, abs=0.1)
    assert float(r["b_median_bps"]) == pytest.approx(statistics.median(b) * 1e6, abs=0.1)
    # each run's own selection: A the best of 2, B the median of 3
    assert float(r["a_bps"]) == pytest.approx(max(a) * 1e6, abs=0.1)
    assert float(r["b_bps"]) == pytest.approx(statistics.median(b) * 1e6, abs=0.1)
    assert (r["a_select"], r["b_select"]) == ("best of 2", "median of 3")
    shift = statistics.median(y - x for x in a for y in b)
    assert float(r["shift_bps"]) == pytest.approx(shift * 1e6, abs=0.1)
    assert float(r["p_value"]) == pytest.approx(0.2)      # 2 against 3: nothing can show
    assert r["verdict"] == "not testable" and r["p_adjusted"] == ""
    assert "it takes at least 4 in each run, or 8 in run B" in r["note"]
    assert "selection rule" in r["differs"] and "repetitions" in r["differs"]
    np = next(r for r in rows if r["test"] == "netpipe" and r["point"] == "mtu1500")
    assert np["a_select"].startswith("plateau")
    # gbe's netPIPE plateau at MTU 1500 is above the lab's wire limit (netPIPE's small
    # blocks pass the token bucket's burst): not judged; one against one is never testable.
    assert (np["n_a"], np["n_b"], np["verdict"]) == ("1", "1", "above the limit")
    assert {r["verdict"] for r in rows if r["test"] == "netpipe"} <= {
        "above the limit", "not testable", "not comparable"}
    nc = [r for r in rows if r["verdict"] == "not comparable"]
    assert {r["test"] for r in nc} == {"iperf2-l8k", "iperf2-l64k"}
    diffs = read_csv(page.parent / "tables" / "comparison-differences.csv")
    assert [d["what"] for d in diffs if d["group"] == "profile"] == [
        "selection rule (iperf3-tcp)", "repetitions (iperf3-tcp)"]
    same = next(d for d in diffs if d["what"] == "no differences found in")
    assert "CPU model" in same["A"] and "kernel" in same["A"]


# -- escaping ---------------------------------------------------------------------------------
def _rewrite(path: Path, change) -> None:
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    path.write_text("".join(json.dumps(change(r)) + "\n" for r in lines))


def test_text_from_results_is_escaped_in_the_page_and_the_charts(copy_run, tmp_path):
    run = copy_run(RUN_A, "evil")
    evil_label = 'Card <img src=x onerror="alert(1)"> & "Co"'

    def change(r):
        if r["pair"] == "nojumbo":
            r["adapter_label"] = evil_label
            if r["status"] == "skipped":
                r["reason"] = "<script>alert(2)</script>"
        return r

    _rewrite(run / "trials.jsonl", change)
    for single in (False, True):
        report, page = write_report(tmp_path / f"out-{single}", [run], single_file=single)
        text = page.read_text()
        assert "<script>alert" not in text and "<img src=x" not in text
        assert text.count("<script") == 1           # the page's own script only
        assert "&lt;script&gt;alert(2)&lt;/script&gt;" in text
        assert "Card &lt;img src=x onerror=&#34;alert(1)&#34;&gt; &amp; &#34;Co&#34;" in text \
            or "Card &lt;img src=x onerror=&quot;alert(1)&quot;&gt; &amp; &quot;Co&quot;" in text
        for f in report.figures:
            root = ET.fromstring(f.svg)            # still well-formed XML
            texts = [t.text or "" for t in root.iter()]
            assert not any("<img" in (a or "") for el in root.iter() for a in el.attrib)
            if "0/nojumbo" in f.entries and f.family == "speed":
                assert any(t.startswith("Card <img src=x") for t in texts)


def test_single_file_is_self_contained(tmp_path):
    report, page = write_report(tmp_path / "single", [RUN_A, RUN_B], single_file=True)
    text = page.read_text()
    refs = parse_page(text)
    assert "img" not in refs.tags and not [r for r in refs.refs if r[1] == "src"]
    assert not (tmp_path / "single" / "figures").exists()
    assert text.count("<svg ") == len(report.figures)
    # every href left is an anchor of the page itself: mailed alone, nothing breaks
    assert all(v.startswith("#") for _, k, v in refs.refs if k == "href")
    assert len(refs.ids) == len(set(refs.ids))               # SVG ids do not collide


# -- netio and references ---------------------------------------------------------------------
def _netio_run(tmp_path: Path) -> Path:
    """Records around a real netio 1.26 output (the golden sample), two repetitions."""
    from nicbench.config.inventory import Inventory
    from nicbench.config.profile import Profile
    from nicbench.results.manifest import Manifest
    from nicbench.results.records import Cpu, CpuSplit, Kind, Status, TrialRecord
    from nicbench.tools import netio

    parsed = netio.parse((GOLDEN / "samples" / "netio_v1.26_tcp_client_lkml.txt").read_text())
    run = tmp_path / "netio-run"
    run.mkdir()
    lines = []
    for rep, cpu in ((1, 12.5), (2, 13.5)):
        rec = TrialRecord(
            run_id="r1", trial_id=f"mca.mtu1500.netio.r{rep}", pair="mca", adapter="ne2",
            adapter_label="NE/2 (netio)", tool="netio", test="netio", protocol="tcp",
            point="mtu1500", mtu=1500, repetition=rep, kind=Kind.REPETITION,
            status=Status.OK, throughput_bps=parsed.throughput_bps,
            cpu=Cpu(sender=CpuSplit(cpu)),
            points=list(parsed.points),
            hosts={"receiver": "server", "sender": "client-486"})
        lines.append(json.dumps(asdict(rec)))
    (run / "trials.jsonl").write_text("\n".join(lines) + "\n")
    Manifest(run_id="r1", nicbench_version="test", pairs=["mca"],
             profile=Profile.model_validate({
                 "name": "netio", "source": "Arnold 2002, netio tables", "select": "mean",
                 "repetitions": 2, "mtu": [1500],
                 "tests": [{"name": "netio", "tool": "netio"}]}),
             inventory=Inventory.model_validate({
                 "hosts": [{"name": n, "address": "198.19.1.2",
                            "ssh": {"known_hosts": "k"}} for n in ("server", "client-486")],
                 "adapters": [{"id": "ne2", "vendor": "Novell", "model": "NE/2",
                               "driver": {"name": "netio"}}],
                 "pairs": [{"name": "mca", "adapter": "ne2",
                            "a": {"host": "server", "interface": "eth0", "address": "198.18.0.1"},
                            "b": {"host": "client-486", "interface": "eth0",
                                  "address": "198.18.0.2"}}]}),
             ).write(run / "manifest.json")
    return run


def test_netio_results_make_a_table_per_client_in_kbytes(tmp_path):
    from nicbench.report import build_report
    from nicbench.report.build import build
    from nicbench.report.load import load_runs

    run = _netio_run(tmp_path)
    report = build(load_runs([run]))
    (t,) = report.tables_of("netio")
    assert t.title == "netio TCP, client client-486, MTU 1500: test netio"
    assert t.columns[:3] == ["adapter", "1K Tx KB/s", "1K Rx KB/s"]
    assert t.columns[-3:] == ["n", "CPU % (client, /proc/stat)", "CPU % (tool)"]
    row = t.rows[0]
    # "Packet size  1k bytes:  72320 KByte/s Tx,  86656 KByte/s Rx." ... "32k": 71705 / 101083
    assert row[:3] == ["NE/2 (netio)", "72320", "86656"]
    assert row[11:13] == ["71705", "101083"]
    assert row[-3:] == ["2/2", "13.0", ""]
    # the page shows it; netio is not drawn as speed bars
    page = build_report([str(run)], str(tmp_path / "out"))
    assert "72320" in page.read_text()
    assert not report.figures_of("speed")


def test_a_run_without_manifest_has_no_rate_and_says_so(copy_run):
    from nicbench.report.build import build
    from nicbench.report.load import load_runs
    from nicbench.report.page import render_page

    run = copy_run(RUN_A, "nomanifest")
    (run / "manifest.json").unlink()
    warnings: list[str] = []
    report = build(load_runs([run], warnings.append))
    assert warnings == [f"{run / 'manifest.json'}: missing: the report has no hosts, "
                        "versions or link rates for this run"]
    assert all(e.rate_bps is None for e in report.entries)
    f = next(f for f in report.figures if f.id == "speed-iperf3-tcp")
    assert all(b.limit is None and not b.flag for p in f.panels for b in p.bars)
    # without the profile, the planned repetitions of a refused point come from its record
    b = next(p for p in f.panels if p.title == "MTU 9000").bar("0/nojumbo")
    assert b.gap == "refused"
    assert "no manifest.json" in render_page(report)


@pytest.mark.parametrize("mtu,expected", [(1500, 941.5), (9000, 990.0)])
def test_goodput_limit_matches_the_methodology(mtu, expected):
    from nicbench.physics.link import goodput_bps

    assert goodput_bps(1e9, mtu) / 1e6 == pytest.approx(expected, abs=0.05)


def test_goodput_variants_and_rates():
    from nicbench.config.profile import Point, Profile
    from nicbench.errors import UsageError
    from nicbench.physics.link import (goodput_bps, parse_link_rates, rate_from_text,
                                        timestamps_on)

    assert goodput_bps(1e9, 1500, timestamps=False) == pytest.approx(1e9 * 1460 / 1538)
    assert goodput_bps(1e9, 1500, "udp") == pytest.approx(1e9 * 1472 / 1538)
    assert rate_from_text("veth, shaped to 600 Mbit/s") == 600e6
    assert rate_from_text("a 1 Gbit/s card") == 1e9
    assert rate_from_text("100 Mbit/s or 1000 Mbit/s") is None
    assert rate_from_text(None) is None
    assert parse_link_rates(["gbe=1gbit", "lab-fe=100M"]) == {"gbe": 1e9, "lab-fe": 1e8}
    for bad in ("gbe", "=1G", "gbe=fast", "gbe=0"):
        with pytest.raises(UsageError):
            parse_link_rates([bad])

    def profile(**kw):
        return Profile.model_validate({"name": "p", "source": "s", "mtu": [1500],
                                       "tests": [{"name": "t", "tool": "iperf3"}], **kw})
    assert timestamps_on(None, None) is True
    assert timestamps_on(profile(sysctl={"net.ipv4.tcp_timestamps": 0}), None) is False
    win = profile(platform="windows")
    assert timestamps_on(win, Point(frame_size=1514, registry={"Tcp1323Opts": 3})) is True
    assert timestamps_on(win, Point(frame_size=1514)) is False


def test_link_rate_order_user_then_inventory_field_then_text():
    from nicbench.config.inventory import Adapter
    from nicbench.physics.link import link_rate

    adapter = Adapter.model_validate({"id": "lab-pci32", "vendor": "lab", "model": "m",
                                      "chipset": "veth, shaped to 600 Mbit/s",
                                      "driver": {"name": "veth"}, "link_rate": "1gbit"})
    # The bus caps this card at 600 Mbit/s, but its link is Gigabit: the field wins.
    assert link_rate("pci32", adapter, {}) == (1e9, "inventory adapter link_rate: 1000 Mbit/s")
    assert link_rate("pci32", adapter, {"lab-pci32": 5e8})[0] == 5e8
    assert link_rate("pci32", adapter.model_copy(update={"link_rate": None}), {})[0] == 600e6
    assert link_rate("pci32", None, {})[0] is None


def test_reference_file_is_drawn_beside_a_run(tmp_path):
    """--reference: the shipped netio figures as published bars, and the netio run's
    adapter beside them at the same packet sizes, in the publication's unit."""
    import yaml

    run = _netio_run(tmp_path)
    report, page = write_report(tmp_path / "out", [run], reference=REFERENCE)
    data = yaml.safe_load(REFERENCE.read_text())
    published = report.figures_of("published")
    setups = list(dict.fromkeys(f["setup"] for f in data["figures"]))
    assert [f.title for f in published] == [f"Published: netio, {s}" for s in setups]
    f56 = published[0]
    assert [p.title for p in f56.panels] == [f"netio {s}" for s in
                                             ("1K", "2K", "4K", "8K", "16K", "32K")]
    p1k = f56.panels[0]
    mine = [x for x in data["figures"] if x["setup"] == setups[0] and x["point"] == "1K"]
    pub = [b for b in p1k.bars if b.status == "published"]
    assert sorted(b.value for b in pub) == sorted(x["value"] for x in mine)
    assert all(r.published.startswith(data["title"]) for r in p1k.rows if r.entry is None)
    assert all(b.text.endswith("(published)") for b in pub)
    assert p1k.xlabel == "KB/s (1024 bytes/s)"
    # today's netio run beside them: 72320 KByte/s Tx at 1K in the golden output
    ne2 = p1k.bar("0/mca")
    assert ne2 is not None and ne2.value == pytest.approx(72320, rel=1e-6)
    assert "../shared/seeds/004_5443acf57e752bd8.txt" in f56.caption
    (t,) = report.tables_of("published")
    assert len(t.rows) == len(data["figures"])
    text = page.read_text()
    assert "Published figures" in text and "(published)" in text


def test_shipped_reference_matches_the_seed_it_cites():
    """Every figure of references/arnold-2002-netio.yaml is the number the seed prints in
    the table its section names, for that adapter and packet size."""
    import yaml

    data = yaml.safe_load(REFERENCE.read_text())
    seed = (REFERENCE.parents[1] / data["source"]).resolve()
    if not seed.is_file():
        pytest.skip(f"{data['source']} is not beside this clone")
    lines = seed.read_text().splitlines()
    sizes = ["1K", "2K", "4K", "8K", "16K", "32K"]
    checked = 0
    for f in data["figures"]:
        line = int(re.search(r"\(line (\d+)\)", f["section"]).group(1))
        table = lines[line - 1:line + 15]
        if table[0].startswith("Adapter |"):
            row = next(r for r in table[1:] if r.split("|")[0].strip() == f["adapter"])
            cells = [c.strip() for c in row.split("|")]
            assert float(cells[1 + sizes.index(f["point"])]) == f["value"], f
            assert float(cells[7]) == f["cpu_pct"], f
        else:
            assert table[0].startswith("Packet Size (KB) | Rate (KB/s)")
            row = next(r for r in table[1:] if r.split("|")[0].strip() + "K" == f["point"])
            assert float(row.split("|")[1]) == f["value"], f
        checked += 1
    assert checked == len(data["figures"]) == 12 * 6 + 11 * 6 * 2 + 6
