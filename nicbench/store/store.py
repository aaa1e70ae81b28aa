"""A results store: every run's manifest and every trial that stands, in one database.

:func:`open_store` opens the store a :class:`StoreLocation` names (made and brought to the
current schema if new or older; refused if newer or not a store), and a :class:`Store`
writes runs and trials (one record as it is stored, or a run's records at once) and
reads them back: :meth:`Store.runs`, :meth:`Store.trial_frame`, :meth:`Store.manifests`
(the trial frame's columns and types are issue 21's contract, ``store/dataframes.py``).

Results directories stay the source of truth: what a store holds can always be made
again from them (``nicbench store import`` / ``rebuild``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import pandas as pd

from nicbench.errors import StoreError
from nicbench.results.columns import Col
from nicbench.results.records import TrialRecord
from nicbench.store import dataframes
from nicbench.store.backend import LOCK_WAIT_S, Backend, connect
from nicbench.store.location import StoreKind, StoreLocation
from nicbench.store.schema import (MARKERS, RUN_COLUMNS, SCHEMA_VERSION, TRIAL_NAMES,
                                   RunRow, migration, trial_row)

if TYPE_CHECKING:

    from nicbench.results.manifest import Manifest

NB_TABLES = {"nb_schema_version", "nb_runs", "nb_trials"}
# A history's series, and a night of it (one run's trials of a series).
_SERIES = (Col.ADAPTER, Col.TEST, Col.POINT)
_LATEST_KEY = (*_SERIES, Col.RUN_ID)


@dataclass(frozen=True)
class Added:
    """What writing a run's records changed: rows new (or changed) and rows already there."""

    added: int
    already: int
    removed: int = 0          # rows the directory no longer stands by (superseded)


@dataclass(frozen=True)
class StoreInfo:
    location: str
    kind: str
    schema_version: int
    runs: int
    trials: int
    campaigns: int
    first_run: float | None
    last_run: float | None


