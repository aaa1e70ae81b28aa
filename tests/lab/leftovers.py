"""What a run's trials left in /tmp on the lab's hosts (they share this machine's file
system): every trial's files are named ``nicbench-<trial id>-<8 hex>`` (execution/trial.py),
made while the trial ran. Only this run's are looked at: another lab on the machine (a
colleague's run, a private lab) may be running the same profile at the same time, and its
trial files of the same names are not this run's leftovers."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

from nicbench.results.records import TrialRecord
from procs import in_namespace

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


def left_since(trial_id: str, since: float) -> list[str]:
    """The files in /tmp of trial ``trial_id`` made at or after ``since`` (time.time()):
    for a trial interrupted before its record was stored."""
    return sorted(str(p) for p in Path("/tmp").glob(f"nicbench-{trial_id}-*")
                  if p.lstat().st_mtime >= since - SLACK_S)


def assert_left_nothing(recs: list[TrialRecord], out: Path | None = None) -> None:
    """Nothing of the run's trials is left on the lab's hosts: no file in /tmp (above), no
    process still running any of their tools' commands (the test's own and those beside
    it), and, given the run's directory, a tuning journal with nothing left to put back."""
    if out is not None:
        journal = json.loads((out / "tuning.json").read_text())
        assert journal["changes"] == [] and journal["leftovers"] == [], journal
    left = left_by(recs)
    assert left == [], left
    for rec in recs:
        hosts = set(rec.hosts.values()) or None    # None: a record naming no host
        for cmd in [*rec.commands.values(), *(c for b in rec.beside
                                             for c in b.commands.values())]:
            running = running_in(hosts, "^" + re.escape(cmd))
            assert running == [], f"still running: {cmd} ({running})"


def running_in(namespaces: Iterable[str] | None, pattern: str) -> list[str]:
    """The live processes of the lab's ``namespaces`` whose command line matches
    ``pattern`` (a regex, searched), as "pid namespace". Only these namespaces: the
    suite's other lane runs a lab of its own whose test links have the same addresses
    (198.18.<n>.x in namespaces of their own), so the same command line there is not
    this run's. None: anywhere on the machine (``pgrep -f``)."""
    if namespaces is None:
        return subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True,
                              timeout=10).stdout.split()
    regex = re.compile(pattern)
    return [f"{pid} {ns}" for ns in sorted(set(namespaces))
            for pid in in_namespace(ns, lambda cmd: regex.search(cmd) is not None)]
