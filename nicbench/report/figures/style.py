"""The look of the publication figures: the house style, a reviewer's style over it, and
the mapping of the report's shapes, dashes and card colours onto matplotlib's.

The house style (``house.mplstyle``, package data) is always applied first; a user's
``--style FILE.mplstyle`` is laid over it (``plt.style.context([house, user])``), so a
journal's fonts, sizes or colours win key by key. A user file is checked before anything
is drawn: an unknown key or a value matplotlib refuses is one line naming the file, its
line and the key (exit 2), not matplotlib's warning on stderr halfway through a night;
so is a value matplotlib takes but figures cannot draw (``savefig.bbox: tight``, TeX,
a 1e6 pt font). Names are always drawn as plain text (``PLAIN_TEXT``: no mathtext, no
TeX), laid over every style.

A card keeps one colour in every chart: the report derives it from the card's inventory id
(``colours.adapter_colour``: an index into its palette). A style that sets its own colour
cycle (``axes.prop_cycle``) recolours the cards from that cycle by the same index, so each
card still has one colour across charts, in the publication's palette; later runs of a
card are shades of it as in the report. Markers stay those of the report (the second cue).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Literal

from nicbench.display import shown
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


# What figures cannot draw, though matplotlib takes it: key -> (is it drawable?, what to do)
STYLE_LIMIT = 256 << 10         # a style file is a few KB; /dev/zero never ends
FONT_PT = (4.0, 72.0)           # a text size figures can lay out, in points
DPI = (50, 1200)                # as --dpi
SIZE_KEYS = ("font.size", "axes.labelsize", "axes.titlesize", "figure.labelsize",
             "figure.titlesize", "legend.fontsize", "legend.title_fontsize",
             "xtick.labelsize", "ytick.labelsize")
# Names are text, never markup: a name with $...$ or a backslash is drawn as it is written.
PLAIN_TEXT = {"text.parse_math": False, "text.usetex": False}
# rcParams of how matplotlib runs, not of how a figure looks: matplotlib ignores them in a
# style with a warning each (matplotlib.style's own list)
NOT_STYLE = frozenset({
    "backend", "backend_fallback", "date.epoch", "docstring.hardcopy",
    "figure.max_open_warning", "figure.raise_window", "interactive", "savefig.directory",
    "timezone", "tk.window_focus", "toolbar", "webagg.address", "webagg.open_in_browser",
    "webagg.port", "webagg.port_retries"})


def check_style(path: str, warn: Callable[[str], None] | None = None) -> str:
    """``path`` if figures can draw with the style file it names, else one clear error
    (see :func:`read_style`); ``warn``: what of it is left out."""
    read_style(path, warn)
    return path


def read_style(path: str, warn: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The settings of the style file ``path`` that figures draw with (key -> value as
    matplotlib validated it), else one clear error naming the file, its line and the key.

    Read as nicbench reads every file named on the command line: a regular file of at
    most ``STYLE_LIMIT`` bytes (``/dev/zero`` and a FIFO are refused at once). A value
    matplotlib takes but figures cannot draw (``savefig.bbox: tight``, ``text.usetex``,
    a text size of 1e6 pt, 100,000 dpi) is refused; keys that are not style
    (``backend``, ``savefig.directory``) are left out, said in one ``warn`` line."""
    import matplotlib

    from nicbench.textfile import TextFileError, decode_utf8, read_bytes

    try:
        text = decode_utf8(read_bytes(path, STYLE_LIMIT, "a matplotlib style file is a "
                                                         "few KB"))
    except TextFileError as exc:
        where = f"{path}:{exc.line}" if exc.line else f"--style {path}"
        raise UsageError(f"{where}: {exc.message}; give a matplotlib style file "
                         "(FILE.mplstyle)") from exc
    except OSError as exc:
        raise UsageError(f"--style {path}: cannot read it: {exc.strerror or exc}; give a "
                         "matplotlib style file (FILE.mplstyle)") from exc
    rc: Any = matplotlib.RcParams()
    ignored: list[str] = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = strip_comment(raw)
        if not line:
            continue
        key, sep, value = line.partition(":")
        key, value = key.strip(), value.strip().strip('"')
        if not sep:
            raise UsageError(f"{path}:{n}: {shown(line)!r} is not 'key: value'; see "
                             "matplotlib's style sheets (matplotlibrc format)")
        if key not in matplotlib.rcParams:
            raise UsageError(f"{path}:{n}: {shown(key)}: not a matplotlib setting "
                             "(rcParams); check its spelling")
        if key in NOT_STYLE:
            ignored.append(f"{key} (line {n})")
            continue
        try:
            rc[key] = value
        except (ValueError, TypeError, KeyError) as exc:
            raise UsageError(f"{path}:{n}: {key}: {shown(value)!r} is refused by "
                             f"matplotlib: {shown(exc)}") from exc
        why = undrawable(key, rc[key])
        if why:
            raise UsageError(f"{path}:{n}: {key}: {shown(value)!r}: {why}")
    if ignored and warn is not None:
        warn(f"{path}: {', '.join(ignored)}: not style settings (how matplotlib runs, not "
             "how a figure looks): ignored; remove them from the style file")
    return dict(rc)


def undrawable(key: str, value: Any) -> str | None:
    """Why figures cannot draw with ``key`` at ``value`` (matplotlib took it), or None."""
    if key == "savefig.bbox" and value not in (None, "standard"):
        return ("figures lay each chart out to its own size; remove savefig.bbox (or set "
                "it to standard)")
    if key in PLAIN_TEXT and value != PLAIN_TEXT[key]:
        return ("names are drawn as plain text, never as TeX or math markup; remove "
                f"{key}")
    if key in SIZE_KEYS and isinstance(value, (int, float)) \
            and not FONT_PT[0] <= value <= FONT_PT[1]:
        return f"give a text size from {FONT_PT[0]:g} to {FONT_PT[1]:g} points"
    if key in ("savefig.dpi", "figure.dpi") and value != "figure" \
            and not DPI[0] <= float(value) <= DPI[1]:
        return f"give a resolution from {DPI[0]} to {DPI[1]} dots per inch (300 is print)"
    return None


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


Style = str | dict[str, Any]


def style_files(user: str | None) -> list[Style]:
    """What figures are drawn under: the house style, the user's (its settings as
    :func:`read_style` keeps them: never matplotlib's own reading of the file) and names as plain text."""
    return [house_style()] + ([read_style(user)] if user else []) + [dict(PLAIN_TEXT)]


def palette(styles: list[Style]) -> list[str]:
    """The colour cycle the styles end with (the last one that sets it wins)."""
    import matplotlib

    colours = list(PALETTE)
    for s in styles:
        rc = s if isinstance(s, dict) else \
            matplotlib.rc_params_from_file(s, use_default_template=False)
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
