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
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from nicbench.errors import StoreError
from nicbench.store.location import StoreKind, StoreLocation

CONNECT_TIMEOUT_S = 5           # a PostgreSQL server that does not answer in this
LOCK_WAIT_S = 10.0              # how long a DuckDB writer waits for another's lock


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

    def failed(self, exc: Exception, doing: str) -> StoreError:
        return StoreError(f"{self.location.named}: {doing}: "
                          f"{self.location.scrub(_first_line(exc))}")


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
                if "lock" not in text.lower():
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

    def tables(self) -> set[str]:
        return {r[0] for r in self.fetchall(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = current_schema()")}

    def lock_schema(self) -> None:
        self.execute("SELECT pg_advisory_xact_lock(72115)")     # any fixed number: ours

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


def _pg(sql: str) -> str:
    return sql.replace("?", "%s")


def _writes(sql: str) -> bool:
    return sql.lstrip().split(" ", 1)[0].upper() in ("INSERT", "DELETE", "UPDATE", "CREATE",
                                                     "COMMIT")


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().split("\n", 1)[0] or type(exc).__name__
    return text.removeprefix("IO Error: ")
