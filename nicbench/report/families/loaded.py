"""Latency under load: the same probe alone and beside a load, its increase, the score
in round trips per minute, and the verdict of the smallest increase (``report/loaded.py``)."""

from __future__ import annotations

from markupsafe import Markup

from nicbench.report import loaded
from nicbench.report.family import Chart, Context, Family, FamilyName, Part, VerdictPart
from nicbench.report.model import ChartKind, Figure, Section, Table

INTRO = Markup("""The same latency probe alone and beside a load that fills the link, from the same run:
round trips in ms, their increase under load, the responsiveness score in round trips per
minute (RPM: 60000 / the 95 % trimmed mean of the round trips in ms, after
draft-ietf-ippm-responsiveness-08 section 5.3.1) and the load's own throughput, so that a
card whose latency stays low only because it does not fill the link shows it.""")


class Loaded(Family):
    name = FamilyName.LOADED
    section = Section("under-load", "Under load", "Latency under load", intro=INTRO)
    charts = (Chart(ChartKind.LOADED, bar_unit="ms"),)
    label_col = 1       # the adapter, after its rank

    def figures(self, ctx: Context) -> list[Figure]:
        return [loaded.loaded_figure(test, rows)
                for test, rows in ctx.once(loaded.loaded_rows).items()]

    def tables(self, ctx: Context) -> list[Table]:
        return [loaded.loaded_table(test, rows)
                for test, rows in ctx.once(loaded.loaded_rows).items()]

    def verdict(self, ctx: Context) -> VerdictPart:
        under = ctx.once(loaded.loaded_rows)
        return VerdictPart.of_tables(
            [loaded.sentence(t, rows) for t, rows in under.items()],
            [loaded.verdict_table(t, rows) for t, rows in under.items()],
            [row for t, rows in under.items() for row in loaded.verdict_csv_rows(t, rows)])

    def shown(self, part: Part) -> bool:
        return bool(part.tables)


FAMILY = Loaded()
