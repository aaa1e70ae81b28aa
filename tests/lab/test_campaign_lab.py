"""``nicbench campaign`` and ``nicbench status`` on a lab of two host pairs, through the CLI.

The session lab has one host pair; a campaign's parallel pairs need pairs that share no
host, so this module builds its own lab (prefix ``nbtc``, slot 10: management networks
198.19.161.0/24 to 198.19.164.0/24; four hosts, one ``gbe`` link per host pair, shaped to
100 Mbit/s), under the session's lab-tests lock, and takes it down afterwards.

* two profiles over the two pairs with ``--parallel 2``: both pairs measured at the same
  time (their trials overlap), every configuration of both runs measured, the summary,
  the index and each run's report; ``nicbench status`` from a second process while it
  runs (controller alive, pairs running with their configuration) and after (finished);
* Ctrl-C in the middle: exit 130, every host's MTU back, the summary written, then
  ``--resume`` finishes it with no trial twice;
* a host whose sshd dies for good: its pair is reported lost, the other pair completes.

Every check on the hosts is made with ip(8) directly, not through nicbench.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import textwrap
import time
from pathlib import Path

import pytest
import yaml
from clihelp import nicbench, read_until, start

pytestmark = pytest.mark.lab

PREFIX, SLOT = "nbtc", 10


def cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return nicbench(*args, timeout=timeout)


def until(pattern: str):
    """A read_until predicate: the first line matching ``pattern`` (a regex)."""
    return lambda line, lines: re.search(pattern, line) is not None


def finish(proc: subprocess.Popen, timeout_s: float = 300) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=timeout_s)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)


def mtu(ns: str) -> int:
    out = subprocess.run(["ip", "-n", ns, "-j", "link", "show", "dev", "gbe"],
                         capture_output=True, text=True, check=True, timeout=10).stdout
    return int(json.loads(out)[0]["mtu"])


def records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "trials.jsonl").read_text().splitlines()]


def keys(recs: list[dict]) -> list[tuple]:
    return [(r["pair"], r["point"], r["test"], r["kind"], r["repetition"]) for r in recs]


@pytest.fixture(scope="module")
def lab2(labtests_lock, tmp_path_factory):
    """Two host pairs (nbtc-a/b: p1-gbe, nbtc-c/d: p2-gbe), 100 Mbit/s each."""
    from nicbench.lab.lab import Lab, LabSpec

    the_lab = Lab(LabSpec(prefix=PREFIX, slot=SLOT, pairs=2, adapters=("gbe",),
                          rate="100mbit"), tmp_path_factory.mktemp("nbtc-lab"))
    try:
        the_lab.up()
        yield the_lab
    finally:
        the_lab.down()


@pytest.fixture
def hosts(lab2):
    """The lab's host names; after the test, every gbe interface must be at 1500."""
    names = [h.name for h in lab2.spec.hosts()]
    yield names
    assert {h: mtu(h) for h in names} == dict.fromkeys(names, 1500)


PROFILE_A = """\
    name: ca
    source: nicbench campaign lab test
    repetitions: 3
    timeout_s: 20
    mtu: [1500, 9000]
    tests:
      - {name: ca-tcp, tool: iperf3, params: {duration_s: 2}}
    """
PROFILE_B = """\
    name: cb
    source: nicbench campaign lab test
    repetitions: 2
    timeout_s: 20
    mtu: [1500]
    tests:
      - {name: cb-tcp, tool: iperf2, params: {duration_s: 1}}
    """


def campaign_file(tmp_path: Path, extra: str = "", report: bool = False) -> Path:
    (tmp_path / "ca.yaml").write_text(textwrap.dedent(PROFILE_A))
    (tmp_path / "cb.yaml").write_text(textwrap.dedent(PROFILE_B))
    path = tmp_path / "night.yaml"
    path.write_text(textwrap.dedent(f"""\
        format_version: 1
        name: night
        parallel: 1
        report: {str(report).lower()}
        runs:
          - profile: ca.yaml
          - profile: cb.yaml
        """) + textwrap.dedent(extra))
    return path


def overlap(a: list[dict], b: list[dict]) -> float:
    """Seconds during which trials of ``a`` and of ``b`` ran at the same time."""
    total = 0.0
    for x in a:
        for y in b:
            total += max(0.0, min(x["ended_at"], y["ended_at"]) -
                         max(x["started_at"], y["started_at"]))
    return total


