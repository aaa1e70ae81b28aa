"""Drawing figure models with matplotlib (Agg, no pyplot state), to SVG and PNG.

Each figure model (``model.Figure``) becomes ``figures/<id>.svg`` and ``figures/<id>.png``.
The legend sits outside the axes, to the right, so it never covers a bar or a curve;
colours come from the entries (one per adapter, the same in every chart); reference lines
are grey or black, never an adapter's colour.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # before any other matplotlib import: no display, ever

from matplotlib.figure import Figure as MplFigure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator  # noqa: E402

from nicbench.report.model import BarPanel, Figure, LinePanel, Report  # noqa: E402

PNG_DPI = 110
REFERENCE_COLOUR = "#444444"
GAP_COLOUR = "#555555"
_STYLE = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "svg.hashsalt": "nicbench",     # stable ids in the SVG: same data, same file
    "svg.fonttype": "none",         # text stays text (searchable, small files)
}


def render_all(report: Report, out: Path) -> None:
    figdir = out / "figures"
    figdir.mkdir(parents=True, exist_ok=True)
    for fig in report.figures:
        render(report, fig, figdir)


def render(report: Report, fig: Figure, figdir: Path) -> None:
    colours = {e.key: e.colour for e in report.entries}
    labels = {e.key: e.label for e in report.entries}
    with matplotlib.rc_context(_STYLE):
        n = len(fig.panels)
        width = sum(_panel_width(p, n) for p in fig.panels) + 0.4
        mfig = MplFigure(figsize=(width, 4.4 if n == 1 else 4.0), layout="constrained")
        axes = mfig.subplots(1, n, squeeze=False)[0]
        extra_handles: dict[str, object] = {}
        for ax, panel in zip(axes, fig.panels):
            ax.set_title(panel.title if n > 1 else "")   # one panel: the suptitle says it
            if isinstance(panel, BarPanel):
                _draw_bars(ax, panel, colours, extra_handles)
            elif isinstance(panel, LinePanel):
                _draw_lines(ax, panel, colours, extra_handles)
        handles, names = _legend(fig, colours, labels, extra_handles)
        mfig.suptitle(textwrap.fill(fig.title, int(width * 11)), fontsize=10.5)
        # Below the axes, never over a bar or a curve; as many columns as fit the width.
        longest = max((len(s) for s in names), default=10)
        ncol = max(1, min(len(names), int(width * 13 / (longest + 4))))
        mfig.legend(handles, names, loc="outside lower center", ncol=ncol, frameon=False)
        fig.size_px = (round(width * PNG_DPI), round(mfig.get_figheight() * PNG_DPI))
        for fmt in ("png", "svg"):
            path = figdir / f"{fig.id}.{fmt}"
            meta = {"Date": None} if fmt == "svg" else {}
            mfig.savefig(path, format=fmt, dpi=PNG_DPI, metadata=meta)
            fig.files[fmt] = f"figures/{path.name}"
            # the first save laid the figure out; the second keeps that layout (and time)
            mfig.set_layout_engine("none")


def _panel_width(panel, panels: int) -> float:
    if isinstance(panel, BarPanel):
        slots = len(panel.groups) * max(1, len(panel.entries))
        per_slot = 0.42 if panels == 1 else 0.28
        return min(11.0 if panels == 1 else 6.0, max(4.0, 1.2 + per_slot * slots))
    return 6.5


def _legend(fig: Figure, colours, labels, extra):
    handles, names = [], []
    line_figure = all(isinstance(p, LinePanel) for p in fig.panels)
    for key in fig.entries:
        if line_figure and len(fig.entries) == 1:
            continue   # a one-adapter curve chart: its curves are the MTUs, named below
        handles.append(Patch(facecolor=colours[key], edgecolor="none"))
        names.append(labels[key])
    for name, handle in extra.items():
        handles.append(handle)
        names.append(name)
    return handles, names


def _draw_bars(ax, panel: BarPanel, colours, extra) -> None:
    groups = panel.groups
    k = max(1, len(panel.entries))
    width = 0.8 / k
    top = 0.0
    for gi, g in enumerate(groups):
        for ei, ekey in enumerate(panel.entries):
            bar = panel.bar(ekey, g.key)
            if bar is None:
                continue       # not measured at this point at all: nothing to show
            x = gi - 0.4 + width * (ei + 0.5)
            if bar.value is not None:
                ax.bar(x, bar.value, width * 0.92, color=colours[ekey],
                       hatch="///" if bar.flag else None,
                       edgecolor="black" if bar.flag else colours[ekey], linewidth=0.6)
                if bar.lo is not None and bar.hi is not None:
                    ax.errorbar(x, bar.value, yerr=[[bar.value - bar.lo], [bar.hi - bar.value]],
                                fmt="none", ecolor="black", elinewidth=0.8, capsize=2.5)
                tip = max(v for v in (bar.value, bar.hi) if v is not None)
                top = max(top, tip)
            else:
                tip = 0.0
                ax.bar(x, 0, width * 0.92, color="none", edgecolor=colours[ekey])
                ax.plot([x], [0], marker="x", color=colours[ekey], markersize=6,
                        clip_on=False)
            if bar.limit is not None and bar.value is not None:
                ax.hlines(bar.limit, x - width / 2, x + width / 2, colors="black",
                          linestyles=(0, (3, 1.5)), linewidth=1.1)
                top = max(top, bar.limit)
                extra.setdefault(panel.limit_label or "goodput limit",
                                 Line2D([], [], color="black", linestyle=(0, (3, 1.5))))
            if bar.flag:
                extra.setdefault("above the limit (hatched; see notes)",
                                 Patch(facecolor="white", edgecolor="black", hatch="///"))
            ax.annotate(bar.text, (x, tip), xytext=(0, 3), textcoords="offset points",
                        rotation=90, ha="center", va="bottom", fontsize=6.5,
                        color=GAP_COLOUR if bar.value is None else "black",
                        style="italic" if bar.value is None else "normal")
    ax.set_xticks(range(len(groups)), [g.label for g in groups])
    ax.set_xlim(-0.55, len(groups) - 0.45)
    ax.set_ylim(0, panel.ymax or (top * 1.45 if top > 0 else 1.0))
    if panel.ymax:   # a percentage scale: ticks up to the data's scale, room above for labels
        ax.yaxis.set_major_locator(FixedLocator(range(0, int(panel.ymax / 1.3) + 1, 20)))
    ax.set_ylabel(panel.ylabel)
    ax.grid(axis="y", linewidth=0.4, alpha=0.5)
    ax.set_axisbelow(True)


def _draw_lines(ax, panel: LinePanel, colours, extra) -> None:
    ymax = 0.0
    if len({s.entry for s in panel.series}) == 1:
        # one adapter: the legend names the curves (the MTUs), in the adapter's colour
        for s in panel.series:
            extra.setdefault(s.label, Line2D([], [], color=colours[s.entry],
                                             linestyle=s.linestyle, marker=s.marker,
                                             markersize=3))
    for s in panel.series:
        if not s.points:
            continue
        xs, ys = zip(*s.points)
        ax.plot(xs, ys, color=colours[s.entry], linestyle=s.linestyle, marker=s.marker,
                markersize=3, linewidth=1.2, label=s.label)
        ymax = max(ymax, max(ys))
        if s.flagged:
            fx, fy = zip(*s.flagged)
            ax.plot(fx, fy, linestyle="none", marker="x", color="black", markersize=3.5,
                    markeredgewidth=0.7)
            extra.setdefault("above the goodput limit",
                             Line2D([], [], linestyle="none", marker="x", color="black"))
    for ref in panel.references:
        ax.axhline(ref.y, color=REFERENCE_COLOUR, linestyle=ref.linestyle, linewidth=0.9)
        extra.setdefault(ref.label, Line2D([], [], color=REFERENCE_COLOUR,
                                           linestyle=ref.linestyle))
        ymax = max(ymax, ref.y)
    if panel.xlog:
        # Plain byte sizes (1, 16, 256, 4K, 64K), not 2^n: readable, and no mathtext.
        ax.set_xscale("log", base=2)
        xs = [x for s in panel.series for x, _ in s.points if x > 0]
        if xs:
            lo, hi = int(math.floor(math.log2(min(xs)))), int(math.ceil(math.log2(max(xs))))
            step = max(1, math.ceil((hi - lo + 1) / 9))
            ticks = [2 ** k for k in range(lo, hi + 1, step)]
            ax.xaxis.set_major_locator(FixedLocator(ticks))
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _size(v)))
            ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel(panel.xlabel)
    ax.set_ylabel(panel.ylabel)
    ax.set_ylim(0, ymax * 1.08 if ymax > 0 else 1.0)
    ax.grid(linewidth=0.4, alpha=0.5)


def _size(v: float) -> str:
    v = int(round(v))
    if v >= 1 << 20 and v % (1 << 20) == 0:
        return f"{v >> 20}M"
    if v >= 1024 and v % 1024 == 0:
        return f"{v >> 10}K"
    return str(v)
