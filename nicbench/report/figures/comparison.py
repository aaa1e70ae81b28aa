"""The comparison chart: run against run, each adapter's shift at each test and point.

Its model comes from the comparison table's own rows (``report/compare.py``:
``compare(ix)``), so the bar, the interval and the word are the table's: the bar is the
Hodges-Lehmann shift of B against A as % of A's median, the whisker its 95 % interval
(where the repetitions allow a test), the grey marks the threshold either side, and the
label the verdict. A row above the wire's limit is never judged: no bar, the words
"above the limit, not judged". The HTML report shows these as a table only.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from nicbench.judging.words import MIN_CHANGE_PCT
from nicbench.report import compare
from nicbench.report.configs import Index, point_label, slug
from nicbench.report.model import Row


@dataclass
class Shift:
    row: str                    # Row.key: the B entry
    change_pct: float | None
    low_pct: float | None = None
    high_pct: float | None = None
    threshold_pct: float | None = None
    verdict: str = ""
    above_limit: bool = False
    text: str = ""


@dataclass
class ShiftPanel:
    title: str
    rows: list[Row]
    shifts: list[Shift]
    xlabel: str = "change of B against A, % of A's median"


@dataclass
class ComparisonChart:
    id: str
    family: str
    title: str
    caption: str
    panels: list[ShiftPanel]
    notes: list[str] = field(default_factory=list)


def comparison_charts(ix: Index, min_change_pct: float = MIN_CHANGE_PCT
                      ) -> list[ComparisonChart]:
    """One chart per test, a panel per point, a row per adapter of a later run."""
    rows = compare.compare(ix, min_change_pct)
    by_test: dict[tuple[str, str], dict[tuple[int, str], list[compare.Comparison]]] = \
        defaultdict(lambda: defaultdict(list))
    for c in rows:
        by_test[(c.test, c.figure)][(c.mtu, c.point)].append(c)
    charts = []
    for (test, figure), points in by_test.items():
        panels = []
        for (mtu, point), comps in sorted(points.items()):
            panel = ShiftPanel(title=point_label(point, mtu), rows=[], shifts=[])
            if figure != compare.THROUGHPUT:
                panel.xlabel += " (a round trip: lower is better)"
            for c in comps:
                panel.rows.append(Row(key=c.b.key, label=f"{c.b.label} vs {c.a.run_label}",
                                      colour=c.b.colour, marker=c.b.marker, entry=c.b.key))
                panel.shifts.append(_shift(c))
            panels.append(panel)
        if not any(s.change_pct is not None or s.above_limit
                   for p in panels for s in p.shifts):
            continue            # nothing measured in both runs: the table says why
        charts.append(ComparisonChart(
            id=slug("comparison", test, "" if figure == compare.THROUGHPUT else figure),
            family="comparison",
            title=f"{test}: run against run" if figure == compare.THROUGHPUT else
            f"{test}, {figure}: run against run",
            caption=("The shift of each adapter's later run against its first (Hodges-"
                     "Lehmann, % of A's median) with its 95 % interval, the threshold "
                     "either side in grey, and the comparison's word."),
            panels=panels))
    return charts


def _shift(c: compare.Comparison) -> Shift:
    s = Shift(row=c.b.key, change_pct=c.change_pct, verdict=str(c.verdict),
              threshold_pct=c.pct(c.threshold), above_limit=c.above_limit)
    if c.above_limit:
        s.change_pct = None
        s.text = f"{c.verdict}, not judged"
        return s
    if c.testable:
        s.low_pct, s.high_pct = c.pct(c.ci_low), c.pct(c.ci_high)
    s.text = (f"{s.change_pct:+.2f} % {c.words}" if s.change_pct is not None
              else c.words)
    return s


def draw(chart: ComparisonChart, panel: int, colours):
    """One point's panel: a bar per adapter from 0 (negative: slower), its interval."""
    from matplotlib.transforms import ScaledTranslation, blended_transform_factory

    from nicbench.report.figures.canvas import (DOUBLE, font_pt, handle, line_in, new_figure,
                                               place, row_axis, set_title, size_pt,
                                               text_width_in)
    from nicbench.report.model import LegendItem
    from nicbench.report.figures.style import marker

    p = chart.panels[panel]
    pt = font_pt()
    title_h = line_in(size_pt("axes.titlesize")) + 0.08
    items = [LegendItem("the threshold either side (--min-change, at least the tool's "
                        "printed resolution)", "#8c8c8c", "limit")]
    if any(s.low_pct is not None for s in p.shifts):
        items.append(LegendItem("95 % interval of the shift", "#000000", "whisker"))
    bottom = line_in(pt) * 1.3 + line_in(size_pt("axes.labelsize")) * 1.3 + 0.1 \
        + line_in(size_pt("legend.fontsize")) * 1.25 * len(items)
    mfig = new_figure(DOUBLE, line_in(pt) * max(1, len(p.rows)) + title_h + bottom + 0.1,
                      constrained=False)
    ax = mfig.add_subplot()
    set_title(ax, f"{chart.title}, {p.title}")
    ends = [abs(v) for s in p.shifts
            for v in (s.change_pct, s.low_pct, s.high_pct, s.threshold_pct) if v is not None]
    span = max(ends, default=1.0) * 1.15 or 1.0
    lo_ci, hi_ci, ys = [], [], []
    for i, (r, s) in enumerate(zip(p.rows, p.shifts, strict=True)):
        if s.change_pct is not None:
            (rect,) = ax.barh(i, s.change_pct, height=0.7,
                              color=colours.of(r.entry, r.colour))
            rect.set_gid(f"bar|{r.key}|")
        if s.low_pct is not None and s.high_pct is not None:
            lo_ci.append(s.low_pct)
            hi_ci.append(s.high_pct)
            ys.append(i)
        if s.threshold_pct is not None:
            ax.plot([-s.threshold_pct, s.threshold_pct], [i, i], linestyle="none",
                    marker="|", color="#8c8c8c", markersize=8, gid=f"threshold|{r.key}")
        trans = blended_transform_factory(ax.transAxes, ax.transData) + ScaledTranslation(
            4 / 72, 0, mfig.dpi_scale_trans)
        ax.text(1.0, i, s.text, transform=trans, va="center", ha="left", clip_on=False,
                gid=f"value|{r.key}|")
    if ys:
        ax.errorbar([(a + b) / 2 for a, b in zip(lo_ci, hi_ci, strict=True)], ys,
                    xerr=[(b - a) / 2 for a, b in zip(lo_ci, hi_ci, strict=True)],
                    fmt="none", ecolor="#000000", capsize=2.5, gid="intervals")
    ax.axvline(0, color="#444444", linewidth=0.8)
    ax.set_xlim(-span, span)
    ax.set_ylim(len(p.rows) - 0.5, -0.5)
    ax.set_yticks(range(len(p.rows)), [r.label for r in p.rows])
    row_axis(ax, 11)
    ax.grid(axis="y", visible=False)
    trans = blended_transform_factory(ax.transAxes, ax.transData) + ScaledTranslation(
        -5.5 / 72, 0, mfig.dpi_scale_trans)
    for i, r in enumerate(p.rows):
        ax.plot([0], [i], transform=trans, marker=marker(r.marker),
                color=colours.of(r.entry, r.colour), markersize=4.5, linestyle="none",
                clip_on=False)
    ax.set_xlabel(p.xlabel)
    place(mfig, text_width_in([r.label for r in p.rows], pt) + 15 / 72 + 0.1,
          text_width_in([s.text for s in p.shifts], size_pt("font.size")) + 4 / 72 + 0.05,
          title_h, bottom)
    mfig.legend(handles=[handle(i) for i in items], loc="lower left",
                bbox_to_anchor=(0.01, 0.01), borderaxespad=0, borderpad=0)
    return mfig
