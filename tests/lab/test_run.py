"""``nicbench run`` end to end on the session lab, as a user runs it: a subprocess of the
real CLI, real SSH, real tools, real MTU changes.

* ``profiles/quick.yaml`` on the clean ``gbe`` link: a summary row per test and MTU, best
  >= median, iperf3's best within 2 % of what Gigabit Ethernet carries (941.5 Mbit/s at
  MTU 1500, 990.0 at 9000), raw output for every trial, every lab interface back at its
  original MTU;
* the ``stall`` link at MTU 9000 (nft drops frames above 6000 bytes): failed trials with
  the reason, and the run goes on to the next test and the next point and exits 0;
* Ctrl-C half-way and ``--resume``: tests/faults/test_signals.py (SIGINT and SIGTERM at
  MTU 9000: exit 130, MTUs restored, the server stopped, then the printed command
  measures only what is missing, append-only, without a duplicate) and
  tests/faults/test_faults.py (a point finished before the interruption is not visited
  again).

Every wait is bounded (subprocess timeouts, a deadline when reading progress lines).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pandas as pd
import pytest
import yaml
from clihelp import nicbench
from loadcheck import Beside, judge_short, lab_namespaces

from nicbench.config.loader import load_profile
from nicbench.results.records import FORMAT_VERSION
from nicbench.tools.registry import CATALOG

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parents[2]
QUICK = REPO / "profiles" / "quick.yaml"
WIRE_BPS = 1e9
WITHIN = 0.02


def theory_bps(mtu: int) -> float:
    """TCP goodput of Gigabit Ethernet with timestamps: R (m - 52) / (m + 38)."""
    return WIRE_BPS * (mtu - 52) / (mtu + 38)


def write_profile(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "profile.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def records(out: Path) -> list[dict]:
    lines = (out / "trials.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]   # every line parses, none torn


def assert_lab_mtus_original(lab, mtus) -> None:
    now = {ns: mtus(ns) for ns in lab.original_mtus}
    assert now == lab.original_mtus


def assert_raw_files(out: Path, recs: list[dict]) -> None:
    for r in recs:
        if r["kind"] in ("skipped", "given-up"):
            continue
        assert "client" in r["raw"], f"{r['trial_id']}: no raw client output"
        for rel in r["raw"].values():
            path = out / rel
            assert path.is_file() and path.stat().st_size > 0, f"{r['trial_id']}: {rel}"


def assert_no_duplicates(recs: list[dict]) -> None:
    keys = [(r["pair"], r["point"], r["test"], r["kind"], r["repetition"]) for r in recs]
    assert len(keys) == len(set(keys)), f"duplicate trials: {keys}"


def test_quick_profile_end_to_end(lab, tmp_path, mtus):
    out = tmp_path / "quick"
    with Beside(lab_namespaces(lab)) as load:
        proc = nicbench("run", "profiles/quick.yaml", "-i", str(lab.inventory_file),
                        "--pair", "gbe", "--out", str(out), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert proc.stdout.splitlines()[0] == f"nicbench run quick -> {out}"
    assert f"results: {out}/ (summary.csv, trials.jsonl, raw/)" in proc.stdout
    assert_lab_mtus_original(lab, mtus)

    profile = load_profile(QUICK, CATALOG)
    mtus = [p.ip_mtu for p in profile.points]
    assert mtus == [1500, 9000]
    summary = pd.read_csv(out / "summary.csv")
    assert len(summary) == len(profile.tests) * len(mtus)
    for test in profile.tests:
        for mtu in mtus:
            rows = summary[(summary.test == test.name) & (summary.mtu == mtu)]
            assert len(rows) == 1, f"{test.name} at {mtu}: {len(rows)} rows"
            row = rows.iloc[0]
            assert (row.pair, row.status, row.n_failed) == ("gbe", "ok", 0), row.reason
            assert row.n_ok == profile.repetitions_for(test)
            assert row.best_bps >= row.median_bps >= row.min_bps > 0
            assert row.selected_bps == row.best_bps       # select: best
    recs = records(out)
    assert len(recs) == sum(profile.repetitions_for(t) for t in profile.tests) * len(mtus)
    assert all(r["status"] == "ok" and r["format_version"] == FORMAT_VERSION for r in recs)
    assert_no_duplicates(recs)
    assert_raw_files(out, recs)
    for r in recs:
        assert r["commands"]["client"] and r["version"] and r["wall_s"] > 0
        assert r["hosts"] == {"receiver": lab.spec.hosts()[0].name,
                              "sender": lab.spec.hosts()[1].name}
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["pairs"] == ["gbe"] and manifest["restore_problems"] == []
    # what a comparison lists when two runs differ: read from each host (namespaces share
    # the machine's CPUs and memory)
    for facts in manifest["hosts"].values():
        assert facts["cpus"] >= 1 and facts["memory_bytes"] > 1 << 20, facts
    journal = json.loads((out / "tuning.json").read_text())
    assert journal["changes"] == [] and journal["leftovers"] == [], journal  # nothing pending

    # Physics last: above the wire always fails; short of it fails on a machine without
    # other load unless the same nicbench trial, run again, reaches the band (loadcheck).
    for mtu in mtus:
        best = summary[(summary.tool == "iperf3") & (summary.mtu == mtu)].best_bps.iloc[0]
        assert best <= theory_bps(mtu) * (1 + WITHIN), f"MTU {mtu}: {best / 1e6:.1f} above"
    for mtu in mtus:
        best = summary[(summary.tool == "iperf3") & (summary.mtu == mtu)].best_bps.iloc[0]
        judge_short(f"iperf3 best at MTU {mtu} (wire limit {theory_bps(mtu) / 1e6:.1f} "
                    "Mbit/s)", best, theory_bps(mtu) * (1 - WITHIN), load,
                    lambda mtu=mtu: quick_iperf3_again(lab, tmp_path, mtu))


def quick_iperf3_again(lab, tmp_path: Path, mtu: int) -> tuple[float, Beside]:
    """quick.yaml's iperf3 test at one MTU, run again through nicbench: its best."""
    import yaml

    spec = yaml.safe_load(QUICK.read_text())
    spec.update(name=f"quick-again-{mtu}", mtu=[mtu],
                tests=[t for t in spec["tests"] if t["tool"] == "iperf3"])
    prof = tmp_path / f"again-{mtu}.yaml"
    prof.write_text(yaml.safe_dump(spec))
    out = tmp_path / f"again-{mtu}"
    with Beside(lab_namespaces(lab)) as load:
        proc = nicbench("run", str(prof), "-i", str(lab.inventory_file), "--pair", "gbe",
                        "--out", str(out), timeout=120)
    assert proc.returncode == 0, proc.stderr
    return float(pd.read_csv(out / "summary.csv").best_bps.max()), load


