"""nicbench.display: names shown as text (control and bidi characters visible, huge names
shortened), CSV cells no spreadsheet runs as formulas; and the console, which prints
every line through it."""

from __future__ import annotations

import csv
import tracemalloc

import pytest

from nicbench.cli import console
from nicbench.display import ELLIPSIS, MAX_NAME, csv_cell, shown, visible
from nicbench.results.summary import write_csv


@pytest.mark.parametrize("raw, seen", [
    ("LX-1000 Gigabit (veth tbf-1g)", "LX-1000 Gigabit (veth tbf-1g)"),
    ("Intel® PRO/1000 – Gigabit", "Intel® PRO/1000 – Gigabit"),     # printable: as it is
    ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
    ("abc\u202edef", "abc\\u202edef"),                  # right-to-left override
    ("a\u2066b\u2069c\u200bd", "a\\u2066b\\u2069c\\u200bd"),   # isolates, zero width
    ("ok\rfake", "ok\\x0dfake"),
    ("nul\x00\x7f\x9b", "nul\\x00\\x7f\\x9b"),          # C1 CSI too
    ("line\u2028sep", "line\\u2028sep"),
    ("lone \udc80 surrogate", "lone \\udc80 surrogate"),
])
def test_control_bidi_and_surrogate_characters_are_made_visible(raw, seen):
    assert visible(raw) == seen
    assert shown(raw) == seen


def test_newlines_can_be_kept_for_multi_line_text():
    assert visible("a\x1b\nb\tc", "\n") == "a\\x1b\nb\\x09c"
    assert visible("a\nb\tc", "\n\t") == "a\nb\tc"


def test_a_huge_name_is_shortened_without_reading_it_all():
    name = "W" * 200_000
    tracemalloc.start()
    out = shown(name)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert out == "W" * (MAX_NAME - 1) + ELLIPSIS
    assert peak < 10_000                    # the first MAX_NAME characters only
    assert shown("\x1b" * 200) == "\\x1b" * 24 + "\\x1" + ELLIPSIS   # escapes count too
    assert len(shown("x" * 50, limit=10)) == 10
    assert shown("x" * MAX_NAME) == "x" * MAX_NAME      # at the limit: whole
    assert shown(None) == ""


@pytest.mark.parametrize("value, cell", [
    ("=1+1", "'=1+1"), ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
    ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"), ("@SUM(A1)", "'@SUM(A1)"),
    ("\t=1", "'\t=1"), ("\r=1", "'\r=1"), ("=HYPERLINK(\"x\")", "'=HYPERLINK(\"x\")"),
    # genuine numbers stay numbers, written or as text
    (-3.5, -3.5), (-12, -12), ("-3.5", "-3.5"), ("+1.5 %", "+1.5 %"), ("-1e-3", "-1e-3"),
    ("-", "-"), ("plain", "plain"), (None, ""), ("", ""),
    ("bad \udc80", "bad \\udc80"), ("=\udc80", "'=\\udc80"),     # no UTF-8 for a surrogate
])
def test_a_cell_that_would_start_a_formula_gets_an_apostrophe(value, cell):
    assert csv_cell(value) == cell


def test_every_csv_the_report_writes_neutralises_formulas(tmp_path):
    path = tmp_path / "verdict.csv"
    write_csv(path, ["adapter", "change_pct", "note"],
              [["=cmd()", -4.25, "-4.25"], ["@x", 3, "+x"]])
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[1:] == [["'=cmd()", "-4.25", "-4.25"], ["'@x", "3", "'+x"]]
    assert [p.name for p in tmp_path.iterdir()] == ["verdict.csv"]     # no temporary file


def test_the_console_prints_names_with_their_escapes_visible(capsys):
    console.out("adapter \x1b[2J\u202eevil\nnext line")
    console.warn("bad \x1b]0;title\x07")
    console.table(["adapter", "n"], [["\x1b[31mred\u202e", 1], ["[bold]x[/]", None]])
    got = capsys.readouterr()
    assert "\x1b" not in got.out + got.err and "\u202e" not in got.out + got.err
    assert got.out.startswith("adapter \\x1b[2J\\u202eevil\nnext line\n")
    assert "\\x1b[31mred\\u202e" in got.out and "[bold]x[/]" in got.out
    assert got.err == "nicbench: warning: bad \\x1b]0;title\\x07\n"

