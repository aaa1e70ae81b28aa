"""The store under faults (issue 32), each with real parts: two `nicbench store import`
processes into one real PostgreSQL database at once (each run imported once); the server
stopped mid-import (one line); a DuckDB file cut to half or overwritten (found damaged by
`store info`, refused by import, never said to be "locked"); a full disk (a small tmpfs:
said in those words, nothing half written, the store whole once there is space again).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from clihelp import argv, env, nicbench

from nicbench.store import import_dirs, open_store, resolve

DATA = Path(__file__).resolve().parents[1] / "report" / "data"
BENCH = Path(__file__).resolve().parents[2] / "bench"
RUNS = [str(DATA / "run-a"), str(DATA / "run-b")]


def _one_error_line(res) -> str:
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("nicbench: error: "), res.stderr
    assert "Traceback" not in res.stderr
    return lines[0]


def _counts(at: str) -> tuple[int, int]:
    with open_store(resolve(at), write=False) as s:
        info = s.info()
    return info.runs, info.trials


def _duck_store(tmp_path: Path) -> Path:
    at = tmp_path / "store.duckdb"
    import_dirs(lambda: open_store(resolve(str(at))), RUNS)
    return at


# -- DuckDB files damaged -------------------------------------------------------------------
def test_a_duckdb_file_cut_to_half_is_found_damaged_and_refused(tmp_path):
    at = _duck_store(tmp_path)
    os.truncate(at, at.stat().st_size // 2)
    size = at.stat().st_size
    for words in (["store", "info"], ["store", "import", str(DATA / "roundup")],
                  ["history"]):
        res = nicbench(*words, "--store", str(at), cwd=tmp_path)
        assert res.returncode == 2, (words, res.stdout)
        line = _one_error_line(res)
        assert "damaged" in line and "its data reaches" in line and "locked" not in line
    assert at.stat().st_size == size


@pytest.mark.parametrize("at_byte", [4096, 3 * 4096])
def test_a_corrupt_duckdb_file_is_damaged_not_locked(tmp_path, at_byte):
    at = _duck_store(tmp_path)
    with open(at, "r+b") as fh:          # a block overwritten (its checksum no longer fits)
        fh.seek(at_byte + 100)
        fh.write(os.urandom(2000))
    for words in (["store", "info"], ["store", "import", str(DATA / "roundup")]):
        res = nicbench(*words, "--store", str(at), cwd=tmp_path)
        assert res.returncode == 2, res.stdout
        line = _one_error_line(res)
        assert "damaged (Corrupt database file" in line, line
        assert "locked" not in line and "more than" not in line


def test_a_duckdb_store_another_process_holds_is_still_said_to_be_locked(tmp_path):
    from nicbench.errors import StoreError
    from nicbench.store import StoreBusy

    at = _duck_store(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time; "
                               f"c = duckdb.connect({str(at)!r}); print('held', flush=True); "
                               "sys.stdin.read()"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(StoreError) as err:
            open_store(resolve(str(at)), lock_wait_s=0.5)
        assert isinstance(err.value, StoreBusy)
        assert f"locked by process {holder.pid}" in str(err.value)
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(30)


# -- a full disk ------------------------------------------------------------------------------
@pytest.fixture
def small_disk(tmp_path):
    """A 2 MiB tmpfs at tmp_path/disk, unmounted at the end."""
    if os.geteuid() != 0:
        pytest.fail("the full-disk test mounts a tmpfs: it needs root (the lab tests do)")
    disk = tmp_path / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0755", "tmpfs", str(disk)],
                   check=True, capture_output=True)
    try:
        yield disk
    finally:
        subprocess.run(["umount", str(disk)], check=False, capture_output=True)
        if os.path.ismount(disk):
            subprocess.run(["umount", "-l", str(disk)], check=False, capture_output=True)


def _fill(disk: Path, leave: int) -> Path:
    """A file taking all of ``disk``'s free space but ``leave`` bytes."""
    free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
    filler = disk / "filler"
    with open(filler, "wb") as fh:
        fh.write(b"\0" * max(free - leave, 0))
    return filler


