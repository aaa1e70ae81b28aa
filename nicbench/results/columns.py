"""The trial's columns, declared once: each with its name, type, unit and where its value
comes from. The trial frame's pandas dtypes (``results/dataframe.py``), the results
store's table and row (``store/schema.py``) and the store's frames (``store/dataframes.py``)
are all derived from :data:`TRIAL_SCHEMA`; a new column is one line here.

A column's value comes from the trial record (:attr:`Column.get`), or from its run
(``Source.RUN``: the run's start, profile and campaign, which the store keeps once per
run in ``nb_runs`` and joins in when it reads).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Any

from nicbench.results.records import Kind, Status


class ColumnType(Enum):
    """A column's type, with the SQL type both stores use and the trial frame's dtype."""

    TEXT = ("TEXT", "string")
    INT = ("BIGINT", "Int64")
    FLOAT = ("DOUBLE PRECISION", "float64")
    # seconds since the epoch in a store (as the records keep them); UTC in the frame
    TIME = ("DOUBLE PRECISION", "datetime64[ns, UTC]")
    CATEGORY = ("TEXT", "category")

    @property
    def sql(self) -> str:
        return self.value[0]

    @property
    def pandas(self) -> str:
        return self.value[1]


class Source(StrEnum):
    RECORD = "record"       # the trial record
    RUN = "run"             # the run the trial belongs to (nb_runs in a store)


@dataclass(frozen=True)
class Column:
    name: str
    type: ColumnType
    unit: str = ""
    source: Source = Source.RECORD
    # the value, as a Python expression of ``r``: the record (Source.RECORD) or a RunInfo
    # (Source.RUN); "": the attribute of this name. An expression, not a function, so that
    # record_getter compiles a whole row into one (the store's import makes a row in 2 us;
    # a call per column took five times that)
    expr: str = ""
    categories: tuple[str, ...] = ()        # CATEGORY: its values, in declaration order
    required: bool = False                  # NOT NULL in the store

    run_column: str = ""                    # Source.RUN: its column in the store's nb_runs

    @property
    def source_text(self) -> str:
        return self.expr or f"r.{self.name}"


@dataclass(frozen=True)
class RunInfo:
    """What a trial's Source.RUN columns are read from."""

    started_at: float | None
    profile: str | None
    campaign: str | None


def _enum(name: str) -> str:
    return f"r.{name}.value if r.{name} is not None else None"


def _latency(field: str) -> str:
    return f"r.latency.{field} if r.latency is not None else None"


_T, _I, _F, _TIME = ColumnType.TEXT, ColumnType.INT, ColumnType.FLOAT, ColumnType.TIME

# The trial frame's columns, in its order (issue 21's contract with its readers).
TRIAL_SCHEMA: tuple[Column, ...] = (
    Column("run_id", _T, required=True),
    Column("run_started_at", _TIME, "s", Source.RUN, expr="r.started_at",
           run_column="started_at"),
    Column("profile", _T, source=Source.RUN, run_column="profile"),
    Column("campaign", _T, source=Source.RUN, run_column="campaign"),
    Column("pair", _T),
    Column("adapter", _T),
    Column("adapter_label", _T),
    Column("test", _T),
    Column("tool", _T),
    Column("protocol", _T),
    Column("point", _T),
    Column("mtu", _I, "bytes"),
    Column("kind", ColumnType.CATEGORY, expr=_enum("kind"),
           categories=tuple(k.value for k in Kind)),
    Column("status", ColumnType.CATEGORY, expr=_enum("status"),
           categories=tuple(s.value for s in Status)),
    Column("failure", _T, expr=_enum("failure")),
    Column("repetition", _I),
    Column("throughput_bps", _F, "bit/s"),
    Column("sent_bps", _F, "bit/s"),
    Column("offered_bps", _F, "bit/s"),
    Column("duration_s", _F, "s"),
    Column("cpu_sender_pct", _F, "%"),
    Column("cpu_receiver_pct", _F, "%"),
    Column("latency_p50_us", _F, "us", expr=_latency("p50_us")),
    Column("latency_p99_us", _F, "us", expr=_latency("p99_us")),
    Column("started_at", _TIME, "s"),
    Column("sender", _T, expr="r.hosts.get('sender')"),
    Column("receiver", _T, expr="r.hosts.get('receiver')"),
    Column("tool_version", _T, expr="r.version"),
    Column("trial_id", _T, required=True),
)
BY_NAME = {c.name: c for c in TRIAL_SCHEMA}
RECORD_COLUMNS = tuple(c for c in TRIAL_SCHEMA if c.source is Source.RECORD)
RUN_COLUMNS = tuple(c for c in TRIAL_SCHEMA if c.source is Source.RUN)
# nb_trials' columns: the key first, the record's columns, then its whole JSON line
STORED_COLUMNS = (tuple(c for c in RECORD_COLUMNS if c.required)
                  + tuple(c for c in RECORD_COLUMNS if not c.required))


def frame_columns() -> tuple[tuple[str, str], ...]:
    """(name, pandas dtype name) of the trial frame, in order."""
    return tuple((c.name, c.type.pandas) for c in TRIAL_SCHEMA)


def categories() -> dict[str, tuple[str, ...]]:
    return {c.name: c.categories for c in TRIAL_SCHEMA if c.type is ColumnType.CATEGORY}


def record_getter(columns: tuple[Column, ...]) -> Callable[[Any], tuple]:
    """One function giving ``columns``' values of a record (or of a RunInfo, for RUN
    columns), in order: the columns' expressions compiled into one (the store's import
    makes a row per trial; this costs what a hand-written tuple does)."""
    body = ", ".join(f"({c.source_text})" for c in columns)
    return eval(f"lambda r: ({body},)", {"__builtins__": {}})  # our own expressions
