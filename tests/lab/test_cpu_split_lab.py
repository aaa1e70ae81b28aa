"""The tools' own CPU and the rest of the machine's load, per trial, on the session lab:
a short iperf3 run on ``gbe`` through the real CLI, SSH and tools.

Each trial's record holds, in the window and units of the host's busy figure, the tool's
own share (its client on the sender, its server on the receiver: more than nothing, and
within what the host was busy with) and the other load (busy minus the tool minus irq and
softirq, a lower bound at least 0: the lab's kernel charges softirq to the tool it
interrupted as well). On the lab both hosts are namespaces of one machine, so each side's
"other" holds the peer's tool too.
"""

from __future__ import annotations

import json
import textwrap

import pytest
from clihelp import nicbench

pytestmark = pytest.mark.lab

PROFILE = """\
    format_version: 1
    name: cpu-split
    source: "nicbench lab test: the tools' own CPU beside the host's"
    platform: linux
    repetitions: 3
    timeout_s: 10
    mtu: [1500]
    tests:
      - {name: iperf3-tcp, tool: iperf3, params: {duration_s: 1}}
    """
# /proc/stat is sampled per CPU at each tick, the tools' time exactly: over a 1 s window
# of a 2-CPU machine (about 200 ticks) a tick or two either way is a point or so.
ROUNDING = 2.0


def test_each_trial_records_the_tools_own_cpu_within_the_hosts(lab, tmp_path):
    prof = tmp_path / "profile.yaml"
    prof.write_text(textwrap.dedent(PROFILE))
    out = tmp_path / "run"
    proc = nicbench("run", str(prof), "-i", str(lab.inventory_file), "--pair", "gbe",
                    "--out", str(out), timeout=120)
    assert proc.returncode == 0, proc.stderr
    recs = [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines()]
    assert len(recs) == 3 and all(r["status"] == "ok" for r in recs), recs
    for r in recs:
        for side in ("sender", "receiver"):
            busy = r[f"cpu_{side}_pct"]
            tool = r[f"cpu_{side}_tool_pct"]
            other = r[f"cpu_{side}_other_pct"]
            where = f"{r['trial_id']} {side}: busy {busy}, tool {tool}, other {other}"
            assert busy is not None and tool is not None and other is not None, where
            assert 0 < tool <= busy + ROUNDING, where
            # other is max(0, busy - tool - irq - softirq): a floor that cannot fall below 0
            # or above busy - tool by construction, so its bounds test nothing here.
