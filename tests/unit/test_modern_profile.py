"""``profiles/modern.yaml`` kept honest without running it (a run is about 15 minutes on
the lab): it validates, its plan on the lab's inventory fits the time README states, and
every new test's command is in the plan, at MTU 1500 only.
"""

from __future__ import annotations

import re
from pathlib import Path

from nicbench.config.loader import load_inventory, load_profile
from nicbench.execution.plan import make_plan, render
from nicbench.tools.registry import CATALOG

REPO = Path(__file__).resolve().parents[2]
BUDGET_S = 15 * 60        # README, "profiles": modern "in about 15 minutes"

NEW = {   # test -> what its client command must say
    "rtt-udp-64": "sockperf ping-pong -i ",
    "rtt-tcp-64": "sockperf ping-pong --tcp ",
    "rtt-idle": "--bounceback",
    "rtt-loaded": "-P 4",
    "rtt-loaded-bidir": "-P 4 --bidir",
    "tcp-streams8": "-P 8",
    "bidir-streams4": "-P 4 --bidir",
    "smallpkt": "-l 18 -u",        # a 64-byte frame's UDP payload
}
THEIRS = ("iperf3-tcp", "iperf2-tcp", "netpipe")


def test_modern_plans_every_test_within_its_budget():
    prof = load_profile(REPO / "profiles" / "modern.yaml", CATALOG)
    inventory = load_inventory(REPO / "inventory.yaml", CATALOG)
    plan = make_plan(prof, inventory)
    assert plan.pairs == ["gbe", "pci32", "nojumbo", "stall", "fe"]
    assert 10 * 60 <= plan.estimate_s <= BUDGET_S, plan.estimate_s
    where = [(s.where.split(), s.command) for s in plan.sent]
    ran = {(w[1], w[2]) for w, _ in where if len(w) > 3}
    for pair in plan.pairs:
        for test, words in NEW.items():
            cmds = [c for w, c in where if w[:3] == [pair, "mtu1500", test]]
            assert any(words in c for c in cmds), (pair, test)
    assert {test for point, test in ran if point == "mtu9000"} == set(THEIRS)
    assert {test for point, test in ran if point == "mtu1500"} >= set(NEW) | set(THEIRS)
    lines = render(plan)
    assert re.match(r"estimated time: \d+ min", lines[1])
    assert any(ln.startswith("only at mtu1500: rtt-udp-64") for ln in lines)
    # the source cites the reviews' seeds, as lab-roundup.yaml does
    assert "000_c332d93fbfee168a.txt" in prof.source