def test_a_full_disk_is_said_in_those_words_and_nothing_is_half_written(small_disk,
                                                                         tmp_path):
    at = small_disk / "store.duckdb"
    import_dirs(lambda: open_store(resolve(str(at))), RUNS)
    before = _counts(str(at))
    filler = _fill(small_disk, 16 * 1024)
    res = nicbench("store", "import", str(DATA / "roundup"), str(DATA / "modern"),
                   "--store", str(at), cwd=tmp_path)
    assert res.returncode == 2, res.stdout
    line = _one_error_line(res)
    assert "disk full (no space left on device)" in line and str(small_disk) in line, line
    assert "rollback" not in line
    filler.unlink()
    assert _counts(str(at)) == before               # nothing of the import went in
    res = nicbench("store", "import", str(DATA / "roundup"), "--store", str(at),
                   cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert _counts(str(at))[0] == before[0] + 1


# -- PostgreSQL ---------------------------------------------------------------------------------
def _corpus(tmp_path: Path, runs: int, trials: int) -> list[str]:
    sys.path.insert(0, str(BENCH))
    try:
        import _store_corpus
    finally:
        sys.path.remove(str(BENCH))
    return [str(r.write(tmp_path / "corpus"))
            for r in _store_corpus.corpus(runs=runs, adapters=3, nights=runs,
                                          trials_per_run=trials)]


def _server(pg_server):
    import pgserver

    if isinstance(pg_server, pgserver.Unavailable):
        pytest.skip(f"no PostgreSQL server for the store tests: {pg_server}")
    return pg_server


def test_two_imports_at_once_into_postgresql_import_each_run_once(pg_server, tmp_path):
    server = _server(pg_server)
    url = server.new_database()
    dirs = _corpus(tmp_path, runs=6, trials=300)
    try:
        procs = [subprocess.Popen(argv("store", "import", *dirs, "--store", url),
                                  cwd=tmp_path, env=env(), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(2)]
        results = [p.communicate(timeout=300) for p in procs]
        for p, (_out, err) in zip(procs, results, strict=True):
            assert p.returncode == 0 and err == "", err
        added = [int(out.split("runs ")[1].split(" added")[0]) for out, _ in results]
        assert sum(added) == 6                      # each run added by one of them
        with open_store(resolve(url), write=False) as s:
            assert s.info().runs == 6 and s.info().trials == 6 * 300
            per_run = s.backend.fetchall("SELECT run_id, count(*) FROM nb_trials "
                                         "GROUP BY run_id")
        assert sorted(n for _, n in per_run) == [300] * 6
    finally:
        server.drop_database(url)


def test_postgresql_stopped_mid_import_is_one_line(tmp_path):
    """The import is held inside its transaction (the test holds the lock of its runs),
    then the server is stopped under it."""
    import json

    import pgserver
    import psycopg

    try:
        server = pgserver.start()          # its own: this test stops it
    except pgserver.Unavailable as exc:
        pytest.skip(f"no PostgreSQL server for the store tests: {exc}")
    try:
        url = server.new_database()
        dirs = _corpus(tmp_path, runs=3, trials=100)
        open_store(resolve(url)).close()                # the schema made
        ids = [json.loads((Path(d) / "manifest.json").read_text())["run_id"] for d in dirs]
        holder = psycopg.connect(url)
        holder.execute("SELECT pg_advisory_xact_lock(72116, hashtext(x)) "
                       "FROM unnest(%s::text[]) AS x", [ids])
        proc = subprocess.Popen(argv("store", "import", *dirs, "--store", url),
                                cwd=tmp_path, env=env(), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            waiting = holder.execute("SELECT count(*) FROM pg_locks WHERE locktype = "
                                     "'advisory' AND NOT granted").fetchone()
            if waiting and waiting[0]:
                break
            time.sleep(0.1)
        assert proc.poll() is None, proc.communicate()
        subprocess.run([*server.as_user, str(server.bin / "pg_ctl"), "-D",
                        str(server.root / "data"), "-m", "immediate", "-w", "stop"],
                       check=True, capture_output=True, timeout=60)
        holder.close()
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 2, out
        line = _one_error_line(subprocess.CompletedProcess([], 2, "", err))
        assert "the server closed the connection" in line, line
    finally:
        server.stop()
