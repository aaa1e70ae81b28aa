"""Engine rules on the lab, through ``run_profile``: giving up on a stalled link, and a UDP
search resumed after an interruption that measures only what it had not measured yet."""

from __future__ import annotations

import textwrap

import pytest

from nicbench.config.loader import load_profile
from nicbench.execution.run import run_profile
from nicbench.results.store import RunDir

pytestmark = pytest.mark.lab


def profile(tmp_path, text: str):
    path = tmp_path / "p.yaml"
    path.write_text(textwrap.dedent(text))
    return load_profile(path)


def test_a_stalled_link_is_given_up_after_consecutive_failures(lab, lab_inventory, tmp_path):
    prof = profile(tmp_path, """\
        name: giveup
        source: nicbench test
        repetitions: 5
        give_up_after: 2
        timeout_s: 20
        mtu: [9000]
        tests:
          - {name: tcp, tool: iperf3, params: {duration_s: 1}}
        """)
    events = []
    run_dir = run_profile(prof, lab_inventory, tmp_path / "out", pairs=["stall"],
                          events=lambda kind, data: events.append((kind, data)))
    recs = list(run_dir.records())
    failed = [r for r in recs if r["status"] == "failed"]
    given_up = [r for r in recs if r["kind"] == "given-up"]
    assert len(failed) == 2, [r["reason"] for r in recs]
    assert all("stalled" in r["reason"] for r in failed)
    assert len(given_up) == 1
    assert given_up[0]["reason"].startswith("3 repetitions not run after 2 consecutive failures")
    assert given_up[0]["extra"]["not_run"] == 3
    assert [k for k, _ in events].count("give-up") == 1
    # The summary says why the row is empty.
    summary = run_dir.summary_file.read_text().splitlines()
    assert len(summary) == 2 and ",failed,0,2," in summary[1]
    assert "not run after 2 consecutive failures" in summary[1]

    # Resuming a given-up configuration does not try it again.
    again = run_profile(prof, lab_inventory, tmp_path / "out", pairs=["stall"], resume=True)
    assert len(list(again.records())) == len(recs)


class Interrupt(Exception):
    pass


def udp_sweep(tmp_path, search: str):
    """A 0.5 s iperf 2 UDP sweep from 100 Mbit/s in 10 Mbit/s steps on MTU 1500."""
    return profile(tmp_path, f"""\
        name: udpsweep
        source: nicbench test
        timeout_s: 20
        mtu: [1500]
        tests:
          - name: udp
            tool: iperf2
            protocol: udp
            params: {{duration_s: 0.5}}
            udp_search: {{method: sweep, start_bps: 100M, step_bps: 10M, {search}}}
        """)


def test_an_interrupted_udp_search_resumes_where_it_stopped(lab, lab_inventory, tmp_path):
    prof = udp_sweep(tmp_path, "stop_bps: 160M")
    out = tmp_path / "out"

    def stop_after_three(kind, data):
        if kind == "trial" and data["i"] == 3:
            raise Interrupt()

    with pytest.raises(Interrupt):
        run_profile(prof, lab_inventory, out, pairs=["gbe"], events=stop_after_three)
    first = list(RunDir(out).records())
    assert [r["offered_bps"] for r in first] == [100e6, 110e6, 120e6]

    measured = []
    run_profile(prof, lab_inventory, out, pairs=["gbe"], resume=True,
                events=lambda kind, data: kind == "trial" and measured.append(data["record"]))
    recs = list(RunDir(out).records())
    # The first three were replayed from trials.jsonl, not measured again.
    assert [r.offered_bps for r in measured] == [130e6, 140e6, 150e6, 160e6]
    assert [r["offered_bps"] for r in recs] == [100e6 + i * 10e6 for i in range(7)]
    assert len({r["repetition"] for r in recs}) == 7
    assert all(r["status"] == "ok" for r in recs)


def sysctl_in(ns: str, name: str) -> str:
    import subprocess

    return subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-n", name], check=True,
                          capture_output=True, text=True, timeout=10).stdout.split()


def test_a_vector_sysctl_is_applied_for_the_run_and_restored(lab, lab_inventory, tmp_path):
    hosts = [h.name for h in lab.spec.hosts()]
    before = {h: sysctl_in(h, "net.ipv4.tcp_rmem") for h in hosts}
    wanted = ["4096", "131072", "8388608"]
    assert all(v != wanted for v in before.values())
    prof = profile(tmp_path, """\
        name: sysctl
        source: nicbench test
        repetitions: 1
        sysctl: {net.ipv4.tcp_rmem: "4096 131072 8388608"}
        mtu: [1500]
        tests:
          - {name: tcp, tool: iperf3, params: {duration_s: 1}}
        """)
    seen = {}

    def during(kind, data):
        if kind == "trial":
            seen.update({h: sysctl_in(h, "net.ipv4.tcp_rmem") for h in hosts})

    run_dir = run_profile(prof, lab_inventory, tmp_path / "out", pairs=["gbe"], events=during)
    assert seen == {h: wanted for h in hosts}
    assert {h: sysctl_in(h, "net.ipv4.tcp_rmem") for h in hosts} == before
    assert [r["status"] for r in run_dir.records()] == ["ok"]


def test_trials_per_rate_offers_each_rate_that_many_times(lab, lab_inventory, tmp_path):
    prof = udp_sweep(tmp_path, "stop_bps: 110M, trials_per_rate: 2")
    run_dir = run_profile(prof, lab_inventory, tmp_path / "out", pairs=["gbe"])
    recs = list(run_dir.records())
    assert [r["offered_bps"] for r in recs] == [100e6, 100e6, 110e6, 110e6]
    assert [r["repetition"] for r in recs] == [1, 2, 3, 4]
    summary = run_dir.summary_file.read_text().splitlines()[1]
    assert ",ok,4,0,udp-sweep," in summary
