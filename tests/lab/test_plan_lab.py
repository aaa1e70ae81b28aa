"""``--plan`` against the real thing: what a run then sends is what its plan said.

The plan of a small profile on the lab's gbe pair lists its trials' tool commands; the
real run, through the CLI, stores each trial's commands in trials.jsonl; they must be the
same, trial for trial (but for the random token in the paths of a trial's own files).
The plan itself connects to nothing (``nicbench run --plan`` with an inventory whose
known_hosts does not exist still plans).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from clihelp import nicbench

from nicbench.config.loader import load_profile
from nicbench.tools.registry import CATALOG
from nicbench.execution.plan import make_plan, same_commands

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parents[2]


def test_a_run_sends_what_its_plan_said(lab, lab_inventory, tmp_path):
    prof_file = tmp_path / "p.yaml"
    prof_file.write_text(textwrap.dedent("""\
        name: planned
        source: nicbench lab test
        repetitions: 2
        mtu: [1500, 9000]
        tests:
          - {name: tcp3, tool: iperf3, params: {duration_s: 1}}
          - {name: tcp2, tool: iperf2, params: {duration_s: 1}}
          - {name: np, tool: netpipe, params: {upper: 4096, repeats: 10}}
        """))
    planned = make_plan(load_profile(prof_file, CATALOG), lab_inventory, ["gbe"]).trials_planned
    out = tmp_path / "run"
    proc = nicbench("run", str(prof_file), "-i", str(lab.inventory_file), "--pair", "gbe",
                    "--out", str(out), timeout=180)
    assert proc.returncode == 0, proc.stderr
    ran = [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines()]
    assert len(ran) == len(planned) == 12
    for p, r in zip(planned, ran, strict=False):
        assert (p.pair, p.point, p.test, p.repetition) == (r["pair"], r["point"], r["test"],
                                                            r["repetition"])
        assert same_commands(p.server, r["commands"]["server"]), (p.server, r["commands"])
        assert same_commands(p.client, r["commands"]["client"]), (p.client, r["commands"])


def test_plan_through_the_cli_connects_to_nothing(lab, tmp_path):
    """An inventory whose known_hosts files do not exist: a connection would be refused
    before anything else (HostKeyError); the plan never makes one."""
    import yaml

    data = yaml.safe_load(lab.inventory_file.read_text())
    for host in data["hosts"]:
        host["ssh"]["known_hosts"] = str(tmp_path / "no-such-known_hosts")
        host["ssh"]["key_file"] = str(lab.inventory_file.parent / host["ssh"]["key_file"])
    inv = tmp_path / "inventory.yaml"
    inv.write_text(yaml.safe_dump(data, sort_keys=False))
    refused = nicbench("check", "gbe", "-i", str(inv), timeout=60)
    assert refused.returncode != 0                   # connecting really is impossible
    proc = nicbench("run", "quick", "-i", str(inv), "--pair", "gbe", "--plan", timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("plan: quick on 1 pairs (gbe)")
    assert "ip link set dev gbe mtu 9000" in proc.stdout