# After a tool's timeout: its kill, the other end's stop (1 s grace), the report wait and
# the collection of both ends' files over SSH, with room for a busy machine.
STOP_SLACK_S = 15
STALL_PROFILE = """\
    format_version: 1
    name: stall-test
    source: "nicbench lab test: a driver that hangs on large frames"
    platform: linux
    repetitions: 1
    timeout_s: 5
    mtu: [9000, 1500]
    tests:
      - {name: iperf3-tcp, tool: iperf3, params: {duration_s: 1}}
      - {name: iperf2-tcp, tool: iperf2, params: {duration_s: 1}}
      - {name: netpipe, tool: netpipe, params: {upper: 8192, repeats: 20}}
    """


@pytest.mark.shares_machine     # judged by its records, not by the machine's clock
def test_stalled_link_fails_trials_with_reasons_and_the_run_goes_on(lab, tmp_path, mtus):
    prof = write_profile(tmp_path, STALL_PROFILE)
    out = tmp_path / "stall"
    proc = nicbench("run", str(prof), "-i", str(lab.inventory_file), "--pair", "stall",
                    "--out", str(out), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert_lab_mtus_original(lab, mtus)

    recs = {(r["point"], r["test"]): r for r in records(out)}
    assert len(recs) == 6
    expected_reasons = {
        "iperf3-tcp": "transfer moved almost nothing",      # iperf3 exits 0 at 0 bit/s
        "iperf2-tcp": "the receiver printed no report",
        "netpipe": "timeout: the sender ran past 5 s and was killed",
    }
    for test, words in expected_reasons.items():
        bad = recs[("mtu9000", test)]
        assert bad["status"] == "failed" and words in bad["reason"], bad["reason"]
        good = recs[("mtu1500", test)]
        assert good["status"] == "ok", good["reason"]
        assert f"{test} #1/1: FAILED: {bad['reason']}" in proc.stdout
    assert_raw_files(out, list(recs.values()))
    # mtu9000 first: the failures did not stop the run from reaching mtu1500
    assert proc.stdout.index("== stall mtu9000") < proc.stdout.index("== stall mtu1500")
    summary = pd.read_csv(out / "summary.csv")
    at_9000 = summary[summary.mtu == 9000]
    assert list(at_9000.status) == ["failed"] * 3
    assert all(isinstance(r, str) and r for r in at_9000.reason)
    assert list(summary[summary.mtu == 1500].status) == ["ok"] * 3
    # a stalled tool is ended at the profile's timeout_s, not left to hang: each failed
    # trial's own wall time is bounded by it and the stop's grace (STOP_SLACK_S), however
    # busy the machine (a hang would run to the 120 s the command is given)
    timeout_s = yaml.safe_load(textwrap.dedent(STALL_PROFILE))["timeout_s"]
    for rec in recs.values():
        assert rec["wall_s"] < timeout_s + STOP_SLACK_S, (rec["test"], rec["wall_s"])
