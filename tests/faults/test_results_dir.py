"""The results directory fails under a run, for real on the session lab through the CLI:
made read-only (its tmpfs remounted read-only: root ignores mode bits) or deleted while
the run is inside a jumbo point. Each ends with one line naming the real cause, exit 1
(never 70, never the disk-full advice), every host put back (docs/reliability.md; the
full disk is test_faults.py's)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from faultlib import (assert_no_duplicates, cli, kill9, leftovers, mtu, read_until, records,
                      start, tmpfs, wait_for, write_profile)

pytestmark = pytest.mark.lab

PROFILE = """\
    name: {name}
    source: nicbench fault test
    repetitions: 8
    timeout_s: 20
    mtu: [9000]
    tests:
      - {{name: {name}-tcp, tool: iperf3, params: {{duration_s: 1}}}}
    """


@pytest.fixture
def small_fs(tmp_path):
    with tmpfs(tmp_path / "fs", "8m") as mount:
        yield mount


def gbe(lab):
    return next(link for link in lab.spec.links() if link.adapter.key == "gbe")


def hosts(lab) -> list[str]:
    return [h.name for h in lab.spec.hosts()]


def run_until_faulted(lab, prof: Path, out: Path, fault) -> subprocess.CompletedProcess:
    """Start the run, cause ``fault()`` (retried until it takes) once a trial at MTU 9000
    is stored, and wait for the run to end."""
    proc = start("run", str(prof), "-i", str(lab.inventory_file), "--pair", "gbe",
                 "--out", str(out))
    try:
        read_until(proc, lambda line, _: "#2/8" in line, 120)
        assert all(mtu(h, gbe(lab).ifname) == 9000 for h in hosts(lab))
        wait_for(fault, 20, "the fault")
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            kill9(proc)
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def one_error(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("nicbench: error:")]
    assert len(errors) == 1, proc.stderr
    assert "free some space" not in proc.stderr
    return errors[0]


def test_a_directory_made_read_only_mid_run_says_so_once_and_resume_continues(
        lab, small_fs, tmp_path):
    prof = write_profile(tmp_path, PROFILE.format(name="ro"))
    out = small_fs / "run"

    def read_only() -> bool:      # refused (busy) while a file is open for writing
        return subprocess.run(["mount", "-o", "remount,ro", str(small_fs)],
                              capture_output=True, timeout=10).returncode == 0

    proc = run_until_faulted(lab, prof, out, read_only)
    error = one_error(proc)
    assert error.startswith(f"nicbench: error: {out}: cannot write results: its file "
                            "system is read-only (Read-only file system): make it writable "
                            "again, then continue the run with --resume"), error
    assert all(mtu(h, gbe(lab).ifname) == 1500 for h in hosts(lab))
    assert leftovers("ro-tcp") == []
    first = records(out)                       # every line parses: nothing torn
    assert first and all(r["status"] == "ok" for r in first)

    subprocess.run(["mount", "-o", "remount,rw", str(small_fs)], check=True, timeout=10)
    proc = cli("run", str(prof), "-i", str(lab.inventory_file), "--pair", "gbe",
               "--resume", str(out), timeout=300)
    assert proc.returncode == 0, proc.stderr
    recs = records(out)
    assert_no_duplicates(recs)
    assert sorted(r["repetition"] for r in recs if r["status"] == "ok") == list(range(1, 9))
    assert all(mtu(h, gbe(lab).ifname) == 1500 for h in hosts(lab))


def test_a_directory_deleted_mid_run_says_so_once(lab, tmp_path):
    prof = write_profile(tmp_path, PROFILE.format(name="gone"))
    out = tmp_path / "run"

    def delete() -> bool:          # the run may add a file while it is being deleted
        shutil.rmtree(out, ignore_errors=True)
        return not out.exists()

    proc = run_until_faulted(lab, prof, out, delete)
    error = one_error(proc)
    assert error == (f"nicbench: error: {out}: cannot write results: the directory is gone "
                     "(deleted or moved during the run): what it held went with it; start "
                     "the run again (or resume it where it was moved to)"), error
    assert all(mtu(h, gbe(lab).ifname) == 1500 for h in hosts(lab))
    assert leftovers("gone-tcp") == []
    assert not out.exists()                    # nothing made again in its place
