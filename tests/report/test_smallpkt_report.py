"""The report's small-packet section from a run the engine made over fake hosts (the
search's own records, ``tests/unit/test_smallpkt.py``'s fake link): a frames/s against
frame size panel per adapter with the line-rate curve, the NDR/PDR table, and the
verdict's "highest small-packet rate", where a rate above the line rate for its frame size
is drawn flagged and never ranked. The small-packet test is not drawn again as a plain
UDP rate (its figures are per frame size, not one rate)."""

from __future__ import annotations

import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from test_smallpkt import Link, server_report

from conftest import write_report
from nicbench.config.inventory import Inventory
from nicbench.config.loader import load_profile
from nicbench.execution.runner import Runner
from nicbench.platforms.fake import Answer, FakeCpu, FakeHosts, FakeInterface, ToolCall
from nicbench.report.model import LinePanel
from nicbench.tools.registry import CATALOG

TWO_PAIRS = Inventory.model_validate({
    "hosts": [{"name": n, "address": f"198.19.{i}.2", "ssh": {"known_hosts": "k"}}
              for i, n in ((1, "ha"), (2, "hb"), (3, "hc"), (4, "hd"))],
    "adapters": [{"id": "card", "vendor": "v", "model": "Card", "driver": {"name": "d"}},
                 {"id": "card2", "vendor": "v", "model": "Liar", "driver": {"name": "d"}}],
    "pairs": [{"name": "p", "adapter": "card",
               "a": {"host": "ha", "interface": "t0", "address": "198.18.0.1"},
               "b": {"host": "hb", "interface": "t0", "address": "198.18.0.2"}},
              {"name": "p2", "adapter": "card2",
               "a": {"host": "hc", "interface": "t1", "address": "198.18.1.1"},
               "b": {"host": "hd", "interface": "t1", "address": "198.18.1.2"}}]})


class Liar:
    """A tool that reports twice the datagrams it was asked to send, none lost."""

    def __call__(self, call: ToolCall) -> Answer:
        argv = list(call.argv)
        payload = int(argv[argv.index("-l") + 1])
        pps = int(argv[argv.index("-b") + 1]) // (payload * 8)
        return Answer(client=server_report(payload, 2 * pps, 0))


def make_report(tmp: Path, sender_cpu: FakeCpu | None = None, mtu: str = "[1500]"):
    path = tmp / "p.yaml"
    path.write_text("name: t\nsource: nicbench unit test\n" + textwrap.dedent("""\
        mtu: MTUS
        tests:
          - name: small
            tool: iperf2
            protocol: udp
            params: {duration_s: 1}
            frame_search: {frames: [64, 1518], resolution_pct: 5, line_rate: 100M}
        """).replace("MTUS", mtu))
    prof = load_profile(path, CATALOG)
    honest, liar = Link(clean=40_000, lossy=60_000), Liar()

    def answer(call: ToolCall) -> Answer:
        out = (honest if call.host in ("ha", "hb") else liar)(call)
        return replace(out, sender=sender_cpu) if sender_cpu is not None else out

    hosts = FakeHosts(answer)
    for name, iface, addr in (("ha", "t0", "198.18.0.1"), ("hb", "t0", "198.18.0.2"),
                              ("hc", "t1", "198.18.1.1"), ("hd", "t1", "198.18.1.2")):
        hosts.add(name, {iface: FakeInterface(addresses=(addr,))})
    run_dir = Runner(prof, TWO_PAIRS, tmp / "run", hosts=hosts).run()
    return write_report(tmp / "report", [run_dir.path])


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return make_report(tmp_path_factory.mktemp("smallpkt"))


def test_a_panel_per_adapter_with_the_line_rate_curve(report):
    model, _ = report
    (fig,) = model.figures_of("smallpkt")
    assert [p.title for p in fig.panels] == ["Card (d)", "Liar (d)"]
    card = fig.panels[0]
    assert isinstance(card, LinePanel)
    ndr, pdr, line = card.curves
    assert ndr.points == [(64.0, pytest.approx(39.042)), (1518.0, pytest.approx(8.127))]
    assert pdr.points[0] == (64.0, pytest.approx(59.820))
    assert line.label == "line rate" and line.points == [
        (64.0, pytest.approx(148.8095, abs=1e-3)), (1518.0, pytest.approx(8.1274, abs=1e-3))]
    assert not ndr.flagged
    liar_ndr = fig.panels[1].curves[0]
    assert liar_ndr.flagged == liar_ndr.points      # twice the line rate: every point
    assert any("Liar" in n and "not ranked" in n for n in fig.notes)


