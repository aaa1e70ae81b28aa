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


class Col(StrEnum):
    """The trial's columns by name: every reader of the trial frame or the store names a
    column as a member (``df[Col.ADAPTER]``, ``f"t.{Col.RUN_ID}"``), so that the names are
    spelled here only. A member is its name (a ``str``): a frame's key, a dict's, SQL's."""

    RUN_ID = "run_id"
    RUN_STARTED_AT = "run_started_at"
    PROFILE = "profile"
    CAMPAIGN = "campaign"
    PAIR = "pair"
    ADAPTER = "adapter"
    ADAPTER_LABEL = "adapter_label"
    TEST = "test"
    TOOL = "tool"
    PROTOCOL = "protocol"
    POINT = "point"
    MTU = "mtu"
    KIND = "kind"
    STATUS = "status"
    FAILURE = "failure"
    REPETITION = "repetition"
    THROUGHPUT_BPS = "throughput_bps"
    SENT_BPS = "sent_bps"
    OFFERED_BPS = "offered_bps"
    DURATION_S = "duration_s"
    CPU_SENDER_PCT = "cpu_sender_pct"
    CPU_RECEIVER_PCT = "cpu_receiver_pct"
    LATENCY_P50_US = "latency_p50_us"
    LATENCY_P99_US = "latency_p99_us"
    STARTED_AT = "started_at"
    SENDER = "sender"
    RECEIVER = "receiver"
    TOOL_VERSION = "tool_version"
    TRIAL_ID = "trial_id"


class Source(StrEnum):
    RECORD = "record"       # the trial record
    RUN = "run"             # the run the trial belongs to (nb_runs in a store)


@dataclass(frozen=True)
class Column:
    name: Col
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
        return self.expr or f"r.{self.name.value}"


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


def _busy(side: str) -> str:
    """A host's busy % from the record's grouped CPU (``records.Cpu``)."""
    return (f"r.cpu.{side}.busy if r.cpu is not None and r.cpu.{side} is not None "
            "else None")


_T, _I, _F, _TIME = ColumnType.TEXT, ColumnType.INT, ColumnType.FLOAT, ColumnType.TIME

# The trial frame's columns, in its order (issue 21's contract with its readers).
TRIAL_SCHEMA: tuple[Column, ...] = (
    Column(Col.RUN_ID, _T, required=True),
    Column(Col.RUN_STARTED_AT, _TIME, "s", Source.RUN, expr="r.started_at",
           run_column="started_at"),
    Column(Col.PROFILE, _T, source=Source.RUN, run_column="profile"),
    Column(Col.CAMPAIGN, _T, source=Source.RUN, run_column="campaign"),
    Column(Col.PAIR, _T),
    Column(Col.ADAPTER, _T),
    Column(Col.ADAPTER_LABEL, _T),
    Column(Col.TEST, _T),
    Column(Col.TOOL, _T),
    Column(Col.PROTOCOL, _T),
    Column(Col.POINT, _T),
    Column(Col.MTU, _I, "bytes"),
    Column(Col.KIND, ColumnType.CATEGORY, expr=_enum("kind"),
           categories=tuple(k.value for k in Kind)),
    Column(Col.STATUS, ColumnType.CATEGORY, expr=_enum("status"),
           categories=tuple(s.value for s in Status)),
    Column(Col.FAILURE, _T, expr=_enum("failure")),
    Column(Col.REPETITION, _I),
    Column(Col.THROUGHPUT_BPS, _F, "bit/s"),
    Column(Col.SENT_BPS, _F, "bit/s"),
    Column(Col.OFFERED_BPS, _F, "bit/s"),
    Column(Col.DURATION_S, _F, "s"),
    Column(Col.CPU_SENDER_PCT, _F, "%", expr=_busy("sender")),
    Column(Col.CPU_RECEIVER_PCT, _F, "%", expr=_busy("receiver")),
    Column(Col.LATENCY_P50_US, _F, "us", expr=_latency("p50_us")),
    Column(Col.LATENCY_P99_US, _F, "us", expr=_latency("p99_us")),
    Column(Col.STARTED_AT, _TIME, "s"),
    Column(Col.SENDER, _T, expr="r.hosts.get('sender')"),
    Column(Col.RECEIVER, _T, expr="r.hosts.get('receiver')"),
    Column(Col.TOOL_VERSION, _T, expr="r.version"),
    Column(Col.TRIAL_ID, _T, required=True),
)
if [c.name for c in TRIAL_SCHEMA] != list(Col):       # each column named once, in order
    raise AssertionError("results/columns.py: Col and TRIAL_SCHEMA name other columns")
BY_NAME: dict[str, Column] = {c.name: c for c in TRIAL_SCHEMA}
RECORD_COLUMNS = tuple(c for c in TRIAL_SCHEMA if c.source is Source.RECORD)
RUN_COLUMNS = tuple(c for c in TRIAL_SCHEMA if c.source is Source.RUN)
# nb_trials' columns: the key first, the record's columns, then its whole JSON line
STORED_COLUMNS = (tuple(c for c in RECORD_COLUMNS if c.required)
                  + tuple(c for c in RECORD_COLUMNS if not c.required))


def frame_columns() -> tuple[tuple[str, str], ...]:
    """(name, pandas dtype name) of the trial frame, in order."""
    return tuple((c.name.value, c.type.pandas) for c in TRIAL_SCHEMA)


def categories() -> dict[str, tuple[str, ...]]:
    return {c.name.value: c.categories for c in TRIAL_SCHEMA if c.type is ColumnType.CATEGORY}


def record_getter(columns: tuple[Column, ...]) -> Callable[[Any], tuple]:
    """One function giving ``columns``' values of a record (or of a RunInfo, for RUN
    columns), in order: the columns' expressions compiled into one (the store's import
    makes a row per trial; this costs what a hand-written tuple does)."""
    body = ", ".join(f"({c.source_text})" for c in columns)
    return eval(f"lambda r: ({body},)", {"__builtins__": {}})  # our own expressions
