"""Apply settings to hosts and always put them back; never leave a process or file behind.

A :class:`TuningSession` is the journal of everything a run changes or leaves on its
hosts:

- **settings** (:class:`Change`): the original value is recorded *before* the setting is
  changed, in memory and in the journal file (``DIR/tuning.json``, written atomically and
  fsynced), and ``restore()`` puts back exactly those values in reverse order;
- **leftovers** (:class:`Leftover`): a tool started in the background, or a foreground
  command's pid file, is journaled *before* it starts, by the path nicbench will make for
  it on the host (a directory holding its pid, or a pid file), and cleared once that path
  is gone; ``restore()`` stops what such a path still names and removes it.

Used as a context manager, restore runs on success, on error and on Ctrl-C (with SIGINT
held off while restoring, so a second Ctrl-C cannot leave a host half-restored).
``restore(hosts=...)`` puts back only what was done on those hosts: pairs measured at
the same time (never sharing a host) each restore their own point. One lock guards the
entries and the file, so those pairs' threads can record and clear at once. If the
controller itself dies, :meth:`TuningSession.load` reads the journal back with every
entry still pending, so ``nicbench restore DIR`` or ``nicbench run --resume DIR`` finishes
the job: a pending entry is only ever dropped from the file once it has been put back.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from collections.abc import Callable, Collection, Mapping

from nicbench.errors import NicbenchError, ResultsWriteError, UsageError
from nicbench.interrupts import interrupts_held
from nicbench.platforms.base import Platform, SettingKind
from nicbench.textfile import TextFileError, decode_utf8, read_bytes, write_atomic

JOURNAL_VERSION = 2


@dataclass
class Change:
    host: str
    kind: SettingKind       # written as its value: "mtu", "sysctl", ...
    key: str                # interface, sysctl name, ...
    original: str | None    # None: the setting did not exist (restoring deletes it)
    applied: str | None
    restored: bool = False

    def __post_init__(self) -> None:
        self.kind = SettingKind(self.kind)     # as read from a journal: ValueError if unknown


@dataclass
class Leftover:
    """Something nicbench made on a host that must not outlive the run: a background
    command's directory (its pid inside) or a foreground command's pid file."""

    host: str
    path: str
    what: str               # the command, for messages
    port: int | None = None
    started_at: float = field(default_factory=time.time)


@dataclass
class Problem:
    """A setting or leftover that could not be put back: what, on which host, why."""

    host: str
    what: str
    why: str

    def __str__(self) -> str:
        return f"{self.host}: {self.what}: {self.why}"


class TuningSession:
    def __init__(self, journal: str | Path | None = None,
                 on_restore: Callable[[Change], None] | None = None):
        self.changes: list[Change] = []
        self.leftovers: list[Leftover] = []
        self._platforms: dict[str, Platform] = {}
        self.journal = Path(journal) if journal else None
        self.on_restore = on_restore or (lambda change: None)
        self.journal_error: str | None = None
        # Entries and the file are shared by the threads of pairs measured at once.
        self._lock = threading.RLock()

    @classmethod
    def load(cls, journal: str | Path,
             on_restore: Callable[[Change], None] | None = None) -> TuningSession:
        """The session a run left in ``journal``: its pending changes and leftovers, to
        be bound to platforms (:meth:`bind`) and restored. A missing journal is empty."""
        session = cls(journal, on_restore)
        changes, leftovers = read_journal_entries(journal)
        session.changes = [c for c in changes if not c.restored]
        session.leftovers = leftovers
        return session

    def hosts(self) -> set[str]:
        """The hosts with something pending."""
        with self._lock:
            return {c.host for c in self.pending()} | {x.host for x in self.leftovers}

    def bind(self, platforms: Mapping[str, Platform]) -> None:
        """The platforms to restore pending entries through, by host name."""
        with self._lock:
            self._platforms.update(platforms)

    # -- apply --------------------------------------------------------------------
    def apply(self, platform: Platform, kind: SettingKind, key: str, value: str | None) -> bool:
        """Set ``kind`` ``key`` to ``value`` on the platform's host (None: delete it),
        journaling the original first; nothing is recorded or sent if it already is.
        True if the host's setting was changed."""
        original = platform.get_setting(kind, key)
        if platform.same_setting(kind, original, value):
            return False
        self._record(platform, Change(platform.host, kind, key, original, value))
        platform.set_setting(kind, key, value)
        return True

    def set_mtu(self, platform: Platform, iface: str, mtu: int) -> None:
        # Linux: the MTU itself; Windows: the driver's jumbo frame size for it.
        self.apply(platform, *platform.mtu_setting(iface, int(mtu)))

    def set_sysctl(self, platform: Platform, name: str, value: str) -> None:
        self.apply(platform, SettingKind.SYSCTL, name, str(value))

    def _record(self, platform: Platform, change: Change) -> None:
        with self._lock:
            # Only the first change of a key keeps the true original; a later one (Windows
            # registry values kept from one point to the next) only says what is in force.
            same = next((c for c in self.changes if c.host == change.host
                         and c.kind == change.kind and c.key == change.key
                         and not c.restored), None)
            if same is None:
                self.changes.append(change)
            else:
                same.applied = change.applied
            self._platforms[platform.host] = platform
            self._write_journal(strict=True)

    # -- leftovers ----------------------------------------------------------------
    def expect(self, platform: Platform, path: str, what: str, port: int | None = None) -> None:
        """Journal ``path`` on the platform's host before the command that makes it
        starts."""
        self.expect_all([(platform, path, what, port)])

    def expect_all(self, items: list[tuple[Platform, str, str, int | None]]) -> None:
        """:meth:`expect` for several paths in one journal write (a trial knows all of
        its paths before it starts: its server's directory, its client's pid file and
        output file)."""
        with self._lock:
            for platform, path, what, port in items:
                self._platforms[platform.host] = platform
                self.leftovers.append(Leftover(platform.host, path, what, port))
            self._write_journal(strict=True)

    def cleared(self, host: str, path: str) -> None:
        """``path`` is gone from ``host`` (the command ended and its files were removed)."""
        self.cleared_all([(host, path)])

    def cleared_all(self, gone: list[tuple[str, str]]) -> None:
        """:meth:`cleared` for several (host, path) in one journal write."""
        with self._lock:
            before = len(self.leftovers)
            self.leftovers = [x for x in self.leftovers if (x.host, x.path) not in gone]
            if len(self.leftovers) != before:
                self._write_journal()

    # -- restore ------------------------------------------------------------------
    def restore(self, hosts: Collection[str] | None = None,
                only: Callable[[Change], bool] | None = None) -> list[Problem]:
        """Stop every leftover and put every changed setting back, in reverse order; only
        those of ``hosts`` if given, and with ``only`` the settings it accepts (the others
        stay applied and journaled). Returns what could not be done this time (each
        problem once). The hosts are talked to without the lock held: no other thread
        works on these hosts meanwhile (the scheduler never runs two pairs sharing one)."""
        def mine(host: str) -> bool:
            return hosts is None or host in hosts

        problems: list[Problem] = []
        with interrupts_held():
            with self._lock:
                by_host: dict[str, list[Leftover]] = {}
                for x in self.leftovers:
                    if mine(x.host):
                        by_host.setdefault(x.host, []).append(x)
                changes = [c for c in reversed(self.changes) if not c.restored and mine(c.host)]
            for host, items in by_host.items():
                try:
                    self._platform(host).reap([x.path for x in items])
                    gone = {id(x) for x in items}
                    with self._lock:
                        self.leftovers = [x for x in self.leftovers if id(x) not in gone]
                except NicbenchError as exc:
                    problems += [Problem(host, f"{x.what} ({x.path})", exc.one_line())
                                 for x in items]
            for change in changes:
                if only is not None and not only(change):
                    continue
                try:
                    self._platform(change.host).set_setting(change.kind, change.key,
                                                            change.original)
                    change.restored = True
                    self.on_restore(change)
                except NicbenchError as exc:
                    problems.append(Problem(
                        change.host, f"{change.kind} {change.key} (to put back: "
                        f"{'<absent>' if change.original is None else change.original}, "
                        f"now: {change.applied})", exc.one_line()))
            with self._lock:
                self._write_journal()
        return problems

    def _platform(self, host: str) -> Platform:
        try:
            with self._lock:
                return self._platforms[host]
        except KeyError:
            raise UsageError(f"{host}: no connection to this host to put its settings "
                             "back") from None

    def forget_restored(self) -> None:
        """Drop restored changes, so the next apply records the hosts' values afresh."""
        with self._lock:
            self.changes = [c for c in self.changes if not c.restored]

    def pending(self) -> list[Change]:
        with self._lock:
            return [c for c in self.changes if not c.restored]

    def _write_journal(self, strict: bool = False) -> None:
        """Write the journal atomically. ``strict`` (before a change is made): a failure
        to write raises, so nothing is changed that the journal does not hold. Otherwise
        (recording progress) a failure is kept in ``journal_error`` and the work goes on:
        the file then still lists entries already done, which a later restore finds
        already put back, never the reverse."""
        if self.journal is None:
            return
        data = {"format_version": JOURNAL_VERSION, "updated": time.time(),
                "changes": [asdict(c) for c in self.changes if not c.restored],
                "leftovers": [asdict(x) for x in self.leftovers]}
        try:
            write_atomic(self.journal, json.dumps(data, indent=1), fsync=True)
            self.journal_error = None
        except OSError as exc:
            self.journal_error = f"{self.journal}: cannot write: {exc.strerror or exc}"
            if strict:
                # The results directory is full or gone: said as for trials.jsonl, with
                # the free space and the --resume that continues the run.
                from nicbench.results.rundir import write_error

                raise JournalError(str(write_error(self.journal.parent, exc))) from exc
            if not data["changes"] and not data["leftovers"]:
                # Everything is put back but the file cannot say so: a missing journal
                # says it (nothing pending), and removing a file needs no space.
                try:
                    self.journal.unlink(missing_ok=True)
                    self.journal_error = None
                except OSError:
                    pass

    def __enter__(self) -> TuningSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.restore()


# A journal holds one entry per setting changed and per file or process left on a host:
# a few KB for a night. 16 MB is not a journal, and is refused before it is read whole.
MAX_JOURNAL_BYTES = 16 << 20


class JournalError(ResultsWriteError):
    """The journal could not be written, so nothing more may be changed on a host."""

    def __init__(self, message: str):
        NicbenchError.__init__(self, message)


def read_journal_entries(path: str | Path) -> tuple[list[Change], list[Leftover]]:
    p = Path(path)
    if not os.path.lexists(p):
        return [], []
    try:
        data = json.loads(decode_utf8(read_bytes(p, MAX_JOURNAL_BYTES, "not a nicbench "
                                                 "tuning journal", nofollow=True)))
        changes = [Change(**c) for c in data.get("changes", [])]
        leftovers = [Leftover(**x) for x in data.get("leftovers", [])]
    except TextFileError as exc:
        raise UsageError(f"{p}: {exc.message}: put the hosts' settings back by hand") \
            from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, TypeError, ValueError,
            AttributeError, RecursionError) as exc:
        raise UsageError(f"{p}: not a nicbench tuning journal ({exc}): put the hosts' "
                         "settings back by hand") from None
    return changes, leftovers

