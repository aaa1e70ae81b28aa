"""Drawing figure models as SVG, by hand.

Why not matplotlib: the report of an overnight batch (50 adapters, 4,000 trials) has over
a hundred charts, and matplotlib took 0.3 to 0.7 s per chart on the 2-core machine it runs
on (its text layout and its layout engine, twice when a PNG is written too), over a minute
in all; these charts are bars, cells, polylines and dots, which this module writes in a
few milliseconds each. The SVG is also made to be put inline in the page
(``--single-file``): every id is prefixed with the figure's id, text stays text, and each
bar, cell and dot carries a ``<title>`` with its exact value (a tooltip in a browser).

Every piece of text that comes from results (labels, gap words) goes through :func:`el`,
which escapes text and attribute values (control and bidi characters shown as escapes,
``nicbench.display.visible``): escaping by construction, as the page's template does by
default.

Sizes are in CSS pixels at the size the chart is drawn on the page (``WIDTH``, the page's
column, which also fits an A4 page in print); labels are at least ``SMALL`` px (8.25 pt).
"""

from __future__ import annotations

import math
from html import escape
from collections.abc import Iterable

from nicbench.display import visible
from nicbench.report.colours import PUBLISHED, REFERENCE
from nicbench.report.model import (BarPanel, BarStatus, Figure, HeatPanel, LegendItem,
                                   LinePanel, Report, Row, ScatterPanel)

WIDTH = 720
FONT = 12            # labels, titles of axes
SMALL = 11           # value labels, ticks, legend (8.25 pt: readable in print too)
TITLE = 13
CHAR = 0.58          # average glyph width of a sans-serif font, in em
ROW = 20             # height of a row of one bar
ROW_SERIES = 13      # height of each bar of a row with several (CPU: sender, receiver)
LABEL_MAX = 320      # widest row label column
GRID = "#d9d9d9"
AXIS = "#444444"
MUTED = "#555555"
FONT_FAMILY = "system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif"


# -- elements -----------------------------------------------------------------------------
def _attr(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.2f}".rstrip("0").rstrip(".")
    return escape(visible(str(value)), quote=True)


def el(name: str, attrs: dict[str, object] | None = None, text: str | None = None,
       children: Iterable[str] = ()) -> str:
    """One element, its attribute values and text escaped."""
    a = "".join(f' {k.replace("_", "-")}="{_attr(v)}"' for k, v in (attrs or {}).items()
                if v is not None and v != "")
    # control and bidi characters as escapes: XML refuses ESC, U+202E would reorder text
    inner = (escape(visible(text, "\n"), quote=False) if text is not None else "") \
        + "".join(children)
    return f"<{name}{a}>{inner}</{name}>" if inner else f"<{name}{a}/>"


def text_width(text: str, size: float = FONT) -> float:
    return len(text) * size * CHAR


def fit(text: str, width: float, size: float = FONT) -> str:
    """``text`` cut with an ellipsis to fit ``width`` px; a trailing "[A]" (the run or pair
    that tells two entries apart) is kept whole."""
    room = int(width / (size * CHAR))
    if len(text) <= room:
        return text
    head, sep, tail = text.rpartition(" [")
    if sep and tail.endswith("]") and len(tail) + 3 < room:
        keep = room - len(tail) - 3
        return head[:max(1, keep)] + "… [" + tail
    return text[:max(1, room - 1)] + "…"


def label(x: float, y: float, text: str, size: float = SMALL, anchor: str = "start",
          fill: str = "#000000", **extra: object) -> str:
    return el("text", {"x": x, "y": y, "font-size": size, "text-anchor": anchor,
                       "fill": fill, **extra}, text)


