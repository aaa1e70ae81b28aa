"""``--plan`` of the shipped Windows profiles on the lab's inventory made Windows (every
host ``os: windows``, as README's --plan section says): five pairs over two hosts, so
each host reboots thirty times in one plan. A plan that waited for a reboot without end
(the planning host's boot time once stopped changing after nine boots) fills the memory;
here it must end, and show each reboot once with the bounds of its wait.

Bounded without a clock: the planning host answers a reboot's first probe with a new
boot time, and a second probe for one restart stops the plan (PlanLoopError); the
platform's own wait is bounded by a count of probes as well as by time.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nicbench.tools.registry import CATALOG
from nicbench.config.loader import load_inventory, load_profile
from nicbench.execution.ossettings import registry_key
from nicbench.execution.plan import PlanLoopError, Sent, make_plan, render
from nicbench.platforms.fake_windows import FakeWindowsHost
from nicbench.platforms.windows import WindowsPlatform

ROOT = Path(__file__).resolve().parents[2]
WINDOWS_PROFILES = sorted(p.name for p in (ROOT / "profiles").glob("ixbt-*-windows.yaml"))
REGISTRY = "Tcpip\\Parameters'"
PROBE = "Win32_OperatingSystem).LastBootUpTime"      # the boot time alone


@pytest.fixture(scope="module")
def windows_inventory(tmp_path_factory):
    text = (ROOT / "inventory.yaml").read_text()
    assert "os: linux" in text
    path = tmp_path_factory.mktemp("inv") / "inventory.yaml"
    path.write_text(text.replace("os: linux", "os: windows"))
    return load_inventory(path, CATALOG)


def test_the_three_windows_profiles_are_shipped():
    assert WINDOWS_PROFILES == ["ixbt-2002-10-windows.yaml", "ixbt-2003-01-windows.yaml",
                                "ixbt-2003-02-windows.yaml"]


@pytest.mark.parametrize("name", WINDOWS_PROFILES)
def test_a_windows_profile_plans_its_registry_one_reboot_per_group_and_the_restore(
        name, windows_inventory):
    profile = load_profile(ROOT / "profiles" / name, CATALOG)
    plan = make_plan(profile, windows_inventory)
    assert len(plan.pairs) == 5 and len(windows_inventory.hosts) == 2
    groups = list(dict.fromkeys(registry_key(p) for p in profile.points if p.registry))
    assert len(groups) == 2

    for pair in plan.pairs:
        for host in ("nb-a", "nb-b"):
            sent = [s for s in plan.sent if s.host == host and s.where.split()[0] == pair]
            cmds = [s.command for s in sent]
            reboots = [i for i, c in enumerate(cmds) if "'shutdown.exe' '/r'" in c]
            # One reboot per registry group, then the one the restore needs.
            assert len(reboots) == len(groups) + 1, (pair, host)
            for i in reboots:
                # ... each waited for with one probe, shown with its bounds
                probe = cmds[i + 1]
                assert probe.startswith("# wait for the reboot"), (pair, host)
                assert PROBE in probe
                assert f"at most {profile.reboot_timeout_s:g} s (reboot_timeout_s)" in probe
                assert not [c for c in cmds[i + 2:i + 3] if PROBE in c]
            # Every group's values written before its reboot, in the order of the groups.
            last = -1
            for group, reboot in zip(groups, reboots, strict=False):
                for key, value in group:
                    at = _index(cmds, REGISTRY, f"$Name = '{key}'", f"$Data = '{value}'")
                    assert last < at < reboot, (pair, host, key)
                last = reboot
            # The restore: every value the run wrote deleted (absent before), then the
            # reboot they need, the pair's last.
            names = {key for group in groups for key, _ in group}
            for key in names:
                deleted = _index(cmds, REGISTRY, f"$Name = '{key}'", "$Kind = ''\n")
                assert reboots[-2] < deleted < reboots[-1], (pair, host, key)
    assert any("wait for the reboot" in line for line in render(plan))


def _index(cmds: list[str], *words: str) -> int:
    return next(i for i, c in enumerate(cmds) if all(w in c for w in words))


def test_a_reboot_wait_that_loops_stops_the_plan_instead_of_filling_the_memory(
        monkeypatch, windows_inventory):
    # The old fault: a boot time that stops changing. The plan ends at the second probe.
    monkeypatch.setattr(FakeWindowsHost, "boot_time",
                        property(lambda self: "2026-01-09T06:00:00.0000000Z"))
    monkeypatch.setattr(WindowsPlatform, "PROBE_INTERVAL_S", 0.0)
    profile = load_profile(ROOT / "profiles" / "ixbt-2003-01-windows.yaml", CATALOG)
    with pytest.raises(PlanLoopError, match="second probe"):
        make_plan(profile, windows_inventory)


def test_the_plan_shows_the_profile_s_reboot_timeout(tmp_path, windows_inventory):
    text = (ROOT / "profiles" / "ixbt-2003-02-windows.yaml").read_text()
    path = tmp_path / "w.yaml"
    path.write_text(text + "reboot_timeout_s: 600\n")
    plan = make_plan(load_profile(path, CATALOG), windows_inventory, pairs=["gbe"])
    notes = [s for s in plan.sent if s.command.startswith("# wait for the reboot")]
    assert notes and all(_first_line(s) == (
        "# wait for the reboot: this probe repeated every 5 s (each at most 10 s) until "
        "the boot time changes: at most 600 s (reboot_timeout_s) and 121 probes")
        for s in notes)


def _first_line(s: Sent) -> str:
    return s.command.split("\n", 1)[0]
