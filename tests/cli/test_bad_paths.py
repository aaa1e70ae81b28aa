"""No exit 70 from a path a user can type or point to (issue 19): every path argument of
every command, given each kind of path the OS refuses or nicbench cannot use (a name of
300 characters, a path of 5,000, a name under a regular file, a loop of symbolic links,
a FIFO, a directory where a file belongs), ends in one ``nicbench: error:`` line and exit
2 (or the command's own answer for a directory it may take), never an internal error or
a traceback. The lab's directory from ``NICBENCH_LAB_DIR`` and its prefix are refused the
same way, before anything is run."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from clihelp import in_process

ROOT = Path(__file__).resolve().parents[2]
VALID = ROOT / "tests" / "badinput" / "valid"
BASE_RUN = ROOT / "tests" / "badinput" / "results" / "base"

# command -> argv with {p} for the path under test; "out": a directory nicbench writes
COMMANDS = {
    "validate": ["validate", "{p}"],
    "validate -i": ["validate", str(VALID / "campaign.yaml"), "-i", "{p}"],
    "check -i": ["check", "-i", "{p}"],
    "check --profile": ["check", "-i", str(VALID / "inventory.yaml"), "--profile", "{p}"],
    "run PROFILE": ["run", "{p}", "-i", str(VALID / "inventory.yaml"), "--plan"],
    "run -i": ["run", str(VALID / "profile.yaml"), "-i", "{p}", "--plan"],
    "run --out": ["run", str(VALID / "profile.yaml"), "-i", str(VALID / "inventory.yaml"),
                  "--out", "{p}"],
    "run --resume": ["run", str(VALID / "run-profile.yaml"), "-i",
                     str(VALID / "run-inventory.yaml"), "--resume", "{p}"],
    "restore": ["restore", "{p}"],
    "restore -i": ["restore", str(BASE_RUN), "-i", "{p}"],
    "report DIR": ["report", "{p}", "--out", "{tmp}/rep"],
    "report --out": ["report", str(BASE_RUN), "--out", "{p}"],
    "report --reference": ["report", str(BASE_RUN), "--out", "{tmp}/rep", "--reference",
                           "{p}"],
    "campaign FILE": ["campaign", "{p}", "-i", str(VALID / "inventory.yaml"), "--plan"],
    "campaign -i": ["campaign", str(VALID / "campaign.yaml"), "-i", "{p}", "--plan"],
    "campaign --out": ["campaign", str(VALID / "campaign.yaml"), "-i",
                       str(VALID / "run-inventory.yaml"), "--out", "{p}"],
    "campaign --resume": ["campaign", str(VALID / "campaign.yaml"), "-i",
                          str(VALID / "run-inventory.yaml"), "--resume", "{p}"],
    "status": ["status", "{p}"],
    "parse": ["parse", "auto", "{p}"],
    "windows capture --out": ["windows", "capture", "-i", str(VALID / "inventory.yaml"),
                              "nb-a", "--out", "{p}"],
    "lab status --dir": ["lab", "status", "--dir", "{p}"],
    "lab down --dir": ["lab", "down", "--dir", "{p}"],
    "run --store": ["run", str(VALID / "run-profile.yaml"), "-i",
                    str(VALID / "run-inventory.yaml"), "--out", "{tmp}/o", "--store", "{p}"],
    "store import DIR": ["store", "import", "{p}", "--store", "{tmp}/s.duckdb"],
    "store import --store": ["store", "import", str(BASE_RUN), "--store", "{p}"],
    "store info --store": ["store", "info", "--store", "{p}"],
}
WRITES = {"run --out", "run --resume", "report --out", "campaign --out", "campaign --resume",
          "windows capture --out", "lab status --dir", "lab down --dir"}
# a directory is a good answer for these (a results directory, or one to write into)
TAKES_A_DIR = WRITES | {"report DIR", "restore", "status"}


def bad_path(kind: str, tmp: Path) -> str:
    if kind == "name-300":
        return str(tmp / ("n" * 300))
    if kind == "path-5000":
        return str(tmp / "/".join(["d" * 200] * 25))
    if kind == "under-a-file":
        (tmp / "regular").write_text("x\n")
        return str(tmp / "regular" / "x")
    if kind == "link-loop":
        (tmp / "loop").symlink_to(tmp / "loop")
        return str(tmp / "loop")
    if kind == "under-a-link-loop":
        (tmp / "loop").symlink_to(tmp / "loop")
        return str(tmp / "loop" / "x")
    if kind == "fifo":
        os.mkfifo(tmp / "fifo")
        return str(tmp / "fifo")
    if kind == "directory":
        (tmp / "a-dir").mkdir()
        return str(tmp / "a-dir")
    raise AssertionError(kind)


KINDS = ["name-300", "path-5000", "under-a-file", "link-loop", "under-a-link-loop", "fifo",
         "directory"]
# restore reads -i only when the run left something to put back (base/ left nothing): a
# FIFO or directory there is never opened; the paths the OS refuses are refused up front
NOT_READ = {("restore -i", "fifo"), ("restore -i", "directory")}
CASES = [(c, k) for c in COMMANDS for k in KINDS
         if not (k == "directory" and c in TAKES_A_DIR) and (c, k) not in NOT_READ]


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    for name in list(os.environ):
        if name.startswith("NICBENCH_"):
            monkeypatch.delenv(name)
    old = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, old)


def one_line_refusal(rc: int, err: str, code: int = 2) -> str:
    assert rc != 70 and "Traceback" not in err and "internal error" not in err, err
    assert rc == code, err
    errors = [x for x in err.splitlines() if x.startswith("nicbench: error: ")]
    assert len(errors) == 1 and all(x.startswith("nicbench: ") for x in err.splitlines()), err
    assert len(errors[0]) < 400, errors[0]        # one line a person reads
    return errors[0]


@pytest.mark.parametrize("command, kind", CASES, ids=[f"{c}-{k}" for c, k in CASES])
def test_every_path_argument_refuses_a_bad_path_in_one_line(command, kind, tmp_path,
                                                            monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    path = bad_path(kind, tmp_path)
    argv = [a.replace("{p}", path).replace("{tmp}", str(tmp_path)) for a in COMMANDS[command]]
    rc, _out, err = in_process(capsys, *argv)
    # parse says what it could not read with its own code, 3 (the README's exit codes)
    line = one_line_refusal(rc, err, 3 if command == "parse" and kind in ("fifo", "directory")
                            else 2)
    if kind in ("name-300", "path-5000") and (command in WRITES or command.startswith("run")
                                               or command == "status"):
        assert "bytes long" in line, line          # says which limit, not the OS's errno
    if kind == "fifo" and command in WRITES:
        assert "exists and is not a directory" in line, line


@pytest.mark.parametrize("kind", ["regular", "fifo", "link-loop", "under-a-file", "name-300"])
@pytest.mark.parametrize("action", ["status", "down"])
def test_the_lab_directory_from_the_environment_is_refused_in_one_line(
        kind, action, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    if kind == "regular":
        (tmp_path / "state").write_text("x\n")
        path = str(tmp_path / "state")
    else:
        path = bad_path(kind, tmp_path)
    monkeypatch.setenv("NICBENCH_LAB_DIR", path)
    monkeypatch.setenv("NICBENCH_LAB_PREFIX", "zq")
    rc, _out, err = in_process(capsys, "lab", action)
    line = one_line_refusal(rc, err)
    assert line.startswith(f"nicbench: error: NICBENCH_LAB_DIR={path[:40]}"), line


@pytest.mark.parametrize("prefix", ["-nb", "-", "nb-x", "--help", "nb;x", "é", "toolong7"])
def test_a_lab_prefix_is_1_to_6_ascii_letters_or_digits(prefix, monkeypatch, capsys):
    monkeypatch.setenv("NICBENCH_LAB_PREFIX", prefix)
    rc, _out, err = in_process(capsys, "lab", "inventory")
    line = one_line_refusal(rc, err)
    assert f"lab prefix {prefix!r} must be 1-6 letters or digits" in line


def test_a_good_prefix_is_taken(monkeypatch, capsys):
    monkeypatch.setenv("NICBENCH_LAB_PREFIX", "nbQ7")
    rc, out, err = in_process(capsys, "lab", "inventory")
    assert (rc, err) == (0, "") and "nbQ7-a" in out
