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
from matplotlib.transforms import ScaledTranslation

from nicbench.report.colours import REFERENCE
from nicbench.report.figures.canvas import (DOUBLE, FLAG_BAND, SINGLE, add_legend, font_pt,
                                           handle, line_in, new_figure, place, set_title,
                                           size_pt, text_width_in, wrap)
from nicbench.report.figures.style import Colours, dash, marker
from nicbench.report.model import Figure, LinePanel
from nicbench.report.svg import size_text

PLOT_IN = 1.9           # height of one panel's plot


def draw(fig: Figure, colours: Colours) -> MplFigure:
    panels = [p for p in fig.panels if isinstance(p, LinePanel)]
    cols = 2 if len(panels) > 1 else 1
    nrows = math.ceil(len(panels) / cols)
    pt = font_pt()
    per_adapter = fig.family == "netpipe-mtu"
    most = max((len(p.curves) for p in panels), default=1)
    legend_in = line_in(pt) * (most if per_adapter else math.ceil(most / 2)) + 0.15
    width = DOUBLE if (cols > 1 or per_adapter) else SINGLE
    height = nrows * (PLOT_IN + legend_in + line_in(pt) * 4) + line_in(pt) * 2 \
        + line_in(pt) * len(fig.legend)
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
        _panel(ax, panels[k], colours if per_adapter else None, pt)
        if panels[k].title in fig.title:     # said once, in the figure's title
            ax.set_title("")
    if not single:
        add_legend(mfig, fig.legend, ncols=2 if width == DOUBLE else 1)
        return mfig
    line = line_in(pt)
    top = line_in(size_pt("figure.titlesize")) * (title.count("\n") + 1) + 0.12 + (
        line_in(size_pt("axes.titlesize")) if axes[0][0].get_title() else 0.0)
    ticks = [f"{t:g}" for t in axes[0][0].get_yticks()]
    left = line_in(size_pt("axes.labelsize")) + text_width_in(ticks, pt) + 0.12
    below = line * 2.6 + legend_in + line * 1.25 * len(fig.legend) + 0.1
    place(mfig, left, 0.2, top, below)
    if fig.legend:
        mfig.legend(handles=[handle(i) for i in fig.legend], loc="lower left",
                    bbox_to_anchor=(0.01, 0.01), borderaxespad=0, borderpad=0)
    return mfig


def _panel(ax, p: LinePanel, colours: Colours | None, pt: float) -> None:
    set_title(ax, p.title)
    xs = [x for c in p.curves for x, _ in c.points if x > 0]
    lo, hi = (min(xs), max(xs)) if xs else (1.0, 2.0)
    hi = hi if hi > lo else lo * 2
    ymax = p.ymax or max((y for c in p.curves for _, y in c.points), default=1.0) or 1.0
    ax.set_xscale("log", base=2)
    ax.set_xlim(lo, hi)
    ax.set_ylim(0, ymax)
    a, b = math.floor(math.log2(lo)), math.ceil(math.log2(hi))
    step = max(1, math.ceil((b - a + 1) / 8))
    ticks = [float(2 ** k) for k in range(a, b + 1, step) if lo <= 2 ** k <= hi]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: size_text(v)))
    ax.set_xlabel(p.xlabel)
    ax.set_ylabel(p.ylabel)
    limits = [r.y for r in p.references if r.dash == "6 3"]
    if limits and any(c.flagged for c in p.curves):
        ax.axhspan(min(limits), ymax, color=FLAG_BAND, alpha=0.6, linewidth=0, gid="band")
    for ref in p.references:
        ax.axhline(ref.y, color=REFERENCE, linewidth=0.9, linestyle=dash(ref.dash),
                   gid=f"reference|{ref.label}")
    for c in p.curves:
        if not c.points:
            continue
        colour = colours.of(c.entry, c.colour) if colours is not None else c.colour
        ax.plot([x for x, _ in c.points], [y for _, y in c.points], color=colour,
                linestyle=dash(c.dash), marker=marker(c.marker),
                markevery=max(1, len(c.points) // 12), markeredgecolor="#ffffff",
                markeredgewidth=0.5, label=c.label, gid=f"curve|{c.entry}|{c.label}")
    if p.curves:
        # below the axis's label, as many columns as fit: never over a tick or a curve
        below = ScaledTranslation(0, -line_in(pt) * 2.6, ax.figure.dpi_scale_trans)
        ax.legend(loc="upper left", bbox_to_anchor=(0, 0),
                  bbox_transform=ax.transAxes + below,
                  ncols=1 if colours is not None else 2, handlelength=1.6,
                  borderaxespad=0)
