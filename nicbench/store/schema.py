"""The store's schema, one for DuckDB and PostgreSQL, and how a record becomes a row.

Two tables (``nb_`` so that a team's database can hold other things beside them):

- ``nb_runs``: a row per run: its id, times, profile, the campaign it belongs to (name,
  the campaign's start, the shard of a controller that ran a share of it), the results
  directory as given, ``manifest.json``'s text (so every setup fact of the run can be
  read back: ``Store.manifests``) and the nicbench version that made it;
- ``nb_trials``: a row per trial record that stands (``records.current``), keyed by
  (run_id, trial_id): the trial frame's typed columns and the record's whole JSON line.

Times are seconds since the epoch (DOUBLE PRECISION), as the records keep them: the same
SQL and the same values on both databases, made UTC timestamps when read.

``nb_schema_version`` holds the schema's version; :data:`MIGRATIONS` brings an older store
to :data:`SCHEMA_VERSION` (each step in one transaction). A store of a newer or unknown
version is refused, never written.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from nicbench.results import columns
from nicbench.results.records import Kind, TrialRecord, current

SCHEMA_VERSION = 1

RUN_COLUMNS = ("run_id", "started_at", "ended_at", "profile", "campaign",
               "campaign_started_at", "shard", "results_dir", "manifest", "nicbench_version")

# (column, SQL type) of nb_trials, in order; the record's own JSON line last. Derived
# from the one declaration of the trial's columns (results/columns.py).
TRIAL_COLUMNS: tuple[tuple[str, str], ...] = (
    *((c.name.value, c.type.sql + (" NOT NULL" if c.required else "")) for c in columns.STORED_COLUMNS),
    ("record", "TEXT"))
_STORED_VALUES = columns.record_getter(columns.STORED_COLUMNS)
TRIAL_NAMES = tuple(name for name, _ in TRIAL_COLUMNS)
MARKERS = (Kind.SKIPPED.value, Kind.GIVEN_UP.value)

_TRIALS = "CREATE TABLE nb_trials (" + ", ".join(f"{n} {t}" for n, t in TRIAL_COLUMNS)
# version -> the statements that make a store of version-1 into one of version; per
# database where they differ. The tables are the same; PostgreSQL keeps nb_trials' key
# and the history's index (writers at once; a B-tree is updated as rows come), DuckDB
# neither: its one writer at a time deletes before it inserts, its scans of a column
# store need no index, and an index there doubles the cost of a bulk insert and
# quintuples the file.
MIGRATIONS: dict[int, dict[str, list[str]]] = {1: {
    "common": [
        "CREATE TABLE nb_runs (run_id TEXT PRIMARY KEY, started_at DOUBLE PRECISION, "
        "ended_at DOUBLE PRECISION, profile TEXT, campaign TEXT, "
        "campaign_started_at DOUBLE PRECISION, shard TEXT, results_dir TEXT, "
        "manifest TEXT, nicbench_version TEXT)"],
    "duckdb": [_TRIALS + ")"],
    "postgresql": [_TRIALS + ", PRIMARY KEY (run_id, trial_id))",
                   "CREATE INDEX nb_trials_series ON nb_trials (adapter, test, point)"],
}}


def migration(step: int, kind: str) -> list[str]:
    """The statements of migration ``step`` on a ``kind`` (duckdb, postgresql) store."""
    m = MIGRATIONS[step]
    return m.get("common", []) + m.get(kind, [])


@dataclass(frozen=True)
class RunRow:
    """One run as the store keeps it."""

    run_id: str
    started_at: float
    ended_at: float | None
    profile: str
    campaign: str | None
    campaign_started_at: float | None
    shard: str | None
    results_dir: str
    manifest: str                     # manifest.json's text
    nicbench_version: str

    def values(self) -> tuple:
        return tuple(getattr(self, name) for name in RUN_COLUMNS)


def record_line(rec: TrialRecord) -> str:
    """The record's JSON as trials.jsonl holds it (without the newline)."""
    return json.dumps(rec.to_dict(), default=str)


def trial_row(rec: TrialRecord, line: str | None = None) -> tuple:
    """The values of nb_trials' columns for ``rec``, in :data:`TRIAL_NAMES` order; its
    JSON is ``line`` (the line trials.jsonl holds, as read) or made as the file's is."""
    return (*_STORED_VALUES(rec), line if line is not None else record_line(rec))


def standing(records: Sequence[TrialRecord]) -> list[TrialRecord]:
    """Of the records that stand (``records.current``), one per trial_id (the last): the
    rows a store keeps for a run."""
    last = {r.trial_id: i for i, r in enumerate(records)}
    return [r for i, r in enumerate(records) if last[r.trial_id] == i]


def standing_lines(numbered: Sequence[tuple[int, TrialRecord]],
                   lines: Sequence[bytes]) -> list[tuple[TrialRecord, str]]:
    """:func:`standing` of a file's numbered records, each with its line's text."""
    by_id = {id(rec): n for n, rec in numbered}
    keep = standing(current(rec for _, rec in numbered))
    return [(rec, lines[by_id[id(rec)] - 1].decode("utf-8").rstrip("\n")) for rec in keep]
