"""What the report writes: figures (SVG and PNG), CSV tables, and a self-contained page
whose every reference exists; escaping of text from results; netio tables; no manifest."""

from __future__ import annotations

import csv
import html
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import asdict
from html.parser import HTMLParser
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
RUN_A = DATA / "run-a"
GOLDEN = Path(__file__).parents[1] / "golden"


class Refs(HTMLParser):
    """Every src/href of a page, every id, and the tags used."""

    def __init__(self):
        super().__init__()
        self.refs: list[tuple[str, str, str]] = []
        self.ids: set[str] = set()
        self.tags: set[str] = set()
        self.figures: list[dict] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.add(tag)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "figure":
            self.figures.append(a)
        for key in ("src", "href"):
            if key in a:
                self.refs.append((tag, key, a[key]))


def parse_page(path: Path) -> Refs:
    p = Refs()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def test_every_figure_is_written_as_svg_and_png(rendered):
    report, page = rendered
    out = page.parent
    families = {f.family for f in report.figures}
    assert families == {"speed", "cpu", "netpipe-adapter", "netpipe-mtu", "netpipe-peak"}
    for f in report.figures:
        png = out / f.files["png"]
        svg = out / f.files["svg"]
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", png
        assert ET.parse(svg).getroot().tag.endswith("svg"), svg
        assert f.size_px[0] > 300 and f.size_px[1] > 300


def test_one_colour_per_adapter_in_every_chart(rendered):
    """Each chart's SVG uses the colour of every adapter it shows, and no other adapter's."""
    report, page = rendered
    colours = {e.key: e.colour for e in report.entries}
    assert len(set(colours.values())) == len(colours)
    for f in report.figures:
        svg = (page.parent / f.files["svg"]).read_text().lower()
        for key, colour in colours.items():
            if key in f.entries:
                assert colour in svg, (f.id, key)
            else:
                assert colour not in svg, (f.id, key)


def test_every_reference_of_the_page_exists_and_nothing_is_remote(rendered):
    report, page = rendered
    refs = parse_page(page)
    assert refs.refs, "the page references its figures and tables"
    for tag, key, value in refs.refs:
        assert not re.match(r"^[a-z][a-z0-9+.-]*:", value, re.I), f"{tag} {key}={value}"
        if value.startswith("#"):
            assert value[1:] in refs.ids, f"broken anchor {value}"
        else:
            assert (page.parent / value).is_file(), f"missing {value}"
    assert "script" not in refs.tags and "link" not in refs.tags
    imgs = [v for t, k, v in refs.refs if t == "img"]
    assert sorted(imgs) == sorted(f.files["svg"] for f in report.figures)
    assert {f["data-family"] for f in refs.figures} == {f.family for f in report.figures}


def test_the_page_has_contents_failures_and_setup(rendered):
    report, page = rendered
    text = page.read_text()
    refs = parse_page(page)
    assert {"toc", "overview", "throughput", "cpu", "netpipe", "size-tables", "summary",
            "failures", "setup", "method"} <= refs.ids
    assert "RTNETLINK answers: Invalid argument" in text
    assert "timeout: the sender ran past 5 s and was killed" in text
    assert "iperf -c 198.18.0.1 -B 198.18.0.2 -p 5001 -l 8192 -e -t 1" in text
    for e in report.entries:
        assert html.escape(e.label) in text


