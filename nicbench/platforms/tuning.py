"""Apply settings to hosts and always put them back.

A :class:`TuningSession` records a setting's original value *before* changing it, both in
memory and (optionally) in a journal file in the results directory, and ``restore()``
puts back exactly those values in reverse order. Used as a context manager, restore runs
on success, on error and on Ctrl-C (with SIGINT held off while restoring, so a second
Ctrl-C cannot leave a host half-restored). If the controller itself dies, the journal
lets ``nicbench restore DIR`` finish the job later.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

from nicbench.errors import NicbenchError
from nicbench.interrupts import interrupts_held
from nicbench.platforms.base import Platform


@dataclass
class Change:
    host: str
    kind: str               # a platform setting kind: "mtu", "sysctl", ...
    key: str                # interface, sysctl name, ...
    original: str | None    # None: the setting did not exist (restoring deletes it)
    applied: str | None
    restored: bool = False


class TuningSession:
    def __init__(self, journal: str | Path | None = None,
                 on_restore: Callable[[Change], None] | None = None):
        self.changes: list[Change] = []
        self._platforms: dict[str, Platform] = {}
        self.journal = Path(journal) if journal else None
        self.on_restore = on_restore or (lambda change: None)
        self.errors: list[str] = []

    # -- apply --------------------------------------------------------------------
    def apply(self, platform: Platform, kind: str, key: str, value: str | None) -> None:
        """Set ``kind`` ``key`` to ``value`` on the platform's host (None: delete it),
        journaling the original first; nothing is recorded or sent if it already is."""
        original = platform.get_setting(kind, key)
        if platform.same_setting(kind, original, value):
            return
        self._record(platform, Change(platform.host, kind, key, original, value))
        platform.set_setting(kind, key, value)

    def set_mtu(self, platform: Platform, iface: str, mtu: int) -> None:
        self.apply(platform, "mtu", iface, str(int(mtu)))

    def set_sysctl(self, platform: Platform, name: str, value: str) -> None:
        self.apply(platform, "sysctl", name, str(value))

    def _record(self, platform: Platform, change: Change) -> None:
        # Only the first change of a key keeps the true original.
        if not any(c.host == change.host and c.kind == change.kind and c.key == change.key
                   and not c.restored for c in self.changes):
            self.changes.append(change)
        self._platforms[platform.host] = platform
        self._write_journal()

    # -- restore ------------------------------------------------------------------
    def restore(self) -> list[str]:
        """Put every changed setting back; returns problems (also kept in ``errors``)."""
        with interrupts_held():
            for change in reversed(self.changes):
                if change.restored:
                    continue
                platform = self._platforms[change.host]
                try:
                    platform.set_setting(change.kind, change.key, change.original)
                    change.restored = True
                    self.on_restore(change)
                except NicbenchError as exc:
                    self.errors.append(f"could not restore {change.host} {change.kind} "
                                       f"{change.key} to {change.original}: {exc.one_line()}")
            self._write_journal()
        return list(self.errors)

    def adopt(self, changes: list[Change], platforms: dict[str, Platform]) -> None:
        """Take over changes left pending by another run (from its journal)."""
        self.changes.extend(changes)
        self._platforms.update(platforms)

    def forget_restored(self) -> None:
        """Drop restored changes, so the next apply records the hosts' values afresh."""
        self.changes = [c for c in self.changes if not c.restored]

    def pending(self) -> list[Change]:
        return [c for c in self.changes if not c.restored]

    def _write_journal(self) -> None:
        if self.journal is None:
            return
        tmp = self.journal.with_suffix(".tmp")
        tmp.write_text(json.dumps({"updated": time.time(),
                                   "changes": [asdict(c) for c in self.changes]}, indent=1))
        tmp.replace(self.journal)

    def __enter__(self) -> "TuningSession":
        return self

    def __exit__(self, *exc) -> None:
        self.restore()


def read_journal(path: str | Path) -> list[Change]:
    data = json.loads(Path(path).read_text())
    return [Change(**c) for c in data.get("changes", [])]
