"""``nicbench store`` and ``--store`` (issue 21), against DuckDB and a real PostgreSQL:
import (twice: the second adds nothing), rebuild (equal to the store imported), info,
the night of a sharded campaign in ``status --store``; and each bad store one line, exit
2, before a run touches anything: a store of another schema version, a server that does
not answer, a file that is not a store, a results directory given as the store.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from clihelp import in_process

from nicbench.store import open_store, resolve

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "report" / "data"
RUNS = [str(DATA / "run-a"), str(DATA / "run-b"), str(DATA / "roundup")]
VALID = ROOT / "tests" / "badinput" / "valid"


@pytest.fixture(autouse=True)
def _no_env_store(monkeypatch, tmp_path):
    monkeypatch.delenv("NICBENCH_STORE", raising=False)
    monkeypatch.chdir(tmp_path)


def one_line(rc: int, err: str) -> str:
    assert rc == 2 and "Traceback" not in err, err
    lines = [x for x in err.splitlines() if x]
    assert len(lines) == 1 and lines[0].startswith("nicbench: error: "), err
    return lines[0]


@pytest.mark.parametrize("argv, words", [
    (["store", "--help"], ["import", "rebuild", "info"]),
    (["store", "import", "--help"], ["DIR", "--store", "NICBENCH_STORE",
                                     "reports/nicbench.duckdb"]),
    (["store", "rebuild", "--help"], ["--from", "--store"]),
    (["store", "info", "--help"], ["--store", "schema version"]),
    (["run", "--help"], ["--store", "NICBENCH_STORE"]),
    (["campaign", "--help"], ["--store"]),
    (["report", "--help"], ["--store"]),
    (["status", "--help"], ["--store", "shard"]),
])
def test_help_names_the_store(argv, words, capsys):
    rc, out, _ = in_process(capsys, *argv)
    assert rc == 0
    text = " ".join(out.split())
    for w in words:
        assert w in text, (w, text)


def test_import_twice_adds_nothing_the_second_time_and_info_counts(store_at, capsys):
    rc, out, err = in_process(capsys, "store", "import", *RUNS, "--store", store_at)
    assert rc == 0, err
    assert "runs 3 added, 0 already there; trials 443 added, 0 already there" in out
    rc, out, _ = in_process(capsys, "store", "import", *RUNS, "--store", store_at)
    assert "runs 0 added, 3 already there; trials 0 added, 443 already there" in out
    rc, out, _ = in_process(capsys, "store", "info", "--store", store_at)
    assert rc == 0 and "runs: 3 (0 campaigns), trials: 443" in out
    assert "schema version 1" in out


def test_rebuild_gives_the_store_the_import_gave(store_at, tmp_path, capsys):
    in_process(capsys, "store", "import", *RUNS, "--store", store_at)
    with open_store(resolve(store_at), write=False) as s:
        before = (s.trial_frame(), s.runs())
    rc, out, err = in_process(capsys, "store", "rebuild", "--from", *RUNS, "--store",
                              store_at)
    assert rc == 0, err
    assert "trials 443 added, 0 already there" in out     # made again from nothing
    with open_store(resolve(store_at), write=False) as s:
        after = (s.trial_frame(), s.runs())
    assert before[0].equals(after[0]) and before[1].equals(after[1])


def test_the_default_store_and_the_environment(tmp_path, monkeypatch, capsys):
    rc, out, _ = in_process(capsys, "store", "import", RUNS[0])
    assert rc == 0 and (tmp_path / "reports" / "nicbench.duckdb").is_file()
    monkeypatch.setenv("NICBENCH_STORE", str(tmp_path / "env.duckdb"))
    rc, out, _ = in_process(capsys, "store", "import", RUNS[1])
    assert rc == 0 and f"imported into {tmp_path / 'env.duckdb'}" in out
    rc, out, _ = in_process(capsys, "store", "info")
    assert "runs: 1 " in out


EVENING = datetime(2026, 11, 25, 21, 0, tzinfo=UTC).timestamp()


def test_status_shows_the_whole_night_of_every_shard(tmp_path, capsys):
    from nicbench.results.campaign import CampaignState, RunState

    at = str(tmp_path / "s.duckdb")
    dirs = []
    for i, run in enumerate(RUNS[:2], start=1):
        camp = tmp_path / f"ctl{i}"
        shutil.copytree(run, camp / "r1")
        manifest = json.loads((camp / "r1" / "manifest.json").read_text())
        CampaignState(name="nightly", file="n.yaml", text="", shard=f"{i}/2",
                      started_at=EVENING + i * 60,
                      runs=[RunState(name="r1", profile=manifest["profile"]["name"],
                                     pairs=manifest["pairs"])]).write(camp)
        dirs.append(str(camp))
    in_process(capsys, "store", "import", *dirs, "--store", at)
    _rc, out, _ = in_process(capsys, "status", dirs[0], "--store", at)
    assert "store: night 2026-11-25 of nightly: 2 runs (shards 1/2, 2/2), 41 trials" in out
    _rc, out, _ = in_process(capsys, "status", dirs[0], "--store", at, "--json")
    assert json.loads(out)["store"] == {"campaign": "nightly", "night": "2026-11-25",
                                        "shards": ["1/2", "2/2"], "runs": 2, "trials": 41}


RUN = ["run", str(VALID / "run-profile.yaml"), "-i", str(VALID / "run-inventory.yaml"),
       "--out", "out"]


def _newer(at: str) -> None:
    with open_store(resolve(at)) as s:
        s.backend.execute("UPDATE nb_schema_version SET version = 99")


def test_a_store_of_a_newer_schema_is_refused_in_one_line(store_at, tmp_path, capsys):
    _newer(store_at)
    for argv in ([*RUN, "--store", store_at], ["store", "import", RUNS[0], "--store", store_at],
                 ["store", "info", "--store", store_at],
                 ["report", RUNS[0], "--out", "rep", "--store", store_at]):
        line = one_line(*in_process(capsys, *argv)[::2])
        assert "schema version 99, newer than this nicbench knows (1)" in line
    assert not (tmp_path / "out").exists()          # the run never began


@pytest.mark.parametrize("what", ["text", "results-dir", "other-duckdb", "no-server",
                                  "bad-scheme"])
def test_a_store_that_is_not_one_is_refused_in_one_line(what, tmp_path, capsys):
    if what == "text":
        (tmp_path / "notes.txt").write_text("hello\n" * 10)
        store, words = str(tmp_path / "notes.txt"), "not a DuckDB database"
    elif what == "results-dir":
        store, words = RUNS[0], "is a directory (a results directory?)"
    elif what == "other-duckdb":
        import duckdb

        con = duckdb.connect(str(tmp_path / "other.duckdb"))
        con.execute("CREATE TABLE sales (x INTEGER)")
        con.close()
        store, words = str(tmp_path / "other.duckdb"), "not a nicbench store"
    elif what == "no-server":
        store = f"postgresql://nobody@/nb?host={tmp_path}/no-such-socket-dir"
        words = "does not answer (within 5 s)"
    else:
        store, words = "mysql://lab/nb", "not mysql://"
    for argv in ([*RUN, "--store", store], ["store", "import", RUNS[0], "--store", store],
                 ["report", RUNS[0], "--out", "rep", "--store", store]):
        rc, _out, err = in_process(capsys, *argv)
        assert words in one_line(rc, err)
    assert not (tmp_path / "out").exists() and not (tmp_path / "rep").exists()
    if what == "text":
        assert (tmp_path / "notes.txt").read_text() == "hello\n" * 10    # left as it was
