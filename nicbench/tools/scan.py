"""One line scanner for the tools' text outputs (iperf 2, iperf3, iperf 2's bounce-back,
netio): each parser says which lines it reads, and what it does with each, as rules; the
scanner walks the output once.

A line is read stripped, blank lines skipped, numbered from 1 as an editor numbers them
(the numbers a ParseError names). The rules are tried in order and the first whose
pattern matches the line and whose handler takes it wins: a handler that returns
``False`` passes the line on to the next rule (a row that matches a row's pattern but
not the rest a mode needs). A line no rule takes goes to ``otherwise``, if given.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple


class Line(NamedTuple):
    number: int
    text: str          # stripped


# What a rule does with a line its pattern matched; False: not taken after all.
Handler = Callable[[re.Match[str], Line], "bool | None"]
Rule = tuple[re.Pattern[str], Handler]


def lines_of(lines: Iterable[str]) -> Iterable[Line]:
    """The non-blank lines of an output, stripped and numbered."""
    for number, raw in enumerate(lines, 1):
        text = raw.strip()
        if text:
            yield Line(number, text)


class Scanner:
    """Rules in order, and what becomes of a line none of them takes."""

    def __init__(self, rules: Sequence[Rule],
                 otherwise: Callable[[Line], None] | None = None):
        self.rules = tuple(rules)
        self.otherwise = otherwise
        self.last = 0          # the number of the last non-blank line read

    def scan(self, lines: Iterable[str]) -> int:
        """Every line through the rules; the number of the last non-blank one (0: none),
        where "end of input" is said to be."""
        for line in lines_of(lines):
            self.last = line.number
            for pattern, handle in self.rules:
                m = pattern.match(line.text)
                if m is not None and handle(m, line) is not False:
                    break
            else:
                if self.otherwise is not None:
                    self.otherwise(line)
        return self.last
