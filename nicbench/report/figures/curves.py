"""netPIPE's curves: throughput against block size, per adapter (a curve per MTU) and per
MTU (a curve per adapter, in small multiples of the report's size).

The report's model says it all: the curves' points (selected over the repetitions), their
colours and markers (an MTU's from the MTU scale, a card's from its id), the references
(the link's goodput limit dashed, the line rate dotted), the band above the limit where a
curve has points above it, and the axis's top. The x axis is log 2 with ticks in bytes
(1K, 64K, 1M) as the report writes them.
"""

from __future__ import annotations

import math

from matplotlib.figure import Figure as MplFigure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator
from matplotlib.transforms import ScaledTranslation, blended_transform_factory

from nicbench.report.colours import REFERENCE
from nicbench.report.families import chart
from nicbench.report.figures.canvas import (DOUBLE, FLAG_BAND, SINGLE, add_legend, font_pt,
                                           handle, line_in, new_figure, place, set_title,
                                           size_pt, text_width_in, wrap)
from nicbench.report.figures.style import Colours, dash, marker
from nicbench.report.model import Figure, LegendItem, LinePanel
from nicbench.report.svg import size_text

PLOT_IN = 1.9           # height of one panel's plot
LIMIT_DASH = "6 3"      # the model's goodput limit line (the line rate: "2 3")


def draw(fig: Figure, colours: Colours) -> MplFigure:
    panels = [p for p in fig.panels if isinstance(p, LinePanel)]
    cols = 2 if len(panels) > 1 else 1
    nrows = math.ceil(len(panels) / cols)
    pt = font_pt()
    facts = chart(fig.family)
    per_adapter = facts.card_colours
    most = max((len(p.curves) for p in panels), default=1)
    width = DOUBLE if (cols > 1 or per_adapter) else SINGLE
    short = all(len(c.label) <= 12 for p in panels for c in p.curves)
    ncurve = 2 if (width == DOUBLE and cols == 1) or short else 1
    small = not facts.panel_legends       # the figure's legend says it once (NDR/PDR)
    legend_in = 0.0 if small else line_in(pt) * math.ceil(most / ncurve) + 0.15
    items = legend_items(fig, panels)
    nitems = 3 if width == DOUBLE else 1
    height = nrows * (PLOT_IN + legend_in + line_in(pt) * 4) + line_in(pt) * 2 \
        + line_in(pt) * 1.25 * math.ceil(len(items) / nitems)
    single = len(panels) == 1      # laid out by hand: one plot, its sizes known
    mfig = new_figure(width, height, constrained=not single)
    title = wrap(fig.title, width, size_pt("figure.titlesize"))
    # placed by constrained layout on a grid, by hand on one plot
    where = {"y": 1 - 0.04 / height, "va": "top"} if single else {}
    mfig.suptitle(title, x=0.01, ha="left", fontweight="bold", **where)
    axes = mfig.subplots(nrows, cols, squeeze=False)
    for k, ax in enumerate(axes.flat):
        if k >= len(panels):
            ax.set_visible(False)
            continue
        _panel(ax, panels[k], colours if per_adapter else None, pt, ncurve,
               own_legend=not small, log_y=facts.log_y)
        if panels[k].title in fig.title:     # said once, in the figure's title
            ax.set_title("")
    if not single:
        if small:
            mfig.legend(handles=[_small_handle(i) for i in items], loc="outside lower left",
                        ncols=nitems, handlelength=3.0)
        else:
            add_legend(mfig, items, ncols=nitems)
        return mfig
    line = line_in(pt)
    top = line_in(size_pt("figure.titlesize")) * (title.count("\n") + 1) + 0.12 + (
        line_in(size_pt("axes.titlesize")) if axes[0][0].get_title() else 0.0)
    ticks = [f"{t:g}" for t in axes[0][0].get_yticks()]
    left = line_in(size_pt("axes.labelsize")) + text_width_in(ticks, pt) + 0.12
    below = line * 2.6 + legend_in + line * 1.25 * math.ceil(len(items) / nitems) + 0.1
    right = text_width_in([_ref_label(r.y) for p in panels for r in p.references
                           if r.dash == LIMIT_DASH], pt) + 0.15
    place(mfig, left, right, top, below)
    if items:
        mfig.legend(handles=[handle(i) for i in items], loc="lower left",
                    bbox_to_anchor=(0.01, 0.01), borderaxespad=0, borderpad=0,
                    ncols=nitems)
    return mfig


def shared_limit(p: LinePanel) -> float | None:
    """The one goodput limit of every curve of the panel (one link rate and MTU), else
    None: a band above it applies to every curve only then."""
    limits = {round(r.y, 6) for r in p.references if r.dash == LIMIT_DASH}
    return limits.pop() if len(limits) == 1 else None


