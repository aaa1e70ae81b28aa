"""Small packets: frames per second against frame size, the NDR/PDR table and the
verdict of the highest small-packet rate (``report/smallpkt.py``)."""

from __future__ import annotations

from nicbench.report import smallpkt
from nicbench.report.family import Chart, Context, Family, FamilyName, Part, VerdictPart
from nicbench.report.model import ChartKind, Figure, Section, Table


class SmallPackets(Family):
    name = FamilyName.SMALLPKT
    section = Section("smallpkt", "Small packets",
                      "Small packets: frames per second against frame size")
    charts = (Chart(ChartKind.SMALLPKT, panel_legends=False, log_y=True),)

    def figures(self, ctx: Context) -> list[Figure]:
        return smallpkt.figures(ctx.ix)

    def tables(self, ctx: Context) -> list[Table]:
        return smallpkt.table(ctx.ix)

    def verdict(self, ctx: Context) -> VerdictPart:
        sentences, tables = smallpkt.verdict(ctx.ix)
        return VerdictPart.of_tables(sentences, tables, smallpkt.verdict_csv_rows(ctx.ix))

    def shown(self, part: Part) -> bool:
        return bool(part.figures)


FAMILY = SmallPackets()
