"""With another lab prefix (NICBENCH_LAB_PREFIX), `nicbench run` uses that lab's own
inventory by default, and says so; without one it says what to pass. Run as a user runs
it: the CLI in a fresh directory, the lab's inventory written by `nicbench lab inventory`
(no lab needs to be up for --plan)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NICBENCH = [sys.executable, "-m", "nicbench.cli"]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("NICBENCH_LAB_") and k != "COLUMNS"}
    return {**env, **extra}


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(NICBENCH + args, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=180)


def test_another_prefix_runs_on_its_own_labs_inventory(tmp_path):
    env = _env(NICBENCH_LAB_PREFIX="hhq", NICBENCH_LAB_SLOT="12")
    inv = _run(["lab", "inventory"], tmp_path, env)
    assert inv.returncode == 0, inv.stderr
    (tmp_path / ".lab").mkdir()
    (tmp_path / ".lab" / "inventory.yaml").write_text(inv.stdout)
    plan = _run(["run", str(REPO / "profiles" / "quick.yaml"), "--plan"], tmp_path, env)
    assert plan.returncode == 0, plan.stderr
    assert plan.stdout.splitlines()[0] == (
        "inventory: .lab/inventory.yaml (the lab of NICBENCH_LAB_PREFIX=hhq; -i FILE for "
        "another)")
    assert "== hhq-a" in plan.stdout            # the plan's commands go to that lab's hosts


def test_without_the_labs_inventory_the_message_says_what_to_pass(tmp_path):
    env = _env(NICBENCH_LAB_PREFIX="hhq")
    plan = _run(["run", str(REPO / "profiles" / "quick.yaml"), "--plan"], tmp_path, env)
    assert plan.returncode != 0
    assert "no lab inventory at .lab/inventory.yaml" in plan.stderr
    assert "pass -i FILE" in plan.stderr and "Traceback" not in plan.stderr