def test_two_profiles_over_two_pairs_in_parallel_with_status_during_and_after(
        lab2, hosts, tmp_path):
    camp = campaign_file(tmp_path, report=True)
    out = tmp_path / "night"
    proc = start("campaign", str(camp), "-i", str(lab2.inventory_file), "--out", str(out),
                 "--parallel", "2")
    try:
        read_until(proc, until(r"\] p\d-gbe mtu1500 ca-tcp #1/3"), 120)
        during = cli("status", str(out), "--json", timeout=30)
        during_text = cli("status", str(out), timeout=30)
        stdout, stderr = finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr
    # status from another process while it ran
    assert during.returncode == 0, during.stderr
    st = json.loads(during.stdout)
    assert (st["kind"], st["state"], st["alive"]) == ("campaign", "running", True)
    assert st["controller"].startswith(f"alive (pid {proc.pid} on ")
    (ca, cb) = st["runs"]
    assert ca["state"] == "running" and cb["state"] == "pending"
    assert [p["pair"] for p in ca["pairs"]] == ["p1-gbe", "p2-gbe"]
    assert all(p["planned"] == 6 for p in ca["pairs"]) and st["planned"] == 12 + 4
    assert any(p["state"] == "running" and p["current"].startswith("mtu")
               for p in ca["pairs"]), ca["pairs"]
    assert "trials: " in during_text.stdout and "p2-gbe" in during_text.stdout
    # both pairs measured, at the same time
    a = records(out / "ca")
    assert sorted(keys(a)) == sorted(
        (p, m, "ca-tcp", "repetition", i) for p in ("p1-gbe", "p2-gbe")
        for m in ("mtu1500", "mtu9000") for i in (1, 2, 3))
    assert all(r["status"] == "ok" for r in a)
    p1 = [r for r in a if r["pair"] == "p1-gbe"]
    p2 = [r for r in a if r["pair"] == "p2-gbe"]
    assert overlap(p1, p2) > 0.5 * sum(r["ended_at"] - r["started_at"] for r in p1)
    assert [r["status"] for r in records(out / "cb")] == ["ok"] * 4
    # the output: progress with the campaign's counts, the table, where the summary is
    assert "[  16/16]" in stdout and "ETA" in stdout
    assert "nicbench campaign night: everything measured" in stdout
    assert f"summary: {out}/summary.md" in stdout
    # status after: finished, everything counted
    after = cli("status", str(out), "--json", timeout=30)
    st = json.loads(after.stdout)
    assert (after.returncode, st["state"], st["done"], st["planned"]) == (0, "finished", 16, 16)
    assert st["controller"].startswith("finished at ")
    # the morning summary and the index, relative links that resolve, no absolute paths
    state = json.loads((out / "campaign.json").read_text())
    assert [(r["name"], r["state"]) for r in state["runs"]] == [("ca", "done"), ("cb", "done")]
    page = (out / "index.html").read_text()
    hrefs = re.findall(r'href="([^"]+)"', page)
    assert "ca/report/report.html" in hrefs and "cb/report/report.html" in hrefs
    assert all((out / h).exists() for h in hrefs), hrefs
    assert str(tmp_path) not in page and str(tmp_path) not in (out / "summary.md").read_text()
    # nicbench report takes the campaign directory as its runs
    rep = cli("report", str(out), "--out", str(tmp_path / "merged"), timeout=300)
    assert rep.returncode == 0, rep.stderr
    assert (tmp_path / "merged" / "report.html").exists()


