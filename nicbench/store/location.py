"""Where the results store is: ``--store``, else ``NICBENCH_STORE``, else the default file.

A store is a DuckDB file (a path; the default ``reports/nicbench.duckdb``, relative to
where nicbench runs, as the default results directories are) or a PostgreSQL database
(``postgresql://...`` or ``postgres://...``). ``none`` turns the store off: runs write
their results directories only.

What the location names is checked here, before anything opens it: a directory (a results
directory given by mistake) or a file that is not a DuckDB database is one line naming it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from urllib.parse import unquote

from nicbench.errors import StoreError

ENV_VAR = "NICBENCH_STORE"
DEFAULT_STORE = "reports/nicbench.duckdb"
OFF = "none"
# A DuckDB database file starts with a checksum (8 bytes), then its magic bytes.
DUCKDB_MAGIC = b"DUCK"
_MAGIC_AT = 8
MASK = "***"
# libpq's connection parameters that are secrets (or say where one is): shown masked
SECRET_PARAMS = frozenset({"password", "passfile", "sslpassword"})


class StoreKind(StrEnum):
    DUCKDB = "duckdb"
    POSTGRESQL = "postgresql"
    NONE = "none"          # no store: results directories only


class Source(StrEnum):
    """Where the location came from, for messages that say what to change."""

    OPTION = "--store"
    ENV = ENV_VAR
    DEFAULT = "default"


@dataclass(frozen=True)
class StoreLocation:
    kind: StoreKind
    target: str            # the file's path or the database's URL, as given
    source: Source

    @property
    def shown(self) -> str:
        """How messages name it: the URL with its secrets masked (:func:`masked`)."""
        return masked(self.target) if self.kind is StoreKind.POSTGRESQL else self.target

    def scrub(self, text: str) -> str:
        """``text`` (a database's error message) with this URL's secrets masked."""
        return scrub(text, self.target)

    @property
    def named(self) -> str:
        """``--store X`` / ``NICBENCH_STORE=X`` / ``the store X``: the words to change."""
        match self.source:
            case Source.OPTION:
                return f"--store {self.shown}"
            case Source.ENV:
                return f"{ENV_VAR}={self.shown}"
            case _:
                return f"the store {self.shown}"

    @property
    def enabled(self) -> bool:
        return self.kind is not StoreKind.NONE


def _url_parts(url: str) -> tuple[str, str, str, str, str]:
    """(scheme://, user-info with its @, host and path, ?query, #fragment) of a URL, the
    user-info taken generously (up to the last ``@`` before the query)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return "", "", url, "", ""
    rest, hash_, fragment = rest.partition("#")
    rest, q, query = rest.partition("?")
    # the last @ before the query: a password with a '/' not %-encoded is still masked
    userinfo, at, host = rest.rpartition("@")
    return (scheme + sep, userinfo + at, host, q + query, hash_ + fragment)


def masked(url: str) -> str:
    """``url`` as every message, log, manifest and report shows it: a password in its
    user-info and the values of :data:`SECRET_PARAMS` in its query replaced by ``***``.
    The one function that shows a store's URL."""
    scheme, userinfo, rest, query, fragment = _url_parts(url)
    if ":" in userinfo:
        userinfo = userinfo.split(":", 1)[0] + ":" + MASK + "@"
    if query:
        params = []
        for item in query[1:].split("&"):
            key, eq, _value = item.partition("=")
            secret = eq and unquote(key).strip().lower() in SECRET_PARAMS
            params.append(f"{key}={MASK}" if secret else item)
        query = "?" + "&".join(params)
    return scheme + userinfo + rest + query + fragment


def secrets(url: str) -> list[str]:
    """The secret values in ``url`` as written and as decoded (longest first): what
    :func:`scrub` takes out of a text."""
    _, userinfo, _, query, _ = _url_parts(url)
    found: set[str] = set()
    if ":" in userinfo:
        found.add(userinfo[:-1].split(":", 1)[1])
    for item in query[1:].split("&") if query else []:
        key, eq, value = item.partition("=")
        if eq and unquote(key).strip().lower() in SECRET_PARAMS:
            found.add(value)
    found |= {unquote(v) for v in found}
    return sorted((v for v in found if v), key=lambda v: (-len(v), v))


def scrub(text: str, url: str) -> str:
    """``text`` with every secret of ``url`` (:func:`secrets`) in it replaced by ``***``
    (a server's or a driver's message may quote the connection string)."""
    for value in secrets(url):
        text = text.replace(value, MASK)
    return text


def without_secrets(url: str) -> str:
    """``url`` with its password and secret parameters left out (not masked): a URL that
    still connects when the password comes from PGPASSWORD or ~/.pgpass (the resume
    hint shows it)."""
    scheme, userinfo, rest, query, fragment = _url_parts(url)
    if ":" in userinfo:
        userinfo = userinfo.split(":", 1)[0] + "@"
    if query:
        kept = [item for item in query[1:].split("&")
                if unquote(item.partition("=")[0]).strip().lower() not in SECRET_PARAMS]
        query = "?" + "&".join(kept) if kept else ""
    return scheme + userinfo + rest + query + fragment


def resolve(arg: str | None) -> StoreLocation:
    """The store a command uses: ``arg`` (``--store``), else ``$NICBENCH_STORE``, else
    :data:`DEFAULT_STORE`. A DuckDB path is checked (StoreError, one line): not a
    directory, and if it exists a DuckDB database file."""
    if arg is not None:
        value, source = arg, Source.OPTION
    elif os.environ.get(ENV_VAR):
        value, source = os.environ[ENV_VAR], Source.ENV
    else:
        value, source = DEFAULT_STORE, Source.DEFAULT
    if value.strip().lower() == OFF:
        return StoreLocation(StoreKind.NONE, OFF, source)
    if value.startswith(("postgresql://", "postgres://")):
        return StoreLocation(StoreKind.POSTGRESQL, value, source)
    if "://" in value:
        scheme = value.split("://", 1)[0]
        raise StoreError(f"{source.value if source is not Source.DEFAULT else 'store'} "
                         f"{masked(value)}: a store is a DuckDB file or a postgresql:// URL, not "
                         f"{scheme}://")
    location = StoreLocation(StoreKind.DUCKDB, value, source)
    check_duckdb_file(location)
    return location


def check_duckdb_file(location: StoreLocation) -> None:
    """A DuckDB store's path: absent (it is made), or a DuckDB database file."""
    path = Path(location.target)
    if "\0" in location.target:
        raise StoreError(f"{location.named}: a NUL byte in a path: give the store's file")
    if path.is_dir():
        raise StoreError(f"{location.named}: is a directory (a results directory?): give "
                         "a DuckDB file, e.g. reports/nicbench.duckdb (import runs into it "
                         "with `nicbench store import DIR`)")
    if not path.exists():
        return
    if not path.is_file():
        raise StoreError(f"{location.named}: not a regular file (a FIFO or a device?): give "
                         "a nicbench store's file, or a new name for one")
    try:
        with open(path, "rb") as fh:
            head = fh.read(_MAGIC_AT + len(DUCKDB_MAGIC))
    except OSError as exc:
        raise StoreError(f"{location.named}: cannot read: {exc.strerror or exc}") from None
    if head[_MAGIC_AT:] != DUCKDB_MAGIC:
        raise StoreError(f"{location.named}: not a DuckDB database (a file of something "
                         "else): give a nicbench store's file, or a new name for one")
