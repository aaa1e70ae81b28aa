"""Fault injection: what a run left alone overnight must survive, each fault caused for real
on the session lab and driven through the CLI (docs/reliability.md lists them).

Every test asserts on the lab itself, read independently of nicbench: interfaces' MTU,
sysctls, processes left in the hosts' namespaces, files left in /tmp, and trials.jsonl
(nothing lost, nothing counted twice). The session fixture also checks every lab
interface's MTU after each test.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from faultlib import (assert_no_duplicates, cli, inventory_copy, kill9, leftovers, mtu,
                      processes, read_until, records, standing, start, sysctl, tmpfs,
                      wait_for, write_profile)

pytestmark = pytest.mark.lab

SYSCTL = "net.ipv4.tcp_rmem"      # per namespace; its lab default is not what is set here
SET = "4096 131072 8388608"


@pytest.fixture(scope="module", autouse=True)
def _links_at_100_mbit(lab):
    """The session lab's links at 100 Mbit/s while this module runs, as lane b's lab runs
    throughout (tests/conftest.py, ``Lane.rate``): no test here judges a rate."""
    with contextlib.ExitStack() as stack:
        for link in lab.spec.links():
            stack.enter_context(lab.shaped(link, "100mbit"))
        yield


@pytest.fixture
def restored():
    """Runs to put back whatever happens (``restored.append(out)``): a failing assertion
    must not leave the session lab changed for the next test."""
    runs: list[Path] = []
    yield runs
    for out in runs:
        if (out / "tuning.json").exists():
            cli("restore", str(out))


def gbe(lab):
    return next(link for link in lab.spec.links() if link.adapter.key == "gbe")


def hosts(lab) -> list[str]:
    return [h.name for h in lab.spec.hosts()]


def summary(out: Path) -> dict[tuple[str, str, str], dict]:
    import csv

    with open(out / "summary.csv", newline="") as fh:
        return {(r["pair"], r["point"], r["test"]): r for r in csv.DictReader(fh)}


# -- 1. kill -9 inside a tuning point -------------------------------------------------------
TUNED = """\
    name: f1
    source: nicbench fault test
    repetitions: 2
    timeout_s: 20
    sysctl: {net.ipv4.tcp_rmem: "4096 131072 8388608"}
    mtu: [1500, 9000]
    tests:
      - {name: f1-tcp, tool: iperf3, params: {duration_s: 2}}
    """


def crash_inside_the_jumbo_point(lab, tmp_path, restored, text=TUNED):
    link = gbe(lab)
    prof = write_profile(tmp_path, text)
    out = tmp_path / "run"
    restored.append(out)
    before = {h: sysctl(h, SYSCTL) for h in hosts(lab)}
    proc = start("run", str(prof), "-i", str(lab.inventory_file), "--pair", "gbe",
                 "--out", str(out))
    try:
        read_until(proc, lambda line, _: line.startswith("== gbe mtu9000"), 120)
        wait_for(lambda: all(mtu(h, link.ifname) == 9000 for h in hosts(lab)), 20,
                 "MTU 9000 on both hosts")
    finally:
        kill9(proc)
    return prof, out, link, before


def test_kill_inside_a_point_then_resume_puts_back_first_and_loses_nothing(lab, tmp_path,
                                                                          restored):
    prof, out, link, before = crash_inside_the_jumbo_point(lab, tmp_path, restored)
    # the fault happened: the hosts are left changed, and the journal says so
    assert {h: mtu(h, link.ifname) for h in hosts(lab)} == dict.fromkeys(hosts(lab), 9000)
    assert {h: sysctl(h, SYSCTL).split() for h in hosts(lab)} == {
        h: SET.split() for h in hosts(lab)}
    assert all(before[h].split() != SET.split() for h in hosts(lab))
    journal = json.loads((out / "tuning.json").read_text())
    assert {(c["host"], c["kind"]) for c in journal["changes"]} == {
        (h, k) for h in hosts(lab) for k in ("mtu", "sysctl")}
    stored = (out / "trials.jsonl").read_text()

    proc = cli("run", str(prof), "-i", str(lab.inventory_file), "--pair", "gbe",
               "--resume", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "put back what the interrupted run left: 4 settings" in proc.stderr
    assert "== gbe mtu1500" not in proc.stdout      # done before the kill: not visited again
    assert {h: mtu(h, link.ifname) for h in hosts(lab)} == dict.fromkeys(hosts(lab), 1500)
    assert {h: sysctl(h, SYSCTL) for h in hosts(lab)} == before
    assert (out / "trials.jsonl").read_text().startswith(stored)     # append-only
    recs = records(out)
    assert_no_duplicates(recs)
    rows = summary(out)
    assert [(p, r["status"], r["n_ok"]) for (_, p, _), r in rows.items()] == [
        ("mtu1500", "ok", "2"), ("mtu9000", "ok", "2")]
    assert json.loads((out / "tuning.json").read_text()) | {"updated": 0} == {
        "format_version": 2, "updated": 0, "changes": [], "leftovers": []}
    assert leftovers("f1-tcp") == []
    assert all(processes(h, "iperf3") == [] for h in hosts(lab))


def test_kill_inside_a_point_then_restore(lab, tmp_path, restored):
    _prof, out, link, before = crash_inside_the_jumbo_point(lab, tmp_path, restored)
    proc = cli("restore", str(out))
    assert proc.returncode == 0, proc.stderr
    assert f"restored {hosts(lab)[1]} mtu {link.ifname} = 1500" in proc.stdout
    assert {h: mtu(h, link.ifname) for h in hosts(lab)} == dict.fromkeys(hosts(lab), 1500)
    assert {h: sysctl(h, SYSCTL) for h in hosts(lab)} == before
    again = cli("restore", str(out))
    assert (again.returncode, again.stdout.strip()) == (0, "nothing to restore")
    assert leftovers("f1-tcp") == []


# -- 2. kill -9 during an iperf 2 trial -------------------------------------------------------
IPERF2 = """\
    name: f2
    source: nicbench fault test
    repetitions: 2
    timeout_s: 30
    mtu: [1500]
    tests:
      - {name: f2-iperf2, tool: iperf2, params: {duration_s: 5}}
    """


def test_kill_during_an_iperf2_trial_leaves_nothing_after_restore_and_resume(lab, tmp_path,
                                                                             restored):
    receiver, sender = hosts(lab)
    prof = write_profile(tmp_path, IPERF2)
    out = tmp_path / "run"
    restored.append(out)
    proc = start("run", str(prof), "-i", str(lab.inventory_file), "--pair", "gbe",
                 "--out", str(out))
    try:
        read_until(proc, lambda line, _: line.startswith("== gbe mtu1500"), 120)
        wait_for(lambda: processes(receiver, "iperf -s") and processes(sender, "iperf -c"),
                 30, "the iperf 2 trial running")
    finally:
        kill9(proc)
    # the fault: the receiver and the client outlive the controller, with their files
    assert processes(receiver, "iperf -s")
    assert leftovers("f2-iperf2")
    journal = json.loads((out / "tuning.json").read_text())
    assert {x["host"] for x in journal["leftovers"]} == {receiver, sender}

    proc = cli("restore", str(out))
    assert proc.returncode == 0, proc.stderr
    assert f"stopping {receiver} server iperf -s" in proc.stdout
    assert processes(receiver, "iperf -s") == [] and processes(sender, "iperf -c") == []
    assert leftovers("f2-iperf2") == []

    proc = cli("run", str(prof), "-i", str(lab.inventory_file), "--pair", "gbe",
               "--resume", str(out), timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = summary(out)
    ((_, row),) = rows.items()
    assert (row["status"], row["n_ok"]) == ("ok", "2")
    assert_no_duplicates(records(out))
    assert leftovers("f2-iperf2") == [] and processes(receiver, "iperf -s") == []


# -- 3. a restore that fails for a host (its sshd died) -----------------------------------
def sshd_processes(ns: str) -> list[int]:
    return processes(ns, "sshd")


def test_a_host_lost_mid_run_is_reported_and_restore_finishes_later(lab, tmp_path, restored):
    link = gbe(lab)
    receiver, sender = hosts(lab)
    inv = inventory_copy(lab, lambda d: [h["ssh"].update(reconnect_s=2) for h in d["hosts"]])
    prof = write_profile(tmp_path, """\
        name: f3
        source: nicbench fault test
        repetitions: 3
        timeout_s: 20
        mtu: [9000]
        tests:
          - {name: f3-tcp, tool: iperf3, params: {duration_s: 2}}
        """)
    out = tmp_path / "run"
    restored.append(out)
    host_b = lab.spec.hosts()[1]
    try:
        proc = start("run", str(prof), "-i", str(inv), "--pair", "gbe", "--out", str(out))
        try:
            read_until(proc, lambda line, _: "f3-tcp #1/3" in line, 120)
            for pid in sshd_processes(sender):          # the host's sshd dies, for good
                os.kill(pid, signal.SIGKILL)
            _rest, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                kill9(proc)
        assert proc.returncode == 1, err
        assert f"still changed: {sender}: mtu {link.ifname} (to put back: 1500, now: 9000)" \
            in err
        assert f"run `nicbench restore {out}`" in err
        assert err.count(f"still changed: {sender}: mtu") == 1          # said once
        assert mtu(receiver, link.ifname) == 1500                       # the other host: back
        assert mtu(sender, link.ifname) == 9000                         # the lost one: not
        rows = summary(out)
        assert all(r["status"] in ("partial", "skipped") for r in rows.values())
        assert any(r["failure"] == "host-lost" for r in records(out))
        # the host comes back: restore finishes the job
        subprocess.run(["ip", "netns", "exec", sender, "/usr/sbin/sshd", "-f",
                        str(lab.host_dir(host_b) / "sshd_config"), "-E",
                        str(lab.host_dir(host_b) / "sshd.log")], check=True, timeout=10)
        wait_for(lambda: sshd_processes(sender), 10, "sshd back")
        proc = cli("restore", str(out))
        assert proc.returncode == 0, proc.stderr
        assert mtu(sender, link.ifname) == 1500
        assert leftovers("f3-tcp") == []
    finally:
        inv.unlink(missing_ok=True)
        if not sshd_processes(sender):
            subprocess.run(["ip", "netns", "exec", sender, "/usr/sbin/sshd", "-f",
                            str(lab.host_dir(host_b) / "sshd_config")], timeout=10)


# -- 4. a torn last line, then --resume -----------------------------------------------------
def test_a_torn_last_line_is_cut_off_before_the_resume_appends(lab, tmp_path):
    prof = write_profile(tmp_path, """\
        name: f4
        source: nicbench fault test
        repetitions: 3
        mtu: [1500]
        tests:
          - {name: f4-tcp, tool: iperf3, params: {duration_s: 1}}
        """)
    out = tmp_path / "run"
    assert cli("run", str(prof), "-i", str(lab.inventory_file), "--pair", "gbe",
               "--out", str(out)).returncode == 0
    lines = (out / "trials.jsonl").read_text().splitlines(keepends=True)
    (out / "trials.jsonl").write_text("".join(lines[:-1]) + lines[-1][:80])   # died mid-write
    proc = cli("run", str(prof), "-i", str(lab.inventory_file), "--pair", "gbe",
               "--resume", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "its last line was torn" in proc.stderr
    ((_, row),) = summary(out).items()
    assert (row["status"], row["n_ok"]) == ("ok", "3")
    assert len(records(out)) == 3
    (kept,) = out.glob("trials.jsonl.torn-*")
    assert kept.read_text() == lines[-1][:80]


# -- 5. the disk fills up -------------------------------------------------------------------
@pytest.fixture
def small_disk(tmp_path):
    with tmpfs(tmp_path / "small", "64k") as mount:
        yield mount


def test_a_full_disk_stops_the_run_cleanly_and_resume_continues(lab, small_disk, tmp_path):
    link = gbe(lab)
    prof = write_profile(tmp_path, """\
        name: f5
        source: nicbench fault test
        repetitions: 6
        timeout_s: 20
        mtu: [1500, 9000]
        tests:
          - {name: f5-tcp, tool: iperf3, params: {duration_s: 1}}
        """)
    out = small_disk / "run"
    proc = cli("run", str(prof), "-i", str(lab.inventory_file), "--pair", "gbe",
               "--out", str(out))
    assert proc.returncode == 1, proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("nicbench: error:")]
    assert len(errors) == 1, proc.stderr
    assert f"{out}: cannot write results: No space left on device (" in errors[0]
    assert "MB free on its file system)" in errors[0] and "--resume" in errors[0]
    assert all(mtu(h, link.ifname) == 1500 for h in hosts(lab))
    first = records(out)                       # every line parses: nothing torn
    assert first and all(r["status"] == "ok" for r in first)
    assert not list(out.glob("*.tmp"))
    journal = out / "tuning.json"
    assert not journal.exists() or json.loads(journal.read_text())["changes"] == []
    assert leftovers("f5-tcp") == []

    subprocess.run(["mount", "-o", "remount,size=8m", str(small_disk)], check=True, timeout=10)
    proc = cli("run", str(prof), "-i", str(lab.inventory_file), "--pair", "gbe",
               "--resume", str(out), timeout=300)
    assert proc.returncode == 0, proc.stderr
    rows = summary(out)
    assert [(r["status"], r["n_ok"]) for r in rows.values()] == [("ok", "6"), ("ok", "6")]
    assert_no_duplicates(records(out))


# -- 6. a missing interface on one pair ---------------------------------------------------
def test_a_missing_interface_fails_its_pair_and_the_other_pair_runs(lab, tmp_path):
    def break_stall(data):
        pair = next(p for p in data["pairs"] if p["name"] == "stall")
        pair["a"]["interface"] = "nope0"
    inv = inventory_copy(lab, break_stall)
    prof = write_profile(tmp_path, """\
        name: f6
        source: nicbench fault test
        repetitions: 1
        mtu: [1500]
        tests:
          - {name: f6-tcp, tool: iperf3, params: {duration_s: 1}}
        """)
    out = tmp_path / "run"
    try:
        proc = cli("run", str(prof), "-i", str(inv), "--pair", "stall", "--pair", "gbe",
                   "--out", str(out))
    finally:
        inv.unlink(missing_ok=True)
    assert proc.returncode == 1, proc.stderr
    assert 'pair stall could not be measured' in proc.stderr
    assert 'Device "nope0" does not exist' in proc.stderr
    rows = summary(out)
    assert rows[("stall", "mtu1500", "f6-tcp")]["failure"] == "interface"
    assert rows[("gbe", "mtu1500", "f6-tcp")]["status"] == "ok"


# -- 7. a transient SSH loss ----------------------------------------------------------------
def test_a_dropped_connection_is_reconnected_and_the_trial_retried(lab, tmp_path):
    sender = hosts(lab)[1]
    listener = int(lab.sshd_pidfile(lab.spec.hosts()[1]).read_text())
    prof = write_profile(tmp_path, """\
        name: f7
        source: nicbench fault test
        repetitions: 3
        timeout_s: 20
        mtu: [1500]
        tests:
          - {name: f7-tcp, tool: iperf3, params: {duration_s: 3}}
        """)
    out = tmp_path / "run"
    proc = start("run", str(prof), "-i", str(lab.inventory_file), "--pair", "gbe",
                 "--out", str(out))
    try:
        read_until(proc, lambda line, _: "f7-tcp #1/3" in line, 120)
        wait_for(lambda: processes(sender, "iperf3 -c"), 20, "the second trial running")
        sessions = [p for p in processes(sender, "sshd") if p != listener]
        assert sessions
        for pid in sessions:            # the controller's connection drops; sshd stays up
            os.kill(pid, signal.SIGKILL)
        _rest, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            kill9(proc)
    assert proc.returncode == 0, err
    assert "the connection dropped and came back; settings checked, trial retried" in err
    recs = records(out)
    assert any(r["failure"] == "host-lost" for r in recs)
    now = standing(recs)
    assert [(r["repetition"], r["status"]) for r in now] == [(1, "ok"), (2, "ok"), (3, "ok")]
    assert leftovers("f7-tcp") == []


# -- 8. resume and restore with something else than the run was made with -----------------
def test_resume_with_another_profile_and_restore_with_another_inventory_are_refused(
        lab, tmp_path):
    text = """\
        name: f8
        source: nicbench fault test
        repetitions: 1
        mtu: [1500]
        tests:
          - {name: f8-tcp, tool: iperf3, params: {duration_s: 1}}
        """
    prof = write_profile(tmp_path, text)
    out = tmp_path / "run"
    assert cli("run", str(prof), "-i", str(lab.inventory_file), "--pair", "gbe",
               "--out", str(out)).returncode == 0
    other = write_profile(tmp_path, text.replace("duration_s: 1", "duration_s: 2"), "o.yaml")
    proc = cli("run", str(other), "-i", str(lab.inventory_file), "--pair", "gbe",
               "--resume", str(out))
    assert proc.returncode == 2
    assert "was run with another method: the profile differs (tests[0].params.duration_s)" \
        in proc.stderr
    # a journal entry for a host, and an inventory where that host has another address
    (out / "tuning.json").write_text(json.dumps({"format_version": 2, "changes": [{
        "host": hosts(lab)[0], "kind": "mtu", "key": "gbe", "original": "1500",
        "applied": "9000"}], "leftovers": []}))
    moved = inventory_copy(lab, lambda d: d["hosts"][0].update(address="198.19.99.2"))
    try:
        proc = cli("restore", str(out), "-i", str(moved))
    finally:
        moved.unlink(missing_ok=True)
    assert proc.returncode == 2
    assert f"host '{hosts(lab)[0]}' differs from the one the run was made with (address)" \
        in proc.stderr
    (out / "tuning.json").write_text(json.dumps({"format_version": 2, "changes": [{
        "host": "no-such-host", "kind": "mtu", "key": "gbe", "original": "1500",
        "applied": "9000"}], "leftovers": []}))
    proc = cli("restore", str(out))
    assert (proc.returncode, proc.stderr.count("\n")) == (2, 1), proc.stderr
    assert "unknown host 'no-such-host'" in proc.stderr


# -- 9. a link fault in the path check is not a refusal ------------------------------------
@pytest.fixture
def big_pings_dropped(lab):
    """A link fault for real: the receiver's firewall drops ICMP packets above 1500
    bytes (the path check's DF ping at the point's MTU), while TCP would pass."""
    ns = hosts(lab)[0]
    rules = ("add table inet nbfault\n"
             "add chain inet nbfault in { type filter hook input priority 0; }\n"
             "add rule inet nbfault in meta l4proto icmp ip length > 1500 drop\n")
    subprocess.run(["ip", "netns", "exec", ns, "nft", "-f", "-"], input=rules, text=True,
                   check=True, timeout=10)
    try:
        yield
    finally:
        subprocess.run(["ip", "netns", "exec", ns, "nft", "delete", "table", "inet", "nbfault"],
                       timeout=10)


def test_a_failed_path_check_is_measured_again_on_resume(lab, tmp_path, big_pings_dropped):
    prof = write_profile(tmp_path, """\
        name: f9
        source: nicbench fault test
        repetitions: 1
        mtu: [9000]
        tests:
          - {name: f9-tcp, tool: iperf3, params: {duration_s: 1}}
        """)
    out = tmp_path / "run"
    proc = cli("run", str(prof), "-i", str(lab.inventory_file), "--pair", "gbe",
               "--out", str(out))
    # The pair measured nothing: never exit 0 (test_trial_checks.py, row 20).
    assert proc.returncode == 1, proc.stderr
    assert "pair gbe could not be measured: no trial measured (first: path-check" in proc.stderr
    (rec,) = records(out)
    assert (rec["kind"], rec["failure"]) == ("skipped", "path-check")   # not "refused"
    assert "no reply to a 9000-byte packet with DF set" in rec["reason"]
    proc = cli("run", str(prof), "-i", str(lab.inventory_file), "--pair", "gbe",
               "--resume", str(out))
    assert proc.returncode == 1, proc.stderr
    assert "== gbe mtu9000" in proc.stdout            # tried again, not taken as final
    assert [r["failure"] for r in records(out)] == ["path-check", "path-check"]
    assert all(mtu(h, gbe(lab).ifname) == 1500 for h in hosts(lab))


# -- 10. lab down with a connection still open ----------------------------------------------
def test_lab_down_through_the_cli_ends_the_sessions_of_a_live_controller(labtests_lock,
                                                                           tmp_path):
    env = {"NICBENCH_LAB_PREFIX": "nbf", "NICBENCH_LAB_SLOT": "8",
           "NICBENCH_LAB_DIR": str(tmp_path / "lab"), "NICBENCH_LAB_ADAPTERS": "gbe"}
    full = {**os.environ, **env}
    up = subprocess.run([*__import__("faultlib").argv("lab", "up", "--adapters", "gbe")],
                        env=full, capture_output=True, text=True, timeout=120)
    holder = None
    try:
        assert up.returncode == 0, up.stderr
        inodes = {os.stat(f"/run/netns/nbf-{x}").st_ino for x in "ab"}
        holder = subprocess.Popen(
            [__import__("sys").executable, "-c",
             "import sys, time\n"
             "from nicbench.config.loader import load_inventory\n"
             "from nicbench.platforms.hosts import HostPool\n"
             "from nicbench.tools.registry import CATALOG\n"
             "pool = HostPool(load_inventory(sys.argv[1], CATALOG))\n"
             "print(pool.connection('nbf-a').run(['echo', 'up']).stdout, flush=True)\n"
             "time.sleep(300)\n", str(tmp_path / "lab" / "inventory.yaml")],
            stdout=subprocess.PIPE, text=True)
        assert holder.stdout is not None and holder.stdout.readline().strip() == "up"
        down = subprocess.run(__import__("faultlib").argv("lab", "down"), env=full,
                              capture_output=True, text=True, timeout=120)
        assert down.returncode == 0, down.stderr
        assert "processes in nbf-a" in down.stdout
        left = []
        for p in Path("/proc").glob("[0-9]*"):
            try:
                if int(os.readlink(p / "ns" / "net").strip("net:[]")) in inodes and \
                        (p / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                    left.append(p.name)
            except (OSError, ValueError):
                continue
        assert left == []
    finally:
        if holder is not None:
            holder.kill()
            holder.wait(timeout=10)
        subprocess.run(__import__("faultlib").argv("lab", "down"), env=full,
                       capture_output=True, timeout=120)
    assert time.monotonic() > 0
