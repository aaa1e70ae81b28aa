"""Registration of the measurement and reporting commands (run, parse, report, restore).

Kept apart from cli.py so the CLI module stays a thin table of commands; each command
body imports its library lazily so ``nicbench --help`` stays fast.
"""

from __future__ import annotations


def register(sub) -> None:
    pass
