"""Nothing in a results directory is followed out of it (issue 19): symbolic links and
special files in a run are neither read nor copied into the report's data/ (the folder
meant to be sent to others), each is said in one warning line naming it, a FIFO does not
block the command, and the rest of the report is what it is without them. data/ carries
no path of this machine.

Each command runs as a user runs it, in its own process (a FIFO that blocked would hang
it: the timeout below only stops a hung test, it bounds nothing that should pass)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import RUN_A, RUN_B

SECRET = "TOP-SECRET-do-not-ship"
HUNG = 300


def nicbench(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nicbench.cli", *argv], cwd=cwd,
                          capture_output=True, text=True, timeout=HUNG, check=False)


def cut(run: Path) -> Path:
    """The run cut to the gbe card's iperf3 trials: a report of a few charts."""
    lines = [x for x in (run / "trials.jsonl").read_text().splitlines()
             if json.loads(x)["pair"] == "gbe" and json.loads(x)["test"] == "iperf3-tcp"]
    (run / "trials.jsonl").write_text("\n".join(lines) + "\n")
    return run


@pytest.fixture
def secret(tmp_path) -> Path:
    path = tmp_path / "outside" / "shadow"
    path.parent.mkdir()
    path.write_text(SECRET + "\n")
    return path


def plant(run: Path, secret: Path, tmp_path: Path) -> list[tuple[Path, str]]:
    """Links and special files in raw/ and beside the run's files: (path, what it is)."""
    raw = run / "raw"
    (raw / "sub").mkdir()
    (raw / "sub" / "inner.txt").write_text("a regular file in a subdirectory\n")
    bad = [(raw / "leak.client.txt", "link"), (raw / "root", "link"),
           (raw / "dangling", "link"), (raw / "pipe", "fifo"),
           (raw / "sub" / "leak2", "link"), (run / "summary.csv", "link")]
    (raw / "leak.client.txt").symlink_to(secret)
    (raw / "root").symlink_to("/")
    (raw / "dangling").symlink_to(tmp_path / "no-such-file")
    os.mkfifo(raw / "pipe")
    (raw / "sub" / "leak2").symlink_to(secret)
    (run / "summary.csv").unlink(missing_ok=True)
    (run / "summary.csv").symlink_to(secret)
    return bad


def tree(root: Path) -> dict[str, str]:
    """Every entry under root by its relative path: 'file', 'dir', or what else it is."""
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            p = Path(dirpath) / name
            mode = os.lstat(p).st_mode
            out[str(p.relative_to(root))] = ("dir" if stat.S_ISDIR(mode) else
                                             "file" if stat.S_ISREG(mode) else "other")
    return out


