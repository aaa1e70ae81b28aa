"""What a run's trials left in /tmp on the lab's hosts (they share this machine's file
system): every trial's files are named ``nicbench-<trial id>-<8 hex>`` (execution/trial.py),
made while the trial ran. Only this run's are looked at: another lab on the machine (a
colleague's run, a private lab) may be running the same profile at the same time, and its
trial files of the same names are not this run's leftovers."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from nicbench.results.records import TrialRecord

SLACK_S = 1.0     # file times against the records' (both this machine's clock)


def left_by(recs: Iterable[TrialRecord]) -> list[str]:
    """The files and directories in /tmp that the trials of ``recs`` made and left."""
    left = []
    for rec in recs:
        for path in Path("/tmp").glob(f"nicbench-{rec.trial_id}-*"):
            try:
                made = path.lstat().st_mtime
            except FileNotFoundError:
                continue        # removed as we looked: not left
            if rec.started_at - SLACK_S <= made <= rec.ended_at + SLACK_S:
                left.append(str(path))
    return sorted(left)
