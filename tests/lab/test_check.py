"""``nicbench check`` as a user runs it, against the lab: a subprocess, real SSH, real tools."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from clihelp import nicbench

pytestmark = pytest.mark.lab


def in_ns(ns: str, *argv: str) -> str:
    res = subprocess.run(["ip", "netns", "exec", ns, *argv], capture_output=True, text=True,
                         timeout=10)
    return res.stdout + res.stderr


def test_check_of_the_lab_passes(lab, tmp_path):
    proc = nicbench("check", "-i", str(lab.inventory_file), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    lines = proc.stdout.splitlines()
    header = lines[0].split()
    assert header == ["pair", "host", "if", "address", "state", "mtu", "max", "driver", "tools",
                      "reach"]
    links = lab.spec.links()
    assert lines[-1] == f"{len(links)} of {len(links)} pairs ready"
    rows = [l.split() for l in lines[2:-1]]
    assert len(rows) == 2 * len(links)

    # Versions as the tools themselves print them in the host's namespace.
    a = lab.spec.hosts()[0].name
    iperf3 = re.search(r"iperf (\d+\.\d+(?:\.\d+)?)", in_ns(a, "iperf3", "--version")).group(1)
    iperf2 = re.search(r"iperf version (\S+)", in_ns(a, "iperf", "-v")).group(1)
    sockperf = re.search(r"version (\d+\.\d+)", in_ns(a, "sockperf", "--version")).group(1)
    for link in links:
        for host, side in ((link.host_a.name, "a"), (link.host_b.name, "b")):
            row = next(r for r in rows if r[0] == link.pair_name and r[1] == host)
            mtu = int(in_ns(host, "cat", f"/sys/class/net/{link.ifname}/mtu"))
            assert row[2:6] == [link.ifname, link.address(side), "up", str(mtu)]
            # a macvlan adapter is capped by its lower device (the lab's max_mtu); a veth
            # by what the kernel reports for it
            kernel_max = json.loads(in_ns(host, "ip", "-j", "-d", "link", "show",
                                          link.ifname))[0]["max_mtu"]
            assert row[6] == str(link.adapter.max_mtu or kernel_max)
            assert f"iperf3={iperf3}" in row and f"iperf2={iperf2}" in row
            assert f"sockperf={sockperf}" in row
            assert row[-1] == "yes"


def test_check_names_a_pair(lab, tmp_path):
    first = lab.spec.links()[0].pair_name
    proc = nicbench("check", "-i", str(lab.inventory_file), first, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "1 of 1 pairs ready"
    proc = nicbench("check", "-i", str(lab.inventory_file), "nosuchpair", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("nicbench: error: unknown pair 'nosuchpair' (pairs in ")


def test_check_with_an_unknown_key_exits_2_naming_file_line_and_key(lab, tmp_path):
    text = lab.inventory_file.read_text()
    lines = text.splitlines(keepends=True)
    at = next(i for i, l in enumerate(lines) if l.strip().startswith("known_hosts:"))
    lines.insert(at + 1, "      known_host: typo\n")
    bad = tmp_path / "inventory.yaml"
    bad.write_text("".join(lines))
    proc = nicbench("check", "-i", "inventory.yaml", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == (f"nicbench: error: inventory.yaml:{at + 2}: hosts[0].ssh.known_host: "
                           "unknown key 'known_host' (allowed: port, user, key_file, known_hosts, "
                           "connect_timeout_s, reconnect_s, config, alias, proxy_jump, "
                           "allow_agent, identities_only)\n")
    assert proc.stdout == ""


def test_check_reports_a_host_that_is_down(lab, tmp_path):
    # A copy of the inventory whose first host points at an address nobody answers on
    # (inside that host's own management /24, so nothing leaves the machine).
    host = lab.spec.hosts()[0]
    text = lab.inventory_file.read_text()
    assert text.count(f"address: {host.address}\n") == 1
    text = text.replace(f"address: {host.address}\n", f"address: {host.mgmt_net}.77\n")
    text = text.replace("    ssh:\n", "    ssh:\n      connect_timeout_s: 2\n", 1)
    inv = tmp_path / "down.yaml"
    inv.write_text(text)
    proc = nicbench("check", "-i", str(inv), lab.spec.links()[0].pair_name, cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[-1] == "0 of 1 pairs ready"
    problems = proc.stderr.splitlines()
    assert problems and all(p.startswith("nicbench: problem: ") for p in problems)
    assert f"{host.mgmt_net}.77:22" in problems[0]
    assert "Traceback" not in proc.stderr
