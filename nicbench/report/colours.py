"""Colours and second cues: one colour per adapter, derived from its inventory id.

An adapter keeps its colour in every report (the same card on two nights, in two reports,
looks the same), so the colour is a function of the id alone, not of the adapter's place
in a report. The palette mixes Okabe & Ito's colour-blind-safe set with Paul Tol's "muted"
one, ten colours that stay apart under the common colour-vision deficiencies; with more
adapters than colours two cards can share a colour, so every adapter also has a marker
(drawn in front of its label, on its curves and points), derived from the id the same way.

The same adapter in several runs of a comparison is drawn in shades of its colour: run A
in the colour itself, then lighter and darker shades (:func:`shade`).

MTUs (the curves of one adapter's netPIPE chart) have colours of their own, in order of
size, from a second list, so a curve per MTU never looks like another adapter.
"""

from __future__ import annotations

import hashlib

PALETTE = [
    "#88ccee",   # cyan (Tol)
    "#999933",   # olive (Tol)
    "#332288",   # indigo (Tol)
    "#d55e00",   # vermillion (Okabe-Ito)
    "#882255",   # wine (Tol)
    "#ddcc77",   # sand (Tol)
    "#009e73",   # bluish green (Okabe-Ito)
    "#0072b2",   # blue (Okabe-Ito)
    "#e69f00",   # orange (Okabe-Ito)
    "#cc79a7",   # reddish purple (Okabe-Ito)
]
# Filled shapes only: a cross marks a problem elsewhere, never a card.
MARKERS = ["circle", "square", "triangle", "diamond", "triangle-down", "star", "pentagon",
           "hexagon"]

MTU_MARKERS = ["circle", "square", "triangle", "diamond", "triangle-down", "star", "pentagon",
               "hexagon"]

REFERENCE = "#333333"       # reference lines (goodput limit, line rate): never an adapter's
PUBLISHED = "#8c8c8c"       # published figures (--reference)


def _digest(adapter_id: str) -> int:
    return int(hashlib.sha256(adapter_id.encode("utf-8")).hexdigest(), 16)


def adapter_colour(adapter_id: str) -> str:
    """The colour of an adapter in every chart of every report."""
    return PALETTE[_digest(adapter_id) % len(PALETTE)]


def adapter_marker(adapter_id: str) -> str:
    """The marker of an adapter: the second cue beside its colour."""
    return MARKERS[_digest(adapter_id) // len(PALETTE) % len(MARKERS)]


def _rgb(colour: str) -> tuple[int, int, int]:
    c = colour.lstrip("#")
    return int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)


def _hex(rgb: tuple[float, float, float]) -> str:
    return "#" + "".join(f"{max(0, min(255, round(v))):02x}" for v in rgb)


def mix(colour: str, other: str, t: float) -> str:
    """``colour`` moved a fraction ``t`` towards ``other``."""
    a, b = _rgb(colour), _rgb(other)
    return _hex(tuple(x + (y - x) * t for x, y in zip(a, b, strict=False)))  # type: ignore[arg-type]


# Run A, B, C, D ... of one adapter: the colour, lighter, darker, lighter still.
_SHADES = [("#ffffff", 0.0), ("#ffffff", 0.5), ("#000000", 0.35), ("#ffffff", 0.75),
           ("#000000", 0.6)]


def shade(colour: str, run_index: int) -> str:
    """The colour of run ``run_index`` (0 = A) of an adapter drawn in several runs."""
    towards, t = _SHADES[run_index % len(_SHADES)]
    return mix(colour, towards, t)


def luminance(colour: str) -> float:
    """Relative luminance (WCAG 2), 0 = black, 1 = white."""
    def channel(v: int) -> float:
        s = v / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(v) for v in _rgb(colour))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio of two colours (1 to 21)."""
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def ink_on(colour: str) -> str:
    """Black or white, whichever reads better on ``colour`` (text in a cell, a whisker
    over a bar)."""
    return "#000000" if contrast(colour, "#000000") >= contrast(colour, "#ffffff") else "#ffffff"


# A sequential scale for heatmaps (viridis' stops): ordered in lightness, colour-blind safe.
_VIRIDIS = ["#440154", "#482878", "#3e4989", "#31688e", "#26828e", "#1f9e89", "#35b779",
            "#6ece58", "#b5de2b", "#fde725"]


def scale(t: float) -> str:
    """The heatmap colour of a value at fraction ``t`` (0..1) of the scale."""
    t = max(0.0, min(1.0, t))
    pos = t * (len(_VIRIDIS) - 1)
    i = min(int(pos), len(_VIRIDIS) - 2)
    return mix(_VIRIDIS[i], _VIRIDIS[i + 1], pos - i)


def mtu_colours(n: int) -> list[str]:
    """Colours of ``n`` MTUs (curves of one adapter), smallest first: steps of the same
    sequential scale, dark to light (stopping before its pale yellow end, which a thin
    line on white would lose), so the order of the MTUs shows in the colours too."""
    if n <= 1:
        return [scale(0.0)]
    return [scale(0.82 * k / (n - 1)) for k in range(n)]
