"""What a run leaves behind, and reading it back.

``nicbench.results.frame(source, ...)`` is every stored trial of results directories or a
results store as one pandas DataFrame (``results/frame.py``); it is loaded on first use,
so importing this package costs nothing of pandas.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "frame":
        import importlib

        return importlib.import_module("nicbench.results.frame")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