class Store:
    """An open store. Close it (or use ``with``) to let other writers of a DuckDB file in."""

    def __init__(self, backend: Backend):
        self.backend = backend
        self.location = backend.location
        # Manifests read and validated once per open store: a report's History section
        # asks for the same runs' setup adapter after adapter.
        self._manifests: dict[str, Manifest] = {}
        # A lab's nights share their profile and inventory: each validated once.
        self._parts: dict[tuple[str, str], object] = {}
        # Rows already in the store that no trial could have (an older nicbench imported
        # them unchecked, or the database was edited): named once, left out of reading.
        self.left_out: list[str] | None = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.backend.close()

    # -- schema ---------------------------------------------------------------------------
    def prepare(self, *, write: bool) -> None:
        """Check the schema's version; make or migrate the schema if ``write``."""
        b = self.backend
        tables = b.tables()
        if "nb_schema_version" not in tables and tables and b.kind is StoreKind.DUCKDB:
            raise StoreError(f"{self.location.named}: a DuckDB database of something else "
                             f"(tables {', '.join(sorted(tables)[:3])}), not a nicbench "
                             "store: give another file")
        version = self._version() if "nb_schema_version" in tables else 0
        if version > SCHEMA_VERSION:
            raise StoreError(f"{self.location.named}: schema version {version}, newer than "
                             f"this nicbench knows ({SCHEMA_VERSION}): use a newer nicbench "
                             "(or another store)")
        if version == SCHEMA_VERSION or (version and not write):
            return      # a reader of a new store makes its (empty) schema
        b.begin()
        try:
            b.lock_schema()
            again = self._version() if "nb_schema_version" in b.tables() else 0
            if again == 0:
                b.execute("CREATE TABLE nb_schema_version (version INTEGER NOT NULL)")
                b.execute("INSERT INTO nb_schema_version VALUES (0)")
            for step in range(again + 1, SCHEMA_VERSION + 1):
                for sql in migration(step, b.kind.value):
                    b.execute(sql)
                b.execute("UPDATE nb_schema_version SET version = ?", [step])
            b.commit()
        except BaseException:
            with suppress(StoreError):
                b.rollback()
            raise

    def _version(self) -> int:
        rows = self.backend.fetchall("SELECT version FROM nb_schema_version")
        if len(rows) != 1 or not isinstance(rows[0][0], int) or rows[0][0] < 0:
            raise StoreError(f"{self.location.named}: an unknown schema version "
                             f"({[r[0] for r in rows][:3]}): not a store this nicbench "
                             "can read or write")
        return rows[0][0]

    def schema_version(self) -> int:
        return self._version()

    # -- writing --------------------------------------------------------------------------
    def write_run(self, run: RunRow) -> None:
        """Add the run or bring its row up to date (its end, its manifest)."""
        self._manifests.pop(run.run_id, None)
        cols = ", ".join(RUN_COLUMNS)
        marks = ", ".join("?" * len(RUN_COLUMNS))
        updates = ", ".join(f"{c} = excluded.{c}" for c in RUN_COLUMNS[1:])
        self.backend.execute(f"INSERT INTO nb_runs ({cols}) VALUES ({marks}) "
                             f"ON CONFLICT (run_id) DO UPDATE SET {updates}", run.values())

    def write_record(self, run: RunRow, rec: TrialRecord, *, with_run: bool) -> None:
        """One record as it is stored, in one transaction: it replaces what it supersedes
        (as ``records.current`` reads the file: an earlier record of its trial key, or of
        its configuration that stood for trials not run)."""
        b = self.backend
        with self.transaction():
            b.lock_runs([rec.run_id])
            if with_run:
                self.write_run(run)
            b.execute(f"DELETE FROM nb_trials WHERE {Col.RUN_ID} = ? AND ({Col.TRIAL_ID} = ? "
                      f"OR ({Col.PAIR} = ? AND {Col.POINT} = ? AND {Col.TEST} = ? AND "
                      f"({Col.KIND} IN (?, ?) OR ({Col.KIND} = ? AND {Col.REPETITION} IS NOT "
                      "DISTINCT FROM ?))))",
                      [rec.run_id, rec.trial_id, rec.pair, rec.point, rec.test, *MARKERS,
                       rec.kind.value, rec.repetition])
            b.insert("nb_trials", TRIAL_NAMES, [trial_row(rec)])

    def write_run_rows(self, run: RunRow, rows: Sequence[tuple], *,
                       new_run: bool = False) -> tuple[Added, list[tuple]]:
        """A run and the rows (``schema.trial_row``) of the records that stand for it,
        inside the caller's :meth:`transaction`: rows already there as they are stay,
        rows the run no longer has are removed; returns the counts and the rows still to
        insert (:meth:`insert_rows`, at once for many runs). ``new_run``: the store holds
        nothing of it (nothing to compare with), and its row is left to the caller too
        (:meth:`insert_runs`, at once for many runs)."""
        b = self.backend
        have = {} if new_run else dict(b.fetchall(
            f"SELECT {Col.TRIAL_ID}, record FROM nb_trials WHERE {Col.RUN_ID} = ?",
            [run.run_id]))
        new = [row for row in rows if have.get(row[1]) != row[-1]]
        keep = {row[1] for row in rows}
        gone = [t for t in have if t not in keep]
        stale = [row[1] for row in new if row[1] in have] + gone
        if not new_run:
            self.write_run(run)
        for i in range(0, len(stale), 500):
            chunk = stale[i:i + 500]
            b.execute(f"DELETE FROM nb_trials WHERE {Col.RUN_ID} = ? AND {Col.TRIAL_ID} IN "
                      f"({', '.join('?' * len(chunk))})", [run.run_id, *chunk])
        return Added(added=len(new), already=len(rows) - len(new), removed=len(gone)), new

    def insert_runs(self, runs: Sequence[RunRow]) -> None:
        """New runs' rows (none of them in the store), at once."""
        self.backend.insert("nb_runs", RUN_COLUMNS, [run.values() for run in runs])

    def insert_rows(self, rows: list[tuple]) -> None:
        self.backend.insert("nb_trials", TRIAL_NAMES, rows)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All or nothing. The error said is the one that ended it: a rollback after a
        commit that failed (a full disk, a server gone) fails too and is not said."""
        b = self.backend
        b.begin()
        try:
            yield
            b.commit()
        except BaseException:
            with suppress(StoreError):
                b.rollback()
            raise

    def clear(self) -> None:
        """Every run and trial out (a rebuild), in one transaction."""
        with self.transaction():
            self.backend.execute("DELETE FROM nb_trials")
            self.backend.execute("DELETE FROM nb_runs")

    def run_ids(self) -> set[str]:
        return {r[0] for r in self.backend.fetchall("SELECT run_id FROM nb_runs")}

    def runs_started(self, run_ids: Sequence[str]) -> dict[str, float]:
        """run_id -> started_at of those of ``run_ids`` the store holds."""
        out: dict[str, float] = {}
        for i in range(0, len(run_ids), 500):
            chunk = list(run_ids[i:i + 500])
            out.update(self.backend.fetchall(
                f"SELECT run_id, started_at FROM nb_runs WHERE run_id IN "
                f"({', '.join('?' * len(chunk))})", chunk))
        return out

    # -- reading --------------------------------------------------------------------------
    def _sane(self) -> tuple[str, list[object]]:
        """The SQL condition (and its parameters) a row must meet to be read: its run's
        and its own start between 2000 and now (pandas' times end in 2262), its rates
        and CPU within the bounds import checks (``results.plausible``); the rows that
        do not are named in :attr:`left_out` (once per open store) and left out."""
        from nicbench.results import plausible as pl

        latest = time.time() + pl.CLOCK_SLACK_S
        bounds: list[tuple[str, float, float]] = [
            ("r.started_at", pl.YEAR_2000, latest),
            *((f"t.{c}", lo, hi) for c, lo, hi in (
                (Col.STARTED_AT, pl.YEAR_2000, latest),
                (Col.THROUGHPUT_BPS, 0.0, pl.MAX_BPS), (Col.SENT_BPS, 0.0, pl.MAX_BPS),
                (Col.OFFERED_BPS, 0.0, pl.MAX_BPS), (Col.DURATION_S, 0.0, pl.MAX_DURATION_S),
                (Col.CPU_SENDER_PCT, 0.0, 100.0), (Col.CPU_RECEIVER_PCT, 0.0, 100.0)))]
        # NaN sorts above every number in both databases: > catches it too
        bad = " OR ".join(f"COALESCE({c} < ? OR {c} > ?, FALSE)" for c, _, _ in bounds)
        params: list[object] = [v for _, lo, hi in bounds for v in (lo, hi)]
        if self.left_out is None:
            rows = self.backend.fetchall(
                f"SELECT t.{Col.RUN_ID}, t.{Col.TRIAL_ID}, "
                f"{', '.join(c for c, _, _ in bounds)} FROM nb_trials t JOIN nb_runs r ON "
                f"r.run_id = t.{Col.RUN_ID} WHERE {bad} ORDER BY t.{Col.RUN_ID}, "
                f"t.{Col.TRIAL_ID} LIMIT 1001", params)
            self.left_out = [_bad_row(row, bounds) for row in rows]
        return f"NOT ({bad})", params

    def trial_frame(self, *, adapter: str | None = None, test: str | None = None,
                    point: str | None = None, since: datetime | None = None,
                    run_ids: Sequence[str] | None = None) -> pd.DataFrame:
        """One row per stored trial record that stands, issue 21's columns and types."""
        sane, params = self._sane()
        where: list[str] = [sane]
        for column, value in ((Col.ADAPTER, adapter), (Col.TEST, test), (Col.POINT, point)):
            if value is not None:
                where.append(f"t.{column} = ?")
                params.append(value)
        if since is not None:
            where.append("r.started_at >= ?")
            params.append(dataframes.epoch(since))
        if run_ids is not None:
            if not run_ids:
                return dataframes.trial_frame_of(None)
            where.append(f"t.{Col.RUN_ID} IN ({', '.join('?' * len(run_ids))})")
            params.extend(run_ids)
        sql = dataframes.TRIAL_SELECT + (" WHERE " + " AND ".join(where) if where else "") \
            + dataframes.TRIAL_ORDER
        raw = self.backend.frame(sql, params, dataframes.TRIAL_SELECTED)
        return dataframes.trial_frame_of(raw)

    def latest_frame(self, adapters: Sequence[str], last: int) -> pd.DataFrame:
        """The trial frame (the columns a series is made of: ``HISTORY_SELECTED``) of each (adapter, test, point) series of ``adapters``, only its
        ``last`` newest runs that measured it (a successful repetition or UDP search
        trial with a throughput: what ``history.series`` judges), every trial of those
        runs in that series included: what ``history.series.build(..., last)`` keeps of
        the whole history, read in one query for all the adapters (a report's History
        section)."""
        if not adapters:
            return dataframes.trial_frame_of(None)
        marks = ", ".join("?" * len(adapters))
        sane, sane_params = self._sane()
        series = ", ".join(_SERIES)
        key, t_key = f"{series}, {Col.RUN_ID}", ", ".join(f"t.{c}" for c in _LATEST_KEY)
        # the newest runs of each series (a scan of a few columns), then only their
        # trials, and only the columns a series is made of
        wanted = self.backend.fetchall(
            f"SELECT {key} FROM (SELECT {key}, row_number() OVER (PARTITION BY {series} "
            f"ORDER BY started DESC, {Col.RUN_ID} DESC) AS newest FROM (SELECT {t_key}, "
            "max(r.started_at) AS started FROM nb_trials t JOIN nb_runs r ON "
            f"r.run_id = t.{Col.RUN_ID} WHERE t.{Col.ADAPTER} IN ({marks}) AND "
            f"t.{Col.KIND} IN (?, ?) AND t.{Col.STATUS} = ? AND t.{Col.THROUGHPUT_BPS} IS "
            f"NOT NULL AND {sane} GROUP BY {t_key}) AS m) AS ranked WHERE newest <= ?", [*adapters, *dataframes.MEASURED_KINDS, dataframes.OK,
                                  *sane_params, last])
        run_ids = sorted({w[3] for w in wanted})
        parts = []
        for i in range(0, len(run_ids), 1000):
            chunk = run_ids[i:i + 1000]
            parts.append(self.backend.frame(
                dataframes.select(dataframes.HISTORY_SELECTED)
                + f" WHERE t.{Col.RUN_ID} IN ({', '.join('?' * len(chunk))}) "
                f"AND t.{Col.ADAPTER} IN ({marks}) AND {sane}" + dataframes.TRIAL_ORDER,
                [*chunk, *adapters, *sane_params], dataframes.HISTORY_SELECTED))
        if not parts:
            return dataframes.trial_frame_of(None, dataframes.HISTORY_SELECTED)
        raw = parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)
        keys = pd.MultiIndex.from_frame(raw[list(_LATEST_KEY)].astype(object))
        raw = raw[keys.isin(wanted)]
        return dataframes.trial_frame_of(raw, dataframes.HISTORY_SELECTED)

    def manifests(self, run_ids: Sequence[str]) -> dict[str, Manifest]:
        """run_id -> its Manifest, for the runs of ``run_ids`` the store holds."""
        ids = list(dict.fromkeys(run_ids))
        todo = [r for r in ids if r not in self._manifests]
        for i in range(0, len(todo), 500):
            chunk = todo[i:i + 500]
            for run_id, text in self.backend.fetchall(
                    f"SELECT run_id, manifest FROM nb_runs WHERE run_id IN "
                    f"({', '.join('?' * len(chunk))})", chunk):
                self._manifests[run_id] = self._manifest(text)
        return {r: self._manifests[r] for r in ids if r in self._manifests}

    def _manifest(self, text: str) -> Manifest:
        """A stored manifest validated as ``Manifest.read`` validates it; the profile and
        inventory it shares with other runs validated once (a year of nights of one lab
        is hundreds of manifests of one profile and inventory)."""
        from nicbench.config.fields import STORED
        from nicbench.config.inventory import Inventory
        from nicbench.config.profile import Profile
        from nicbench.results.manifest import MANIFEST_VERSION, Manifest

        data = json.loads(text)
        models: dict[str, type[Profile] | type[Inventory]] = {
            "profile": Profile, "inventory": Inventory}     # the manifest's shared parts
        if isinstance(data, dict) and data.get("format_version") == MANIFEST_VERSION:
            for key, model in models.items():
                part = data.get(key)
                if isinstance(part, dict):
                    seen = (key, json.dumps(part, sort_keys=True))
                    if seen not in self._parts:
                        self._parts[seen] = model.model_validate(part, context=STORED)
                    data[key] = self._parts[seen]
        return Manifest.model_validate(data, context=STORED)

    def runs(self, *, campaign: str | None = None, night: str | None = None) -> pd.DataFrame:
        """A row per run: run_id, run_started_at, profile, campaign, trials (the contract's
        columns), then campaign_started_at, shard, night, ended_at, results_dir. A
        campaign's ``night`` is the day (YYYY-MM-DD) of the evening it started in (noon to
        noon, UTC): the runs of every shard of one campaign night select together."""
        raw = self.backend.frame(dataframes.RUNS_SELECT, [], dataframes.RUNS_SELECTED)
        out = dataframes.runs_frame_of(raw)
        if campaign is not None:
            out = out[out[Col.CAMPAIGN] == campaign]
        if night is not None:
            out = out[out["night"] == night]
        return out.reset_index(drop=True)

    def info(self) -> StoreInfo:
        b = self.backend
        ((runs, campaigns, first, last),) = b.fetchall(
            "SELECT count(*), count(DISTINCT campaign), min(started_at), max(started_at) "
            "FROM nb_runs")
        ((trials,),) = b.fetchall("SELECT count(*) FROM nb_trials")
        return StoreInfo(location=self.location.shown, kind=self.location.kind.value,
                         schema_version=self._version(), runs=runs, trials=trials,
                         campaigns=campaigns, first_run=first, last_run=last)


