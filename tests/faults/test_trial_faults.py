"""Faults a trial or a run is checked against before anything counts, caused for real on
the session lab through the CLI (docs/reliability.md, rows 19-21): the test link set down
during a trial, a tool missing on one host, and a tool that prints more than nicbench
keeps."""

from __future__ import annotations

import json
import subprocess
import time

import pytest
from faultlib import (assert_no_duplicates, cli, inventory_copy, leftovers, processes,
                      records, standing, start, wait_for, write_profile)

pytestmark = pytest.mark.lab

DOWN_S = 3.0


def gbe(lab):
    return next(link for link in lab.spec.links() if link.adapter.key == "gbe")


def operstate(ns: str, ifname: str) -> str:
    out = subprocess.run(["ip", "-n", ns, "-j", "link", "show", "dev", ifname],
                         capture_output=True, text=True, check=True, timeout=10).stdout
    return json.loads(out)[0]["operstate"]


def established(ns: str, port: int) -> int:
    """The TCP connections to ``port`` in namespace ``ns`` that are established (iperf3:
    its control connection, then the data stream's)."""
    out = subprocess.run(["ip", "netns", "exec", ns, "ss", "-Htn", "state", "established",
                          f"sport = :{port}"], capture_output=True, text=True, check=True,
                         timeout=10).stdout
    return len(out.splitlines())


# -- 19. the test link goes down during a trial --------------------------------------------
def test_a_link_down_during_a_trial_fails_it_and_resume_measures_it_again(lab, tmp_path):
    link = gbe(lab)
    receiver, sender = link.host_a.name, link.host_b.name
    prof = write_profile(tmp_path, """\
        name: f15
        source: nicbench fault test
        repetitions: 1
        timeout_s: 30
        mtu: [1500]
        tests:
          - {name: f15-tcp, tool: iperf3, params: {duration_s: 2, port: 5815}}
        """)
    out = tmp_path / "run"
    proc = start("run", str(prof), "-i", str(lab.inventory_file), "--pair", "gbe",
                 "--out", str(out))
    try:
        wait_for(lambda: processes(sender, "iperf3 -c"), 60, "the trial's client running")
        # the link goes down during the transfer: a client not connected yet would fail
        # with "No route to host", a tool error rather than a link down in a trial
        wait_for(lambda: established(receiver, 5815) >= 2, 30, "the transfer under way")
        subprocess.run(["ip", "-n", receiver, "link", "set", "dev", link.ifname, "down"],
                       check=True, timeout=10)
        try:
            time.sleep(DOWN_S)        # bounded: the link is down for this long, no more
        finally:
            subprocess.run(["ip", "-n", receiver, "link", "set", "dev", link.ifname, "up"],
                           check=True, timeout=10)
        _out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    wait_for(lambda: operstate(receiver, link.ifname) == "UP", 10, "the link up again")
    assert operstate(sender, link.ifname) == "UP"
    # The pair's one trial did not count: the run says so and ends in error.
    assert proc.returncode == 1, err
    assert ("pair gbe could not be measured: no trial measured (first: link-down: link down "
            "during the trial") in err
    (rec,) = records(out)
    assert (rec["status"], rec["failure"]) == ("failed", "link-down"), rec
    assert rec["reason"].startswith("link down during the trial"), rec["reason"]
    assert rec["raw"]["client"]           # its output kept, for a person to look at
    proc2 = cli("run", str(prof), "-i", str(lab.inventory_file), "--pair", "gbe",
                "--resume", str(out))
    assert proc2.returncode == 0, proc2.stderr
    recs = records(out)
    now = standing(recs)
    assert [(r["repetition"], r["status"]) for r in now] == [(1, "ok")], now
    assert [r["failure"] for r in recs] == ["link-down", None]
    assert_no_duplicates(recs[1:])
    assert leftovers("f15-tcp") == []


# -- 20. a tool missing on one host --------------------------------------------------------
def test_a_pair_whose_tool_is_missing_is_refused_before_anything_changes(lab, tmp_path):
    sender = gbe(lab).host_b.name

    def no_iperf3(data):
        host = next(h for h in data["hosts"] if h["name"] == sender)
        host["tools"] = {"iperf3": "/nonexistent/nicbench-f16/iperf3"}
    inv = inventory_copy(lab, no_iperf3)
    prof = write_profile(tmp_path, """\
        name: f16
        source: nicbench fault test
        repetitions: 2
        mtu: [9000]
        tests:
          - {name: f16-tcp, tool: iperf3, params: {duration_s: 1}}
        """)
    out = tmp_path / "run"
    try:
        check = cli("check", "-i", str(inv), "--profile", str(prof), "gbe")
        proc = cli("run", str(prof), "-i", str(inv), "--pair", "gbe", "--out", str(out))
    finally:
        inv.unlink(missing_ok=True)
    why = f"gbe: iperf3 is not installed on {sender}"
    assert check.returncode != 0 and why in check.stdout + check.stderr, check
    assert proc.returncode == 2, proc.stderr
    assert why in proc.stderr
    assert "Traceback" not in proc.stderr
    # Refused before anything changed: no MTU set, no trial, nothing to restore.
    assert not (out / "trials.jsonl").exists() or records(out) == []
    assert not (out / "tuning.json").exists() or \
        json.loads((out / "tuning.json").read_text()).get("entries", []) == []