def marker(shape: str, x: float, y: float, r: float, colour: str, stroke: str = "none",
           title: str | None = None) -> str:
    """A marker glyph centred on (x, y)."""
    children = [el("title", text=title)] if title else []
    common: dict[str, object] = {"fill": colour, "stroke": stroke, "stroke-width": 1}
    if shape == "circle":
        return el("circle", {"cx": x, "cy": y, "r": r, **common}, children=children)
    if shape == "square":
        return el("rect", {"x": x - r * .9, "y": y - r * .9, "width": r * 1.8,
                           "height": r * 1.8, **common}, children=children)
    pts: list[tuple[float, float]]
    if shape == "triangle":
        pts = [(x, y - r * 1.1), (x + r, y + r * .8), (x - r, y + r * .8)]
    elif shape == "triangle-down":
        pts = [(x, y + r * 1.1), (x + r, y - r * .8), (x - r, y - r * .8)]
    elif shape == "diamond":
        pts = [(x, y - r * 1.2), (x + r, y), (x, y + r * 1.2), (x - r, y)]
    elif shape in ("pentagon", "hexagon"):
        k = 5 if shape == "pentagon" else 6
        pts = [(x + r * 1.1 * math.sin(2 * math.pi * j / k),
                y - r * 1.1 * math.cos(2 * math.pi * j / k)) for j in range(k)]
    elif shape == "star":
        pts = [(x + r * 1.2 * (0.45 if k % 2 else 1) * math.sin(k * math.pi / 5),
                y - r * 1.2 * (0.45 if k % 2 else 1) * math.cos(k * math.pi / 5))
               for k in range(10)]
    elif shape in ("plus", "cross"):
        a = r * 1.1
        if shape == "plus":
            d = f"M{x - a:.1f},{y:.1f}H{x + a:.1f}M{x:.1f},{y - a:.1f}V{y + a:.1f}"
        else:
            d = (f"M{x - a:.1f},{y - a:.1f}L{x + a:.1f},{y + a:.1f}"
                 f"M{x - a:.1f},{y + a:.1f}L{x + a:.1f},{y - a:.1f}")
        return el("path", {"d": d, "stroke": colour, "stroke-width": 2, "fill": "none"},
                  children=children)
    else:
        return el("circle", {"cx": x, "cy": y, "r": r, **common}, children=children)
    d = "M" + "L".join(f"{px:.1f},{py:.1f}" for px, py in pts) + "Z"
    return el("path", {"d": d, **common}, children=children)


def nice_ticks(top: float, count: int = 5) -> list[float]:
    """Round tick values from 0 to at most ``top``."""
    if top <= 0:
        return [0.0]
    raw = top / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    n = int(top / step + 1e-9)
    return [round(k * step, 10) for k in range(n + 1)]


def tick_text(v: float) -> str:
    return f"{v:g}" if abs(v) < 1e6 else f"{v:.3g}"


def size_text(v: float) -> str:
    n = round(v)
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20}M"
    if n >= 1024 and n % 1024 == 0:
        return f"{n >> 10}K"
    return str(n)


# -- bar panels -----------------------------------------------------------------------------
def _label_width(rows: list[Row], width: float) -> float:
    """The row label column: as wide as the widest label, at most ``LABEL_MAX`` (a third
    of a narrow panel)."""
    widest = max((text_width(r.label) for r in rows), default=60.0)
    return min(LABEL_MAX if width >= 600 else width / 3, widest + 22)


def _names_cut(p: object, width: float) -> bool:
    """Whether a bar panel ``width`` wide would cut one of its rows' names."""
    if not isinstance(p, BarPanel):
        return False
    room = _label_width(p.rows, width) - 20
    return any(text_width(r.label) > room for r in p.rows)


def _row_label(r: Row, x: float, y: float, width: float) -> str:
    parts = [marker(r.marker, x + 6, y, 4.5, r.colour, stroke="#333333" if r.published
                    else "none")]
    parts.append(el("text", {"x": x + 16, "y": y + 4, "font-size": FONT},
                    fit(r.label, width - 20), children=[el("title", text=r.label)]))
    return "".join(parts)


