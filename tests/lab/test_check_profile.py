"""``nicbench check --profile`` against the session lab: a subprocess, real SSH, real tools.

The lab's adapters that refuse jumbo MTUs (a macvlan over a 1500-MTU veth) must come out as
"will be skipped" lines for the profile's larger MTUs, not as problems; a profile whose tool
is missing is a problem; a Windows profile is refused in one line.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from clihelp import nicbench

from nicbench.config.loader import load_profile
from nicbench.tools.registry import CATALOG

pytestmark = pytest.mark.lab

ROOT = Path(__file__).resolve().parents[2]
ROUNDUP = ROOT / "profiles" / "lab-roundup.yaml"


def test_check_profile_lab_roundup_is_ready_and_lists_the_mtus_each_adapter_skips(lab, tmp_path):
    profile = load_profile(ROUNDUP, CATALOG)
    proc = nicbench("check", "-i", str(lab.inventory_file), "--profile", str(ROUNDUP),
                    cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    lines = proc.stdout.splitlines()
    links = lab.spec.links()
    assert lines[-1] == f"{len(links)} of {len(links)} pairs ready to run lab-roundup"
    table = lines[2:2 + 2 * len(links)]
    assert [row.split()[0] for row in table] == [l.pair_name for l in links for _ in "ab"]
    skips = lines[2 + 2 * len(links):-1]
    expected = []
    for link in links:
        limit = link.adapter.max_mtu
        if limit is None:
            continue     # takes every MTU up to 65535 (the stall card fails later, in run)
        over = [p.name for p in profile.points if p.ip_mtu > limit]
        expected.append(f"{link.pair_name}: {' '.join(over)} will be skipped (largest MTU: "
                        f"{link.host_a.name} {link.ifname} {limit}, "
                        f"{link.host_b.name} {link.ifname} {limit})")
    assert skips == expected
    if any(l.adapter.key == "nojumbo" for l in links):
        assert any(s.startswith("nojumbo: mtu6000 mtu9000 mtu16000 will be skipped")
                   for s in skips)


def test_check_profile_whose_tool_is_missing_is_a_problem(lab, tmp_path):
    # netio is not packaged in Debian, so the lab has none.
    first = lab.spec.links()[0]
    proc = nicbench("check", "-i", str(lab.inventory_file), "--profile",
                    str(ROOT / "profiles" / "netio-2002.yaml"), first.pair_name, cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[-1] == "0 of 1 pairs ready to run netio-2002"
    assert proc.stderr.splitlines() == [
        f"nicbench: problem: {first.pair_name}: netio is not installed on {h.name} "
        f"(install it, or set hosts[].tools.netio)" for h in (first.host_a, first.host_b)]


def test_check_profile_refuses_a_windows_profile_on_the_lab_in_one_line(lab, tmp_path):
    proc = nicbench("check", "-i", str(lab.inventory_file), "--profile",
                    str(ROOT / "profiles" / "ixbt-2003-02-windows.yaml"), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert line.startswith("nicbench: error: profile ixbt-2003-02-windows is the windows method")
    assert line.endswith("runs linux: choose a linux profile or a windows pair")