def test_csv_tables_hold_what_the_charts_and_tables_show(rendered):
    report, page = rendered
    out = page.parent
    for t in report.tables:
        with open(out / t.files["csv"], newline="") as fh:
            rows = list(csv.reader(fh))
        assert rows[0] == t.columns and len(rows) == len(t.rows) + 1
    f = next(f for f in report.figures if f.id == "speed-iperf3-tcp")
    with open(out / f.files["csv"], newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(f.panels[0].bars)
    gap = next(r for r in rows if r["adapter"] == "LX-1000NJ Gigabit (macvlan mtu-1500)"
               and r["point"] == "MTU 9000")
    assert gap["value"] == "" and gap["gap"] == "refused" and gap["status"] == "skipped"


def _rewrite(path: Path, change) -> None:
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    path.write_text("".join(json.dumps(change(r)) + "\n" for r in lines))


def test_text_from_results_is_escaped(copy_run):
    from nicbench.report.build import build
    from nicbench.report.load import load_runs
    from nicbench.report.page import render_page

    run = copy_run(RUN_A, "evil")
    evil_label = 'Card <img src=x onerror="alert(1)"> & "Co"'

    def change(r):
        if r["pair"] == "nojumbo":
            r["adapter_label"] = evil_label
            if r["status"] == "skipped":
                r["reason"] = "<script>alert(2)</script>"
        return r

    _rewrite(run / "trials.jsonl", change)
    text = render_page(build(load_runs([run])))     # the page alone: no figures needed
    assert "<script>" not in text and "<img src=x" not in text
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in text
    assert "Card &lt;img src=x onerror=&quot;alert(1)&quot;&gt; &amp; &quot;Co&quot;" in text


def test_netio_results_make_a_table_per_client_in_kbytes(tmp_path):
    """Records around a real netio 1.26 output (the golden sample), two repetitions."""
    from nicbench.report import build_report
    from nicbench.report.build import build
    from nicbench.report.load import load_runs
    from nicbench.config.inventory import Inventory
    from nicbench.config.profile import Profile
    from nicbench.results.manifest import Manifest
    from nicbench.results.records import TrialRecord
    from nicbench.tools import netio

    parsed = netio.parse((GOLDEN / "samples" / "netio_v1.26_tcp_client_lkml.txt").read_text())
    run = tmp_path / "netio-run"
    run.mkdir()
    lines = []
    for rep, cpu in ((1, 12.5), (2, 13.5)):
        rec = TrialRecord(
            run_id="r1", trial_id=f"mca.mtu1500.netio.r{rep}", pair="mca", adapter="ne2",
            adapter_label="NE/2 (netio)", tool="netio", test="netio", protocol="tcp",
            point="mtu1500", mtu=1500, repetition=rep, kind="repetition", status="ok",
            throughput_bps=parsed.throughput_bps, cpu_sender_pct=cpu,
            points=[asdict(p) for p in parsed.points],
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
    warnings = []
    report = build(load_runs([run], warnings.append))
    assert warnings == [f"{run / 'manifest.json'}: missing: the report has no hosts, "
                        "versions or link rates for this run"]
    assert all(e.rate_bps is None for e in report.entries)
    p = next(f for f in report.figures if f.id == "speed-iperf3-tcp").panels[0]
    assert all(b.limit is None and not b.flag for b in p.bars)
    assert "no manifest.json" in render_page(report)


@pytest.mark.parametrize("mtu,expected", [(1500, 941.5), (9000, 990.0)])
def test_goodput_limit_matches_the_methodology(mtu, expected):
    from nicbench.report.theory import goodput_bps

    assert goodput_bps(1e9, mtu) / 1e6 == pytest.approx(expected, abs=0.05)


def test_goodput_variants_and_rates():
    from nicbench.errors import UsageError
    from nicbench.report.theory import (goodput_bps, parse_link_rates, rate_from_text,
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
    assert timestamps_on({}, {}) is True
    assert timestamps_on({"sysctl": {"net.ipv4.tcp_timestamps": 0}}, {}) is False
    assert timestamps_on({"platform": "windows"}, {"registry": {"Tcp1323Opts": 3}}) is True
    assert timestamps_on({"platform": "windows"}, {}) is False


def test_link_rate_order_user_then_inventory_field_then_text():
    from nicbench.report.theory import link_rate

    adapter = {"id": "lab-pci32", "chipset": "veth, shaped to 600 Mbit/s",
               "link_rate": 1_000_000_000}
    # The bus caps this card at 600 Mbit/s, but its link is Gigabit: the field wins.
    assert link_rate("pci32", adapter, {}) == (1e9, "inventory adapter link_rate: 1000 Mbit/s")
    assert link_rate("pci32", adapter, {"lab-pci32": 5e8})[0] == 5e8
    del adapter["link_rate"]
    assert link_rate("pci32", adapter, {})[0] == 600e6