def _bad_row(row: tuple, bounds: list[tuple[str, float, float]]) -> str:
    run_id, trial_id, *values = row
    why = next((f"{c.split('.')[1] if c.startswith('t.') else 'its run started_at'} "
                f"{v!r} outside {lo:g} to {hi:g}"
                for (c, lo, hi), v in zip(bounds, values, strict=True)
                if v is not None and not lo <= v <= hi), "out of bounds")
    return f"run {run_id} trial {trial_id}: {why}"


def open_store(location: StoreLocation, *, write: bool = True,
               lock_wait_s: float = LOCK_WAIT_S, check_whole: bool = True) -> Store:
    """The store at ``location``, its schema checked (and, to ``write``, made or
    migrated). StoreError (one line) if it cannot be opened, is not a store, or is of
    another schema version. A DuckDB store opened to write keeps other writers out
    until it is closed: keep it open briefly. ``check_whole``: a DuckDB file cut short
    is refused (``Backend.check_whole``) before anything reads it."""
    backend = connect(location, read_only=not write, lock_wait_s=lock_wait_s)
    store = Store(backend)
    try:
        if check_whole:         # the live writer, opening for each record, checked at start
            backend.check_whole()
        store.prepare(write=write)
    except BaseException:
        store.close()
        raise
    return store
