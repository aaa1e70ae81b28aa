"""The pure parsers of platforms/linux.py on captured real output, and LinuxPlatform on top
of them over a FakeConnection that replays those captures.

Cases are data: every ``data/linux_cases/*.yaml`` holds a list of
``{input, section?, parser, args?, expected, length?}``; adding a case is adding a list item.
``section`` picks one command's output out of a multi-command capture: the lines after the
line equal to it, up to the next ``$ ``/``+ `` command line or ``rc=`` line.
``expected`` is compared as a subset for mappings (and dataclasses), element by element for
lists, exactly for everything else. See data/README.md for where each file came from.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
from pathlib import Path
from typing import Any

import pytest
import yaml

from nicbench.errors import TuningError
from nicbench.platforms import linux
from nicbench.platforms.base import CpuTimes
from nicbench.platforms.linux import LinuxPlatform
from nicbench.remote.fake import FakeConnection
from nicbench.remote.local import LocalConnection

DATA = Path(__file__).parent / "data"


def read(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def section(text: str, header: str) -> str:
    lines = text.splitlines()
    start = lines.index(header) + 1
    out = []
    for line in lines[start:]:
        if line.startswith(("$ ", "+ ", "rc=")):
            break
        out.append(line)
    return "\n".join(out) + "\n"


def _cases():
    for path in sorted((DATA / "linux_cases").glob("*.yaml")):
        for i, case in enumerate(yaml.safe_load(path.read_text())):
            yield pytest.param(case, id=f"{path.stem}[{i}]-{Path(case['input']).name}")


def assert_matches(actual: Any, expected: Any, where: str = "") -> None:
    if dataclasses.is_dataclass(actual):
        actual = dataclasses.asdict(actual)
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{where}: {actual!r} is not a mapping"
        for key, value in expected.items():
            assert key in actual, f"{where}.{key} missing (have {sorted(actual)})"
            assert_matches(actual[key], value, f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), \
            f"{where}: {actual!r} vs {expected!r}"
        for i, (a, e) in enumerate(zip(actual, expected, strict=False)):
            assert_matches(a, e, f"{where}[{i}]")
    else:
        assert (actual == expected and type(actual) is type(expected)) or \
            (isinstance(expected, (int, float)) and not isinstance(expected, bool)
             and actual == pytest.approx(expected)), f"{where}: {actual!r} != {expected!r}"


@pytest.mark.parametrize("case", list(_cases()))
def test_parser_case(case):
    known = {"input", "section", "parser", "args", "expected", "length"}
    assert set(case) <= known, f"unknown case keys {set(case) - known}"
    text = read(case["input"])
    if "section" in case:
        text = section(text, case["section"])
    parse = getattr(linux, case["parser"])
    result = parse(text, *case.get("args", []))
    assert_matches(result, case["expected"], case["parser"])
    if "length" in case:
        assert len(result) == case["length"]


def test_cases_exist_for_every_parser():
    used = {case.values[0]["parser"] for case in _cases()}
    assert used == {"parse_ethtool_i", "parse_ethtool_k", "parse_proc_stat",
                    "parse_ip_link_json", "mtu_refusal", "parse_host_facts", "parse_tc_qdisc"}


def test_ethtool_k_text_agrees_with_ethtool_json_of_the_same_nic():
    # Two independent outputs of the same NIC: the text parser must read exactly what
    # ethtool's own JSON says is active, for every feature.
    text = section(read("linux_ethtool_eth0_virtio.txt"), "$ ethtool -k eth0")
    from_json = {name: feature["active"]
                 for name, feature in json.loads(read("linux_ethtool_json_k_eth0.json"))[0].items()
                 if isinstance(feature, dict)}
    assert linux.parse_ethtool_k(text) == from_json


def test_cpu_busy_percent_between_two_snapshots():
    first = linux.parse_proc_stat(read("lab/proc_stat_1.txt"))
    second = linux.parse_proc_stat(read("lab/proc_stat_2.txt"))
    # busy 42250 -> 42252, total 232337 -> 232539: 2 of 202 jiffies busy
    assert second.busy_pct_since(first) == pytest.approx(100 * 2 / 202)
    assert first.busy_pct_since(second) is None          # time must move forward
    assert first.busy_pct_since(first) is None


def test_proc_stat_without_a_cpu_line_is_refused():
    mpstat = section(read("linux_cpu_sysctl.txt"), "$ LC_ALL=C mpstat 1 1")
    with pytest.raises(ValueError, match="no 'cpu ' line"):
        linux.parse_proc_stat(mpstat)


def test_ip_link_json_of_nothing_is_refused():
    with pytest.raises(ValueError):
        linux.parse_ip_link_json("[]", "gone")


def test_mtu_refusal_without_any_message():
    assert linux.mtu_refusal("", "") == "refused without a message"
    assert linux.mtu_refusal("", "SIOCSIFMTU: Invalid argument\n") == "SIOCSIFMTU: Invalid argument"


# -- LinuxPlatform over replayed captures ----------------------------------------------
def replay(replies: dict[str, tuple[str, str, int]]) -> tuple[FakeConnection, LinuxPlatform]:
    """A platform whose host answers exactly-matching commands with captured output."""

    def handler(argv):
        shown = " ".join(argv)
        if shown not in replies:
            raise AssertionError(f"unexpected command {shown!r}")
        return replies[shown]

    conn = FakeConnection("nbt-a", handler=handler)
    return conn, LinuxPlatform(conn)


def test_interface_facts_of_a_macvlan_take_max_mtu_from_its_lower_device():
    _conn, plat = replay({
        "ip -j -d addr show dev nojumbo": (read("lab/ip_addr_nojumbo_macvlan.json"), "", 0),
        "ip -j -d addr show dev nojumbop": (read("lab/ip_addr_nojumbop_veth.json"), "", 0),
        "ethtool -i nojumbo": (read("lab/ethtool_i_nojumbo_macvlan.txt"), "", 0),
        "ethtool -k nojumbo": (read("lab/ethtool_k_nojumbo_macvlan.txt"), "", 0),
        "tc qdisc show dev nojumbop": (read("lab/tc_qdisc_nojumbop.txt"), "", 0),
    })
    facts = plat.interface_facts("nojumbo")
    # the macvlan's own qdisc is noqueue (not asked); the veth under it is shaped
    assert facts.shaping == "tbf rate 1gbit"
    assert (facts.mtu, facts.max_mtu, facts.kind, facts.lower) == (1500, 1500, "macvlan", "nojumbop")
    assert (facts.driver, facts.driver_version, facts.bus_info) == ("macvlan", "0.1", None)
    assert (facts.state, facts.carrier, facts.addresses) == ("up", True, ("198.18.1.1",))
    assert facts.offloads == {"rx-checksumming": True, "tx-checksumming": True,
                              "scatter-gather": True, "tcp-segmentation-offload": True,
                              "generic-segmentation-offload": False,
                              "generic-receive-offload": False}


def test_interface_facts_of_a_veth():
    _, plat = replay({
        "ip -j -d addr show dev gbe": (read("lab/ip_addr_gbe_veth.json"), "", 0),
        "ethtool -i gbe": (read("lab/ethtool_i_gbe_veth.txt"), "", 0),
        "ethtool -k gbe": (read("lab/ethtool_k_gbe_veth.txt"), "", 0),
        "tc qdisc show dev gbe": (read("lab/tc_qdisc_gbe_shaped_500mbit.txt"), "", 0),
    })
    facts = plat.interface_facts("gbe")
    assert facts.shaping == "tbf rate 500mbit"
    assert (facts.mtu, facts.max_mtu, facts.kind, facts.lower) == (1500, 65535, "veth", None)
    assert (facts.driver, facts.driver_version) == ("veth", "1.0")
    assert facts.offloads["tcp-segmentation-offload"] is False


def test_shaping_is_unknown_when_tc_fails_and_never_asked_without_a_shaping_qdisc():
    conn, plat = replay({
        "ip -j -d addr show dev pci32": (read("lab/ip_addr_pci32_veth.json"), "", 0),
        "ethtool -i pci32": ("", "", 71),
        "ethtool -k pci32": ("", "", 1),
        "tc qdisc show dev pci32": ("", read("lab/tc_qdisc_nosuch.stderr"), 1),
    })
    assert plat.interface_facts("pci32").shaping is None
    assert "tc qdisc show dev pci32" in conn.commands
    # v0's root qdisc is noqueue, which shapes nothing: no tc command is sent for it
    conn, plat = replay({
        "ip -j -d addr show dev v0": (section(read("linux_mtu_errors.txt"),
                                              "+ ip -j link show v0"), "", 0),
        "ip -j -d addr show dev v1": ("", 'Device "v1" does not exist.\n', 1),
        "ethtool -i v0": ("", "", 71), "ethtool -k v0": ("", "", 1)})
    assert plat.interface_facts("v0").shaping is None
    assert not any(c.startswith("tc ") for c in conn.commands)


def test_interface_without_carrier():
    _, plat = replay({
        "ip -j -d addr show dev v0": (section(read("linux_mtu_errors.txt"),
                                              "+ ip -j link show v0"), "", 0),
        "ip -j -d addr show dev v1": ("", 'Device "v1" does not exist.\n', 1),
        "ethtool -i v0": ("", "", 71),
        "ethtool -k v0": ("", "", 1),
    })
    facts = plat.interface_facts("v0")
    # the lower device is unknown here, so max_mtu stays what v0 itself reports (nothing)
    assert (facts.state, facts.carrier, facts.max_mtu, facts.driver) == \
        ("lowerlayerdown", False, None, None)


def test_missing_interface_is_a_tuning_error_with_ips_words():
    _, plat = replay({"ip -j -d addr show dev nosuch": ("", read("lab/ip_addr_nosuch.stderr"), 1)})
    with pytest.raises(TuningError) as info:
        plat.interface_facts("nosuch")
    assert info.value.kernel_message == 'Device "nosuch" does not exist.'


def test_mtu_of_a_missing_interface_is_a_tuning_error_with_cats_words():
    stderr = read("lab/cat_sysfs_mtu_nosuch.stderr")
    _, plat = replay({"cat /sys/class/net/nosuch/mtu": ("", stderr, 1)})
    with pytest.raises(TuningError) as info:
        plat.get_mtu("nosuch")
    assert info.value.kernel_message == stderr.strip()
    assert info.value.kernel_message.endswith("No such file or directory")


def test_mtu_set_with_ifconfig_is_read_back_from_sysfs():
    # Hosts without iproute2: ifconfig sets it, sysfs (not `ip`) reads it back.
    conn, plat = replay({
        "sh -c command -v ip": ("", "", 1),
        "ifconfig v0 mtu 9000 up": ("", "", 0),
        "cat /sys/class/net/v0/mtu": ("9000\n", "", 0),
    })
    plat.set_mtu("v0", 9000)
    assert conn.commands[-2:] == ["ifconfig v0 mtu 9000 up", "cat /sys/class/net/v0/mtu"]


def test_refused_mtu_carries_the_kernel_message_verbatim():
    refusal = read("lab/ip_link_set_nojumbo_mtu9000.stderr")
    _conn, plat = replay({
        "sh -c command -v ip": ("/usr/bin/ip\n", "", 0),
        "ip link set dev nojumbo mtu 9000": ("", refusal, 2),
    })
    with pytest.raises(TuningError) as info:
        plat.set_mtu("nojumbo", 9000)
    assert info.value.kernel_message == refusal.strip() == "RTNETLINK answers: Invalid argument"
    assert (info.value.host, info.value.setting, info.value.value) == ("nbt-a", "MTU of nojumbo", 9000)


def test_mtu_set_with_ifconfig_when_ip_is_missing():
    refusal = section(read("linux_mtu_errors.txt"), "+ ifconfig v0 mtu 70000 up")
    conn, plat = replay({
        "sh -c command -v ip": ("", "", 1),
        "ifconfig v0 mtu 70000 up": ("", refusal, 1),
    })
    with pytest.raises(TuningError) as info:
        plat.set_mtu("v0", 70000)
    assert info.value.kernel_message == "SIOCSIFMTU: Invalid argument"
    assert conn.commands[-1] == "ifconfig v0 mtu 70000 up"


def test_sysctl_read_back_ignores_tabs_versus_spaces():
    tcp_rmem = section(read("linux_cpu_sysctl.txt"), "$ sysctl -n net.ipv4.tcp_rmem")
    assert "\t" in tcp_rmem
    _, plat = replay({
        "sysctl -w net.ipv4.tcp_rmem=4096 131072 33554432": ("", "", 0),
        "sysctl -n net.ipv4.tcp_rmem": (tcp_rmem, "", 0),
    })
    assert plat.get_sysctl("net.ipv4.tcp_rmem") == "4096\t131072\t33554432"
    plat.set_sysctl("net.ipv4.tcp_rmem", "4096 131072 33554432")     # no error: same value


def test_unknown_sysctl_is_a_tuning_error_with_sysctls_words():
    out = section(read("linux_cpu_sysctl.txt"), "$ sysctl net.ipv4.no_such_key")
    _, plat = replay({"sysctl -w net.ipv4.no_such_key=1": ("", out, 1)})
    with pytest.raises(TuningError) as info:
        plat.set_sysctl("net.ipv4.no_such_key", "1")
    assert info.value.kernel_message == ("sysctl: cannot stat /proc/sys/net/ipv4/no_such_key: "
                                         "No such file or directory")


def test_cpu_times_reads_the_first_line():
    _, plat = replay({"head -n 1 /proc/stat": (read("lab/proc_stat_1.txt"), "", 0)})
    # user nice system idle iowait irq softirq steal: irq 0 and softirq 13063 read apart
    assert plat.cpu_times() == CpuTimes(busy=42250.0, total=232337.0, irq=0.0, softirq=13063.0)


def test_host_facts_of_this_machine_asked_once_per_host():
    # The probe's own script, run here for real; the facts must be this machine's.
    def here(argv):
        res = LocalConnection().run(argv, warn=True)
        return res.stdout, res.stderr, res.exit_status

    conn = FakeConnection("nbt-a", handler=here)
    plat = LinuxPlatform(conn)
    facts = plat.host_facts()
    assert (facts.kernel, facts.hostname) == (os.uname().release, socket.gethostname())
    assert facts.cpus == len(os.sched_getaffinity(0))          # what nproc counts
    with open("/proc/meminfo", encoding="ascii") as fh:
        total_kb = int(next(line for line in fh if line.startswith("MemTotal:")).split()[1])
    assert facts.memory_bytes == total_kb * 1024
    with open("/proc/cpuinfo", encoding="utf-8") as fh:
        model = next((line.split(":", 1)[1].strip() for line in fh
                      if line.startswith("model name")), None)
    assert facts.cpu_model == model
    assert plat.host_facts() is facts and len(conn.calls) == 1


def test_host_facts_a_host_cannot_say_are_not_recorded():
    # a host without /proc/meminfo or a "model name" line (ARM's /proc/cpuinfo has none)
    facts = linux.parse_host_facts("6.1.0-18-arm64\nboard\n4\n\n\n")
    assert (facts.cpus, facts.cpu_model, facts.memory_bytes) == (4, None, None)
    # what --plan's planned host answers: only the kernel and the name
    facts = linux.parse_host_facts("(planned)\nnbr-a\n\n\n")
    assert (facts.kernel, facts.hostname, facts.memory_bytes) == ("(planned)", "nbr-a", None)
    assert linux.parse_meminfo_total("MemTotal:       24684084 kB") == 24684084 * 1024
    assert linux.parse_meminfo_total("MemFree:       1 kB") is None
    assert linux.parse_os_release_name("PRETTY_NAME='Alpine Linux v3.19'") == "Alpine Linux v3.19"
    assert linux.parse_os_release_name("PRETTY_NAME=Gentoo") == "Gentoo"
    assert linux.parse_os_release_name('NAME="Debian GNU/Linux"') is None
    assert linux.parse_os_release_name("") is None
