"""``nicbench report``: charts and tables combining one or more results directories.

Work in progress: the directories are read and checked (``load.py``); the page follows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from nicbench.errors import UsageError


def build_report(dirs: list[str], out: str | None = None, *, link_rates: list[str] = (),
                 warn: Callable[[str], None] | None = None) -> Path:
    from nicbench.report.load import load_runs

    load_runs(dirs, warn)
    raise UsageError("nicbench report: the page is not written yet (work in progress)")
