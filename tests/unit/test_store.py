"""The results store (issue 21) against DuckDB and a real PostgreSQL alike (``store_at``,
tests/conftest.py): import and its idempotence, the trial frame's columns, types and
values, manifests, runs and nights, the store written as a run goes (fake hosts answering
with real captured output) equal to one rebuilt from the directory, and a resume's
superseded records leaving the store as ``records.current`` reads the file.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest

from nicbench.results.campaign import CampaignState, RunState
from nicbench.results.dataframe import TRIAL_COLUMNS
from nicbench.results.manifest import Manifest
from nicbench.results.records import CpuPart, Kind, Status, current
from nicbench.results.rundir import RunDir
from nicbench.store import dataframes, import_dirs, open_store, resolve
from nicbench.store.schema import standing

DATA = Path(__file__).resolve().parents[1] / "report" / "data"
RUNS = [str(DATA / "run-a"), str(DATA / "run-b"), str(DATA / "roundup")]

# Issue 21's trial frame: name and pandas dtype, in order (the one definition).
CONTRACT = [(name, str(dtype)) for name, dtype in TRIAL_COLUMNS]


def store(at: str, write: bool = True):
    return open_store(resolve(at), write=write)


def imported(at: str, dirs=RUNS):
    return import_dirs(lambda: store(at), dirs)


def test_a_second_import_adds_nothing(store_at):
    first = imported(store_at)
    expected = sum(len(standing(current(RunDir(d).records()))) for d in RUNS)
    assert (first.runs_added, first.trials_added, first.trials_already) == (3, expected, 0)
    again = imported(store_at)
    assert (again.runs_added, again.runs_already, again.trials_added) == (0, 3, 0)
    assert again.trials_already == expected
    with store(store_at, write=False) as s:
        info = s.info()
    assert (info.runs, info.trials, info.schema_version) == (3, expected, 1)


def _na(v):
    return v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))


def test_trial_frame_has_the_contract_types_and_the_records_values(store_at):
    imported(store_at)
    with store(store_at, write=False) as s:
        frame = s.trial_frame()
        manifests = s.manifests(frame["run_id"].unique().tolist())
    assert [(c, str(t)) for c, t in frame.dtypes.items()] == CONTRACT
    assert list(frame["kind"].cat.categories) == [k.value for k in Kind]
    assert list(frame["status"].cat.categories) == [s.value for s in Status]
    records = {(r.run_id, r.trial_id): r for d in RUNS for r in current(RunDir(d).records())}
    assert len(frame) == len(records)
    for row in frame.itertuples(index=False):
        rec = records[(row.run_id, row.trial_id)]
        for name in ("pair", "adapter", "adapter_label", "test", "tool", "protocol",
                     "point", "mtu", "repetition", "throughput_bps", "sent_bps",
                     "offered_bps", "duration_s"):
            want, got = getattr(rec, name), getattr(row, name)
            assert (_na(got) and want is None) or got == want, (name, got, want)
        for name, part in (("cpu_sender_pct", CpuPart.SENDER_BUSY),     # the record's cpu
                           ("cpu_receiver_pct", CpuPart.RECEIVER_BUSY)):
            want, got = part.of(rec), getattr(row, name)
            assert (_na(got) and want is None) or got == want, (name, got, want)
        assert row.kind == rec.kind.value and row.status == rec.status.value
        assert (row.failure if not _na(row.failure) else None) == \
            (rec.failure.value if rec.failure else None)
        assert row.started_at.timestamp() == pytest.approx(rec.started_at, abs=1e-6)
        for role in ("sender", "receiver"):      # a skipped configuration has no hosts
            got = getattr(row, role)
            assert (None if _na(got) else got) == rec.hosts.get(role)
        assert (None if _na(row.tool_version) else row.tool_version) == rec.version
        assert row.profile == manifests[row.run_id].profile.name
        assert row.run_started_at.timestamp() == \
            pytest.approx(manifests[row.run_id].started_at, abs=1e-6)


def test_filters_and_manifests_read_back_as_written(store_at):
    imported(store_at)
    with store(store_at, write=False) as s:
        some = s.trial_frame(adapter="lab-gbe", test="iperf3-tcp", point="mtu1500")
        manifests = s.manifests(["20261122-030547", "no-such-run"])
        runs = s.runs()
        none = s.trial_frame(run_ids=[])
    assert len(some) > 0 and set(some["adapter"]) == {"lab-gbe"}
    assert set(some["test"]) == {"iperf3-tcp"} and set(some["point"]) == {"mtu1500"}
    assert list(manifests) == ["20261122-030547"]
    assert manifests["20261122-030547"] == Manifest.read(DATA / "run-a" / "manifest.json")
    assert list(runs.columns[:5]) == ["run_id", "run_started_at", "profile", "campaign",
                                      "trials"]
    assert str(runs["trials"].dtype) == "Int64"
    assert dict(zip(runs["results_dir"], runs["trials"], strict=True)) == {
        d: len(standing(current(RunDir(d).records()))) for d in RUNS}
    assert len(none) == 0 and list(none.columns) == [c for c, _ in CONTRACT]


def _shard(tmp_path: Path, name: str, run: str, shard: str, started: float) -> Path:
    """A campaign directory of one controller holding a copy of a real run."""
    camp = tmp_path / name
    shutil.copytree(run, camp / "r1")
    manifest = json.loads((camp / "r1" / "manifest.json").read_text())
    CampaignState(name="nightly", file="n.yaml", text="", shard=shard, started_at=started,
                  runs=[RunState(name="r1", profile=manifest["profile"]["name"],
                                 pairs=manifest["pairs"])]).write(camp)
    return camp


def test_the_shards_of_one_night_are_one_night(store_at, tmp_path):
    evening = datetime(2026, 11, 24, 20, 20, tzinfo=UTC).timestamp()
    one = _shard(tmp_path, "ctl1", RUNS[0], "1/2", evening)
    two = _shard(tmp_path, "ctl2", RUNS[1], "2/2", evening + 7 * 3600)   # after midnight
    other = _shard(tmp_path, "next", RUNS[2], "1/1", evening + 24 * 3600)
    counts = imported(store_at, [str(one), str(two), str(other)])
    assert counts.runs_added == 3
    with store(store_at, write=False) as s:
        night = s.runs(campaign="nightly", night="2026-11-24")
    assert sorted(night["shard"]) == ["1/2", "2/2"]
    assert set(night["campaign"]) == {"nightly"}
    assert list(night["results_dir"]) == [str(one / "r1"), str(two / "r1")]


def test_a_run_id_held_by_another_run_is_not_imported_over_it(store_at, tmp_path):
    imported(store_at, RUNS[:1])
    twin = tmp_path / "twin"
    shutil.copytree(RUNS[0], twin)
    manifest = json.loads((twin / "manifest.json").read_text())
    manifest["started_at"] += 5
    (twin / "manifest.json").write_text(json.dumps(manifest))
    counts = imported(store_at, [str(twin)])
    assert counts.runs_added == 0 and len(counts.conflicts) == 1
    assert "another run's" in counts.conflicts[0]


def test_an_older_store_is_migrated_forward_when_opened_to_write(store_at, monkeypatch):
    imported(store_at, RUNS[:1])
    from nicbench.store import schema
    from nicbench.store import store as store_module

    # a version 2 of the schema, as a later nicbench would bring: one column more
    monkeypatch.setitem(schema.MIGRATIONS, 2, {"common": [
        "ALTER TABLE nb_runs ADD COLUMN controller TEXT"]})
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", 2)
    with store(store_at, write=False) as s:           # a reader leaves it as it is
        assert s.schema_version() == 1
    with store(store_at) as s:
        assert s.schema_version() == 2
        assert s.backend.fetchall("SELECT count(controller), count(*) FROM nb_runs") == \
            [(0, 1)]
        assert s.info().trials == len(standing(current(RunDir(RUNS[0]).records())))


@pytest.mark.parametrize("versions", [[-1], [1, 1], []])
def test_a_store_of_an_unknown_version_is_refused(store_at, versions):
    from nicbench.errors import StoreError

    open_store(resolve(store_at)).close()
    with store(store_at) as s:
        s.backend.execute("DELETE FROM nb_schema_version")
        for v in versions:
            s.backend.execute("INSERT INTO nb_schema_version VALUES (?)", [v])
    with pytest.raises(StoreError, match="unknown schema version"):
        store(store_at)


def test_many_runs_read_by_worker_processes_import_as_one_process_does(tmp_path):
    dirs = []
    for i in range(8):                 # PARALLEL_FROM: read by a pool of processes
        d = tmp_path / f"run{i}"
        shutil.copytree(RUNS[0], d)
        for name in ("manifest.json", "trials.jsonl"):
            text = (d / name).read_text()
            (d / name).write_text(text.replace('"run_id": "', f'"run_id": "n{i}-'))
        dirs.append(str(d))
    pooled, alone = str(tmp_path / "pooled.duckdb"), str(tmp_path / "alone.duckdb")
    a = import_dirs(lambda: store(pooled), dirs)
    b = import_dirs(lambda: store(alone), dirs, workers=1)
    assert a == b and a.runs_added == 8
    with store(pooled, write=False) as s, store(alone, write=False) as t:
        assert s.trial_frame().equals(t.trial_frame()) and s.runs().equals(t.runs())


def _corpus():
    bench = Path(__file__).resolve().parents[2] / "bench"
    sys.path.insert(0, str(bench))
    try:
        import _store_corpus
    finally:
        sys.path.remove(str(bench))
    return _store_corpus


def test_the_latest_runs_of_every_adapter_at_once_are_each_adapters_history(store_at,
                                                                              tmp_path):
    # A report's History section reads its adapters' last runs in one query
    # (Store.latest_frame): the same series as reading each adapter's whole history and
    # keeping its last runs, also where one series was not measured on the newest night
    # (its last runs reach a night further back than its adapter's other series).
    corpus = _corpus()
    dirs = corpus.write_runs(corpus.Source(DATA / "roundup"), tmp_path / "runs", first=0,
                             count=8, groups=2)
    newest = RunDir(dirs[-2])           # group 0's newest night: iperf3 at MTU 9000 gone
    lines = newest.trials_file.read_text().splitlines(keepends=True)
    kept = [ln for ln in lines if not ('"test": "iperf3-tcp"' in ln
                                       and '"point": "mtu9000"' in ln)]
    assert len(kept) < len(lines)
    newest.trials_file.write_text("".join(kept))
    newest_id = Manifest.read(newest.manifest_file).run_id
    imported(store_at, [str(d) for d in dirs])
    from nicbench.history import history, latest

    with store(store_at, write=False) as s:
        adapters = sorted(set(s.trial_frame()["adapter"].dropna()))
        assert len(adapters) == 10
        for last in (2, 3, 10):
            each = [x for a in adapters for x in history(s, adapter=a, last=last)]
            at_once = latest(s, adapters, last)
            assert at_once == each
            mtu9000 = [x for x in at_once if (x.test, x.point) == ("iperf3-tcp", "mtu9000")]
            gone = [x for x in mtu9000 if x.adapter.endswith("-g0")]
            assert gone and all(newest_id not in {n.run_id for n in x.nights} for x in gone)
            assert {len(x.nights) for x in gone} == {min(last, 3)}
            assert {len(x.nights) for x in mtu9000 if x not in gone} == {min(last, 4)}
            assert max(len(x.nights) for x in at_once) == min(last, 4)
        frame = s.latest_frame(adapters[:1], 2)
        assert list(frame.columns) == list(dataframes.HISTORY_SELECTED)
        assert frame.dtypes.to_dict() == s.trial_frame()[list(
            dataframes.HISTORY_SELECTED)].dtypes.to_dict()
        assert s.latest_frame([], 2).empty


def test_a_run_given_twice_in_one_import_is_stored_once(store_at):
    # both in one batch: the second finds the first's rows (written before it is compared)
    one = RUNS[0]
    n = len(standing(current(RunDir(one).records())))
    counts = imported(store_at, [one, one])
    assert (counts.runs_added, counts.runs_already) == (1, 1)
    assert (counts.trials_added, counts.trials_already) == (n, n)
    with store(store_at, write=False) as s:
        assert (s.info().runs, s.info().trials) == (1, n)