def bar_panel(p: BarPanel, fid: str, x0: float, y0: float, width: float) -> tuple[str, float]:
    """Horizontal bars, one row per ``p.rows``; returns (svg, height)."""
    out = []
    lw = _label_width(p.rows, width)
    # the value labels stand in a column of their own right of the plot: never over a
    # bar, a whisker or a limit mark, and aligned for reading down a ranking
    texts = [b.text for b in p.bars if b.value is not None and b.text]
    # (up to about a third of a wide panel: the under-load bars say p99, RPM and the load)
    rcol = min(max(190.0, width * 0.35), max(text_width(t, SMALL) for t in texts) + 12) \
        if texts else 0.0
    plot_x, plot_w = x0 + lw, width - lw - rcol - 8
    y = y0
    if p.title:
        out.append(label(x0, y + 14, p.title, TITLE, font_weight="600"))
        y += 22
    nser = max(1, len(p.series))
    row_h = ROW if nser == 1 else ROW_SERIES * nser + 6
    top = y
    height = row_h * len(p.rows)
    scale = plot_w / p.xmax if p.xmax else 1.0

    def X(v: float) -> float:
        return plot_x + max(0.0, min(v, p.xmax)) * scale

    ticks = nice_ticks(p.xmax)
    for t in ticks:
        out.append(el("line", {"x1": X(t), "y1": top, "x2": X(t), "y2": top + height,
                               "stroke": GRID, "stroke-width": 1}))
    series_keys = [s.key for s in p.series] or [""]
    opacity = {s.key: s.opacity for s in p.series}
    for i, r in enumerate(p.rows):
        ry = top + i * row_h
        out.append(_row_label(r, x0, ry + row_h / 2, lw))
        for k, skey in enumerate(series_keys):
            b = p.bar(r.key, skey)
            if b is None:
                continue
            bh = (row_h - 6) if nser == 1 else ROW_SERIES - 2
            by = ry + 3 + k * ROW_SERIES if nser > 1 else ry + 3
            cy = by + bh / 2
            tip = f"{r.label}: {b.text}" + (f" ({skey})" if skey else "")
            if b.value is None:
                if b.text:
                    out.append(label(plot_x + 4, cy + 4, b.text, SMALL, fill=MUTED,
                                     font_style="italic"))
                continue
            w = X(b.value) - plot_x
            fill = PUBLISHED if b.status is BarStatus.PUBLISHED else b.fill
            rect = {"x": plot_x, "y": by, "width": max(w, 0.5), "height": bh, "fill": fill,
                    "fill-opacity": opacity.get(skey, 1.0)}
            if b.status is BarStatus.PUBLISHED:
                rect["fill"] = f"url(#{fid}-pub)"
                rect["stroke"] = "#555555"
            if b.flag:
                rect["stroke"], rect["stroke-dasharray"] = "#000000", "3 2"
            out.append(el("rect", rect, children=[el("title", text=tip)]))
            if b.lo is not None and b.hi is not None:
                wx1, wx2 = X(b.lo), X(b.hi)
                ink = b.whisker if opacity.get(skey, 1.0) >= 1 else "#000000"
                out.append(el("path", {
                    "d": f"M{wx1:.1f},{cy:.1f}H{wx2:.1f}M{wx1:.1f},{cy - 4:.1f}V{cy + 4:.1f}"
                         f"M{wx2:.1f},{cy - 4:.1f}V{cy + 4:.1f}",
                    "stroke": ink, "stroke-width": 1.6, "fill": "none"}))
            if b.limit is not None:
                lx = X(b.limit)
                out.append(el("line", {"x1": lx, "y1": by - 2, "x2": lx, "y2": by + bh + 2,
                                       "stroke": "#000000", "stroke-width": 2}))
            if b.mark is not None:
                out.append(marker("diamond", X(b.mark), cy, 4, "#000000",
                                  title=f"{r.label}: tool's own figure {b.mark:.0f} %"))
            if b.text:
                out.append(label(plot_x + plot_w + 8, cy + 4,
                                 fit(b.text, rcol - 8, SMALL), SMALL))
    out.append(el("line", {"x1": plot_x, "y1": top, "x2": plot_x, "y2": top + height,
                           "stroke": AXIS, "stroke-width": 1}))
    axis_y = top + height
    out.append(el("line", {"x1": plot_x, "y1": axis_y, "x2": plot_x + plot_w, "y2": axis_y,
                           "stroke": AXIS, "stroke-width": 1}))
    for t in ticks:
        out.append(label(X(t), axis_y + 14, tick_text(t), SMALL, anchor="middle"))
    out.append(label(plot_x + plot_w / 2, axis_y + 30, p.xlabel, FONT, anchor="middle"))
    return "".join(out), axis_y + 38 - y0


