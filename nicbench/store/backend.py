"""The two databases a store lives in, behind one small interface, and their errors.

The SQL is the same on both (written with ``?`` placeholders; psycopg is given ``%s``);
what differs is how to connect, how many rows go in at once (DuckDB scans a pandas frame,
PostgreSQL takes COPY), and the errors, which are translated into :class:`StoreError`
here and only here, each one line naming the store and what to do.

DuckDB lets one process at a time open a file for writing: a writer that finds the file
locked waits for it, up to ``lock_wait_s``, then gives up with :class:`StoreBusy`.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from abc import ABC, abstractmethod
from enum import Enum
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from nicbench.errors import StoreError
from nicbench.store.location import StoreKind, StoreLocation

CONNECT_TIMEOUT_S = 5           # a PostgreSQL server that does not answer in this
LOCK_WAIT_S = 10.0              # how long a DuckDB writer waits for another's lock


# the OS's words for ENOSPC, as DuckDB and PostgreSQL pass them on
_NO_SPACE = re.compile(r"No space left on device|could not extend file|disk full", re.I)
# DuckDB's words for a file another process holds (and nothing else: "block" has "lock")
_LOCKED = re.compile(r"Could not set lock on file|Conflicting lock is held")
# DuckDB's words for a file cut short or overwritten
_DAMAGED = re.compile(r"Could not read enough bytes|Corrupt database file|checksum|"
                      r"database file .* is not valid|No more data remaining", re.I)


_DUCK_HEADERS = 3 * 4096      # a DuckDB file's headers, before its first block


_SURROGATE = re.compile("[\ud800-\udfff]")


class Fault(Enum):
    DISK_FULL = "disk full"
    GONE = "server gone"
    DAMAGED = "damaged"


class StoreBusy(StoreError):
    """A DuckDB store locked by another process for longer than a writer waits."""


class Backend(ABC):
    kind: StoreKind

    def __init__(self, location: StoreLocation):
        self.location = location

    @abstractmethod
    def execute(self, sql: str, params: Sequence[Any] = ()) -> None: ...

    @abstractmethod
    def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]: ...

    @abstractmethod
    def insert(self, table: str, columns: Sequence[str], rows: list[tuple]) -> None:
        """Many rows at once, by the database's bulk path."""

    @abstractmethod
    def tables(self) -> set[str]: ...

    @abstractmethod
    def close(self) -> None: ...

    def frame(self, sql: str, params: Sequence[Any], columns: Sequence[str]) -> pd.DataFrame:
        return pd.DataFrame.from_records(self.fetchall(sql, params), columns=list(columns))

    def begin(self) -> None:
        self.execute("BEGIN")

    def commit(self) -> None:
        self.execute("COMMIT")

    def rollback(self) -> None:
        self.execute("ROLLBACK")

    def lock_schema(self) -> None:
        """Keep other writers out while the schema is made or migrated (in a transaction)."""

    def check_whole(self) -> None:
        """StoreError (one line) if the database's file is shorter than what it holds."""

    def lock_runs(self, run_ids: Sequence[str]) -> None:
        """Keep other writers of these runs out until the transaction ends (a writer that
        comes second waits, then finds them written). DuckDB: one writer at a time anyway."""

    def failed(self, exc: Exception, doing: str) -> StoreError:
        """The one line a database error becomes: a full disk said in those words, a
        server gone said as such (:meth:`fault`), anything else as the database says it."""
        text = self.location.scrub(_first_line(exc))
        match self.fault(exc, text):
            case Fault.DISK_FULL:
                where = re.search(r'file "([^"]+)"', text)
                at = f" at {Path(where.group(1)).parent}" if where else ""
                return StoreError(f"{self.location.named}: {doing}: disk full (no space left "
                                  f"on device){at}: nothing of this write was kept; free "
                                  "space and run it again")
            case Fault.GONE:
                return StoreError(f"{self.location.named}: {doing}: the server closed the "
                                  f"connection (stopped or restarted?): {text}: nothing of "
                                  "this write was kept; run it again once the server is up")
            case Fault.DAMAGED:
                return StoreError(f"{self.location.named}: {doing}: damaged ({text}): "
                                  "restore the file from a backup, or move it aside and make it "
                                  "again with `nicbench store rebuild --store FILE --from DIR...`")
        return StoreError(f"{self.location.named}: {doing}: {text}")

    def fault(self, exc: Exception, text: str) -> Fault | None:
        """What kind of failure a database error is, by its type and its words."""
        if _NO_SPACE.search(text):
            return Fault.DISK_FULL
        return None


