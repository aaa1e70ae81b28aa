"""The heatmap: every adapter at every point, each cell the selected value on one colour
scale, the number written in it in the ink that reads on its colour (the report's cells,
fills and inks, drawn as one image and a text per cell)."""

from __future__ import annotations

from matplotlib.colors import to_rgb
from matplotlib.figure import Figure as MplFigure
from matplotlib.transforms import ScaledTranslation, blended_transform_factory

from nicbench.report.figures.canvas import (DOUBLE, font_pt, line_in, new_figure, place,
                                           row_axis, size_pt, text_width_in)
from nicbench.report.figures.style import Colours, marker
from nicbench.report.model import Figure, HeatPanel


def draw(fig: Figure, colours: Colours) -> MplFigure:
    p = fig.panels[0]
    assert isinstance(p, HeatPanel)
    pt = font_pt()
    title_h = line_in(size_pt("axes.titlesize")) + line_in(pt) * 1.4 + 0.08
    bottom = line_in(size_pt("axes.labelsize")) + 0.1
    height = line_in(pt) * 1.15 * max(1, len(p.rows)) + title_h + bottom
    mfig = new_figure(DOUBLE, height, constrained=False)
    ax = mfig.add_subplot()
    ax.set_title(fig.title)
    image = [[to_rgb(c.fill) for c in line] for line in p.cells] or [[to_rgb("#ffffff")]]
    ax.imshow(image, aspect="auto", interpolation="none", gid="cells")
    for i, line in enumerate(p.cells):
        for j, c in enumerate(line):
            if c.text:
                ax.text(j, i, c.text, ha="center", va="center", color=c.ink,
                        style="normal" if c.value is not None else "italic",
                        gid=f"cell|{p.rows[i].key}|{j}")
    ax.set_xticks(range(len(p.columns)), p.columns)
    ax.xaxis.tick_top()
    ax.set_yticks(range(len(p.rows)), [r.label for r in p.rows])
    ax.tick_params(length=0)
    row_axis(ax, 11)
    ax.tick_params(axis="x", top=False)
    ax.grid(False)
    for side in ("left", "bottom", "top", "right"):
        ax.spines[side].set_visible(False)
    trans = blended_transform_factory(ax.transAxes, ax.transData) + ScaledTranslation(
        -5.5 / 72, 0, mfig.dpi_scale_trans)
    for i, r in enumerate(p.rows):
        colour = colours.of(r.entry, r.colour)
        ax.plot([0], [i], transform=trans, marker=marker(r.marker), color=colour,
                markersize=4.5, linestyle="none", clip_on=False, gid=f"rowmarker|{r.key}")
    ax.set_xlabel(f"selected value, {p.unit}")
    place(mfig, text_width_in([r.label for r in p.rows], pt) + 15 / 72 + 0.1, 0.1, title_h,
          bottom)
    return mfig
