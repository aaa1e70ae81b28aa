"""Which files the figures are: one unit per file, each drawn once, and its data as rows.

A unit is a figure model of the report (``report/model.py``) and, for the rankings
(the charts whose family says ``Chart.file_per_panel``: speed, CPU, netPIPE's plateau,
published figures; and the comparison), one of its panels: the reviews printed one
ranking per MTU, and one file per MTU is what an article places; the other charts are
one file per figure (a netPIPE chart per adapter or per MTU, the
heatmap, speed against CPU with its MTUs side by side). The file's stem is the report's
figure id, followed by the point's for a panel: ``speed-iperf3-tcp-mtu-9000``,
``netpipe-gbe``. ``figures.csv`` holds what each file plots, one row
per bar, cell, curve point or dot, with the colour it is drawn in.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from nicbench.report.configs import slug
from nicbench.report.families import chart
from nicbench.report.figures.comparison import ComparisonChart
from nicbench.report.figures.style import Colours
from nicbench.report.model import BarPanel, Figure, HeatPanel, LinePanel, ScatterPanel

CSV_COLUMNS = ["file", "figure", "family", "panel", "label", "series", "x", "x_unit",
               "value", "unit", "low", "high", "limit", "above_limit", "text", "colour"]


@dataclass
class Unit:
    """One file: a figure (or one of its panels) of the report, or a comparison chart."""

    stem: str
    family: str
    figure: Figure | ComparisonChart
    panel: int | None = None           # None: every panel of the figure

    @property
    def title(self) -> str:
        title = self.figure.title
        if self.panel is not None and self.figure.panels[self.panel].title:
            title += f", {self.figure.panels[self.panel].title}"
        return title

    def panels(self) -> list:
        panels = list(self.figure.panels)
        return panels if self.panel is None else [panels[self.panel]]

    def cost(self) -> int:
        """A rough count of the artists to draw, to hand the biggest out first."""
        n = 0
        for p in self.panels():
            if isinstance(p, LinePanel):
                n += sum(len(c.points) for c in p.curves) // 4 + 10 * len(p.curves)
            elif isinstance(p, HeatPanel):
                n += len(p.rows) * (len(p.columns) + 1)
            elif isinstance(p, ScatterPanel):
                n += len(p.dots)
            else:
                n += 2 * len(p.rows)
        return n + 30


def units(figures: list[Figure], comparisons: list[ComparisonChart]) -> list[Unit]:
    """The files of ``figures`` (the families' that publish: ``Report.publication``) and
    of the comparison's charts; a chart its family calls a ranking per point
    (``Chart.file_per_panel``) is one file per panel."""
    out: list[Unit] = []
    for f in (replace(f, svg="") for f in figures):
        if chart(f.family).file_per_panel and len(f.panels) > 1:
            for k, p in enumerate(f.panels):
                out.append(Unit(f"{f.id}-{slug(p.title) if p.title else k}", f.family, f, k))
        else:
            out.append(Unit(f.id, f.family, f))
    for c in comparisons:
        for k, sp in enumerate(c.panels):
            out.append(Unit(f"{c.id}-{slug(sp.title)}", "comparison", c, k))
    stems = [u.stem for u in out]
    dupes = {s for s in stems if stems.count(s) > 1}
    for u in out:               # never two files of one name: the panel's index tells apart
        if u.stem in dupes:
            u.stem += f"-{u.panel if u.panel is not None else 0}"
    return out


def rows_of(unit: Unit, colours: Colours) -> list[list[object]]:
    """What ``unit`` plots, in ``CSV_COLUMNS``."""
    from nicbench.report.figures.comparison import ShiftPanel

    rows: list[list[object]] = []
    fig = unit.figure
    facts = chart(unit.family)

    def add(panel: str, label: str, series: str, x: object, x_unit: str, value: object,
            unit_name: str, low: object = None, high: object = None, limit: object = None,
            above: bool = False, text: str = "", colour: str = "") -> None:
        rows.append([unit.stem, fig.id, unit.family, panel, label, series, x, x_unit, value,
                     unit_name, low, high, limit, "yes" if above else "", text, colour])

    for p in unit.panels():
        if isinstance(p, BarPanel):
            names = {r.key: r for r in p.rows}
            unit_name = facts.bar_unit
            for b in p.bars:
                r = names[b.row]
                add(p.title, r.label, b.series, None, "", b.value, unit_name, b.lo, b.hi,
                    b.limit, bool(b.flag), b.text or b.gap, colours.of(r.entry, b.fill))
        elif isinstance(p, HeatPanel):
            for r, line in zip(p.rows, p.cells, strict=False):
                for col, c in zip(p.columns, line, strict=False):
                    add(col, r.label, "", None, "", c.value, p.unit,
                        text=c.text or c.gap, above=c.text.startswith("!"), colour=c.fill)
        elif isinstance(p, LinePanel):
            for cv in p.curves:
                flagged = set(cv.flagged)
                colour = colours.of(cv.entry, cv.colour) if facts.card_colours else cv.colour
                for x, y in cv.points:
                    if facts.point_units is not None:    # e.g. round trip (us) -> share
                        add(p.title, cv.label, "", x, facts.point_units[0], y,
                            facts.point_units[1], colour=colour)
                        continue
                    add(p.title, cv.label, "", int(x), p.xunit, y, p.yunit,
                        above=(x, y) in flagged, colour=colour)
        elif isinstance(p, ScatterPanel):
            for d in p.dots:
                add(p.title, d.label, "", d.x, "% CPU", d.y, "Mbit/s",
                    colour=colours.of(d.entry, d.colour))
        elif isinstance(p, ShiftPanel):
            names = {r.key: r for r in p.rows}
            for s in p.shifts:
                r = names[s.row]
                add(p.title, r.label, "", None, "", s.change_pct, "% of A's median",
                    s.low_pct, s.high_pct, s.threshold_pct, s.above_limit, s.text,
                    colours.of(r.entry, r.colour))
    return rows
