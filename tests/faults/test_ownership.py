"""One nicbench per results directory, for real on the session lab and through the CLI:
a second `run --out D`, `run --resume D` or `restore D` while a run measures in D is
refused in one line naming the owner, before it touches D; after the owner is killed
with -9, the lock it left is taken over; of two resumes started at once exactly one
measures (docs/reliability.md)."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
from pathlib import Path

import pytest
from faultlib import (assert_no_duplicates, cli, kill9, leftovers, read_until, records, start,
                      write_profile)

pytestmark = pytest.mark.lab

PROFILE = """\
    name: own
    source: nicbench fault test
    repetitions: {reps}
    timeout_s: 20
    mtu: [1500]
    tests:
      - {{name: own-tcp, tool: iperf3, params: {{duration_s: {duration}}}}}
    """
# the owner of the first test measures until the test stops it (Ctrl-C), however slow the
# machine is to start the three refused commands; a run that ended first could not refuse
OWNER = PROFILE.format(reps=40, duration=2)
RESUMED = PROFILE.format(reps=6, duration=4)


def refusal(directory: Path, pid: int) -> re.Pattern[str]:
    return re.compile(rf"nicbench: error: {re.escape(str(directory))} is in use by nicbench "
                      rf"pid {pid} on {re.escape(socket.gethostname())} \(started "
                      r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\); wait for it or stop it")


def finish(proc: subprocess.Popen, timeout: float = 120) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            kill9(proc)


def test_a_second_command_on_a_directory_in_use_is_refused_naming_the_owner(lab, tmp_path):
    prof = write_profile(tmp_path, OWNER)
    out = tmp_path / "run"
    inv = str(lab.inventory_file)
    first = start("run", str(prof), "-i", inv, "--pair", "gbe", "--out", str(out))
    try:
        read_until(first, lambda line, _: "own-tcp #1/40" in line, 120)   # it measures
        manifest = (out / "manifest.json").read_text()
        for args in (["run", str(prof), "-i", inv, "--pair", "gbe", "--resume", str(out)],
                     ["run", str(prof), "-i", inv, "--pair", "gbe", "--out", str(out)],
                     ["restore", str(out)]):
            proc = cli(*args, timeout=60)
            assert proc.returncode == 2, (args, proc.stderr)
            assert refusal(out, first.pid).fullmatch(proc.stderr.strip()), proc.stderr
            assert "Traceback" not in proc.stderr
            # refused before it touched anything: the manifest is the owner's, unresumed
            assert (out / "manifest.json").read_text() == manifest
        assert first.poll() is None          # every refusal came while it measured
        first.send_signal(signal.SIGINT)     # the owner stops as on Ctrl-C, unharmed
        _, err = finish(first)
    finally:
        if first.poll() is None:
            kill9(first)
    assert first.returncode == 130, err
    recs = [r for r in records(out) if r.get("status") == "ok"]
    assert_no_duplicates(recs)
    reps = sorted(r["repetition"] for r in recs)
    assert reps == list(range(1, len(reps) + 1)) and 1 <= len(reps) < 40, reps
    assert leftovers("own-tcp") == []


def test_after_kill_9_the_lock_is_taken_over_and_of_two_resumes_exactly_one_measures(
        lab, tmp_path):
    prof = write_profile(tmp_path, RESUMED)
    out = tmp_path / "run"
    inv = str(lab.inventory_file)
    owner = start("run", str(prof), "-i", inv, "--pair", "gbe", "--out", str(out))
    try:
        read_until(owner, lambda line, _: "own-tcp #1/6" in line, 120)
    finally:
        kill9(owner)
    before = records(out)
    assert 1 <= len(before) < 6
    assert f'"pid": {owner.pid}' in (out / "nicbench.lock").read_text()   # left behind

    resume = ["run", str(prof), "-i", inv, "--pair", "gbe", "--resume", str(out)]
    both = [start(*resume), start(*resume)]
    ended = [finish(p) for p in both]
    codes = sorted(p.returncode for p in both)
    assert codes == [0, 2], ended
    winner = next(p for p in both if p.returncode == 0)
    _, refused_err = ended[[p.returncode for p in both].index(2)]
    assert refusal(out, winner.pid).fullmatch(refused_err.strip()), refused_err
    recs = records(out)
    assert_no_duplicates(recs)
    assert sorted(r["repetition"] for r in recs if r["status"] == "ok") == [1, 2, 3, 4, 5, 6]
    assert leftovers("own-tcp") == []
