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
