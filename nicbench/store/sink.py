"""The store written as a run goes: :class:`StoreSink`, subscribed through
``Runner(sinks=...)``, writes each trial record once the Recorder has stored it.

The results directory is written first and stays the source of truth: a store that
cannot be written (a server gone, a disk full, a DuckDB file another process holds for
longer than a writer waits) never costs a trial nor stops the run. The sink says so once
(a runner Warning: what failed, and the ``nicbench store import DIR`` that catches up),
and writes nothing more for that run.

DuckDB lets one process at a time write a file, so the sink opens a DuckDB store for each
record, in one short transaction, and closes it: two runs (or a run and an import)
writing one file take turns, each waiting up to ``lock_wait_s`` for the other. A
PostgreSQL store is one connection for the run.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from nicbench.errors import NicbenchError
from nicbench.execution import events as ev
from nicbench.results.records import TrialRecord
from nicbench.store.backend import LOCK_WAIT_S
from nicbench.store.importer import run_row
from nicbench.store.location import StoreKind, StoreLocation
from nicbench.store.schema import RunRow
from nicbench.store.store import Store, open_store


class StoreSink:
    """Writes one run's records (and its row) to a store; never raises into the run."""

    def __init__(self, location: StoreLocation, run_dir: str | Path, *,
                 listener: ev.Listener = ev.ignore, lock_wait_s: float = LOCK_WAIT_S):
        self.location = location
        self.run_dir = Path(run_dir)
        self.listener = listener
        self.lock_wait_s = lock_wait_s
        self.failed: str | None = None     # why the store is no longer written, once it fails
        self.written = 0
        self._row: RunRow | None = None
        self._store: Store | None = None   # PostgreSQL: held for the run

    def __call__(self, rec: TrialRecord) -> None:
        if self.failed is not None:
            return
        try:
            first = self._row is None
            if first:
                self._row = run_row(self.run_dir)
            assert self._row is not None
            store = self._open()
            try:
                store.write_record(self._row, rec, with_run=first)
            finally:
                self._release(store)
            self.written += 1
        except Exception as exc:       # the run goes on whatever the store did
            self._fail(exc)

    def close(self) -> None:
        """The run's row brought up to date (its end, its final manifest), once the run
        has ended; the connection closed."""
        try:
            if self.failed is None and (self.run_dir / "manifest.json").is_file():
                row = run_row(self.run_dir)
                store = self._open()
                try:
                    store.write_run(row)
                finally:
                    self._release(store)
        except Exception as exc:
            self._fail(exc)
        finally:
            if self._store is not None:
                self._store.close()
                self._store = None

    def _open(self) -> Store:
        if self._store is not None:
            return self._store
        store = open_store(self.location, lock_wait_s=self.lock_wait_s,
                           check_whole=False)
        if self.location.kind is StoreKind.POSTGRESQL:
            self._store = store
        return store

    def _release(self, store: Store) -> None:
        if store is not self._store:
            store.close()

    def _fail(self, exc: Exception) -> None:
        why = self.location.scrub(exc.one_line() if isinstance(exc, NicbenchError)
                                  else f"{type(exc).__name__}: {exc}")
        self.failed = why
        if self._store is not None:
            self._store.close()
            self._store = None
        store = "" if self.location.source.value == "default" \
            else f" --store {shlex.quote(self.location.shown)}"
        self.listener(ev.Warning(
            f"results store not written from here on ({why}); the run goes on into "
            f"{self.run_dir}: catch the store up afterwards with `nicbench store import"
            f"{store} {shlex.quote(str(self.run_dir))}`"))
