"""Rankings as horizontal bars: speed, CPU, netPIPE's plateau, published figures.

One file per panel of the report's figure (a ranking at one point), its rows top to bottom
in the model's order (fastest first; above the wire's limit after, not ranked; gaps last).
What the SVG draws, the same way: the bar (the card's colour; a published figure grey and
hatched), the whisker from the lowest to the highest repetition in the ink that shows on
the bar, the link's goodput limit as a black mark, a bar above the limit outlined dashed
with "!" in its label, a tool's own CPU figure as a diamond, the card's marker in front of
its name, and the label (value and n ok/n, or the gap's word) in a column right of the
plot. Rows are as tall as the style's text, so no two labels touch at any count.
"""

from __future__ import annotations

from collections import defaultdict

from matplotlib.figure import Figure as MplFigure
from matplotlib.transforms import ScaledTranslation, blended_transform_factory

from nicbench.report.colours import PUBLISHED, ink_on
from nicbench.report.figures.canvas import (DOUBLE, font_pt, handle, line_in, new_figure,
                                           place, row_axis, set_title, size_pt,
                                           text_width_in)
from nicbench.report.figures.style import Colours, marker
from nicbench.report.model import BarPanel, BarStatus, Figure, LegendItem, Row

SERIES_ALPHA = {"receiver": 0.5}
LEGEND_COLUMNS = 2      # at a double column's width: the legend a few lines, not a third