def test_the_table_has_ndr_pdr_and_their_share_of_the_line_rate(report):
    model, html = report
    (table,) = model.tables_of("smallpkt")
    rows = {(r[0].split(" ")[0], r[2]): dict(zip(table.columns, r, strict=True)) for r in table.rows}
    card64 = rows[("Card", 64)]
    assert card64["line rate (frames/s)"] == 148_809
    assert card64["NDR (frames/s)"] == "39,042" and card64["NDR % of line"] == 26.2
    assert card64["PDR (frames/s)"] == "59,820" and card64["PDR loss limit %"] == 0.5
    assert card64["NDR Mbit/s"] == pytest.approx(39_042 * 64 * 8 / 1e6, abs=0.01)
    # each rate with its bracket (within the profile's 5 %) and its 10 s confirmation
    assert card64["NDR bracket (frames/s)"] == "39,042 to 40,584 (+3.9 %)"
    assert card64["NDR confirmation"] == "10 s, 0 % lost"
    assert card64["PDR bracket (frames/s)"] == "60,000 to 63,000 (+5.0 %)"
    assert card64["PDR confirmation"] == "10 s, 0.3 % lost"
    assert rows[("Card", 1518)]["NDR bracket (frames/s)"] == "8,127 to line"
    assert rows[("Liar", 64)]["NDR (frames/s)"].startswith("! ")
    assert 'id="smallpkt"' in html.read_text()


def test_the_verdict_ranks_the_ndr_at_64_bytes_and_never_a_rate_above_the_line(report):
    model, _ = report
    (sentence,) = [s for s in model.verdict if s.method == "small-packet rate"]
    assert sentence.text.startswith("Highest small-packet rate (NDR at 64-byte frames")
    assert "Card (d) 39,042 frames/s (26.2 % of line rate)" in sentence.text
    assert "not ranked: Liar (d)" in sentence.text
    (table,) = [t for t in model.tables_of("verdict") if t.id == "verdict-smallpkt"]
    assert [(r[0], r[1]) for r in table.rows] == [(1, "Card (d)"), ("", "Liar (d)")]
    assert str(table.rows[0][-1]).startswith("p.mtu1500.small.")      # the trial named


def test_the_small_packet_test_is_not_drawn_again_as_a_udp_rate(report):
    model, _ = report
    assert not any(f.family == "speed" for f in model.figures)
    assert not any(c for c in [t for t in model.tables_of("verdict") if t.id != "verdict-smallpkt"
                               for c in t.rows])


def test_the_publication_figure_plots_frames_per_second(report):
    from nicbench.report.figures.plan import rows_of, units
    from nicbench.report.figures.style import Colours

    model, _ = report
    rows = [r for u in units(model.publication, []) if u.family == "smallpkt"
            for r in rows_of(u, Colours())]
    assert rows and {r[9] for r in rows} == {"thousand frames/s"}
    assert ("Liar (d)", "NDR (0 % loss)", 64, "yes") in {(r[3], r[4], r[6], r[13]) for r in rows}


def test_an_ndr_measured_while_the_sender_was_busy_with_other_work_is_not_ranked(tmp_path):
    model, _ = make_report(tmp_path, sender_cpu=FakeCpu(busy=90.0, tool=20.0))
    (sentence,) = [s for s in model.verdict if s.method == "small-packet rate"]
    assert "none ranked" in sentence.text
    assert "not ranked, the sender busy with other load: Card (d) 39,042 frames/s" \
        in sentence.text
    (table,) = [t for t in model.tables_of("verdict") if t.id == "verdict-smallpkt"]
    assert [r[0] for r in table.rows] == ["", ""]


def test_the_small_packet_rows_reach_verdict_csv_with_their_bound(report):
    model, _ = report
    (t,) = [t for t in model.tables if t.family == "verdict-csv"]
    rows = [dict(zip(t.columns, r, strict=True)) for r in t.rows]
    small = {r["adapter"]: r for r in rows if r["verdict_row"] == "highest small-packet rate"}
    assert set(small) == {"Card (d)", "Liar (d)"}
    card, liar = small["Card (d)"], small["Liar (d)"]
    assert card["rank"] == 1 and card["value"] == pytest.approx(39_042, abs=1)
    assert card["unit"] == "frames/s" and card["statistic"].startswith("NDR at 64-byte frames")
    assert card["tool"] == "iperf2" and card["beyond_bound"] == ""
    assert liar["rank"] == "" and float(liar["value"]) > float(liar["bound"])
    assert "above the wire's limit" in liar["beyond_bound"]


def test_an_adapter_at_several_points_is_one_row_of_the_verdict_at_its_best(tmp_path):
    """As the throughput verdict takes an adapter's best point, the small-packet verdict
    ranks each adapter once: its highest NDR within the line rate over its points."""
    model, _ = make_report(tmp_path, mtu="[1500, 9000]")
    (table,) = [t for t in model.tables_of("verdict") if t.id == "verdict-smallpkt"]
    assert [(r[0], r[1]) for r in table.rows] == [(1, "Card (d)"), ("", "Liar (d)")]
    assert table.rows[0][table.columns.index("point")] in ("mtu1500", "mtu9000")
    (t,) = [t for t in model.tables if t.family == "verdict-csv"]
    small = [r for r in t.rows if r[t.columns.index("verdict_row")] ==
             "highest small-packet rate"]
    assert len(small) == 2
