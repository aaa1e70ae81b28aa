"""The line scanner the text parsers share (nicbench/tools/scan.py)."""

from __future__ import annotations

import re

import pytest

from nicbench.errors import ParseError
from nicbench.tools import iperf2, netio
from nicbench.tools.scan import Line, Scanner, lines_of

OUT = ["iperf version 2.1.9", "", "  [  1] 0.00-1.00 sec  1 MBytes  8 Mbits/sec  ",
       "[  1] 0.00-1.00 sec  oops", "trailing words", "", "  "]


def test_lines_are_stripped_numbered_and_blank_ones_skipped():
    assert list(lines_of(OUT)) == [
        Line(1, "iperf version 2.1.9"), Line(3, "[  1] 0.00-1.00 sec  1 MBytes  8 Mbits/sec"),
        Line(4, "[  1] 0.00-1.00 sec  oops"), Line(5, "trailing words")]


def test_the_first_rule_that_takes_a_line_wins_and_false_passes_it_on():
    seen: list[tuple[str, int]] = []
    row = re.compile(r"^\[\s*\d+\]\s+(?P<iv>\S+) sec\s+(?P<rest>.*)$")
    rate = re.compile(r"^\[.*Mbits/sec$")

    def row_with_rate(m: re.Match[str], line: Line) -> bool:
        if "bits/sec" not in m["rest"]:
            return False                  # not this rule's after all: the next one's
        seen.append(("row", line.number))
        return True

    scanner = Scanner([(re.compile(r"^iperf version"), lambda m, ln: seen.append(("v", ln.number))),
                       (row, row_with_rate),
                       (rate, lambda m, ln: seen.append(("rate", ln.number))),
                       (re.compile(r"^\["), lambda m, ln: seen.append(("other row", ln.number)))],
                      otherwise=lambda ln: seen.append(("otherwise", ln.number)))
    assert scanner.scan(OUT) == 5 == scanner.last
    assert seen == [("v", 1), ("row", 3), ("other row", 4), ("otherwise", 5)]


def test_an_empty_output_ends_at_line_0():
    assert Scanner([]).scan(["", "   "]) == 0


def test_the_parsers_say_where_their_input_ended():
    # the line numbers a ParseError names come from the scanner: the last non-blank line
    with pytest.raises(ParseError, match="line 2: end of input"):
        iperf2.parse("------------------------------------------------------------\n"
                     "Client connecting to 198.18.0.2, TCP port 5001\n\n\n")
    with pytest.raises(ParseError, match=r"line 3: 'Packet size  1k bytes: nonsense'"):
        netio.parse("NETIO - Network Throughput Benchmark, Version 1.26\n"
                    "TCP connection established.\nPacket size  1k bytes: nonsense\n")
