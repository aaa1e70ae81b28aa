"""Processes as /proc shows them, for the tests that kill a parent and look for its
workers (a process's children, and whether a process still runs) and for the lab tests
that look for what a run left running on a host (a namespace's processes)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
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


def in_namespace(ns: str, match: Callable[[str], bool]) -> list[int]:
    """The live processes of network namespace ``ns`` (``ip netns pids``) whose command
    line (its arguments joined by spaces) ``match`` accepts. Another lab's namespaces may
    run the same command lines on the same addresses: they are not looked at."""
    pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True,
                          timeout=10).stdout.split()
    found = []
    for pid in pids:
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if alive(int(pid)) and match(cmd.strip()):
            found.append(int(pid))
    return found