class DuckBackend(Backend):
    kind = StoreKind.DUCKDB

    def __init__(self, location: StoreLocation, *, read_only: bool = False,
                 lock_wait_s: float = LOCK_WAIT_S):
        import duckdb

        super().__init__(location)
        self._duckdb = duckdb
        path = Path(location.target)
        if read_only and not path.exists():
            read_only = False               # made (empty) on first use
        if not read_only and path.parent != Path(""):
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"{location.named}: cannot make its directory: "
                                 f"{exc.strerror or exc}") from None
        self.con = self._connect(str(path), read_only, lock_wait_s)

    def _connect(self, path: str, read_only: bool, lock_wait_s: float) -> Any:
        deadline = time.monotonic() + lock_wait_s
        pause = 0.005
        while True:
            try:
                # A writer's statements are small or a bulk scan of a frame: one thread.
                # (A thread per core is also what fails first, aborting the process,
                # under an address-space limit: `ulimit -v`, the bad-input corpus.)
                config: dict[str, str | bool | int | float | list[str]] = \
                    {} if read_only else {"threads": 1}
                return self._duckdb.connect(path, read_only=read_only, config=config)
            except self._duckdb.Error as exc:
                text = str(exc)
                if not (isinstance(exc, self._duckdb.IOException) and _LOCKED.search(text)):
                    if self.fault(exc, _first_line(exc)) is not None:
                        raise self.failed(exc, "cannot open") from None
                    raise StoreError(f"{self.location.named}: cannot open: "
                                     f"{_first_line(exc)}: not a store this nicbench can "
                                     "read") from None
                if time.monotonic() >= deadline:
                    pid = re.search(r"PID (\d+)", text)
                    who = f"process {pid.group(1)}" if pid else "another process"
                    raise StoreBusy(f"{self.location.named}: locked by {who} for more than "
                                    f"{lock_wait_s:g} s (DuckDB lets one process write at "
                                    "a time): try again when it is done, or use a "
                                    "PostgreSQL store for writers at once") from None
                time.sleep(pause)
                pause = min(pause * 2, 0.05)

    def fault(self, exc: Exception, text: str) -> Fault | None:
        if isinstance(exc, self._duckdb.Error) and _DAMAGED.search(text):
            return Fault.DAMAGED
        return super().fault(exc, text)

    def check_whole(self) -> None:
        """A file cut short (a copy or a disk that failed) reads as healthy until a query
        reaches a block past its end: the last block any table's data is in (its storage
        info, read from the metadata alone) must be in the file."""
        try:
            size = os.path.getsize(self.location.target)
        except OSError:
            return
        last = -1
        for table in sorted(t for t in self.tables() if re.fullmatch(r"nb_[a-z_]+", t)):
            ((top,),) = self.fetchall(f"SELECT max(block_id) FROM pragma_storage_info('{table}') "
                                     "WHERE block_id >= 0")
            last = max(last, top if top is not None else -1)
        ((block_size,),) = self.fetchall("SELECT block_size FROM pragma_database_size()")
        want = _DUCK_HEADERS + (last + 1) * block_size
        if size < want:
            raise StoreError(f"{self.location.named}: damaged: {size} bytes, its data reaches "
                             f"to byte {want} (cut short by a copy or a disk that failed?): "
                             "restore it from a backup, or move it aside and make it again "
                             "with `nicbench store rebuild --store FILE --from DIR...`")

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        try:
            self.con.execute(sql, list(params))
        except self._duckdb.Error as exc:
            raise self.failed(exc, "cannot write" if _writes(sql) else "cannot read") \
                from None

    def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        try:
            return self.con.execute(sql, list(params)).fetchall()
        except self._duckdb.Error as exc:
            raise self.failed(exc, "cannot read") from None

    def frame(self, sql: str, params: Sequence[Any], columns: Sequence[str]) -> pd.DataFrame:
        try:
            out = self.con.execute(sql, list(params)).df()
        except self._duckdb.Error as exc:
            raise self.failed(exc, "cannot read") from None
        out.columns = list(columns)
        return out

    def insert(self, table: str, columns: Sequence[str], rows: list[tuple]) -> None:
        if not rows:
            return
        frame = pd.DataFrame.from_records(rows, columns=list(columns))
        names = ", ".join(columns)
        try:
            self.con.register("nb_incoming", frame)
            try:
                self.con.execute(f"INSERT INTO {table} ({names}) SELECT {names} "
                                 "FROM nb_incoming")
            finally:
                self.con.unregister("nb_incoming")
        except self._duckdb.Error as exc:
            raise self.failed(exc, "cannot write") from None

    def tables(self) -> set[str]:
        return {r[0] for r in self.fetchall(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'")}

    def close(self) -> None:
        with contextlib.suppress(self._duckdb.Error):
            self.con.close()


class PgBackend(Backend):
    kind = StoreKind.POSTGRESQL

    def __init__(self, location: StoreLocation, *, connect_timeout_s: int = CONNECT_TIMEOUT_S):
        import psycopg

        super().__init__(location)
        self._psycopg = psycopg
        try:
            self.con = psycopg.connect(location.target, connect_timeout=connect_timeout_s,
                                       autocommit=True)
        except psycopg.Error as exc:
            raise StoreError(f"{location.named}: does not answer (within "
                             f"{connect_timeout_s} s): {location.scrub(_first_line(exc))}: "
                             "start the server or give another --store") from None

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        try:
            self.con.execute(_pg(sql), list(params) or None)
        except self._psycopg.Error as exc:
            raise self.failed(exc, "cannot write" if _writes(sql) else "cannot read") \
                from None
        except UnicodeEncodeError as exc:
            raise _not_text(self.location, exc, [tuple(params)]) from None

    def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        try:
            return self.con.execute(_pg(sql), list(params) or None).fetchall()
        except self._psycopg.Error as exc:
            raise self.failed(exc, "cannot read") from None

    def insert(self, table: str, columns: Sequence[str], rows: list[tuple]) -> None:
        if not rows:
            return
        try:
            with self.con.cursor() as cur, \
                    cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        except self._psycopg.Error as exc:
            raise self.failed(exc, "cannot write") from None
        except UnicodeEncodeError as exc:
            raise _not_text(self.location, exc, rows) from None

    def tables(self) -> set[str]:
        return {r[0] for r in self.fetchall(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = current_schema()")}

    def fault(self, exc: Exception, text: str) -> Fault | None:
        if getattr(exc, "sqlstate", None) == "53100":         # disk_full
            return Fault.DISK_FULL
        if isinstance(exc, self._psycopg.OperationalError) and (
                self.con.broken or self.con.closed
                or getattr(exc, "sqlstate", None) in ("57P01", "57P02", "57P03")):
            return Fault.GONE                                  # admin_shutdown, crash...
        return super().fault(exc, text)

    def lock_schema(self) -> None:
        self.execute("SELECT pg_advisory_xact_lock(72115)")     # any fixed number: ours

    def lock_runs(self, run_ids: Sequence[str]) -> None:
        # one lock per run (a hash of its id), taken in one order by every writer
        keys = sorted({r[0] for r in self.fetchall(
            "SELECT hashtext(x) FROM unnest(?::text[]) AS x", [list(run_ids)])})
        for key in keys:
            self.execute("SELECT pg_advisory_xact_lock(72116, ?)", [key])

    def close(self) -> None:
        with contextlib.suppress(self._psycopg.Error):
            self.con.close()


def connect(location: StoreLocation, *, read_only: bool = False,
            lock_wait_s: float = LOCK_WAIT_S) -> Backend:
    match location.kind:
        case StoreKind.DUCKDB:
            return DuckBackend(location, read_only=read_only, lock_wait_s=lock_wait_s)
        case StoreKind.POSTGRESQL:
            return PgBackend(location)
        case _:
            raise StoreError("no store (--store none): this needs one; give --store FILE "
                             "or a postgresql:// URL")


def _not_text(location: StoreLocation, exc: UnicodeEncodeError, rows: list[tuple]) -> StoreError:
    """A value that is not text UTF-8 can hold (a lone surrogate): one line naming it."""
    bad = next((row for row in rows if any(
        isinstance(v, str) and _SURROGATE.search(v) for v in row)), None)
    which = f" (a row beginning {bad[0]!r}, {bad[1]!r})" if bad and len(bad) > 1 else ""
    return StoreError(f"{location.named}: cannot write: a value that is not text{which}: "
                      f"{exc.reason} (a lone surrogate, {exc.object[exc.start:exc.end]!r}): "
                      "nothing of this write was kept; correct the name in its file")


def _pg(sql: str) -> str:
    return sql.replace("?", "%s")


def _writes(sql: str) -> bool:
    return sql.lstrip().split(" ", 1)[0].upper() in ("INSERT", "DELETE", "UPDATE", "CREATE",
                                                     "COMMIT")


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().split("\n", 1)[0] or type(exc).__name__
    return text.removeprefix("IO Error: ")