# A pair not ready beside a ready one (every lab pair shares its two hosts, so a tool
# missing on one is missing for all): test_faults.py's row 6, a missing interface, now
# found by the same check before the run; unit: test_trial_checks.py.


# -- 21. a tool that prints more than nicbench keeps ---------------------------------------
CHATTY = """\
#!/bin/sh
# iperf3, and then 20 MB more on its client's stdout (a tool left in a verbose mode)
iperf3 "$@"
rc=$?
case " $* " in *" -c "*) head -c 20000000 /dev/zero | tr '\\0' x ;; esac
exit "$rc"
"""


def test_a_tool_printing_over_the_cap_fails_with_the_cap_and_leaves_nothing(lab, tmp_path):
    from nicbench.limits import MAX_OUTPUT_BYTES, TRUNCATED_MARK

    chatty = tmp_path / "chatty-iperf3"
    chatty.write_text(CHATTY)
    chatty.chmod(0o755)
    link = gbe(lab)

    def chatty_tool(data):
        for host in data["hosts"]:
            host["tools"] = {"iperf3": str(chatty)}
    inv = inventory_copy(lab, chatty_tool)
    prof = write_profile(tmp_path, """\
        name: f17
        source: nicbench fault test
        repetitions: 1
        timeout_s: 60
        mtu: [1500]
        tests:
          - {name: f17-tcp, tool: iperf3, params: {duration_s: 1, port: 5817}}
        """)
    out = tmp_path / "run"
    try:
        proc = cli("run", str(prof), "-i", str(inv), "--pair", "gbe", "--out", str(out),
                   timeout=180)
    finally:
        inv.unlink(missing_ok=True)
    assert proc.returncode == 1, proc.stderr       # the pair measured nothing
    (rec,) = records(out)
    assert (rec["status"], rec["failure"]) == ("failed", "output-cap"), rec
    assert rec["reason"] == ("client output over 8 MB (nicbench keeps at most 8 MB of a "
                             "tool's output)")
    kept = (out / rec["raw"]["client"]).read_text()
    assert kept.endswith("x" * 1000 + TRUNCATED_MARK)
    assert len(kept) == MAX_OUTPUT_BYTES + len(TRUNCATED_MARK)
    assert processes(link.host_b.name, "chatty-iperf3") == []
    assert processes(link.host_b.name, "iperf3 -c") == []
    assert processes(link.host_a.name, "iperf3 -s") == []
    assert leftovers("f17-tcp") == []


@pytest.mark.parametrize("warm", [False, True], ids=["channel", "warm-shell"])
def test_an_endless_reply_over_ssh_is_cut_at_the_cap_in_bounded_memory(lab, warm):
    import tracemalloc

    from nicbench.config.loader import load_inventory
    from nicbench.errors import OutputTooLarge
    from nicbench.limits import CAPTURE_LIMIT_BYTES
    from nicbench.platforms.hosts import HostPool
    from nicbench.tools.registry import CATALOG

    host = gbe(lab).host_b.name
    with HostPool(load_inventory(str(lab.inventory_file), CATALOG)) as pool:
        conn = pool.platform(host).conn
        conn.run(["true"], warm=warm)           # connected before memory is counted
        tracemalloc.start()
        try:
            with pytest.raises(OutputTooLarge) as err:
                conn.run(["sh", "-c", "exec yes nicbench-f17-chatter"], timeout=120,
                         warn=True, warm=warm)
            _now, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        res = err.value.result
        assert res.truncated and len(res.stdout) <= CAPTURE_LIMIT_BYTES
        assert res.stdout.startswith("nicbench-f17-chatter\n")
        # Endless: holding it all would never end; the reply, its text and the Result's
        # raw bytes are a few copies of the limit.
        assert peak < 4 * CAPTURE_LIMIT_BYTES, peak
        assert conn.run(["echo", "still here"], warm=warm).stdout == "still here\n"
    wait_for(lambda: processes(host, "nicbench-f17-chatter") == [], 10, "the command killed")