def test_links_and_fifos_in_a_run_are_listed_and_never_copied(copy_run, secret, tmp_path):
    clean = cut(copy_run(RUN_A, "clean"))
    run = cut(copy_run(RUN_A, "night"))
    bad = plant(run, secret, tmp_path)

    ref = nicbench("report", str(clean), "--out", str(tmp_path / "ref"), cwd=tmp_path)
    assert ref.returncode == 0, ref.stderr
    got = nicbench("report", str(run), "--out", str(tmp_path / "rep"), cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    assert "Traceback" not in got.stderr
    warnings = got.stderr.splitlines()
    assert all(w.startswith("nicbench: warning: ") for w in warnings), got.stderr
    # one line each, naming it
    for path, _what in bad:
        assert sum(f" {path}:" in w for w in warnings) == 1, (path, got.stderr)
    assert len(warnings) == len(bad), got.stderr
    assert any(f"{run}/raw/pipe: a FIFO (named pipe): skipped" in w for w in warnings)

    data = tmp_path / "rep" / "data" / "A-night"
    copied = tree(data)
    assert set(copied.values()) <= {"file", "dir"}           # no link, no FIFO
    assert copied.get("raw/sub/inner.txt") == "file"
    for path, _what in bad:
        assert str(path.relative_to(run)) not in copied
    originals = {str(p.relative_to(run)) for p in (run / "raw").iterdir()
                 if p.is_file() and not p.is_symlink()}
    assert originals and {k for k in copied if k.startswith("raw/") and "/" not in k[4:]
                          and copied[k] == "file"} == {f"raw/{n[4:]}" for n in originals}
    for f in (tmp_path / "rep").rglob("*"):
        if f.is_file():
            assert SECRET not in f.read_text(errors="replace"), f
    # the rest of the report is what it is without them
    for table in ("verdict.csv", "summary.csv"):
        if (tmp_path / "ref" / "tables" / table).exists():
            assert (tmp_path / "rep" / "tables" / table).read_bytes() == \
                (tmp_path / "ref" / "tables" / table).read_bytes()
    assert sorted(p.name for p in (tmp_path / "rep" / "figures").iterdir()) == \
        sorted(p.name for p in (tmp_path / "ref" / "figures").iterdir())


def test_a_raw_directory_that_is_a_link_to_the_root_copies_nothing(copy_run, tmp_path):
    a = cut(copy_run(RUN_A, "a"))
    b = cut(copy_run(RUN_B, "b"))
    import shutil

    shutil.rmtree(b / "raw")
    (b / "raw").symlink_to("/")
    got = nicbench("report", str(a), str(b), "--out", str(tmp_path / "rep"), cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    assert got.stderr.splitlines() == [
        f"nicbench: warning: {b}/raw: a symbolic link: skipped, not read or copied "
        "(nicbench reads only the regular files a results directory holds itself)"]
    assert not (tmp_path / "rep" / "data" / "B-b" / "raw").exists()
    assert (tmp_path / "rep" / "data" / "A-a" / "raw").is_dir()
    assert (tmp_path / "rep" / "tables" / "comparison.csv").is_file()   # two runs compared


def test_the_data_folder_carries_no_path_of_this_machine(copy_run, tmp_path):
    run = cut(copy_run(RUN_A, "paths"))
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["inventory_dir"] = str(tmp_path / "secret-lab")
    manifest["profile_file"] = str(tmp_path / "profiles" / "quick.yaml")
    (run / "manifest.json").write_text(json.dumps(manifest, indent=1))
    got = nicbench("report", str(run), "--out", str(tmp_path / "rep"), cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    copy = (tmp_path / "rep" / "data" / "A-paths" / "manifest.json").read_text()
    assert str(tmp_path) not in copy and "/tmp/nbr-lab" not in copy
    data = json.loads(copy)
    assert "inventory_dir" not in data and data["profile_file"] == "quick.yaml"
    # still a manifest nicbench reads: the data/ folder is itself a results directory
    again = nicbench("report", str(tmp_path / "rep" / "data" / "A-paths"), "--out",
                     str(tmp_path / "again"), cwd=tmp_path)
    assert again.returncode == 0, again.stderr


def test_status_reads_no_linked_manifest_or_trials_and_says_so(copy_run, secret, tmp_path):
    run = copy_run(RUN_A, "status")
    os.rename(run / "trials.jsonl", tmp_path / "trials.jsonl")
    (run / "trials.jsonl").symlink_to(tmp_path / "trials.jsonl")
    got = nicbench("status", str(run), cwd=tmp_path)
    assert "Traceback" not in got.stderr and got.returncode in (0, 1)
    assert got.stderr.splitlines() == [
        f"nicbench: warning: {run}/trials.jsonl: cannot read: a symbolic link, not "
        "followed: nicbench reads only the files a results directory holds itself"]
    assert "trials: 0/" in got.stdout                     # nothing counted from the link
    os.unlink(run / "manifest.json")
    (run / "manifest.json").symlink_to(secret)
    got = nicbench("status", str(run), cwd=tmp_path)
    assert got.returncode == 2 and SECRET not in got.stdout + got.stderr
    assert got.stderr.splitlines()[-1] == (
        f"nicbench: error: {run}/manifest.json: a symbolic link, not followed: nicbench "
        "reads only the files a results directory holds itself")


def test_copy_file_refuses_a_link_and_a_fifo(tmp_path, secret):
    from nicbench.results.runfiles import copy_file

    said: list[str] = []
    (tmp_path / "link").symlink_to(secret)
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "out").mkdir()
    assert not copy_file(tmp_path / "link", tmp_path / "out" / "link", said.append)
    assert not copy_file(tmp_path / "fifo", tmp_path / "out" / "fifo", said.append)
    assert copy_file(secret, tmp_path / "out" / "plain", said.append)
    assert sorted(os.listdir(tmp_path / "out")) == ["plain"]
    assert said == [f"{tmp_path}/link: a symbolic link, not followed: nicbench reads only "
                    "the files a results directory holds itself: skipped, not copied",
                    f"{tmp_path}/fifo: a FIFO (named pipe), not a regular file: skipped, "
                    "not copied"]


def test_a_link_in_an_earlier_report_is_replaced_not_followed(copy_run, tmp_path):
    """--out an earlier report whose figures/ is a link to another directory: the old
    report's charts are removed there, never the *.svg of the link's target."""
    run = cut(copy_run(RUN_A, "again"))
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.svg").write_text("<svg/>")
    out = tmp_path / "rep"
    out.mkdir()
    (out / "figures").symlink_to(victim)
    got = nicbench("report", str(run), "--out", str(out), cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    assert (victim / "keep.svg").read_text() == "<svg/>"
    assert sorted(os.listdir(victim)) == ["keep.svg"]
    assert (out / "figures").is_dir() and not (out / "figures").is_symlink()
