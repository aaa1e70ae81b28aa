"""The shipped profiles: every one loads, and each carries its review's method.

The expected values below are copied from the review texts (the seed files named in each
profile), not from the profiles: a profile that drifts from its review fails here. The
Windows profiles must be refused on Linux pairs by ``nicbench run`` and ``nicbench check
--profile`` with one line, before any host is contacted.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from clihelp import nicbench

from nicbench.execution.readiness import PairReport, SideReport, will_be_skipped
from nicbench.config.fields import parse_rate, parse_size
from nicbench.config.loader import load_profile
from nicbench.tools.registry import CATALOG
from nicbench.tools.params import resolve

ROOT = Path(__file__).resolve().parents[2]
PROFILES = ROOT / "profiles"
# Profiles only: a campaign file (runs:) ships beside them (lab-overnight).
ALL = sorted(p for p in PROFILES.glob("*.yaml") if "\nruns:" not in p.read_text())

OCT_2002 = "000_c332d93fbfee168a.txt"
JAN_2003 = "003_a9cf776b480dd3eb.txt"
FEB_2003 = "001_e4e0a99af61352c7.txt"
FEB_2003_RU = "002_8873376aa3118a4c.txt"
NETIO = "004_5443acf57e752bd8.txt"

# Linux: "ifconfig eth0 MTU _size_ up" with these sizes.
LINUX_MTUS = {
    "ixbt-2002-10-linux": (OCT_2002, [1500, 6000, 9000, 16128]),
    "ixbt-2003-01-linux": (JAN_2003, [1500, 3000, 6000, 9000, 16128]),
    "ixbt-2003-02-linux": (FEB_2003, [1500, 3000, 6000, 9000, 16000]),
}
# Windows 2000: the adapters' "Jumbo Frame" sizes.
WINDOWS_FRAMES = {
    "ixbt-2002-10-windows": (OCT_2002, [1514, 9014, 16128]),
    "ixbt-2003-01-windows": (JAN_2003, [1514, 3014, 6014, 9014, 16128]),
    "ixbt-2003-02-windows": (FEB_2003, [1514, 3014, 6014, 9014, 16128]),
}
TCPIP_1514 = {"TcpWindowSize": 0xFFFF}
TCPIP_JUMBO = {"TcpWindowSize": 20971520, "Tcp1323Opts": 3}


def load(name: str):
    return load_profile(PROFILES / f"{name}.yaml", CATALOG)


def text(name: str) -> str:
    return (PROFILES / f"{name}.yaml").read_text()


def header(name: str) -> str:
    """The comment block at the top of a profile file."""
    lines = []
    for line in text(name).splitlines():
        if not line.startswith("#"):
            break
        lines.append(line)
    return "\n".join(lines)


def test_the_profiles_directory_has_every_method():
    names = {p.stem for p in ALL}
    assert set(LINUX_MTUS) | set(WINDOWS_FRAMES) | {
        "netio-2002", "netio-2002-iperf2", "lab-roundup", "quick"} <= names


@pytest.mark.parametrize("path", ALL, ids=[p.stem for p in ALL])
def test_every_profile_loads_and_validates(path):
    profile = load_profile(path, CATALOG)
    assert profile.name == path.stem
    assert profile.source.strip()
    assert profile.points and profile.tests


@pytest.mark.parametrize("name,seed", [
    *[(n, s) for n, (s, _) in LINUX_MTUS.items()],
    *[(n, s) for n, (s, _) in WINDOWS_FRAMES.items()],
    ("netio-2002", NETIO), ("netio-2002-iperf2", NETIO),
    ("lab-roundup", OCT_2002), ("lab-roundup", JAN_2003), ("lab-roundup", FEB_2003)])
def test_source_and_header_name_the_review_and_its_section(name, seed):
    profile = load(name)
    assert seed in profile.source
    assert seed in header(name)
    section = "Test Setup" if seed == NETIO else "Testing technique"
    assert section in profile.source and section in header(name)
    # The refusal line quotes the source up to its first ';': the review, not the seed.
    first = profile.source.split(";")[0]
    assert ("iXBT" in first or "Arnold" in first) and ".txt" not in first


def test_feb_2003_profiles_also_name_the_russian_original():
    for name in ("ixbt-2003-02-linux", "ixbt-2003-02-windows"):
        assert FEB_2003_RU in load(name).source and FEB_2003_RU in header(name)


# -- Linux method: netPIPE -b 65535 at the review's MTUs -------------------------------
@pytest.mark.parametrize("name", LINUX_MTUS)
def test_linux_profiles_run_netpipe_with_65535_byte_buffers_at_the_reviews_mtus(name):
    profile = load(name)
    _, mtus = LINUX_MTUS[name]
    assert profile.platform == "linux"
    assert [p.mtu for p in profile.points] == mtus
    assert all(p.frame_size is None and not p.registry for p in profile.points)
    assert [t.tool for t in profile.tests] == ["netpipe"]
    (test,) = profile.tests
    params = resolve(test.params, {})
    assert parse_size(params["buffer"]) == 65535
    # netPIPE's own range and repeat counts, as the reviews used them.
    assert not {"upper", "lower", "repeats", "perturbation"} & set(params)
    # netPIPE was run once per card and MTU: "15 times" is the Windows paragraph's.
    assert profile.repetitions_for(test) == 1


# -- Windows method: iperf 1.2, NTttcp, frame sizes, registry, 15 runs best ---------------
@pytest.mark.parametrize("name", WINDOWS_FRAMES)
def test_windows_frame_sizes_and_registry_values(name):
    profile = load(name)
    _, frames = WINDOWS_FRAMES[name]
    assert profile.platform == "windows"
    assert [p.frame_size for p in profile.points] == frames
    assert [p.ip_mtu for p in profile.points] == [f - 14 for f in frames]
    for p in profile.points:
        assert p.registry == (TCPIP_1514 if p.frame_size == 1514 else TCPIP_JUMBO), p.name


@pytest.mark.parametrize("name", WINDOWS_FRAMES)
def test_windows_iperf_tcp_is_the_reviews_command_15_runs_best(name):
    profile = load(name)
    (tcp,) = [t for t in profile.tests if t.tool == "iperf2" and t.protocol == "tcp"]
    assert profile.repetitions_for(tcp) == 15
    assert profile.select_for(tcp) == "best"
    for p in profile.points:
        params = resolve(tcp.params, p.vars)
        # iperf -c/-s -M 100000 -w 64K|1M -l 24K, -m on the server; iperf 1.2 has no -e.
        assert int(params["mss"]) == 100000
        assert parse_size(params["window"]) == (64 * 1024 if p.frame_size == 1514 else 1024 ** 2)
        assert parse_size(params["length"]) == 24 * 1024
        assert params["print_mss"] is True
        assert params["enhanced"] is False


@pytest.mark.parametrize("name", WINDOWS_FRAMES)
def test_windows_ntttcp_is_the_ddk_command_15_runs_best(name):
    profile = load(name)
    (nt,) = [t for t in profile.tests if t.tool == "ntttcp"]
    assert profile.repetitions_for(nt) == 15 and profile.select_for(nt) == "best"
    for p in profile.points:
        params = resolve(nt.params, p.vars)
        # ntttcpr -m 1,0,<ip> -a 4 -l 256K -n 10000 [-rb 20000000 for jumbo frames]
        assert (params["threads"], params["cpu"], params["async_count"]) == (1, 0, 4)
        assert parse_size(params["length"]) == 256 * 1024
        assert params["count"] == 10000
        if p.frame_size != 1514:
            assert parse_size(params["receive_buffer"]) == 20000000
        else:
            assert "receive_buffer" not in params     # no -rb at 1514, as the review


def test_oct_2002_windows_has_no_udp():
    assert all(t.protocol == "tcp" for t in load("ixbt-2002-10-windows").tests)


@pytest.mark.parametrize("name,method", [("ixbt-2003-01-windows", "sweep"),
                                         ("ixbt-2003-02-windows", "bisect")])
def test_windows_udp_search_200_to_800_in_10_mbit_steps(name, method):
    profile = load(name)
    (udp,) = [t for t in profile.tests if t.protocol == "udp"]
    assert udp.tool == "iperf2"
    s = udp.udp_search
    assert s is not None and s.method == method
    assert (s.start_bps, s.stop_bps, s.step_bps) == (
        parse_rate("200M"), parse_rate("800M"), parse_rate("10M"))
    assert s.trials_per_rate == 1            # only the TCP tests were run 15 times
    tcp = next(t for t in profile.tests if t.tool == "iperf2" and t.protocol == "tcp")
    assert udp.params == tcp.params          # same -M -w -l, plus -u -b


# -- netio method ----------------------------------------------------------------------
def test_netio_profile_is_netio_tcp_10_runs_averaged():
    profile = load("netio-2002")
    assert profile.platform == "any"
    assert profile.repetitions == 10 and profile.select == "mean"
    (test,) = profile.tests
    assert (test.tool, test.protocol) == ("netio", "tcp")
    # netio's own list (1k..32k) is the review's; no other list is asked for.
    assert "block" not in test.params
    assert "1K, 2K, 4K, 8K, 16K and 32K" in header("netio-2002")
    assert [p.mtu for p in profile.points] == [1500]


def test_netio_iperf2_variant_one_test_per_netio_size():
    profile = load("netio-2002-iperf2")
    assert profile.platform == "any"
    assert profile.repetitions == 10 and profile.select == "mean"
    assert all(t.tool == "iperf2" and t.protocol == "tcp" for t in profile.tests)
    lengths = [parse_size(t.params["length"]) for t in profile.tests]
    assert lengths == [k * 1024 for k in (1, 2, 4, 8, 16, 32)]
    assert [t.name for t in profile.tests] == [f"iperf2-{k}k" for k in (1, 2, 4, 8, 16, 32)]
    # The report's netio-style table groups iperf tests that differ only in -l.
    rest = {tuple(sorted((k, v) for k, v in t.params.items() if k != "length"))
            for t in profile.tests}
    assert len(rest) == 1
    assert all(profile.repetitions_for(t) == 10 for t in profile.tests)


# -- the lab's main job ----------------------------------------------------------------
def test_lab_roundup_is_the_linux_method_plus_iperf_15_runs_best():
    profile = load("lab-roundup")
    assert profile.platform == "linux"
    mtus = [p.mtu for p in profile.points]
    assert mtus[0] == 1500 and max(mtus) <= 16128
    every_review = set.intersection(*(set(m) for _, m in LINUX_MTUS.values()))
    assert every_review <= set(mtus) | {16128}
    assert profile.tools() == ("iperf3", "iperf2", "netpipe")
    for t in profile.tests:
        if t.tool in ("iperf2", "iperf3"):
            assert profile.repetitions_for(t) == 15 and profile.select_for(t) == "best"
        else:
            assert parse_size(t.params["buffer"]) == 65535
            assert profile.repetitions_for(t) == 1
    assert profile.give_up_after >= 1


# -- refusal on the wrong OS, before anything is contacted --------------------------------
LINUX_INVENTORY = """\
format_version: 1
hosts:
  - name: lin-a
    address: 127.0.0.1
    os: linux
    ssh: {port: 9, connect_timeout_s: 1, known_hosts: known_hosts}
  - name: lin-b
    address: 127.0.0.1
    os: linux
    ssh: {port: 9, connect_timeout_s: 1, known_hosts: known_hosts}
