"""The trial's columns are declared once (results/columns.py): the trial frame's dtypes,
the store's table and row, and the store's typed frame all come from that one table."""

from __future__ import annotations

import glob
import json
from dataclasses import fields
from pathlib import Path

from nicbench.results import columns
from nicbench.results.dataframe import CATEGORIES, TRIAL_COLUMNS
from nicbench.results.records import Kind, Status, TrialRecord
from nicbench.store import dataframes, schema

DATA = Path(__file__).resolve().parents[1] / "report" / "data"


def real_records() -> list[TrialRecord]:
    out = []
    for path in sorted(glob.glob(str(DATA / "*" / "trials.jsonl"))):
        lines = Path(path).read_text().splitlines()
        out += [TrialRecord.from_dict(json.loads(line)) for line in lines if '"trial_id"' in line]
    return out


def test_every_reader_takes_the_one_declaration():
    names = [c.name for c in columns.TRIAL_SCHEMA]
    assert [n for n, _ in TRIAL_COLUMNS] == names
    assert [n for n, _ in dataframes.TRIAL_FRAME] == names
    stored = [n for n, _ in schema.TRIAL_COLUMNS]
    assert stored[:2] == ["run_id", "trial_id"] and stored[-1] == "record"
    assert set(stored[:-1]) == {c.name for c in columns.RECORD_COLUMNS}
    assert dict(CATEGORIES) == {"kind": tuple(k.value for k in Kind),
                                "status": tuple(s.value for s in Status)}


def test_the_names_are_col_members_and_plain_text_where_they_become_labels():
    assert [c.name for c in columns.TRIAL_SCHEMA] == list(columns.Col)
    assert len(set(columns.Col)) == len(columns.TRIAL_SCHEMA)
    # what the store's SQL and the frames rely on: a member formats and compares as its name
    assert f"t.{columns.Col.RUN_ID} = ?" == "t.run_id = ?"
    assert columns.Col.CPU_SENDER_PCT == "cpu_sender_pct"
    assert {"adapter": 1}[columns.Col.ADAPTER] == 1
    # the derived names are plain str (a frame's labels, JSON, SQL identifiers)
    for name, _ in (*TRIAL_COLUMNS, *schema.TRIAL_COLUMNS, *dataframes.TRIAL_FRAME):
        assert type(name) is str, name
    assert all(type(n) is str for n in dataframes.HISTORY_SELECTED + dataframes.RUNS_SELECTED)


def test_types_carry_to_sql_and_pandas():
    sql = dict(schema.TRIAL_COLUMNS)
    frame = dict(TRIAL_COLUMNS)
    for c in columns.RECORD_COLUMNS:
        assert sql[c.name].startswith(c.type.sql), c.name
        assert frame[c.name] == c.type.pandas, c.name
    assert sql["run_id"] == "TEXT NOT NULL" and sql["throughput_bps"] == "DOUBLE PRECISION"
    assert str(dict(dataframes.TRIAL_FRAME)["started_at"]) == "datetime64[ns, UTC]"


def test_a_column_without_an_expression_names_a_record_field():
    record_fields = {f.name for f in fields(TrialRecord)}
    plain = [c.name for c in columns.RECORD_COLUMNS if not c.expr]
    assert plain and set(plain) <= record_fields


def test_a_row_is_the_records_values():
    recs = real_records()
    assert len(recs) > 100
    with_latency = [r for r in recs if r.latency is not None]
    failed = [r for r in recs if r.failure is not None]
    assert with_latency and failed
    for rec in [*recs[:50], *with_latency[:5], *failed[:5]]:
        row = dict(zip(schema.TRIAL_NAMES, schema.trial_row(rec, "LINE"), strict=True))
        assert row["record"] == "LINE"
        assert (row["run_id"], row["trial_id"], row["pair"]) == (rec.run_id, rec.trial_id,
                                                                 rec.pair)
        assert row["kind"] == rec.kind.value and row["status"] == rec.status.value
        assert row["failure"] == (rec.failure.value if rec.failure else None)
        assert row["latency_p99_us"] == (rec.latency.p99_us if rec.latency else None)
        assert row["sender"] == rec.hosts.get("sender")
        assert row["tool_version"] == rec.version


def test_run_columns_come_from_the_run():
    run = columns.RunInfo(started_at=12.5, profile="lab-roundup", campaign=None)
    values = columns.record_getter(columns.RUN_COLUMNS)(run)
    assert dict(zip((c.name for c in columns.RUN_COLUMNS), values, strict=True)) == {
        "run_started_at": 12.5, "profile": "lab-roundup", "campaign": None}
    assert dataframes.select(("run_id", "run_started_at")).startswith(
        "SELECT t.run_id, r.started_at FROM")
