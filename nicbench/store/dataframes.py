"""The store's rows as issue 21's DataFrames: the trial frame and the runs.

The trial frame's columns, order and pandas types are the contract between the store and
its readers (``nicbench.results.dataframe``, ``nicbench history``): :data:`TRIAL_FRAME`.
Times are kept as epoch seconds and become ``datetime64[ns, UTC]`` here; kinds and states
are categories of the records' own enums, in their declaration order.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd

from nicbench.results import columns
from nicbench.results.columns import Col
from nicbench.results.records import Kind, Status

_STR: Any = pd.StringDtype()                     # "string": nullable text
_TIME: Any = pd.DatetimeTZDtype("ns", "UTC")     # "datetime64[ns, UTC]"
_F: Any = np.dtype("float64")
_INT: Any = pd.Int64Dtype()                      # "Int64"

# (column, dtype) of the trial frame, in order: issue 21's contract, derived from the one
# declaration of the trial's columns (results/columns.py).
_DTYPES: dict[columns.ColumnType, Any] = {
    columns.ColumnType.TEXT: _STR, columns.ColumnType.INT: _INT,
    columns.ColumnType.FLOAT: _F, columns.ColumnType.TIME: _TIME}
TRIAL_FRAME: tuple[tuple[str, Any], ...] = tuple(
    (c.name.value, pd.CategoricalDtype(list(c.categories)) if c.type is columns.ColumnType.CATEGORY
     else _DTYPES[c.type]) for c in columns.TRIAL_SCHEMA)
TRIAL_SELECTED = tuple(name for name, _ in TRIAL_FRAME)

_FROM_RUN = {c.name.value: f"r.{c.run_column}" for c in columns.RUN_COLUMNS}


def select(names: tuple[str, ...]) -> str:
    """SELECT of the trial frame's columns ``names`` (nb_trials t joined to nb_runs r)."""
    return ("SELECT " + ", ".join(_FROM_RUN.get(n, f"t.{n}") for n in names)
            + " FROM nb_trials t JOIN nb_runs r ON r.run_id = t.run_id")


TRIAL_SELECT = select(TRIAL_SELECTED)
# Runs in the order they started, each run's trials in the order they started.
TRIAL_ORDER = f" ORDER BY r.started_at, t.{Col.RUN_ID}, t.{Col.STARTED_AT}, t.{Col.TRIAL_ID}"

# The runs frame: the trial frame's run columns, then the run's own.
RUNS_SELECTED = (Col.RUN_ID.value, Col.RUN_STARTED_AT.value, Col.PROFILE.value,
                 Col.CAMPAIGN.value, "trials", "campaign_started_at", "shard", "ended_at",
                 "results_dir")
RUNS_SELECT = ("SELECT r.run_id, r.started_at, r.profile, r.campaign, "
               f"(SELECT count(*) FROM nb_trials t WHERE t.{Col.RUN_ID} = r.run_id), "
               "r.campaign_started_at, r.shard, r.ended_at, r.results_dir "
               "FROM nb_runs r ORDER BY r.started_at, r.run_id")
# What a series judges (history/series.measured): these kinds, ok, with a throughput.
MEASURED_KINDS = (Kind.REPETITION.value, Kind.UDP_SEARCH.value)
OK = Status.OK.value
NIGHT_TURNS_H = 12          # a night runs from noon to noon (UTC), named by its evening


def epoch(when: datetime) -> float:
    """Seconds since the epoch; a naive datetime is taken as UTC."""
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


# pandas' nanosecond times end in 1677 and 2262: a time beyond them (a bad row already in
# a store: 1e308) is no time (NaT), never an OutOfBoundsDatetime for every reader.
_TIME_LIMIT_S = 9.2e9


def _times(values: Any) -> Any:
    seconds = pd.Series(pd.to_numeric(values, errors="coerce")).astype("float64")
    seconds = seconds.where(seconds.abs() < _TIME_LIMIT_S)
    return pd.to_datetime(seconds, unit="s", utc=True).astype(_TIME)


# The columns a history's series are made of (``history/series.build``), in the trial
# frame's order: what ``Store.latest_frame`` reads for a report's History section.
HISTORY_SELECTED = tuple(c.value for c in (
    Col.RUN_ID, Col.RUN_STARTED_AT, Col.PAIR, Col.ADAPTER, Col.ADAPTER_LABEL, Col.TEST,
    Col.TOOL, Col.PROTOCOL, Col.POINT, Col.MTU, Col.KIND, Col.STATUS, Col.THROUGHPUT_BPS))


def trial_frame_of(raw: pd.DataFrame | None,
                   selected: tuple[str, ...] = TRIAL_SELECTED) -> pd.DataFrame:
    """The store's selected trial columns (all of them, or ``selected``: some, in the
    frame's order) typed as the contract says."""
    raw = raw if raw is not None else pd.DataFrame({n: [] for n in selected})
    out: dict[str, Any] = {}
    for name, dtype in TRIAL_FRAME:
        if name not in selected:
            continue
        col = raw[name]
        if dtype == _TIME:
            out[name] = _times(col)
        elif dtype == _F:
            out[name] = pd.to_numeric(col, errors="coerce").astype("float64")
        elif dtype == _INT:
            out[name] = _whole(col)
        else:
            out[name] = _strings(col).astype(dtype)
    return pd.DataFrame(out, columns=list(selected)).reset_index(drop=True)


def _whole(col: pd.Series) -> Any:
    """A column of whole numbers or nulls as Int64: at once where the database gave
    integers (no nulls), value by value otherwise."""
    if pd.api.types.is_integer_dtype(col.dtype):
        return pd.array(col.to_numpy(), dtype=_INT)
    return pd.array([None if v is None or v is pd.NA or v != v else int(v)
                     for v in col.tolist()], dtype=_INT)


def _strings(col: Any) -> Any:
    """Text with nulls as None: at once where the database gave a string column (its
    nulls are missing values already), value by value otherwise."""
    if isinstance(col.dtype, pd.StringDtype):
        return col
    return pd.Series([None if v is None or v is pd.NA or v != v else v
                      for v in col.tolist()], dtype="object")


def runs_frame_of(raw: pd.DataFrame) -> pd.DataFrame:
    started = _times(raw["campaign_started_at"])
    night = (started - pd.Timedelta(hours=NIGHT_TURNS_H)).dt.strftime("%Y-%m-%d")
    return pd.DataFrame({
        Col.RUN_ID.value: _strings(raw[Col.RUN_ID]).astype(_STR),
        Col.RUN_STARTED_AT.value: _times(raw[Col.RUN_STARTED_AT]),
        Col.PROFILE.value: _strings(raw[Col.PROFILE]).astype(_STR),
        Col.CAMPAIGN.value: _strings(raw[Col.CAMPAIGN]).astype(_STR),
        "trials": pd.array(_whole(raw["trials"]), dtype=_INT),
        "campaign_started_at": started,
        "shard": _strings(raw["shard"]).astype(_STR),
        "night": night.astype(_STR),
        "ended_at": _times(raw["ended_at"]),
        "results_dir": _strings(raw["results_dir"]).astype(_STR),
    })