def test_ctrl_c_restores_every_host_and_resume_finishes_without_duplicates(
        lab2, hosts, tmp_path):
    camp = campaign_file(tmp_path)
    out = tmp_path / "night"
    proc = start("campaign", str(camp), "-i", str(lab2.inventory_file), "--out", str(out),
                 "--parallel", "2")
    try:
        read_until(proc, until(r"\] p\d-gbe mtu9000 ca-tcp #1/3"), 120)
        assert {h: mtu(h) for h in hosts} == dict.fromkeys(hosts, 9000)   # both pairs at 9000
        proc.send_signal(signal.SIGINT)
        _stdout, stderr = finish(proc, 120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert "stopping: " in stderr and "interrupted; host settings were restored" in stderr
    assert {h: mtu(h) for h in hosts} == dict.fromkeys(hosts, 1500)
    state = json.loads((out / "campaign.json").read_text())
    assert state["state"] == "interrupted" and state["exit_status"] == 130
    assert [r["state"] for r in state["runs"]] == ["interrupted", "pending"]
    assert "interrupted" in (out / "summary.md").read_text()
    journal = json.loads((out / "ca" / "tuning.json").read_text())
    assert journal["changes"] == [] and journal["leftovers"] == []
    before = records(out / "ca")
    assert 0 < len(before) < 12

    proc2 = cli("campaign", str(camp), "-i", str(lab2.inventory_file), "--resume", str(out),
                "--parallel", "2")
    assert proc2.returncode == 0, proc2.stderr
    a = records(out / "ca")
    assert a[:len(before)] == before                     # append-only
    assert len(keys(a)) == len(set(keys(a))) == 12 and all(r["status"] == "ok" for r in a)
    assert len(records(out / "cb")) == 4
    state = json.loads((out / "campaign.json").read_text())
    assert [r["state"] for r in state["runs"]] == ["done", "done"]
    assert state["state"] == "finished" and len(state["resumed_at"]) == 1


def sshd(ns: str) -> list[int]:
    """sshd processes (listener and sessions) in namespace ``ns``."""
    out = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True,
                         timeout=10).stdout.split()
    found = []
    for pid in out:
        try:
            if b"sshd" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            continue
    return found


def test_a_lost_host_is_reported_while_the_other_pair_completes(lab2, hosts, tmp_path):
    data = yaml.safe_load(lab2.inventory_file.read_text())
    for h in data["hosts"]:
        h["ssh"]["reconnect_s"] = 2
    inv = lab2.inventory_file.with_name("inventory-campaign-lost.yaml")
    inv.write_text(yaml.safe_dump(data, sort_keys=False))
    camp = campaign_file(tmp_path)
    out = tmp_path / "night"
    lost = lab2.spec.hosts()[3]                  # p2-gbe's sender, nbtc-d
    try:
        proc = start("campaign", str(camp), "-i", str(inv), "--out", str(out),
                     "--parallel", "2")
        try:
            read_until(proc, until(r"\] p2-gbe mtu1500 ca-tcp #1/3"), 120)
            for pid in sshd(lost.name):              # the host's sshd dies, for good
                os.kill(pid, signal.SIGKILL)
            _stdout, stderr = finish(proc)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 1, stderr
        a = records(out / "ca")
        p1 = [r for r in a if r["pair"] == "p1-gbe"]
        assert sorted((r["point"], r["repetition"], r["status"]) for r in p1) == [
            (m, i, "ok") for m in ("mtu1500", "mtu9000") for i in (1, 2, 3)]
        assert any(r["pair"] == "p2-gbe" and r["failure"] == "host-lost" for r in a)
        cb = records(out / "cb")
        assert {r["pair"] for r in cb if r["status"] == "ok"} == {"p1-gbe"}
        state = json.loads((out / "campaign.json").read_text())
        assert [r["state"] for r in state["runs"]] == ["done", "done"]
        assert lost.name in state["runs"][0]["lost_hosts"]
        assert f"host {lost.name} lost" in stderr
        summary = (out / "summary.md").read_text()
        assert re.search(r"p2-gbe ca: host lost at mtu1500", summary), summary
        assert f"host {lost.name} lost" in summary
    finally:
        inv.unlink(missing_ok=True)
        if not sshd(lost.name):
            subprocess.run(["ip", "netns", "exec", lost.name, "/usr/sbin/sshd", "-f",
                            str(lab2.host_dir(lost) / "sshd_config"), "-E",
                            str(lab2.host_dir(lost) / "sshd.log")], check=True, timeout=10)
            deadline = time.monotonic() + 10
            while not sshd(lost.name) and time.monotonic() < deadline:
                time.sleep(0.1)
        for run in ("ca", "cb"):              # what the lost host kept, put back now
            if (out / run / "tuning.json").exists():
                cli("restore", str(out / run), timeout=120)
