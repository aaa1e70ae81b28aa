"""The report family of the made-up PingPong tool: its figure, its table, its verdict
lines and its section, as a module of ``nicbench/report/families/`` has them."""

from __future__ import annotations

import statistics
from enum import StrEnum

from nicbench.report.family import Chart, Context, Family, VerdictPart
from nicbench.report.model import (Bar, BarPanel, Entry, Figure, Row, Section, Sentence,
                                   Table)
from nicbench.report.verdict import csv_row

from .pingpong_tool import NAME


class MadeUp(StrEnum):
    PINGPONG = "pingpong"


def medians(ctx: Context) -> list[tuple[Entry, float, int]]:
    """(entry, median round trip in us, repetitions) per entry, lowest first."""
    out = []
    for e in ctx.ix.entries:
        run = ctx.ix.runs[e.run_index]
        rtts = [r.latency.p50_us for r in run.records
                if r.tool == NAME and r.pair == e.pair and r.ok and r.latency is not None]
        if rtts:
            out.append((e, statistics.median(rtts), len(rtts)))
    return sorted(out, key=lambda m: m[1])


class PingPong(Family):
    name = MadeUp.PINGPONG
    section = Section("pingpong", "PingPong", "PingPong round trips",
                      absent="PingPong round trips")
    charts = (Chart("pingpong", read="read-pingpong", bar_unit="us"),)
    read = (("read-pingpong", "PingPong: the median round trip over the repetitions."),)

    def figures(self, ctx: Context) -> list[Figure]:
        rows = medians(ctx)
        if not rows:
            return []
        panel = BarPanel(title="", xlabel="median round trip, us",
                         rows=[Row(e.key, e.label, e.colour, e.marker, entry=e.key)
                               for e, _, _ in rows],
                         bars=[Bar(e.key, value=v, n_ok=n, n=n, text=f"{v:.1f} us",
                                   fill=e.colour) for e, v, n in rows],
                         xmax=max(v for _, v, _ in rows) * 1.2)
        return [Figure(id="pingpong", family="pingpong", title="PingPong round trips",
                       caption="Median round trip per adapter, lowest first.",
                       panels=[panel], entries=[e.key for e, _, _ in rows])]

    def tables(self, ctx: Context) -> list[Table]:
        rows = medians(ctx)
        if not rows:
            return []
        return [Table(id="pingpong", family="pingpong", title="PingPong round trips",
                      columns=["adapter", "median round trip, us", "repetitions"],
                      rows=[[e.label, round(v, 3), n] for e, v, n in rows],
                      row_entries=[e.key for e, _, _ in rows])]

    def verdict(self, ctx: Context) -> VerdictPart:
        rows = medians(ctx)
        if not rows:
            return VerdictPart()
        table = Table(id="verdict-pingpong", family="verdict",
                      title="PingPong: lowest round trip",
                      columns=["rank", "adapter", "us"],
                      rows=[[k + 1, e.label, round(v, 3)] for k, (e, v, _) in enumerate(rows)],
                      row_entries=[e.key for e, _, _ in rows])
        best = rows[0][0]
        return VerdictPart.of_tables(
            [Sentence("pingpong", f"Lowest PingPong round trip: {best.label}.")], [table],
            [csv_row(adapter=e.label, adapter_id=e.adapter, test="pingpong", tool=NAME,
                     rank=k + 1, figure=f"median round trip {v:.3f} us")
             for k, (e, v, _) in enumerate(rows)])


FAMILY = PingPong()
