"""The store refuses what is not a measurement (issue 32): import checks each record as a
trial of its directory's run (``results/plausible.py``: times after 2000 and within the
run's window, durations, rates and CPU within physical bounds, the manifest's run_id and
pairs; text a database can hold) and names each bad line by file:line without importing
it; a bad row already in a store is named and left out of history and report, which go on.
DuckDB and a real PostgreSQL alike (``store_at``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from clihelp import nicbench

from nicbench.errors import StoreError
from nicbench.results.records import TrialRecord
from nicbench.store import import_dirs, open_store, resolve

DATA = Path(__file__).resolve().parents[1] / "report" / "data"
RUN_A = DATA / "run-a"


def _edited(tmp_path: Path, edit, line: int = 3, name: str = "run") -> Path:
    """A copy of run-a whose trials.jsonl line ``line`` is edited by ``edit(dict)``."""
    out = tmp_path / name
    shutil.copytree(RUN_A, out)
    lines = (out / "trials.jsonl").read_text().splitlines()
    data = json.loads(lines[line - 1])
    edit(data)
    lines[line - 1] = json.dumps(data)
    (out / "trials.jsonl").write_text("\n".join(lines) + "\n")
    return out


def _set(**values):
    return lambda data: data.update(values)


BAD = [
    ("started_at_huge", _set(started_at=1e308), "started_at 1e+308 is in the future"),
    ("started_at_negative", _set(started_at=-1.0), "started_at -1 is before 2000"),
    ("started_at_1990", _set(started_at=631152000.0), "is before 2000"),
    ("started_before_run", _set(started_at=1700000000.0, ended_at=1700000001.0),
     "is outside the run's window"),
    ("ended_before_start", lambda d: d.update(ended_at=d["started_at"] - 10),
     "is before started_at"),
    ("duration_huge", _set(duration_s=1e308), "duration_s 1e+308 is outside 0 to"),
    ("duration_negative", _set(duration_s=-2.0), "duration_s -2 is outside 0 to"),
    ("wall_negative", _set(wall_s=-2.0), "wall_s -2 is outside 0 to"),
    # an older line's CPU keys, read into the grouped cpu (named where it now is)
    ("cpu_huge", _set(cpu_sender_pct=1e308), "cpu.sender.busy 1e+308 is outside 0 to 100 %"),
    ("cpu_negative", _set(cpu_receiver_pct=-0.5), "cpu.receiver.busy -0.5 is outside 0 to"),
    ("cpu_101", _set(cpu_sender_pct=101.0), "cpu.sender.busy 101 is outside 0 to 100 %"),
    ("cpu_grouped_101", _set(format_version=3, cpu={
        "sender": {"busy": 50.0, "tool": 2.0, "other": 101.0}, "receiver": None}),
     "cpu.sender.other 101 is outside 0 to 100 %"),
    ("tool_cpu_negative", _set(cpu_tool_pct=-1.0), "cpu_tool_pct -1 is outside 0 to"),
    ("rate_negative", _set(throughput_bps=-1.0), "throughput_bps -1.0 is negative"),
    ("other_run", _set(run_id="20261122-999999"), "run_id '20261122-999999' is another run's"),
    ("pair_not_in_manifest", _set(pair="ghost"), "pair 'ghost' is not in the run's manifest"),
    ("lone_surrogate", _set(adapter_label="card \ud800"), "adapter_label holds a lone surrogate"),
]


def _lines(path: Path) -> int:
    return sum(1 for line in (path / "trials.jsonl").read_text().splitlines() if line)


@pytest.mark.parametrize("edit, says", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_a_bad_record_is_named_by_file_line_and_not_imported(store_at, tmp_path, edit, says):
    run = _edited(tmp_path, edit)
    counts = import_dirs(lambda: open_store(resolve(store_at)), [str(run)])
    assert len(counts.skipped_lines) == 1, counts.skipped_lines
    assert counts.skipped_lines[0].startswith(f"{run / 'trials.jsonl'}:3: "), counts
    assert says in counts.skipped_lines[0], counts.skipped_lines[0]
    good = import_dirs(lambda: open_store(resolve(str(tmp_path / "good.duckdb"))),
                       [str(RUN_A)])
    assert counts.trials_added == good.trials_added - 1
    with open_store(resolve(store_at), write=False) as s:
        frame = s.trial_frame()
        assert s.left_out == []
    assert len(frame) == good.trials_added - 1
    assert frame["started_at"].notna().all()


def test_a_directory_of_another_runs_records_imports_none_of_them(store_at, tmp_path):
    twin = tmp_path / "twin"
    shutil.copytree(RUN_A, twin)
    shutil.copy(DATA / "run-b" / "trials.jsonl", twin / "trials.jsonl")
    counts = import_dirs(lambda: open_store(resolve(store_at)), [str(twin)])
    assert counts.trials_added == 0 and counts.runs_added == 1
    assert len(counts.skipped_lines) == _lines(twin)
    # each refused for the first thing wrong: its pair, its repetitions, its run_id
    assert any("is another run's" in line for line in counts.skipped_lines)


def test_import_says_each_bad_line_and_exits_1_and_history_goes_on(tmp_path):
    run = _edited(tmp_path, _set(started_at=1e308))
    at = str(tmp_path / "s.duckdb")
    res = nicbench("store", "import", str(run), "--store", at, cwd=tmp_path)
    assert res.returncode == 1, res.stderr
    warns = res.stderr.strip().splitlines()
    assert warns == [f"nicbench: warning: not imported: {run}/trials.jsonl:3: started_at "
                     "1e+308 is in the future: not a trial nicbench could have measured "
                     "(the file was edited or is corrupt)"]
    assert "1 lines not imported" in res.stdout
    res = nicbench("history", "--store", at, cwd=tmp_path)
    assert res.returncode == 0 and res.stderr == "", res.stderr


def test_a_bad_row_already_in_a_store_is_named_and_left_out(store_at, tmp_path):
    import_dirs(lambda: open_store(resolve(store_at)), [str(RUN_A)])
    with open_store(resolve(store_at)) as s:       # as an older nicbench imported it
        (first,), (last,) = s.backend.fetchall(
            "SELECT min(trial_id) FROM nb_trials"), s.backend.fetchall(
            "SELECT max(trial_id) FROM nb_trials WHERE status = 'ok'")
        s.backend.execute("UPDATE nb_trials SET started_at = ? WHERE trial_id = ?",
                          [1e308, first[0] if isinstance(first, tuple) else first])
        s.backend.execute("UPDATE nb_trials SET cpu_sender_pct = ? WHERE trial_id = ?",
                          [-4.0, last[0] if isinstance(last, tuple) else last])
        (total,), = s.backend.fetchall("SELECT count(*) FROM nb_trials")
    with open_store(resolve(store_at), write=False) as s:
        frame = s.trial_frame()
        named = list(s.left_out or [])
        latest = s.latest_frame(sorted(set(frame["adapter"].dropna())), 10)
    assert len(frame) == total - 2 and len(named) == 2
    assert any("started_at 1e+308 outside" in n for n in named), named
    assert any("cpu_sender_pct -4.0 outside 0 to 100" in n for n in named), named
    assert not latest.empty
    res = nicbench("history", "--store", store_at, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    said = res.stderr.strip().splitlines()
    assert len(said) == 2 and all("left out of the history" in line for line in said)
    assert "Traceback" not in res.stderr and "internal error" not in res.stderr


def test_a_report_with_a_bad_row_in_its_store_is_made_and_names_it(tmp_path):
    at = str(tmp_path / "s.duckdb")
    import_dirs(lambda: open_store(resolve(at)), [str(RUN_A), str(DATA / "run-b")])
    with open_store(resolve(at)) as s:
        s.backend.execute("UPDATE nb_trials SET started_at = ? WHERE run_id = "
                          "(SELECT min(run_id) FROM nb_runs) AND status = 'ok' AND "
                          "trial_id = (SELECT min(trial_id) FROM nb_trials WHERE "
                          "status = 'ok')", [-1e308])
    res = nicbench("report", str(RUN_A), "--store", at, "--out", str(tmp_path / "rep"),
                   cwd=tmp_path, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "left out of the report's history" in res.stderr, res.stderr
    page = Path(res.stdout.strip().splitlines()[-1].removeprefix("report: "))
    assert page.is_file() and page.parent == tmp_path / "rep"


def test_a_value_that_is_not_text_is_one_line_from_postgresql(pg_server):
    import pgserver

    from nicbench.store.schema import RunRow

    if isinstance(pg_server, pgserver.Unavailable):
        pytest.skip(f"no PostgreSQL server for the store tests: {pg_server}")
    url = pg_server.new_database()
    try:
        row = RunRow(run_id="r\ud800", started_at=1.8e9, ended_at=None, profile="p",
                     campaign=None, campaign_started_at=None, shard=None, results_dir="d",
                     manifest="{}", nicbench_version="0")
        with open_store(resolve(url)) as s:
            with pytest.raises(StoreError) as err:
                s.insert_runs([row])
            with pytest.raises(StoreError) as err2:
                s.write_run(row)
        for e in (err, err2):
            assert "not text" in str(e.value) and "surrogate" in str(e.value)
            assert "\n" not in str(e.value)
    finally:
        pg_server.drop_database(url)


def test_the_plausibility_checks_name_each_new_bound():
    from nicbench.results.plausible import impossible, plainly_possible

    line = (RUN_A / "trials.jsonl").read_text().splitlines()[2]
    data = json.loads(line)
    assert impossible(TrialRecord.from_dict(data)) is None
    for _, edit, says in BAD[:14]:
        if "window" in says:
            continue                        # needs the manifest
        changed = dict(data)
        edit(changed)
        assert not plainly_possible(changed), says
        assert says in (impossible(TrialRecord.from_dict(changed)) or ""), says


def test_a_run_row_of_an_impossible_start_reads_as_no_time(store_at, tmp_path):
    import_dirs(lambda: open_store(resolve(store_at)), [str(RUN_A), str(DATA / "run-b")])
    with open_store(resolve(store_at)) as s:
        s.backend.execute("UPDATE nb_runs SET started_at = ?, ended_at = ? WHERE run_id = "
                          "(SELECT min(run_id) FROM nb_runs)", [1e308, -1e308])
    with open_store(resolve(store_at), write=False) as s:
        runs = s.runs()
        frame = s.trial_frame()
        named = list(s.left_out or [])
    assert len(runs) == 2 and runs["run_started_at"].isna().sum() == 1
    assert runs["ended_at"].isna().sum() >= 1
    assert named and all("its run started_at 1e+308" in n for n in named)
    assert frame["run_started_at"].notna().all() and len(frame)
    res = nicbench("history", "--store", store_at, cwd=tmp_path)
    assert res.returncode == 0 and "internal error" not in res.stderr, res.stderr