# -- heatmaps -------------------------------------------------------------------------------
def heat_panel(p: HeatPanel, x0: float, y0: float, width: float) -> tuple[str, float]:
    out = []
    lw = _label_width(p.rows, width)
    ncol = max(1, len(p.columns))
    cw = min(110.0, (width - lw - 4) / ncol)
    y = y0
    for j, col in enumerate(p.columns):
        out.append(label(x0 + lw + cw * (j + .5), y + 14, fit(col, cw - 4, SMALL), SMALL,
                         anchor="middle", font_weight="600"))
    y += 22
    for i, r in enumerate(p.rows):
        ry = y + i * ROW
        out.append(_row_label(r, x0, ry + ROW / 2, lw))
        for j, cell in enumerate(p.cells[i]):
            cx = x0 + lw + cw * j
            tip = f"{r.label}, {p.columns[j]}: " + (
                f"{cell.value:.1f} {p.unit}" if cell.value is not None else cell.gap or "-")
            out.append(el("rect", {"x": cx + 1, "y": ry + 1, "width": cw - 2,
                                   "height": ROW - 2, "fill": cell.fill},
                          children=[el("title", text=tip)]))
            if cell.text:
                out.append(label(cx + cw / 2, ry + ROW / 2 + 4, fit(cell.text, cw - 4, SMALL),
                                 SMALL, anchor="middle", fill=cell.ink,
                                 font_style=None if cell.value is not None else "italic"))
    return "".join(out), 22 + ROW * len(p.rows) + 6


# -- curves ---------------------------------------------------------------------------------
PLOT_H = 260


def _log2_ticks(lo: float, hi: float) -> list[float]:
    a, b = math.floor(math.log2(lo)), math.ceil(math.log2(hi))
    step = max(1, math.ceil((b - a + 1) / 9))
    return [float(2 ** k) for k in range(a, b + 1, step)]


def _ticks_from(lo: float, hi: float) -> list[float]:
    """Round ticks from ``lo`` to ``hi`` (from 0: nice_ticks' own)."""
    if lo <= 0:
        return nice_ticks(hi)
    ticks = nice_ticks(hi - lo)
    step = ticks[1] - ticks[0] if len(ticks) > 1 else hi - lo
    first = math.ceil(lo / step) * step
    return [first + k * step for k in range(int((hi - first) / step) + 1)]


