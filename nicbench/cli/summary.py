"""The summary ``nicbench run`` prints at its end, fitted to the terminal.

One line per configuration: where (pair, point, test), the tool, the figure with the
statistic it is (best, median, ...), its spread over the repetitions (highest minus
lowest, in the figure's unit) and n (repetitions that measured / that ran). Those columns
are always there; a wider terminal gets more (status, median, CPU of both hosts, the
tool's own CPU); an 80-column one drops them, and only then shortens the configuration's
name, never the tool's or a figure. Not on a terminal (a log, a pipe) every column is
printed: nothing limits the width there.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from nicbench.results.summary import SummaryRow
from nicbench.tools.registry import display_name

GAP = 2
MIN_WHERE = 12          # the configuration's name is never cut below this


@dataclass(frozen=True)
class Column:
    header: str
    right: bool = False          # numbers: right-aligned
    optional: int = 0            # 0: always shown; else dropped first from the highest


def terminal_width() -> int:
    """The terminal's columns (COLUMNS first, then the terminal itself; 80 without)."""
    return shutil.get_terminal_size((80, 24)).columns


def _num(value: float | None, scale: float = 1.0, digits: int = 1) -> str:
    return "-" if value is None or value != value else f"{value / scale:.{digits}f}"


RATE = [Column("configuration"), Column("tool"), Column("Mbit/s", True), Column("of"),
        Column("spread", True), Column("n", True), Column("status", optional=4),
        Column("median", True, optional=3), Column("CPU snd %", True, optional=2),
        Column("CPU rcv %", True, optional=2), Column("tool CPU %", True, optional=1)]
LATENCY = [Column("configuration"), Column("tool"), Column("p50 us", True), Column("of"),
           Column("spread", True), Column("n", True), Column("round trips", True, optional=1),
           Column("status", optional=4), Column("p90 us", True, optional=3),
           Column("p99 us", True, optional=3), Column("p99.9 us", True, optional=2)]
# (selected, median) bit/s of a curve configuration: netPIPE's plateau, as the report's
Plateaus = Mapping[tuple[str, str, str], tuple[float | None, float | None]]


def _where(r: SummaryRow) -> str:
    return f"{r.pair} {r.point} {r.test}"


def _n(r: SummaryRow) -> str:
    return f"{r.n_ok}/{r.n_ok + r.n_failed}"


def rate_rows(rows: Sequence[SummaryRow], plateaus: Plateaus | None = None
              ) -> list[list[str]]:
    """A rate per configuration; a curve's (netPIPE) its plateau, as the report gives it
    (the summary's own figure is the curve's burst maximum), marked "plateau"."""
    out = []
    for r in rows:
        spread = (r.max_bps - r.min_bps) if r.max_bps is not None and r.min_bps is not None \
            else None
        selected, median, of = r.selected_bps, r.median_bps, r.select
        flat = (plateaus or {}).get((r.pair, r.point, r.test))
        if flat is not None:
            (selected, median), of, spread = flat, f"{r.select} plateau", None
        figure = _num(selected, 1e6) if selected is not None else r.status.value
        out.append([_where(r), display_name(r.tool), figure, of,
                    _num(spread, 1e6) if r.n_ok > 1 else "-", _n(r), r.status.value,
                    _num(median, 1e6), _num(r.cpu_local_pct, digits=0),
                    _num(r.cpu_remote_pct, digits=0), _num(r.cpu_tool_pct, digits=0)])
    return out


def latency_rows(rows: Sequence[SummaryRow]) -> list[list[str]]:
    out = []
    for r in rows:
        spread = (r.p50_max_us - r.p50_min_us) if r.p50_max_us is not None \
            and r.p50_min_us is not None else None
        p50, p90, p99, p999 = percentile_cells(r)
        out.append([_where(r), display_name(r.tool), p50, r.select if r.pooled is None
                    else "pooled", _num(spread) if r.n_ok > 1 else "-", _n(r),
                    f"{r.latency_samples or 0:,}", r.status.value, p90, p99, p999])
    return out


def percentile_cells(r: SummaryRow) -> list[str]:
    """A latency row's p50 ... p99.9 as the report gives them: pooled over every
    repetition's round trips ("-" with fewer than 10 beyond it; a histogram's bin as a
    range), else the repetitions' statistic."""
    if r.pooled is None:
        return [_num(v) for v in (r.p50_us, r.p90_us, r.p99_us, r.p999_us)]
    return [pc.figure() if pc.printed else "-" for pc in r.pooled.percentiles.values()]


def fit(columns: Sequence[Column], rows: Sequence[Sequence[str]],
        width: int | None) -> list[str]:
    """The table as lines no wider than ``width`` (None: every column, any width)."""
    keep = list(range(len(columns)))
    widths = [max([len(columns[i].header)] + [len(r[i]) for r in rows]) for i in keep]

    def total(cols: list[int]) -> int:
        return sum(widths[i] for i in cols) + GAP * (len(cols) - 1)

    if width is not None:
        for level in sorted({c.optional for c in columns if c.optional}):
            if total(keep) <= width:
                break
            keep = [i for i in keep if columns[i].optional == 0 or columns[i].optional > level]
        over = total(keep) - width
        if over > 0:
            widths[0] = max(MIN_WHERE, widths[0] - over)

    def cell(i: int, text: str) -> str:
        w = widths[i]
        if len(text) > w:
            text = text[:w - 1] + "…"
        return text.rjust(w) if columns[i].right else text.ljust(w)

    lines = [(" " * GAP).join(cell(i, columns[i].header) for i in keep).rstrip()]
    lines += [(" " * GAP).join(cell(i, r[i]) for i in keep).rstrip() for r in rows]
    return lines


def summary_lines(rows: Sequence[SummaryRow], width: int | None,
                  plateaus: Plateaus | None = None) -> list[str]:
    """The run's summary: its rates, then its round trips, each fitted to ``width``."""
    rates = [r for r in rows if r.p50_us is None]
    trips = [r for r in rows if r.p50_us is not None]
    lines: list[str] = []
    if rates or not rows:
        lines += fit(RATE, rate_rows(rates, plateaus), width)
    if trips:
        if lines:
            lines += ["", "round trips, us, every repetition's pooled ('-': too few):"]
        lines += fit(LATENCY, latency_rows(trips), width)
    if rates:
        lines += ["", "of: statistic over the repetitions; spread: highest - lowest; "
                  "n: measured/ran"]
    if trips:
        lines += ["round trips: '-' where under 10 lie beyond it; a-b: a histogram's bin"]
    return lines
