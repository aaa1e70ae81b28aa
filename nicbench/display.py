"""Names from results shown as text: never markup, never a formula, never a terminal command.

A name in a report (an adapter's label, a run's directory name, a pair) comes from a file
somebody else may have written. Wherever nicbench shows one, it goes through this module:

- :func:`visible`: control characters (ESC, which drives a terminal; CR, which hides what
  came before it; NUL), Unicode format characters (the right-to-left override U+202E and
  the other bidirectional controls, zero-width characters) and lone surrogates are shown
  as escapes (``\\x1b``, ``\\u202e``), so a name cannot recolour a terminal, reorder the
  text around it or hide part of itself, on a terminal or in the HTML page.
- :func:`shown`: :func:`visible`, and shortened with an ellipsis past ``MAX_NAME``
  characters, for names drawn in a chart or a table (a 200,000-character name must not
  size a chart to 31 GiB of pixels).
- :func:`csv_cell`: a value as a CSV cell a spreadsheet will not run as a formula.

matplotlib's own markup (mathtext, ``$...$``) is switched off where figures are drawn
(``text.parse_math: False``, ``report/figures/style.py``), so names reach it as plain text.
"""

from __future__ import annotations

import re
import unicodedata

MAX_NAME = 100                  # characters of a name shown in a chart, table or terminal
ELLIPSIS = "\u2026"

# Characters that are not printed as themselves: every one outside printable ASCII is
# looked at (category Cc control, Cf format: bidi controls and zero-width characters,
# Cs lone surrogate, Zl/Zp line and paragraph separators, Co private use is left).
_SUSPECT = re.compile(r"[^\x20-\x7e]")
_HIDDEN = {"Cc", "Cf", "Cs", "Zl", "Zp"}


def _escape(ch: str) -> str:
    n = ord(ch)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def _visible_char(m: re.Match[str]) -> str:
    ch = m.group()
    return _escape(ch) if unicodedata.category(ch) in _HIDDEN else ch


def visible(text: str, keep: str = "") -> str:
    """``text`` with every control, format (bidi, zero-width) and surrogate character
    written as an escape (``\\x1b``, ``\\u202e``); the characters in ``keep`` (a line's
    ``"\\n"``) are left as they are."""
    if text.isascii() and text.isprintable():
        return text
    if keep:
        return keep[0].join(visible(part, keep[1:]) for part in text.split(keep[0]))
    return _SUSPECT.sub(_visible_char, text)


def shown(text: object, limit: int = MAX_NAME) -> str:
    """A name as it is shown: :func:`visible`, at most ``limit`` characters (the end
    replaced by an ellipsis). Only the first ``limit`` characters are ever looked at."""
    text = "" if text is None else str(text)
    cut = len(text) > limit
    out = visible(text[:limit + 1] if cut else text)
    if cut or len(out) > limit:
        out = out[:limit - 1] + ELLIPSIS
    return out


# A cell a spreadsheet would run as a formula: = + - @ first, and tab / CR, which some
# programs strip before looking (OWASP, "CSV Injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_SURROGATES = re.compile("[\ud800-\udfff]")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?( ?%)?")


def csv_cell(value: object) -> object:
    """``value`` as a CSV cell that no spreadsheet runs: text starting like a formula gets
    a leading apostrophe (OWASP's advice); a number, or text that is just a number
    ("-3.2", "+1.5 %") or a lone "-" (no value), stays as it is; None is an empty cell; a
    lone surrogate (no UTF-8 for it: a name read from ``\\udc80`` in JSON) is written as
    its escape."""
    if value is None:
        return ""
    if not isinstance(value, str):
        return value
    if not value.isascii():
        value = _SURROGATES.sub(lambda m: _escape(m.group()), value)   # UTF-8 has none
    if value.startswith(_FORMULA_START) and value != "-" and not _NUMBER.fullmatch(value):
        return "'" + value
    return value