def draw(fig: Figure, panel: int, colours: Colours) -> MplFigure:
    p = fig.panels[panel]
    assert isinstance(p, BarPanel)
    pt = font_pt()
    nser = max(1, len(p.series))
    # several bars a row (CPU: sender, receiver) share one row's height and one label
    # ("95 % / 96 %", in the legend's order): a ranking of 50 cards stays one page tall
    pitch = line_in(pt) * (1.0 if nser == 1 else 1.25)
    # a panel drawn alone shows only the marks it has: a latency figure's p90 panel no
    # "wire's minimum" (its limit lines are the p50 panel's), a panel without whiskers none
    has = {"limit": any(b.limit for b in p.bars),
           "whisker": any(b.lo is not None or b.hi is not None for b in p.bars)}
    items = [i for i in fig.legend if has.get(i.shape, True)]
    if p.series:                     # CPU: which bar is which host
        order = ("first", "second", "third", "fourth")
        items = [LegendItem(f"{s.label} (the {order[min(k, 3)]} figure of the label)",
                            "#555555" if s.opacity >= 1 else "#aaaaaa", "bar")
                 for k, s in enumerate(p.series)] + [i for i in items if i.shape != "bar"]
    title_h = line_in(size_pt("axes.titlesize")) + 0.08
    axis_h = line_in(pt) * 1.3 + line_in(size_pt("axes.labelsize")) * 1.3
    ncols = LEGEND_COLUMNS if len(items) > 2 else 1
    legend_h = line_in(size_pt("legend.fontsize")) * 1.25 * -(-len(items) // ncols)
    height = pitch * max(len(p.rows), 1) + title_h + axis_h + legend_h + 0.15
    mfig = new_figure(DOUBLE, height, constrained=False)
    ax = mfig.add_subplot()
    title = fig.title + (f", {p.title}" if p.title else "")
    set_title(ax, title)
    rows_y = {r.key: float(i) for i, r in enumerate(p.rows)}
    keys = [s.key for s in p.series] or [""]
    step = 0.8 / nser
    limits_x, limits_y, marks_x, marks_y = [], [], [], []
    whiskers: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    for r in p.rows:
        for k, skey in enumerate(keys):
            b = p.bar(r.key, skey)
            if b is None:
                continue
            y = rows_y[r.key] - 0.4 + step * (k + 0.5)
            if b.value is None:
                if b.text:
                    ax.text(0, y, " " + b.text, va="center", ha="left", style="italic",
                            color="#555555", gid=f"gap|{r.key}|{skey}")
                continue
            published = b.status is BarStatus.PUBLISHED
            fill = PUBLISHED if published else colours.of(r.entry, b.fill)
            (rect,) = ax.barh(y, b.value, height=step * 0.9, color=fill,
                              alpha=SERIES_ALPHA.get(skey, 1.0),
                              hatch="////" if published else None,
                              edgecolor="#000000" if b.flag else ("#555555" if published
                                                                  else "none"),
                              linestyle="--" if b.flag else "-",
                              linewidth=0.8 if (b.flag or published) else 0)
            rect.set_gid(f"bar|{r.key}|{skey}")
            if b.lo is not None and b.hi is not None:
                ink = ink_on(fill) if SERIES_ALPHA.get(skey, 1.0) >= 1 else "#000000"
                whiskers[ink].append((y, b.lo, b.hi))
            if b.limit is not None:
                limits_x.append(b.limit)
                limits_y.append(y)
            if b.mark is not None:
                marks_x.append(b.mark)
                marks_y.append(y)
            if b.text and nser == 1:
                _value_label(ax, y, b.text, r.key, skey)
        texts = [b.text for k in keys if (b := p.bar(r.key, k)) is not None
                 and b.value is not None and b.text]
        if nser > 1 and texts:
            _value_label(ax, rows_y[r.key], " / ".join(texts), r.key, "")
    for ink, ws in whiskers.items():
        ys = [w[0] for w in ws]
        centre = [(w[1] + w[2]) / 2 for w in ws]
        half = [(w[2] - w[1]) / 2 for w in ws]
        bars_ = ax.errorbar(centre, ys, xerr=half, fmt="none", ecolor=ink, elinewidth=1.0,
                            capsize=2.5, gid=f"whiskers|{ink}")
        for artist in bars_.get_children():     # a whisker or cap at 100 % is drawn whole
            artist.set_clip_on(False)
    bar_pt = pitch * 72 * step * 0.9 + 2
    if limits_x:
        ax.plot(limits_x, limits_y, linestyle="none", marker="|", color="#000000",
                markersize=bar_pt, markeredgewidth=1.6, gid="limits", clip_on=False)
    if marks_x:
        ax.plot(marks_x, marks_y, linestyle="none", marker="D", color="#000000",
                markersize=3.5, gid="tool-cpu", clip_on=False)
    _row_labels(ax, p.rows, colours)
    ax.set_xlim(0, p.xmax or 1.0)
    ax.set_ylim(len(p.rows) - 0.5, -0.5)
    ax.set_xlabel(p.xlabel)
    ax.grid(axis="y", visible=False)
    left = text_width_in([r.label for r in p.rows], pt) + 15 / 72 + 0.1
    right = text_width_in([t.get_text() for t in ax.texts if str(t.get_gid()).startswith("value|")],
                          size_pt("font.size")) + 4 / 72 + 0.05
    place(mfig, left, right, title_h, axis_h + legend_h + 0.1)
    if items:
        mfig.legend(handles=[handle(i) for i in items], loc="lower left",
                    bbox_to_anchor=(0.01, 0.01), borderaxespad=0, borderpad=0, ncols=ncols)
    return mfig


def _value_label(ax, y: float, text: str, row: str, series: str) -> None:
    trans = blended_transform_factory(ax.transAxes, ax.transData) + ScaledTranslation(
        4 / 72, 0, ax.figure.dpi_scale_trans)
    ax.text(1.0, y, text, transform=trans, va="center", ha="left", clip_on=False,
            gid=f"value|{row}|{series}")


def _row_labels(ax, rows: list[Row], colours: Colours) -> None:
    """Each row's name as a tick label, the card's marker between it and the axis."""
    ax.set_yticks(range(len(rows)), [r.label for r in rows])
    row_axis(ax, 11)
    trans = blended_transform_factory(ax.transAxes, ax.transData) + ScaledTranslation(
        -5.5 / 72, 0, ax.figure.dpi_scale_trans)
    for i, r in enumerate(rows):
        colour = PUBLISHED if r.published else colours.of(r.entry, r.colour)
        ax.plot([0], [i], transform=trans, marker=marker(r.marker), color=colour,
                markeredgecolor="#333333" if r.published else colour, markersize=4.5,
                linestyle="none", clip_on=False, gid=f"rowmarker|{r.key}")
