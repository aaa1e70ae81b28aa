"""Published figures: a review's printed figures (``--reference``) beside the runs' own
(``report/reference.py``)."""

from __future__ import annotations

from nicbench.report.family import Chart, Context, Family, FamilyName, Part
from nicbench.report.model import ChartKind, Figure, Section, Table
from nicbench.report.reference import reference_figures


class Published(Family):
    name = FamilyName.PUBLISHED
    section = Section("published", "Published figures", "Published figures")
    charts = (Chart(ChartKind.PUBLISHED, file_per_panel=True),)

    def _made(self, ctx: Context) -> tuple[list[Figure], list[Table]]:
        if ctx.reference is None:
            return [], []
        reference = ctx.reference
        figs, table = ctx.keep(Published, lambda: reference_figures(ctx.ix, reference))
        return figs, [table]

    def figures(self, ctx: Context) -> list[Figure]:
        return self._made(ctx)[0]

    def tables(self, ctx: Context) -> list[Table]:
        return self._made(ctx)[1]

    def shown(self, part: Part) -> bool:
        return bool(part.figures)


FAMILY = Published()
