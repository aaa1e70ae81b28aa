"""Ctrl-C and SIGTERM through the CLI on the session lab: during start-up (hosts being
connected to) one line and exit 130, no traceback; mid-run the hosts are put back and the
last lines say how to continue (`nicbench run ... --resume DIR`), and that command
finishes the run without a duplicate (docs/reliability.md)."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess

import pytest
from faultlib import (argv, assert_no_duplicates, env, kill9, leftovers, mtu, read_until,
                      records, start, wait_for, write_profile)
from clihelp import REPO

pytestmark = pytest.mark.lab

PROFILE = """\
    name: sig
    source: nicbench fault test
    repetitions: 6
    timeout_s: 20
    mtu: [9000]
    tests:
      - {name: sig-tcp, tool: iperf3, params: {duration_s: 1}}
    """
INTERRUPTED = "nicbench: interrupted; host settings were restored"


def exited_130(proc: subprocess.Popen, sig: int) -> bool:
    """Exit 130, as documented. After Ctrl-C, a death by SIGINT (which a shell reports as
    130 too) is also taken: Python ends itself so, rarely, after nicbench has said its
    line, and the line is what these tests check."""
    return proc.returncode == 130 or (sig == signal.SIGINT and proc.returncode == -sig)


def gbe(lab):
    return next(link for link in lab.spec.links() if link.adapter.key == "gbe")


def hosts(lab) -> list[str]:
    return [h.name for h in lab.spec.hosts()]


def ended(proc: subprocess.Popen) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            kill9(proc)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_signal_mid_run_restores_and_ends_with_the_resume_line(lab, tmp_path, sig):
    prof = write_profile(tmp_path, PROFILE)
    out = tmp_path / "run"
    proc = start("run", str(prof), "-i", str(lab.inventory_file), "--pair", "gbe",
                 "--out", str(out))
    try:
        read_until(proc, lambda line, _: "sig-tcp #1/6" in line, 120)
        assert all(mtu(h, gbe(lab).ifname) == 9000 for h in hosts(lab))
        proc.send_signal(sig)
    finally:
        _, err = ended(proc)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines[-1] == INTERRUPTED, err
    resume = (f"nicbench run {shlex.quote(str(prof))} -i {shlex.quote(str(lab.inventory_file))} "
              f"--pair gbe --resume {shlex.quote(str(out))}")
    assert lines[-2] == f"nicbench: warning: run interrupted: continue it with `{resume}`", err
    assert all(mtu(h, gbe(lab).ifname) == 1500 for h in hosts(lab))
    assert leftovers("sig-tcp") == []
    # the interrupted trial's server was stopped too (a leftover held the port and failed
    # the resumed run's first trial with "Address already in use")
    for host in hosts(lab):
        listening = subprocess.run(["ip", "netns", "exec", host, "ss", "-Hltn",
                                    "sport = :5201"], capture_output=True, text=True,
                                   timeout=10).stdout
        assert listening.strip() == "", (host, listening)
    stored = records(out)
    assert 1 <= len(stored) < 6
    assert_no_duplicates(stored)
    stored_text = (out / "trials.jsonl").read_text()

    # the line said is the command that continues it
    words = shlex.split(resume)
    done = subprocess.run(argv(*words[1:]), cwd=REPO, env=env(), capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert all(mtu(h, gbe(lab).ifname) == 1500 for h in hosts(lab))
    assert (out / "trials.jsonl").read_text().startswith(stored_text)     # append-only
    recs = records(out)
    assert_no_duplicates(recs)
    assert sorted(r["repetition"] for r in recs if r["status"] == "ok") == list(range(1, 7))
    # only what was missing was measured, each with its raw output
    assert len([ln for ln in done.stdout.splitlines() if "sig-tcp #" in ln]) == \
        6 - len(stored)
    for r in (r for r in recs if r["kind"] not in ("skipped", "given-up")):
        assert r["raw"].get("client"), r["trial_id"]
        assert all((out / rel).is_file() and (out / rel).stat().st_size > 0
                   for rel in r["raw"].values()), r["trial_id"]
    assert len(json.loads((out / "manifest.json").read_text()).get("resumed_at", [])) == 1


def _connected(pid: int) -> bool:
    """Has process ``pid`` an established TCP connection (to the lab's sshd)?"""
    ss = subprocess.run(["ss", "-Htnp", "state", "established"], capture_output=True,
                        text=True, timeout=10)
    return f"pid={pid}," in ss.stdout


@pytest.fixture
def frozen_sshd(lab):
    """The receiver's sshd stopped (SIGSTOP): a connection is accepted by the kernel and
    then waits for a banner that does not come, as a host hung at start-up would."""
    pid = int(lab.sshd_pidfile(lab.spec.hosts()[0]).read_text())
    os.kill(pid, signal.SIGSTOP)
    try:
        yield pid
    finally:
        os.kill(pid, signal.SIGCONT)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_signal_while_connecting_is_one_line_without_a_traceback(lab, tmp_path, frozen_sshd,
                                                                   sig):
    prof = write_profile(tmp_path, PROFILE)
    out = tmp_path / "run"
    proc = start("run", str(prof), "-i", str(lab.inventory_file), "--pair", "gbe",
                 "--out", str(out))
    try:
        # the run has made its directory and waits on a connection the sshd never answers
        # (its manifest is written only once the pair is found ready, over SSH)
        wait_for(lambda: (out / "raw").is_dir() and _connected(proc.pid), 60,
                 "the run connecting to the stopped sshd")
        proc.send_signal(sig)
    finally:
        stdout, err = ended(proc)
    assert exited_130(proc, sig), (proc.returncode, err)
    assert err.splitlines() == [INTERRUPTED], err
    assert "sig-tcp" not in stdout                  # nothing was measured
    assert not (out / "trials.jsonl").exists()


def test_ctrl_c_as_the_run_starts_is_one_line_without_a_traceback(lab, tmp_path):
    prof = write_profile(tmp_path, PROFILE)
    out = tmp_path / "run"
    proc = start("run", str(prof), "-i", str(lab.inventory_file), "--pair", "gbe",
                 "--out", str(out))
    try:
        read_until(proc, lambda line, _: line.startswith("nicbench run sig -> "), 60)
        proc.send_signal(signal.SIGINT)
    finally:
        _, err = ended(proc)
    assert exited_130(proc, signal.SIGINT), (proc.returncode, err)
    assert err.splitlines() == [INTERRUPTED], err
    assert all(mtu(h, gbe(lab).ifname) == 1500 for h in hosts(lab))
