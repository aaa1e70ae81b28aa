"""Streams: throughput against iperf's parallel streams, and both directions at once
(``report/streams.py``)."""

from __future__ import annotations

from nicbench.report import streams
from nicbench.report.family import Chart, Context, Family, FamilyName, Part
from nicbench.report.model import ChartKind, Figure, Section, Table


class Streams(Family):
    name = FamilyName.STREAMS
    section = Section("streams", "Streams",
                      "Throughput against parallel streams, and both directions at once")
    charts = (Chart(ChartKind.STREAMS, read="read-streams"),)
    read = (("read-streams",
             "Streams: throughput against iperf's -P, the speed charts' value; with --bidir, "
             "each direction as it reached its receiver, forward (client to server) solid, "
             "reverse dashed, medians over the repetitions the speed charts' value is taken "
             "over, and their sum against twice the goodput limit (a full-duplex link carries "
             "its rate each way)."),)

    def figures(self, ctx: Context) -> list[Figure]:
        return ctx.once(streams.streams_figures)[0]

    def tables(self, ctx: Context) -> list[Table]:
        return ctx.once(streams.streams_figures)[1]

    def shown(self, part: Part) -> bool:
        return bool(part.figures)


FAMILY = Streams()
