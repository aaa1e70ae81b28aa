"""Speed against CPU: one dot per adapter at each point, a panel per point side by side.

The report's model gives the dots (the selected speed against the busier host's CPU), the
card's colour and marker, and one axis for every panel; the legend names the cards when
they are few enough to tell apart (the report's rule: at most 12), else figures.csv does.
"""

from __future__ import annotations

import math

from matplotlib.figure import Figure as MplFigure

from nicbench.report.figures.canvas import (DOUBLE, SINGLE, add_legend, font_pt, line_in,
                                           new_figure, set_title, size_pt, wrap)
from nicbench.report.figures.style import Colours, marker
from nicbench.report.model import Figure, ScatterPanel


def draw(fig: Figure, colours: Colours) -> MplFigure:
    panels = [p for p in fig.panels if isinstance(p, ScatterPanel)]
    cols = 2 if len(panels) > 1 else 1
    nrows = math.ceil(len(panels) / cols)
    pt = font_pt()
    height = nrows * 2.2 + line_in(pt) * (2 + math.ceil(len(fig.legend) / 2))
    mfig = new_figure(DOUBLE if cols > 1 else SINGLE, height)
    width = DOUBLE if cols > 1 else SINGLE
    mfig.suptitle(wrap(fig.title, width, size_pt("figure.titlesize")), x=0.01, ha="left",
                  fontweight="bold")
    axes = mfig.subplots(nrows, cols, squeeze=False, sharex=True, sharey=True)
    for k, ax in enumerate(axes.flat):
        if k >= len(panels):
            ax.set_visible(False)
            continue
        p = panels[k]
        set_title(ax, p.title)
        for d in p.dots:
            colour = colours.of(d.entry, d.colour)
            ax.plot([d.x], [d.y], linestyle="none", marker=marker(d.marker), color=colour,
                    markeredgecolor="#333333", markeredgewidth=0.4, markersize=5,
                    gid=f"dot|{d.entry}|{p.title}")
        ax.set_xlim(0, p.xmax or 100.0)
        ax.set_ylim(0, p.ymax or 1.0)
        ax.set_xlabel(p.xlabel)
        ax.set_ylabel(p.ylabel)
        ax.label_outer()
    items = [i.__class__(i.label, colours.of(_entry(fig, i.label), i.colour), i.shape,
                         i.dash) for i in fig.legend]
    add_legend(mfig, items, ncols=2 if cols > 1 else 1)
    return mfig


def _entry(fig: Figure, label: str) -> str | None:
    for p in fig.panels:
        if isinstance(p, ScatterPanel):
            for d in p.dots:
                if d.label == label:
                    return d.entry
    return None
