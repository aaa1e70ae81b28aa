"""Processes as /proc shows them, for the tests that kill a parent and look for its
workers: a process's children, and whether a process still runs."""

from __future__ import annotations

from pathlib import Path


def children(pid: int) -> set[int]:
    """The pids of ``pid``'s children (of every thread of it)."""
    kids: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        kids |= {int(k) for k in (task / "children").read_text().split()}
    return kids


def alive(pid: int) -> bool:
    """Running: not gone, and not a zombie (ended, waiting for init to reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