adapters:
  - id: card
    vendor: test
    model: test card
    driver: {name: e1000e}
pairs:
  - name: p1
    adapter: card
    a: {host: lin-a, interface: eth1, address: 198.18.9.1}
    b: {host: lin-b, interface: eth1, address: 198.18.9.2}
  - name: p2
    adapter: card
    a: {host: lin-a, interface: eth2, address: 198.18.10.1}
    b: {host: lin-b, interface: eth2, address: 198.18.10.2}
"""


def refusal(profile_name: str, host_os: str) -> str:
    p = load(profile_name)
    return (f"nicbench: error: profile {p.name} is the {p.platform} method "
            f"({p.source.split(';')[0]}) but pair p1 host lin-a runs {host_os}: choose a "
            f"{host_os} profile or a {p.platform} pair\n")


@pytest.fixture
def linux_inventory(tmp_path) -> Path:
    inv = tmp_path / "inventory.yaml"
    inv.write_text(LINUX_INVENTORY)
    return inv


@pytest.mark.parametrize("name", WINDOWS_FRAMES)
def test_run_refuses_a_windows_profile_on_linux_pairs_in_one_line(name, linux_inventory,
                                                                  tmp_path):
    out = tmp_path / "results"
    proc = nicbench("run", str(PROFILES / f"{name}.yaml"), "-i", str(linux_inventory),
                    "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == refusal(name, "linux")
    assert not out.exists()      # refused before a results directory or a connection


@pytest.mark.parametrize("name", WINDOWS_FRAMES)
def test_check_refuses_a_windows_profile_on_linux_pairs_in_one_line(name, linux_inventory,
                                                                    tmp_path):
    proc = nicbench("check", "-i", str(linux_inventory), "--profile",
                    str(PROFILES / f"{name}.yaml"), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == refusal(name, "linux")
    assert proc.stdout == ""


def test_check_refuses_a_linux_profile_on_windows_pairs(tmp_path):
    inv = tmp_path / "inventory.yaml"
    inv.write_text(LINUX_INVENTORY.replace("os: linux", "os: windows"))
    proc = nicbench("check", "-i", str(inv), "--profile",
                    str(PROFILES / "lab-roundup.yaml"), "p1", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == refusal("lab-roundup", "windows")


def test_check_with_an_unknown_profile_is_one_error_line(linux_inventory, tmp_path):
    proc = nicbench("check", "-i", str(linux_inventory), "--profile", "nosuch", cwd=tmp_path)
    assert proc.returncode == 2
    assert len(proc.stderr.splitlines()) == 1
    assert proc.stderr.startswith("nicbench: error: nosuch: profile not found")


# -- which MTUs an adapter will skip ---------------------------------------------------
def side(host: str, iface: str, max_mtu: int | None) -> SideReport:
    return SideReport(host=host, interface=iface, address="198.18.9.1", max_mtu=max_mtu)


def test_mtus_above_either_interfaces_max_will_be_skipped():
    profile = load("lab-roundup")
    rep = PairReport(pair="nojumbo", adapter="x", problems=[],
                     sides=[side("a", "nj", 1500), side("b", "nj", 65535)])
    over = [p.name for p in profile.points if p.mtu > 1500]
    assert will_be_skipped(profile, rep) == [
        f"nojumbo: {' '.join(over)} will be skipped (largest MTU: a nj 1500)"]


def test_nothing_skipped_when_the_adapter_takes_every_mtu_or_its_limit_is_unknown():
    profile = load("ixbt-2003-02-linux")
    big = PairReport(pair="gbe", adapter="x", problems=[],
                     sides=[side("a", "g", 65535), side("b", "g", 16000)])
    assert will_be_skipped(profile, big) == []
    unknown = PairReport(pair="gbe", adapter="x", problems=[],
                         sides=[side("a", "g", None), side("b", "g", None)])
    assert will_be_skipped(profile, unknown) == []


def test_windows_frame_sizes_are_compared_as_ip_mtus():
    profile = load("ixbt-2003-01-windows")
    rep = PairReport(pair="w", adapter="x", problems=[],
                     sides=[side("a", "e", 9000), side("b", "e", 9000)])
    # 9014 is MTU 9000: carried; 16128 (MTU 16114) is not.
    assert will_be_skipped(profile, rep) == ["w: frame16128 will be skipped "
                                             "(largest MTU: a e 9000, b e 9000)"]
