"""A report a reviewer reads in a minute (issue 31), on the committed runs: the verdict's
first screen from the verdict's own rows, short captions, empty sections left out and named
once, CSV figures written as plain numbers, chart files named as a reader would. The
browser measures (words, widths, pages) are in test_report_browser.py."""

from __future__ import annotations

import csv
import re

import pytest
from conftest import DATA, write_report

from nicbench.report.page import plain_numbers


@pytest.fixture(scope="module")
def roundup(tmp_path_factory):
    return write_report(tmp_path_factory.mktemp("roundup"), [DATA / "roundup"])


@pytest.fixture(scope="module")
def modern(tmp_path_factory):
    return write_report(tmp_path_factory.mktemp("modern"), [DATA / "modern"])


def test_the_first_screen_is_one_row_per_method_from_the_verdicts_rows(roundup):
    report, _ = roundup
    g = report.glance
    assert g is not None
    ranked = {t.title: t for t in report.tables_of("verdict")}
    assert [r.method for r in g.rows] == list(ranked)
    for row in g.rows:
        t = ranked[row.method]
        top = t.rows[0]
        if top[0] == "":          # a link the method could not rank: no card crowned
            assert row.fastest == "" and any(n.startswith(row.method) for n in g.notes)
            continue
        firsts = [r[1] for r in t.rows if r[0] == top[0]]
        assert str(top[0]).removesuffix(" (tied)") == "1"
        assert row.fastest == " = ".join(firsts) + (" (tied)" if len(firsts) > 1 else "")
        assert row.figure == f"{top[2]} Mbit/s" and row.at == top[3]
        assert row.limit_pct == top[5]
        # the CPU is shown only where it ranks (no footnote letter in the ranking)
        assert (row.cpu != "") == (not re.search(r" [a-z]$", top[8]) and top[8] != "")
    # netPIPE at MTU 1500-9000 on the gbe card is above the wire's limit: named, not ranked
    gbe = {label: what for _, label, what in g.unmeasured}["LX-1000 Gigabit (veth tbf-1g)"]
    assert "above the limit at MTU 1500, 6000, 9000, not ranked (netPIPE TCP)" in gbe
    fe = {label: what for _, label, what in g.unmeasured}["LX-100 Fast Ethernet (macvlan fe-100m)"]
    # all methods: said once; its netPIPE plateau at 1500 is above the limit by the
    # bound's rule (more than netPIPE's resolution and timing error): named, not ranked
    assert fe.startswith("refused at MTU 6000, 9000, 16000; ")
    assert fe.count("refused") == 1


def test_each_reason_not_to_rank_is_a_note_written_once_per_table(roundup):
    report, _ = roundup
    for t in report.tables_of("verdict"):
        reasons = [n.split(": ", 1)[1] for n in t.notes]
        assert len(reasons) == len(set(reasons))
        marks = {n.split(": ", 1)[0] for n in t.notes}
        used = {m for r in t.rows for c in r if isinstance(c, str)
                for m in re.findall(r" !?([a-z])$", c)}
        assert used == marks
        # the repetitions and IQR sit in the hover and the CSV, not in the cells
        assert "CPU repetitions" in t.csv_columns and "CPU repetitions" not in t.columns
        assert any("repetition" in h for hs in t.hover for h in hs)


def test_captions_are_short_and_empty_sections_are_named_once(roundup, modern):
    for report, page in (roundup, modern):
        for f in report.figures:
            assert len(f.caption.split()) + len(f.title.split()) <= 75, (f.id, f.caption)
        text = page.read_text(encoding="utf-8")
        assert text.count("the lab the hosts are namespaces of one machine") <= 1
    _, page = roundup
    text = page.read_text(encoding="utf-8")
    assert 'id="latency"' not in text and 'id="size-tables"' not in text
    assert "Nothing in these runs for: request/response latency" in text


def test_chart_files_are_named_as_a_reader_would(roundup):
    report, _ = roundup
    ids = {f.id for f in report.figures}
    assert {"netpipe-mtu1500", "netpipe-mtu16000", "netpipe-gbe", "netpipe-fe"} <= ids
    assert not [i for i in ids if re.search(r"mtu-(\d+)-mtu\1|adapter-\d", i)]


def test_csv_numbers_are_plain(modern):
    report, page = modern
    grouped = re.compile(r"^!?\s*\d{1,3}(,\d{3})+")
    seen = 0
    for path in (page.parent / "tables").glob("*.csv"):
        with path.open(newline="", encoding="utf-8") as fh:
            for row in csv.reader(fh):
                bad = [c for c in row if grouped.match(c)]
                assert not bad, (path.name, bad)
                seen += 1
    assert seen > 100
    # the page still groups them for the eye (the small-packet table)
    assert any(isinstance(c, str) and grouped.match(c) for t in report.tables_of("verdict")
               for r in t.rows for c in r)


def test_plain_numbers_leaves_lists_of_repetitions_alone():
    rows = plain_numbers(["a", "cpu_repetitions", "b"],
                         [["89,248", "100,101,102", "! 1,488,095 (sender busy)"],
                          ["1,234.5", "3", "1, 2"]])
    assert rows == [[89248, "100,101,102", "! 1488095 (sender busy)"],
                    [1234.5, "3", "1, 2"]]


def test_latency_panels_never_cut_a_cards_name(modern):
    """Side by side, the percentile panels cut "LX-1000 Gigabit (veth tbf-1g)" to
    "LX-1000 Giga…": a bar figure whose names would be cut is one panel a row instead."""
    from html import escape

    report, _ = modern
    figs = report.figures_of("latency")
    assert figs
    for f in figs:
        labels = {report.entry(k).label for k in f.entries}
        assert labels
        for label in labels:
            assert f">{escape(label, quote=False)}<title>" in f.svg, (f.id, label)