def line_panel(p: LinePanel, fid: str, x0: float, y0: float,
               width: float) -> tuple[str, float]:
    out = []
    y = y0
    if p.title:
        out.append(label(x0, y + 14, fit(p.title, width, TITLE), TITLE, font_weight="600"))
        y += 22
    left = x0 + 52
    plot_w = width - 52 - 10
    top, bottom = y + 6, y + 6 + PLOT_H
    xs = [x for c in p.curves for x, _ in c.points if x > 0]
    lo, hi = (min(xs), max(xs)) if xs else (1.0, 2.0)
    if hi <= lo:
        hi = lo * 2
    ymax = p.ymax or max((yv for c in p.curves for _, yv in c.points), default=1.0) or 1.0

    def X(v: float) -> float:
        if p.xlog:
            return left + (math.log2(max(v, lo)) - math.log2(lo)) / (
                math.log2(hi) - math.log2(lo)) * plot_w
        return left + (v - lo) / (hi - lo) * plot_w

    ymin = p.ymin if 0 <= p.ymin < ymax else 0.0

    def Y(v: float) -> float:
        return bottom - (max(ymin, min(v, ymax)) - ymin) / (ymax - ymin) * PLOT_H

    for t in _ticks_from(ymin, ymax):
        out.append(el("line", {"x1": left, "y1": Y(t), "x2": left + plot_w, "y2": Y(t),
                               "stroke": GRID}))
        out.append(label(left - 4, Y(t) + 4, tick_text(t), SMALL, anchor="end"))
    xticks = _log2_ticks(lo, hi) if p.xlog else nice_ticks(hi)
    for t in xticks:
        if t < lo or t > hi:
            continue
        out.append(el("line", {"x1": X(t), "y1": top, "x2": X(t), "y2": bottom,
                               "stroke": GRID}))
        out.append(label(X(t), bottom + 14, size_text(t), SMALL, anchor="middle"))
    limits = [r.y for r in p.references if r.dash == "6 3"]
    if limits and any(c.flagged for c in p.curves):
        band = min(limits)
        out.append(el("rect", {"x": left, "y": Y(ymax), "width": plot_w,
                               "height": max(0.0, Y(band) - Y(ymax)),
                               "fill": "#fff4e0", "fill-opacity": 0.6},
                      children=[el("title", text="above the link's goodput limit")]))
    for ref in p.references:
        out.append(el("line", {"x1": left, "y1": Y(ref.y), "x2": left + plot_w,
                               "y2": Y(ref.y), "stroke": REFERENCE, "stroke-width": 1.2,
                               "stroke-dasharray": ref.dash},
                      children=[el("title", text=ref.label)]))
    for c in p.curves:
        if not c.points:
            continue
        d = "M" + "L".join(f"{X(x):.1f},{Y(yv):.1f}" for x, yv in c.points)
        if c.line:
            out.append(el("path", {"d": d, "fill": "none", "stroke": c.colour,
                                   "stroke-width": 1.8, "stroke-dasharray": c.dash,
                                   "stroke-linejoin": "round"},
                          children=[el("title", text=c.label)]))
        every = 1 if c.titles else max(1, len(c.points) // 12)
        for k, (x, yv) in enumerate(c.points):
            if c.marker != "none" and (k % every == 0 or k == len(c.points) - 1):
                out.append(marker(c.marker, X(x), Y(yv), 4.2 if not c.line else 3.2,
                                  c.colour, stroke="#ffffff",
                                  title=c.titles[k] if c.titles else
                                  f"{c.label}: {size_text(x)} {p.xunit}, {yv:.1f} {p.yunit}"))
    out.append(el("path", {"d": f"M{left},{top}V{bottom}H{left + plot_w}", "fill": "none",
                           "stroke": AXIS}))
    out.append(label(left + plot_w / 2, bottom + 30, p.xlabel, FONT, anchor="middle"))
    out.append(el("text", {"x": x0 + 12, "y": (top + bottom) / 2, "font-size": FONT,
                           "text-anchor": "middle",
                           "transform": f"rotate(-90 {x0 + 12} {(top + bottom) / 2})"},
                  p.ylabel))
    items = [LegendItem(c.label, c.colour, c.marker) if c.marker != "none"
             else LegendItem(c.label, c.colour, "line", dash=c.dash) for c in p.curves]
    leg, lh = legend(items, x0 + 8, bottom + 40, width - 16)
    out.append(leg)
    return "".join(out), bottom + 40 + lh - y0


def scatter_panel(p: ScatterPanel, x0: float, y0: float, width: float) -> tuple[str, float]:
    out = []
    y = y0
    if p.title:
        out.append(label(x0, y + 14, p.title, TITLE, font_weight="600"))
        y += 22
    left, plot_w = x0 + 48, width - 48 - 10
    plot_h = 200
    top, bottom = y + 6, y + 6 + plot_h
    ymax = p.ymax or 1.0

    def X(v: float) -> float:
        return left + max(0.0, min(v, p.xmax)) / p.xmax * plot_w

    def Y(v: float) -> float:
        return bottom - max(0.0, min(v, ymax)) / ymax * plot_h

    for t in nice_ticks(ymax):
        out.append(el("line", {"x1": left, "y1": Y(t), "x2": left + plot_w, "y2": Y(t),
                               "stroke": GRID}))
        out.append(label(left - 4, Y(t) + 4, tick_text(t), SMALL, anchor="end"))
    for t in nice_ticks(p.xmax):
        out.append(el("line", {"x1": X(t), "y1": top, "x2": X(t), "y2": bottom,
                               "stroke": GRID}))
        out.append(label(X(t), bottom + 14, tick_text(t), SMALL, anchor="middle"))
    for d in p.dots:
        out.append(marker(d.marker, X(d.x), Y(d.y), 4.5, d.colour, stroke="#333333",
                          title=f"{d.label}: {d.y:.1f} Mbit/s at {d.x:.0f} % CPU"))
    out.append(el("path", {"d": f"M{left},{top}V{bottom}H{left + plot_w}", "fill": "none",
                           "stroke": AXIS}))
    out.append(label(left + plot_w / 2, bottom + 30, p.xlabel, FONT, anchor="middle"))
    out.append(el("text", {"x": x0 + 10, "y": (top + bottom) / 2, "font-size": FONT,
                           "text-anchor": "middle",
                           "transform": f"rotate(-90 {x0 + 10} {(top + bottom) / 2})"},
                  p.ylabel))
    return "".join(out), bottom + 38 - y0


# -- legends --------------------------------------------------------------------------------
def legend(items: list[LegendItem], x0: float, y0: float, width: float) -> tuple[str, float]:
    """Items left to right, wrapping; returns (svg, height)."""
    if not items:
        return "", 0.0
    out = []
    x, y = x0, y0
    for it in items:
        w = 26 + text_width(it.label, SMALL) + 14
        if x > x0 and x + w > x0 + width:
            x, y = x0, y + 18
        cy = y + 6
        if it.shape == "bar":
            out.append(el("rect", {"x": x, "y": cy - 5, "width": 18, "height": 10,
                                   "fill": it.colour}))
        elif it.shape == "line":
            out.append(el("line", {"x1": x, "y1": cy, "x2": x + 18, "y2": cy,
                                   "stroke": it.colour, "stroke-width": 1.6,
                                   "stroke-dasharray": it.dash}))
        elif it.shape == "limit":
            out.append(el("line", {"x1": x + 9, "y1": cy - 7, "x2": x + 9, "y2": cy + 7,
                                   "stroke": it.colour, "stroke-width": 2}))
        elif it.shape == "whisker":
            out.append(el("path", {"d": f"M{x + 2},{cy}H{x + 16}M{x + 2},{cy - 4}V{cy + 4}"
                                        f"M{x + 16},{cy - 4}V{cy + 4}",
                                   "stroke": it.colour, "stroke-width": 1.6, "fill": "none"}))
        elif it.shape == "band":
            out.append(el("rect", {"x": x, "y": cy - 5, "width": 18, "height": 10,
                                   "fill": "#fff4e0", "stroke": "#f0d5a8"}))
        elif it.shape == "flag":
            out.append(el("rect", {"x": x, "y": cy - 5, "width": 18, "height": 10,
                                   "fill": "#ffffff", "stroke": "#000000",
                                   "stroke-dasharray": "3 2"}))
        else:
            out.append(marker(it.shape, x + 9, cy, 4.5, it.colour))
        out.append(label(x + 24, cy + 4, it.label, SMALL))
        x += w
    return "".join(out), y - y0 + 20


# -- figures --------------------------------------------------------------------------------
def _defs(fid: str) -> str:
    return el("defs", children=[el("pattern", {
        "id": f"{fid}-pub", "width": 6, "height": 6, "patternUnits": "userSpaceOnUse",
        "patternTransform": "rotate(45)"}, children=[
            el("rect", {"width": 6, "height": 6, "fill": "#d9d9d9"}),
            el("line", {"x1": 0, "y1": 0, "x2": 0, "y2": 6, "stroke": PUBLISHED,
                        "stroke-width": 3})])])


def render(fig: Figure) -> str:
    """The figure as one SVG document (also valid inline in HTML)."""
    fid = "nb-" + fig.id
    cols = max(1, fig.columns)
    col_w = (WIDTH - 16 - (cols - 1) * 16) / cols
    if cols > 1 and any(_names_cut(p, col_w) for p in fig.panels):
        cols, col_w = 1, WIDTH - 16.0     # side by side the cards' names would be cut
    parts = []
    y = 8.0
    row_h = 0.0
    for k, panel in enumerate(fig.panels):
        col = k % cols
        if col == 0 and k:
            y += row_h + 10
            row_h = 0.0
        x = 8 + col * (col_w + 16)
        if isinstance(panel, BarPanel):
            svg, h = bar_panel(panel, fid, x, y, col_w)
        elif isinstance(panel, HeatPanel):
            svg, h = heat_panel(panel, x, y, col_w)
        elif isinstance(panel, LinePanel):
            svg, h = line_panel(panel, fid, x, y, col_w)
        else:
            svg, h = scatter_panel(panel, x, y, col_w)
        parts.append(svg)
        row_h = max(row_h, h)
    y += row_h + 6
    leg, lh = legend(fig.legend, 8, y, WIDTH - 16)
    parts.append(leg)
    height = math.ceil(y + lh + 6)
    fig.size_px = (WIDTH, height)
    head = el("title", text=fig.title) + el("desc", text=fig.caption)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" id="{_attr(fid)}" class="chart" '
            f'viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img" '
            f'font-family="{_attr(FONT_FAMILY)}">'
            + head + _defs(fid)
            + el("rect", {"width": WIDTH, "height": height, "fill": "#ffffff"})
            + "".join(parts) + "</svg>")


def render_all(report: Report) -> None:
    for fig in report.figures:
        fig.svg = render(fig)
