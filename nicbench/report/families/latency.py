"""Request/response latency: round-trip percentiles per adapter and point, their
distribution, and the verdict of the lowest tail latency (``report/latency.py``)."""

from __future__ import annotations

from collections.abc import Sequence

from nicbench.report import latency
from nicbench.report.family import (Chart, Context, Family, FamilyName, Part, VerdictPart,
                                    figures_of, tables_of)
from nicbench.report.model import (ChartKind, Block, Figure, FigureBlock, Section, Table, TableBlock,
                                   TextBlock)


class Latency(Family):
    name = FamilyName.LATENCY
    section = Section("latency", "Latency", "Request/response latency",
                      absent="request/response latency (sockperf)")
    charts = (Chart(ChartKind.LATENCY, file_per_panel=True, bar_unit="us"),
              Chart(ChartKind.LATENCY_CDF, point_units=("us", "fraction")))

    def figures(self, ctx: Context) -> list[Figure]:
        return ctx.once(latency.figures)[0]

    def tables(self, ctx: Context) -> list[Table]:
        return ctx.once(latency.figures)[1]

    def verdict(self, ctx: Context) -> VerdictPart:
        sentences, tables = latency.verdict(ctx.ix)
        return VerdictPart.of_tables(sentences, tables, latency.verdict_csv_rows(ctx.ix))

    def blocks(self, part: Part) -> Sequence[Block]:
        bars = figures_of(part, ChartKind.LATENCY)
        out: list[Block] = [FigureBlock(f) for f in bars + figures_of(part, ChartKind.LATENCY_CDF)]
        out += [TableBlock(t) for t in tables_of(part, "latency")]
        if not bars:
            out.append(TextBlock("No latency (sockperf) results in these runs.", "muted"))
        return out


FAMILY = Latency()
