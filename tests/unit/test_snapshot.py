"""A run directory read from outside the run (status, the morning summary): what is not
there or not readable yet is None or no trials, never an error."""

from __future__ import annotations

from nicbench.results.snapshot import read_run


def test_a_run_not_started_reads_as_nothing(tmp_path):
    snap = read_run(tmp_path)
    assert snap.manifest is None and snap.profile is None and snap.by_pair == {}


def test_a_manifest_being_written_reads_as_none(tmp_path):
    (tmp_path / "manifest.json").write_text('{"format_version": 1, "prof')
    (tmp_path / "trials.jsonl").mkdir()       # not a regular file: no trials, no error
    snap = read_run(tmp_path)
    assert snap.manifest is None and snap.by_pair == {}
