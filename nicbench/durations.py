"""How long something took or will take, as the CLI, ``status`` and the morning summary
say it: ``1h02m``, ``3m05s``, ``7s`` (``--plan`` spells its estimate out instead)."""

from __future__ import annotations


def duration(seconds: float | None) -> str:
    """``3725`` -> ``1h02m``, ``185`` -> ``3m05s``, ``7.9`` -> ``7s``; None -> ``?``."""
    if seconds is None:
        return "?"
    s = max(0, int(seconds))
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"
