"""What the CLI prints: lines, tables, progress and error lines.

On a terminal, tables and the progress of a run are drawn with rich; when the output is
not a terminal (a log of an overnight run, a pipe, a test), the same information comes as
plain lines, one per event, so logs stay greppable.

Every line goes through :func:`nicbench.display.visible`: a name from a results file
with ESC (a terminal's control sequences), CR or a right-to-left override in it is
printed with those characters as escapes (``\x1b``, ``\u202e``), never raw; and a table
cell is plain text to rich, never its markup (``[red]``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from nicbench.display import visible


def out(text: str = "") -> None:
    print(visible(text, "\n"), flush=True)


def warn(text: str) -> None:
    print(f"nicbench: warning: {visible(text, chr(10))}", file=sys.stderr, flush=True)


def problem(text: str) -> None:
    print(f"nicbench: problem: {visible(text, chr(10))}", file=sys.stderr, flush=True)


def error(text: str) -> None:
    print(f"nicbench: error: {visible(text, chr(10))}", file=sys.stderr, flush=True)


def is_terminal() -> bool:
    return sys.stdout.isatty()


def plain_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [[visible(str(h)) for h in headers]] + [[cell(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """A table: rich's on a terminal, aligned plain text otherwise."""
    if not is_terminal():
        out(plain_table(headers, rows))
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    t = Table(*headers, box=None, header_style="bold", pad_edge=False)
    for row in rows:
        t.add_row(*(Text(cell(c)) for c in row))       # Text: a "[red]" in a name is text
    Console().print(t)


def cell(value: object) -> str:
    """A table cell as printed: "" for None, control and bidi characters visible."""
    return "" if value is None else visible(str(value))


def mbit(bps: float | None) -> str:
    return "-" if bps is None or bps != bps else f"{bps / 1e6:.1f}"


