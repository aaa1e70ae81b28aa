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


# -- a campaign file: validate runs every check `campaign --plan` runs (issue 19) ---------
def _campaign(tmp_path: Path, inventory: str | None, pairs: str = "[gbe]") -> Path:
    shutil.copy(ROOT / "profiles" / "quick.yaml", tmp_path / "quick.yaml")
    shutil.copy(ROOT / "inventory.yaml", tmp_path / "lab.yaml")
    path = tmp_path / "night.yaml"
    path.write_text("name: night\n" + (f"inventory: {inventory}\n" if inventory else "")
                    + f"runs:\n  - profile: quick.yaml\n    pairs: {pairs}\n")
    return path


def _errors(capsys, *argv: str) -> tuple[int, list[str]]:
    rc, _out, err = in_process(capsys, *argv)
    assert "Traceback" not in err
    return rc, err.splitlines()


@pytest.mark.parametrize("inventory, pairs, expected", [
    ("lab.yaml", "[gbe, nosuch]",
     ["night.yaml:5: runs[0].pairs[1]: unknown pair 'nosuch' (pairs in lab.yaml: gbe, pci32, "
      "nojumbo, stall, fe)"]),
    ("lab.yaml", "[nosuch]",
     ["night.yaml:5: runs[0].pairs[0]: unknown pair 'nosuch' (pairs in lab.yaml: gbe, pci32, "
      "nojumbo, stall, fe)"]),
    ("quick.yaml", "[gbe]", ["night.yaml:2: inventory: 'quick.yaml' is a profile, not an "
                             "inventory"]),
    ("night.yaml", "[gbe]", ["night.yaml:2: inventory: 'night.yaml' is a campaign, not an "
                             "inventory"]),
    ("nosuch.yaml", "[gbe]", ["night.yaml:2: inventory: 'nosuch.yaml': file not found"]),
], ids=["unknown-pair", "only-unknown-pairs", "a-profile", "a-campaign", "missing"])
def test_validate_refuses_a_campaign_exactly_as_campaign_plan_does(
        tmp_path, capsys, monkeypatch, inventory, pairs, expected):
    monkeypatch.chdir(tmp_path)
    path = _campaign(tmp_path, inventory, pairs)
    rc, errors = _errors(capsys, "validate", str(path))
    assert rc == 2
    assert len(errors) == len(expected)
    for line, want in zip(errors, expected, strict=True):
        assert line.startswith(f"nicbench: error: {want}"), line
    # the same lines, word for word, from the command that would run it
    rc_plan, plan_errors = _errors(capsys, "campaign", str(path), "--plan")
    assert (rc_plan, plan_errors) == (rc, errors)


def test_validate_checks_a_campaign_against_the_inventory_it_would_run_on(
        tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = _campaign(tmp_path, None, "[fe]")
    # no inventory: in the file and none here: the campaign could not start, nor is it ok
    rc, errors = _errors(capsys, "validate", str(path))
    assert rc == 2 and errors == [
        "nicbench: error: inventory.yaml: file not found (check the path; for the local lab "
        "the repository's inventory.yaml works after `nicbench lab up`)"]
    rc, out, err = in_process(capsys, "validate", str(path), "-i", "lab.yaml")
    assert (rc, err) == (0, "")
    assert out == f"{path}: ok (campaign night: 1 run (quick), up to 1 pairs at once)\n"
    small = tmp_path / "small.yaml"
    small.write_text((ROOT / "inventory.yaml").read_text().replace("  - name: fe\n",
                                                                     "  - name: fast-e\n"))
    rc, errors = _errors(capsys, "validate", str(path), "-i", str(small))
    assert rc == 2 and errors[0].startswith(
        "nicbench: error: night.yaml:4: runs[0].pairs[0]: unknown pair 'fe'")
