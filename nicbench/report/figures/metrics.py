"""Text extents measured once per worker, not once per figure and format.

matplotlib keeps the extent of each string (width, height, descent) in a cache per
renderer object, and every figure saved makes a new renderer: the 50 cards' names, the
axis numbers and the legends of 82 charts were each measured again for every chart, once
for the layout, once for the PNG and once for the PDF (about 8,000 measurements, a tenth
of the drawing time). A string's extent depends on the kind of renderer, its dpi, the
font and the rcParams of text and mathtext, never on which renderer object asks, so here
one cache per worker holds them, keyed by all of those.
"""

from __future__ import annotations

_RC_PREFIXES = ("text.", "mathtext.", "pdf.", "ps.", "svg.", "font.")
_LIMIT = 65536
_rc_key: tuple = ()
_extents: dict[tuple, tuple[float, float, float]] = {}
matplotlibs = None                  # matplotlib's own cache per renderer, once replaced


def share(rc) -> None:
    """Measure each string once for every renderer of one kind and dpi under the rcParams
    ``rc`` (the style's: call it inside the style's context, before drawing). Other
    rcParams of text than the last call's empty the cache."""
    import matplotlib.text as mtext

    global _rc_key, matplotlibs
    key = tuple(sorted((k, str(v)) for k, v in rc.items() if k.startswith(_RC_PREFIXES)))
    if key != _rc_key:
        _rc_key = key
        _extents.clear()
    own = getattr(mtext, "_get_text_metrics_with_cache", None)
    if own is None:                 # another matplotlib: its own cache, as it is
        return
    if not getattr(own, "nicbench", False):
        matplotlibs = own
        setattr(mtext, "_get_text_metrics_with_cache", _extent)  # noqa: B010


def _extent(renderer, text, fontprop, ismath, dpi):
    """What ``renderer.get_text_width_height_descent`` says, asked once per key (the
    renderer's kind and dpi, the string, a copy of its font, math or not, the dpi)."""
    font = fontprop.copy()          # a FontProperties' hash follows its (mutable) state
    key = (type(renderer), getattr(renderer, "dpi", None), text, font, ismath, dpi)
    extent = _extents.get(key)
    if extent is None:
        if len(_extents) >= _LIMIT:
            _extents.clear()
        extent = _extents[key] = renderer.get_text_width_height_descent(text, font, ismath)
    return extent


_extent.nicbench = True             # type: ignore[attr-defined]
