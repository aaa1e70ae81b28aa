"""``nicbench validate``: every shipped file is valid, problems of several files are all
reported, and the rules of what a file may ask for apply to new runs, not to runs saved
before them (a manifest is read back with the rules that held when it was written).

The bad files themselves are the corpus's (tests/badinput); these tests cover what the
corpus does not: exit 0 and its lines, several files at once, the kinds told apart.
"""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path

import pytest
from clihelp import in_process

from nicbench.config.loader import load_profile
from nicbench.tools.registry import CATALOG
from nicbench.errors import ConfigError
from nicbench.results.manifest import Manifest

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = [ROOT / "inventory.yaml", *sorted((ROOT / "profiles").glob("*.yaml"))]
BASE_RUN = ROOT / "tests" / "badinput" / "results" / "base"


@pytest.fixture(autouse=True)
def _keep_sigterm():
    old = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, old)


def test_every_shipped_inventory_and_profile_is_valid(capsys):
    rc, out, err = in_process(capsys, "validate", *map(str, SHIPPED))
    assert (rc, err) == (0, "")
    lines = out.splitlines()
    assert len(lines) == len(SHIPPED)
    for path, line in zip(SHIPPED, lines, strict=False):
        kind = "inventory" if path.name == "inventory.yaml" else \
            f"campaign {path.stem}" if "\nruns:" in path.read_text() else f"profile {path.stem}"
        assert line.startswith(f"{path}: ok ({kind}"), line


def test_all_files_are_checked_and_each_problem_is_a_line(tmp_path, capsys):
    good = tmp_path / "good.yaml"
    shutil.copy(ROOT / "profiles" / "quick.yaml", good)
    bad_inv = tmp_path / "inv.yaml"
    bad_inv.write_text((ROOT / "inventory.yaml").read_text()
                       .replace("hosts:\n", "hosts:\n  - name: x\n", 1))
    neither = tmp_path / "notes.yaml"
    neither.write_text("todo: [buy cables]\n")
    rc, out, err = in_process(capsys, "validate", str(bad_inv), str(good), str(neither))
    assert rc == 2
    assert out == f"{good}: ok (profile quick: 2 points, 3 tests, platform linux)\n"
    errors = err.splitlines()
    assert all(e.startswith("nicbench: error: ") for e in errors)
    assert any(e.startswith(f"nicbench: error: {bad_inv}:") for e in errors)
    assert errors[-1] == (f"nicbench: error: {neither}:1: neither an inventory (hosts:, "
                          "adapters:, pairs:) nor a profile (tests:, source:, mtu: or "
                          "points:)")


RULES = {"sysctl": {"kernel.numa_balancing": 0, "kernel.sched_min_granularity_ns": 1000000}}


def test_a_saved_run_is_read_back_with_the_rules_of_its_time(tmp_path):
    """A run made with a sysctl outside the allow-list, a label with a space and a tools:
    key nicbench does not know reads back; the same profile is refused for a new run."""
    manifest = json.loads((BASE_RUN / "manifest.json").read_text())
    manifest["profile"]["sysctl"] = RULES["sysctl"]
    manifest["profile"]["points"][0]["label"] = "std frames"
    manifest["inventory"]["hosts"][0]["tools"] = {"iperf": "/usr/bin/iperf"}
    saved = tmp_path / "manifest.json"
    saved.write_text(json.dumps(manifest))
    read = Manifest.read(saved)
    assert read.profile.sysctl["kernel.sched_min_granularity_ns"] == 1000000
    assert read.profile.points[0].name == "std frames"

    profile = tmp_path / "p.yaml"
    profile.write_text(json.dumps({k: v for k, v in manifest["profile"].items()
                                   if v is not None}))
    with pytest.raises(ConfigError) as info:
        load_profile(profile, CATALOG)
    lines = info.value.lines()
    assert any("kernel.sched_min_granularity_ns': a profile may set net.* sysctls only"
               in line for line in lines), lines
    assert any("'std frames' is not a valid name" in line for line in lines), lines
    assert not any("sysctl.kernel.numa_balancing:" in line for line in lines)   # allowed