def legend_items(fig: Figure, panels: list[LinePanel]) -> list[LegendItem]:
    """The model's legend, one entry per line style; where no band is drawn (the curves'
    links differ), the points above their own link's limit are ringed instead."""
    band = any(shared_limit(p) is not None and any(c.flagged for c in p.curves)
               for p in panels)
    ringed = any(shared_limit(p) is None and any(c.flagged for c in p.curves)
                 for p in panels)
    items = [i for i in fig.legend if i.shape != "band" or band]
    if ringed:
        items.append(LegendItem("above its link's goodput limit", "#000000",
                                "ring"))
    return items


def _ref_label(y: float) -> str:
    return f"{y:.1f}" if y < 100 else f"{y:.0f}"


# Two curves of one card told apart beyond their dash (small packets' NDR and PDR, a
# --bidir test's forward and reverse): the second's markers hollow and of another shape.
SECOND = ("PDR", "reverse")


def _second(label: str) -> bool:
    return label.startswith(SECOND)


def _small_handle(item: LegendItem):
    from matplotlib.lines import Line2D

    if item.label.startswith(("NDR", "PDR")):
        hollow = _second(item.label)
        return Line2D([], [], color=item.colour, linestyle=dash(item.dash),
                      marker="s" if hollow else "o", markersize=4.5,
                      markerfacecolor="#ffffff" if hollow else item.colour,
                      label=item.label)
    return handle(item)


def _panel(ax, p: LinePanel, colours: Colours | None, pt: float, ncurve: int = 2,
           own_legend: bool = True, log_y: bool = False) -> None:
    set_title(ax, p.title)
    xs = [x for c in p.curves for x, _ in c.points if x > 0]
    lo, hi = (min(xs), max(xs)) if xs else (1.0, 2.0)
    hi = hi if hi > lo else lo * 2
    ymax = p.ymax or max((y for c in p.curves for _, y in c.points), default=1.0) or 1.0
    ax.set_xscale("log", base=2)
    ax.set_xlim(lo, hi)
    if log_y:       # small packets: the line rate is 10-100x the NDR, which a linear
        ys = [y for c in p.curves for _, y in c.points if y > 0]   # axis flattens
        ax.set_yscale("log")
        ax.set_ylim(min(ys) / 2 if ys else 1.0, ymax * 1.5)
    else:
        ax.set_ylim(0, ymax)
    a, b = math.floor(math.log2(lo)), math.ceil(math.log2(hi))
    step = max(1, math.ceil((b - a + 1) / 8))
    ticks = [float(2 ** k) for k in range(a, b + 1, step) if lo <= 2 ** k <= hi]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: size_text(v)))
    ax.set_xlabel(p.xlabel)
    ax.set_ylabel(p.ylabel)
    limit = shared_limit(p)
    if limit is not None and any(c.flagged for c in p.curves):
        ax.axhspan(limit, ymax, color=FLAG_BAND, alpha=0.6, linewidth=0, gid="band")
    right = blended_transform_factory(ax.transAxes, ax.transData)
    for ref in p.references:
        ax.axhline(ref.y, color=REFERENCE, linewidth=0.9, linestyle=dash(ref.dash),
                   gid=f"reference|{ref.label}")
    # several goodput limits (links or MTUs): each named by its value at the right, where
    # they are apart enough to be read (one legend entry stands for the line style)
    labelled: list[float] = []
    for y in sorted({r.y for r in p.references if r.dash == LIMIT_DASH and r.y <= ymax}):
        if limit is None and all(abs(y - o) >= 0.07 * ymax for o in labelled):
            labelled.append(y)
            ax.text(1.0, y, " " + _ref_label(y), transform=right, va="center", ha="left",
                    color=REFERENCE, clip_on=False, gid=f"reflabel|{y:g}")
    for c in p.curves:
        if not c.points:
            continue
        colour = colours.of(c.entry, c.colour) if colours is not None else c.colour
        hollow = _second(c.label)
        ax.plot([x for x, _ in c.points], [y for _, y in c.points], color=colour,
                linestyle=dash(c.dash), marker="s" if hollow else marker(c.marker),
                markevery=max(1, len(c.points) // 12),
                markeredgecolor=colour if hollow else "#ffffff",
                markerfacecolor="#ffffff" if hollow else colour,
                markeredgewidth=0.9 if hollow else 0.5, label=c.label,
                gid=f"curve|{c.entry}|{c.label}")
        if limit is None and c.flagged:      # above this curve's own link's limit
            ax.plot([x for x, _ in c.flagged], [y for _, y in c.flagged], linestyle="none",
                    marker="o", markersize=7, markerfacecolor="none", markeredgecolor="#000000",
                    markeredgewidth=0.9, gid=f"flagged|{c.entry}|{c.label}")
    if p.curves and own_legend:
        # below the axis's label, as many columns as fit: never over a tick or a curve
        below = ScaledTranslation(0, -line_in(pt) * 2.6, ax.figure.dpi_scale_trans)
        ax.legend(loc="upper left", bbox_to_anchor=(0, 0),
                  bbox_transform=ax.transAxes + below,
                  ncols=ncurve, handlelength=3.0,
                  borderaxespad=0)
