"""What every figure family shares: a new matplotlib figure (Agg, constrained layout), the
legend's handles for the report's legend items, sizes in inches from the style's font."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from typing import Any

from matplotlib import rcParams
from matplotlib.figure import Figure as MplFigure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from nicbench.report.figures.style import dash, marker
from nicbench.report.model import LegendItem

SINGLE = 3.5        # inches: a journal's single column
DOUBLE = 7.0        # a double column / a CMS's full width
FLAG_BAND = "#fff4e0"
RC: Any = rcParams      # read by a key in a variable, which matplotlib's stubs type as literals


def new_figure(width: float, height: float, constrained: bool = True) -> MplFigure:
    """A figure laid out by matplotlib's constrained layout, or by :func:`place`."""
    return MplFigure(figsize=(width, height), layout="constrained" if constrained else None)


def font_pt() -> float:
    """The text size the style draws labels at, in points."""
    size = RC["ytick.labelsize"]
    if isinstance(size, str):           # "small", "medium"...: relative to font.size
        from matplotlib.font_manager import FontProperties
        return float(FontProperties(size=size).get_size_in_points())
    return float(size)


def line_in(pt: float, factor: float = 1.45) -> float:
    """The height of one line of text of ``pt`` points, in inches."""
    return pt * factor / 72.0


def handle(item: LegendItem) -> Patch | Line2D:
    """A legend handle drawing what ``item`` stands for."""
    match item.shape:
        case "bar":
            return Patch(facecolor=item.colour, label=item.label)
        case "flag":
            return Patch(facecolor="#ffffff", edgecolor="#000000", linestyle="--",
                         linewidth=0.8, label=item.label)
        case "band":
            return Patch(facecolor=FLAG_BAND, edgecolor="#f0d5a8", label=item.label)
        case "line":
            return Line2D([], [], color=item.colour, linestyle=dash(item.dash),
                          label=item.label)
        case "limit":
            return Line2D([], [], color=item.colour, marker="|", linestyle="none",
                          markersize=8, markeredgewidth=1.6, label=item.label)
        case "ring":
            return Line2D([], [], color=item.colour, marker="o", linestyle="none",
                          markerfacecolor="none", markersize=7, label=item.label)
        case "whisker":
            return Line2D([], [], color=item.colour, marker="|", linestyle="-",
                          markersize=6, label=item.label)
        case _:
            return Line2D([], [], color=item.colour, marker=marker(item.shape),
                          linestyle="none", label=item.label)


def add_legend(fig: MplFigure, items: list[LegendItem], ncols: int = 1) -> None:
    if items:
        fig.legend(handles=[handle(i) for i in items], loc="outside lower left",
                   ncols=ncols)


def text_width_in(texts: list[str], size: float | str | None = None) -> float:
    """The widest of ``texts`` in inches at ``size`` in the style's font, measured from the
    font's own metrics (no drawing)."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import text_to_path

    prop = FontProperties(size=size)
    longest = sorted(texts, key=len, reverse=True)[:4]
    return max((text_to_path.get_text_width_height_descent(t, prop, ismath=False)[0]
                for t in longest if t), default=0.0) / 72.0


def size_pt(key: str) -> float:
    """An rcParams text size (a number or "large", "small" ...) in points."""
    from matplotlib.font_manager import FontProperties
    return float(FontProperties(size=RC[key]).get_size_in_points())


def set_title(ax, text: str) -> None:
    """The axes' title where matplotlib's own placement puts it above an axes whose ticks
    are below (y 1.0, the style's pad over it), fixed: the placement measured every tick
    label of the axes again at each save."""
    ax.set_title(text, y=1.0)


def row_axis(ax, pad: float) -> None:
    """A y axis whose tick labels name the rows: no tick marks, no axis label, and the
    (empty) label's place fixed, so its 50 names are not measured again at each save."""
    ax.tick_params(axis="y", length=0, pad=pad, left=False)
    ax.yaxis.set_label_coords(0, 0.5)


def place(mfig: MplFigure, left: float, right: float, top: float, bottom: float) -> None:
    """The axes' margins in inches: what the labels measured need, laid out once by hand
    (a ranking of 50 rows spent more in constrained layout than in drawing)."""
    w, h = mfig.get_size_inches()
    mfig.subplots_adjust(left=min(left / w, 0.7), right=max(1 - right / w, left / w + 0.1),
                         top=1 - top / h, bottom=min(bottom / h, 1 - top / h - 0.05))


def wrap(text: str, width_in: float, pt: float) -> str:
    """``text`` broken into lines that fit ``width_in`` inches at ``pt`` points."""
    import textwrap

    chars = max(20, int((width_in - 0.1) * 72 / (pt * 0.6)))
    return textwrap.fill(text, chars)
