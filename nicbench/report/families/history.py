"""History: each adapter's figure run after run with the points where it changed
(``report/history.py``); the page's only, never a publication figure (its x axis is runs)."""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup

from nicbench.history.model import Series
from nicbench.report import history
from nicbench.report.family import Chart, Context, Family, FamilyName, Part
from nicbench.report.model import (ChartKind, Block, Figure, FigureBlock, LinePanel, Place, Section,
                                   Table, TableBlock, TextBlock)

INTRO = Markup("""Each adapter's figure run after run, for every test and point measured in at least three
runs, with the points where it changed and what differed in the setup there (nicbench history
prints the same, per series).""")


def _series(ctx: Context) -> list[Series]:
    return ctx.keep(_series, lambda: history.of_runs(ctx.ix.runs) if ctx.trend is None
                    else ctx.trend)


def history_rows(fig: Figure) -> tuple[list[str], list[list[object]]]:
    """A trend's data: each run's figure, and what each point is."""
    cols = ["panel", "curve", "run", "mbit_s", "what"]
    return cols, [[p.title, c.label, int(x), round(y, 3), c.titles[k] if c.titles else ""]
                  for p in fig.panels if isinstance(p, LinePanel)
                  for c in p.curves for k, (x, y) in enumerate(c.points)]


class History(Family):
    name = FamilyName.HISTORY
    section = Section("history", "History", "History", place=Place.TOP, intro=INTRO)
    charts = (Chart(ChartKind.HISTORY, rows=history_rows),)
    publishes = False

    def figures(self, ctx: Context) -> list[Figure]:
        series = _series(ctx)
        return history.history_figures(series) if history.shown(series) else []

    def tables(self, ctx: Context) -> list[Table]:
        series = _series(ctx)
        return [history.history_table(series)] if history.shown(series) else []

    def shown(self, part: Part) -> bool:
        return bool(part.figures)

    def blocks(self, part: Part) -> Sequence[Block]:
        out: list[Block] = [FigureBlock(f) for f in part.figures]
        for t in part.tables:
            out.append(TableBlock(t) if t.rows else
                       TextBlock("No change found in these runs' history.", "muted"))
        return out


FAMILY = History()
