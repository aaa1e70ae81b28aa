"""textfile.write_atomic, which every file nicbench writes whole goes through: the new
text or the old, never half, and no temporary file left when the write fails."""

from __future__ import annotations

import pytest

from nicbench.textfile import write_atomic


def test_replaces_the_file_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "manifest.json"
    path.write_text("old")
    write_atomic(path, "new", fsync=True)
    assert path.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json"]


def test_a_failed_write_keeps_the_old_file_and_removes_the_temporary_one(tmp_path):
    # The rename fails (the target is a directory): as a full disk fails the write, the
    # error is the caller's to say, and nothing half-written stays behind.
    target = tmp_path / "state.json"
    target.mkdir()
    (target / "kept").write_text("old")
    with pytest.raises(OSError):
        write_atomic(target, "new")
    assert (target / "kept").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]


def test_a_temporary_file_of_its_own_name(tmp_path):
    # The heartbeat names its temporary file by pid, so two controllers never share one.
    path = tmp_path / "heartbeat.json"
    write_atomic(path, "{}", tmp=tmp_path / "heartbeat.json.123.tmp")
    assert path.read_text() == "{}"
    assert not (tmp_path / "heartbeat.json.123.tmp").exists()


def test_nothing_is_written_through_a_link_planted_in_a_results_directory(tmp_path):
    """A link named like the next raw output, summary.csv or a temporary file of an
    atomic write (a link to /etc/passwd in a results directory) is replaced by the file
    written, and its target is left as it was (issue 19)."""
    from nicbench.results.rundir import RunDir
    from nicbench.results.summary import write_csv

    target = tmp_path / "outside"
    target.write_text("keep me\n")
    run = RunDir(tmp_path / "run").create()
    for name in ("raw/t1.client.txt", "summary.csv", "manifest.json.tmp"):
        (run.path / name).symlink_to(target)
    assert run.write_raw("t1", "client", "raw output\n") == "raw/t1.client.txt"
    write_csv(run.summary_file, ["a"], [[1]])
    write_atomic(run.manifest_file, "{}")
    assert target.read_text() == "keep me\n"
    assert (run.path / "raw" / "t1.client.txt").read_text() == "raw output\n"
    assert run.summary_file.read_bytes() == b"a\r\n1\r\n"
    assert run.manifest_file.read_text() == "{}"
    for name in ("raw/t1.client.txt", "summary.csv", "manifest.json"):
        assert not (run.path / name).is_symlink()
    assert not (run.path / "manifest.json.tmp").exists()
