"""Engine rules on the lab, through ``run_profile``: giving up on a link that really
stalls, and a vector sysctl applied in real namespaces and restored. (The same rules, and
resume and UDP replay, are unit-tested against fake hosts in tests/unit/test_runner.py.)"""

from __future__ import annotations

import textwrap

import pytest

from nicbench.config.loader import load_profile
from nicbench.tools.registry import CATALOG
from nicbench.execution.events import GaveUp, TrialDone
from nicbench.execution.runner import run_profile
from nicbench.results.records import Failure

pytestmark = pytest.mark.lab


def profile(tmp_path, text: str):
    path = tmp_path / "p.yaml"
    path.write_text(textwrap.dedent(text))
    return load_profile(path, CATALOG)


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
    seen = []
    run_dir = run_profile(prof, lab_inventory, tmp_path / "out", pairs=["stall"],
                          listener=seen.append)
    recs = list(run_dir.records())
    failed = [r for r in recs if r.status == "failed"]
    given_up = [r for r in recs if r.kind == "given-up"]
    assert len(failed) == 2, [r.reason for r in recs]
    assert all(r.failure in (Failure.DEAD_LINK, Failure.NO_RECEIVER_REPORT, Failure.TIMEOUT)
               for r in failed), [r.reason for r in failed]
    assert len(given_up) == 1
    assert given_up[0].reason.startswith("3 repetitions not run after 2 consecutive failures")
    assert given_up[0].not_run == 3
    assert sum(isinstance(e, GaveUp) for e in seen) == 1
    # The summary says why the row is empty.
    summary = run_dir.summary_file.read_text().splitlines()
    assert len(summary) == 2 and ",failed,0,2," in summary[1]
    assert "not run after 2 consecutive failures" in summary[1]

    # Resuming with --keep-failed leaves a given-up configuration as it is (without it,
    # a resume measures it again: tests/unit/test_runner.py).
    again = run_profile(prof, lab_inventory, tmp_path / "out", pairs=["stall"], resume=True,
                        keep_failed=True)
    assert len(list(again.records())) == len(recs)


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

    def during(event):
        if isinstance(event, TrialDone):
            seen.update({h: sysctl_in(h, "net.ipv4.tcp_rmem") for h in hosts})

    run_dir = run_profile(prof, lab_inventory, tmp_path / "out", pairs=["gbe"], listener=during)
    assert seen == dict.fromkeys(hosts, wanted)
    assert {h: sysctl_in(h, "net.ipv4.tcp_rmem") for h in hosts} == before
    assert [r.status for r in run_dir.records()] == ["ok"]
