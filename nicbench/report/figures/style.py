"""The look of the publication figures: the house style, a reviewer's style over it, and
the mapping of the report's shapes, dashes and card colours onto matplotlib's.

The house style (``house.mplstyle``, package data) is always applied first; a user's
``--style FILE.mplstyle`` is laid over it (``plt.style.context([house, user])``), so a
journal's fonts, sizes or colours win key by key. A user file is checked before anything
is drawn: an unknown key or a value matplotlib refuses is one line naming the file, its
line and the key (exit 2), not matplotlib's warning on stderr halfway through a night.

A card keeps one colour in every chart: the report derives it from the card's inventory id
(``colours.adapter_colour``: an index into its palette). A style that sets its own colour
cycle (``axes.prop_cycle``) recolours the cards from that cycle by the same index, so each
card still has one colour across charts, in the publication's palette; later runs of a
card are shades of it as in the report. Markers stay those of the report (the second cue).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from nicbench.errors import UsageError
from nicbench.report.colours import PALETTE, ink_on, shade
from nicbench.report.model import Entry

HOUSE = "house.mplstyle"

# The report's marker names (colours.MARKERS) as matplotlib's marker codes.
MARKERS = {"circle": "o", "square": "s", "triangle": "^", "diamond": "D",
           "triangle-down": "v", "star": "*", "pentagon": "p", "hexagon": "h",
           "plus": "P", "cross": "X"}


def marker(name: str) -> str:
    return MARKERS.get(name, "o")


def dash(svg_dash: str) -> tuple[float, tuple[float, ...]] | Literal["-"]:
    """An SVG dash array ("6 3") as a matplotlib line style; "" is a solid line."""
    if not svg_dash.strip():
        return "-"
    return (0.0, tuple(float(x) for x in svg_dash.replace(",", " ").split()))


def house_style() -> str:
    """The path of the house style file shipped in the package."""
    return str(resources.files("nicbench.report.figures").joinpath(HOUSE))


def check_style(path: str) -> str:
    """``path`` if it is a style file matplotlib takes whole, else one clear error."""
    import matplotlib

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UsageError(f"--style {path}: cannot read it: {why}; give a matplotlib "
                         "style file (FILE.mplstyle)") from exc
    rc: Any = matplotlib.RcParams()
    for n, raw in enumerate(text.splitlines(), 1):
        line = strip_comment(raw)
        if not line:
            continue
        key, sep, value = line.partition(":")
        key, value = key.strip(), value.strip().strip('"')
        if not sep:
            raise UsageError(f"{path}:{n}: {line!r} is not 'key: value'; see matplotlib's "
                             "style sheets (matplotlibrc format)")
        if key not in matplotlib.rcParams:
            raise UsageError(f"{path}:{n}: {key}: not a matplotlib setting (rcParams); "
                             "check its spelling")
        try:
            rc[key] = value
        except (ValueError, TypeError, KeyError) as exc:
            raise UsageError(f"{path}:{n}: {key}: {value!r} is refused by matplotlib: "
                             f"{exc}") from exc
    return str(p)


def strip_comment(line: str) -> str:
    """``line`` without its comment, as matplotlib reads a style file: from the first #
    outside double quotes ("#d55e00" is a colour; '#d55e00' starts a comment there)."""
    quote = False
    for i, ch in enumerate(line):
        if ch == '"':
            quote = not quote
        elif ch == "#" and not quote:
            return line[:i].strip()
    return line.strip()


def style_files(user: str | None) -> list[str]:
    return [house_style()] + ([user] if user else [])


def palette(styles: list[str]) -> list[str]:
    """The colour cycle the styles end with (the last one that sets it wins)."""
    import matplotlib

    colours = list(PALETTE)
    for s in styles:
        rc = matplotlib.rc_params_from_file(s, use_default_template=False)
        if "axes.prop_cycle" in rc:
            found = rc["axes.prop_cycle"].by_key().get("color")
            if found:
                colours = [matplotlib.colors.to_hex(c) for c in found]
    return colours


@dataclass
class Colours:
    """A card's colour in the styles' palette: entry key -> colour."""

    of_entry: dict[str, str] = field(default_factory=dict)

    def of(self, entry: str | None, model_colour: str) -> str:
        return self.of_entry.get(entry or "", model_colour)

    def ink(self, entry: str | None, model_colour: str) -> str:
        return ink_on(self.of(entry, model_colour))


def card_colours(entries: list[Entry], colours: list[str]) -> Colours:
    """Each entry's colour: the report's when the palette is the report's, else the card's
    index into the report's palette taken in ``colours``, shaded for later runs as the
    report shades them."""
    if [c.lower() for c in colours] == [c.lower() for c in PALETTE]:
        return Colours({e.key: e.colour for e in entries})
    out: dict[str, str] = {}
    seen: dict[str, int] = {}
    for e in entries:
        base = colours[PALETTE.index(e.base_colour) % len(colours)] \
            if e.base_colour in PALETTE else e.colour
        out[e.key] = shade(base, seen.get(e.adapter, 0))
        seen[e.adapter] = seen.get(e.adapter, 0) + 1
    return Colours(out)
