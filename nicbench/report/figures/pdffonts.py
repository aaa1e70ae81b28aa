"""One TrueType subset per font and worker, embedded in every PDF it draws.

matplotlib embeds a Type 42 (TrueType) font in each PDF by parsing the whole font file
with fontTools, cutting it down to the glyphs that PDF uses, and writing the cut font
out: 20-30 ms a font, two fonts a chart (regular and bold), a third of a small chart's
PDF time. A roundup's charts use the same few dozen glyphs again and again, so a worker
cuts each font once, to the printable ASCII glyphs and whatever a chart needs beyond
them, and hands that same subset to every PDF after it; a chart with a glyph outside
the set gets a subset of its own (cut once more, kept as well). Each PDF still embeds
its fonts whole for what it shows, as TrueType; its file is a few KB larger (the glyphs
of ASCII it does not use).

This replaces two helpers of matplotlib's PDF backend (``_backend_pdf_ps``:
``get_glyphs_subset`` and ``font_as_file``, private). :func:`install` checks that they
are those of matplotlib 3.11 (a subset by glyph index, opened as a context) and leaves a
matplotlib of another shape alone: its PDFs are then only slower, not different.
"""

from __future__ import annotations

import inspect
import string
from contextlib import contextmanager
from io import BytesIO
from typing import Any

_cache: dict[tuple[str, int, frozenset[int]], tuple[Any, dict[int, int], bytes]] = {}
_base: dict[tuple[str, int], frozenset[int]] = {}
_installed = False


def install() -> bool:
    """Route matplotlib's PDF font subsetting through the cache: False if this matplotlib
    does not subset the way this module expects (nothing is changed then)."""
    global _installed
    if _installed:
        return True
    from matplotlib.backends import _backend_pdf_ps as pdf_ps

    original = getattr(pdf_ps, "get_glyphs_subset", None)
    as_file = getattr(pdf_ps, "font_as_file", None)
    if original is None or as_file is None or not hasattr(pdf_ps, "SubsetResults"):
        return False
    if list(inspect.signature(original).parameters) != ["fontfile", "glyphs"]:
        return False

    @contextmanager
    def cached_subset(fontfile, glyphs):
        key = (str(fontfile), getattr(fontfile, "face_index", 0))
        wanted = frozenset(int(g) for g in glyphs) | _ascii_glyphs(fontfile, key)
        hit = _cache.get((*key, wanted))
        if hit is None:
            with original(fontfile, wanted) as sub:
                hit = (sub.font, dict(sub.glyph_index_map), as_file(sub.font).getvalue())
            _cache[(*key, wanted)] = hit
        yield pdf_ps.SubsetResults(hit[0], hit[1])

    def cached_as_file(font):
        for cached, _, data in _cache.values():
            if cached is font:
                return BytesIO(data)
        return as_file(font)

    pdf_ps.get_glyphs_subset = cached_subset
    pdf_ps.font_as_file = cached_as_file
    _installed = True
    return True


def _ascii_glyphs(fontfile, key: tuple[str, int]) -> frozenset[int]:
    """The glyph indices of printable ASCII in ``fontfile`` (those it has)."""
    found = _base.get(key)
    if found is None:
        from matplotlib.font_manager import get_font

        font = get_font(fontfile)
        cmap = font.get_charmap()
        found = frozenset(int(cmap[ord(c)]) for c in string.printable
                          if ord(c) in cmap and c.isprintable())
        _base[key] = found
    return found
