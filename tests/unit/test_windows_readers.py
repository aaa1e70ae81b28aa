"""Windows readers on real captured outputs (tests/fixtures/windows, SOURCES.md), and on
the BOM / CRLF variants real files show (computed here from the same captures)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nicbench.errors import ParseError, UsageError
from nicbench.platforms import windows_commands as wc
from nicbench.platforms.base import CpuTimes
from nicbench.remote.powershell import tidy_text
from nicbench.tools import ntttcp
from nicbench.tools.driver import Endpoints

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "windows"


def read(name: str) -> str:
    return (FIX / name).read_bytes().decode("utf-8")


def variants(text: str) -> list[str]:
    lf = text.replace("\r\n", "\n")
    return [text, lf, lf.replace("\n", "\r\n"), "\ufeff" + lf.replace("\n", "\r\n")]


@pytest.mark.parametrize("i", range(4))
def test_reg_query_value_line(i):
    text = variants(read("gh-win32-openssh-936__reg_query_openssh_defaultshell.txt"))[i]
    assert wc.read_reg_query(tidy_text(text), "DefaultShell") == (
        "REG_SZ", "C:\\windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe")
    with pytest.raises(ParseError):
        wc.read_reg_query(text, "TcpWindowSize")


def test_reg_dword_data_is_read_as_decimal_in_the_same_layout():
    line = read("gh-win32-openssh-936__reg_query_openssh_defaultshell.txt")
    # the same value line with REG_DWORD data, as reg.exe lays it out
    dword = line.replace("DefaultShell    REG_SZ    C:\\windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe",
                         "TcpWindowSize    REG_DWORD    0xffff")
    assert wc.read_reg_query(dword, "TcpWindowSize") == ("REG_DWORD", str(0xFFFF))


def test_set_advanced_property_refusal_quotes_the_drivers_values():
    said, valid = wc.read_set_property_error(
        read("gh-winpsdocs-2366__set-netadapteradvancedproperty_invalid_value.txt"))
    assert said == ("No matching keyword value found. The following are valid keyword "
                    "values: 0, 1")
    assert valid == ("0", "1")


def test_format_list_advanced_properties_e810():
    records = wc.read_format_list(read("mfd__get-netadapteradvancedproperty_select_all_fl_e810.txt"))
    props = {r["RegistryKeyword"]: wc.AdvancedProperty.from_record(r) for r in records}
    rdma, vlan = props["RdmaVfPreferredResourceProfile"], props["VlanId"]
    assert (rdma.value, rdma.valid) == ("0", ("1", "0"))
    assert rdma.refusal("2") == ("the driver's valid values for "
                                 "RdmaVfPreferredResourceProfile are 1, 0")
    assert rdma.refusal("1") is None
    assert (vlan.minimum, vlan.maximum, vlan.step, vlan.valid) == (0, 4094, 1, ())
    assert vlan.refusal("4094") is None and vlan.refusal("4095") is not None
    assert len(records) == 2


def test_netsh_tcp_global_german_read_by_position():
    values = wc.read_netsh_tcp_global(read("gh-mysticfoxde-15__netsh_int_tcp_show_global_de-DE.txt"))
    # line 2 of the block is the receive window auto-tuning level, whatever its label
    assert values[1] == "normal" and values[0] == "enabled" and values[-1] == "off"
    assert len(values) == 14


def test_cpu_raw_two_snapshots_give_the_perf_100nsec_timer_inv_formula():
    # Two snapshots of two CPUs: X idle ticks, Y the 100 ns time base (PERF_100NSEC_TIMER_INV).
    y0, y1 = 132_000_000_000, 132_010_000_000          # 1 s apart
    x = [(50_000_000_000, 50_002_500_000), (60_000_000_000, 60_007_500_000)]

    def snap(k):
        return "[" + ",".join(f'{{"name":"{i}","idle":"{x[i][k]}","ts":"{(y0, y1)[k]}"}}'
                              for i in range(2)) + "]"
    a, n = wc.read_cpu_raw(snap(0))
    b, _ = wc.read_cpu_raw(snap(1))
    per_cpu = [100 * (1 - (x1 - x0) / (y1 - y0)) for x0, x1 in x]
    assert n == 2
    assert b.busy_pct_since(a) == pytest.approx(sum(per_cpu) / 2)
    one, _ = wc.read_cpu_raw('{"name":"0","idle":"5","ts":"10"}')   # one CPU: a bare object
    assert one == CpuTimes(busy=5.0, total=10.0)


def test_ping_judged_by_the_ttl_reply_line_not_the_exit_status():
    assert wc.read_ping("Reply from 198.18.0.2: bytes=8972 time<1ms TTL=128", "198.18.0.2")[0]
    replied, said = wc.read_ping("\nPinging 198.18.0.2 with 8972 bytes of data:\nPacket needs "
                                 "to be fragmented but DF set.\n", "198.18.0.2")
    assert not replied and said == "Packet needs to be fragmented but DF set."
    assert not wc.read_ping("Reply from 198.18.0.1: Destination host unreachable.",
                            "198.18.0.2")[0]


def test_port_spec_collapses_runs():
    assert wc.port_spec([5001, 5002, 5003, 6001, 5201]) == "5001-5003,5201,6001"


# -- NTttcp on Windows ---------------------------------------------------------------------
def test_ntttcp_totals_not_thread_sums_5_40():
    run = ntttcp.parse(read("gh-ntttcp-24__ntttcp_win_v5.40_console.txt"))
    assert run.extra["thread_throughput_bps"] == [0.0]
    assert run.throughput_bps == pytest.approx(4558.548 * 2 ** 20 * 8)
    assert run.throughput_bps / 1e9 == pytest.approx(38.24, abs=0.005)


@pytest.mark.parametrize("name", ["vc__ntttcp_win_v5.35_receiver_4threads.xml",
                                  "vc__ntttcp_win_v5.39_receiver_256threads.xml"])
def test_ntttcp_xml_with_bom_uses_the_total(name):
    text = read(name)
    assert text.startswith("\ufeff")
    import xml.etree.ElementTree as ET

    run = ntttcp.parse(text)
    root = ET.fromstring(text.lstrip("\ufeff"))
    total = next(e for e in root.findall("throughput") if e.get("metric") == "mbps")
    assert run.throughput_bps == pytest.approx(float(total.text) * 1e6)   # the total element
    assert run.version == root.get("version")


PARAMS = {"threads": 2, "cpu": 0, "async_count": 4, "length": 262144, "count": 10000,
          "receive_buffer": 20000000, "duration_s": 30}


def test_ntttcp_driver_windows_pair():
    plan = ntttcp.NtttcpDriver().plan(
        "NTttcp.exe", "NTttcp.exe", PARAMS,
        Endpoints("198.18.0.1", "198.18.0.2", "tcp", receiver_os="windows",
                  sender_os="windows", client_file="nicbench-t1.xml"), "t1")
    assert plan.server[:4] == ["NTttcp.exe", "-r", "-m", "2,0,198.18.0.1"]
    assert plan.client[-2:] == ["-xml", "nicbench-t1.xml"] and plan.client_outfile == "nicbench-t1.xml"
    assert "-rb" in plan.server and "-rb" not in plan.client
    assert "-ns" not in plan.server + plan.client
    assert plan.ports == (5001, 5002, 6001, 6002)


def test_ntttcp_driver_mixed_pair_uses_no_sync_on_both_ends():
    ends = Endpoints("198.18.0.1", "198.18.0.2", "tcp", receiver_os="linux",
                     sender_os="windows", client_file="x.xml")
    # ntttcp-for-linux has no -rb: a Linux receiver refuses it rather than drop it
    with pytest.raises(UsageError, match="no socket receive buffer option"):
        ntttcp.NtttcpDriver().plan("ntttcp", "NTttcp.exe", PARAMS, ends, "t1")
    params = {k: v for k, v in PARAMS.items() if k != "receive_buffer"}
    plan = ntttcp.NtttcpDriver().plan("ntttcp", "NTttcp.exe", params, ends, "t1")
    assert plan.server[0] == "ntttcp" and "-N" in plan.server and "-t" in plan.server
    assert plan.server[plan.server.index("-b") + 1] == "262144" and "-l" not in plan.server
    assert "-ns" in plan.client and "-t" in plan.client
    assert plan.ports == (5001, 5002)          # no sync ports without sync


def test_ntttcp_error_lines_fail_the_trial_whatever_the_exit_status():
    console = read("gh-ntttcp-24__ntttcp_win_v5.40_console.txt")
    run = ntttcp.NtttcpDriver().interpret("ERROR: one or more worker threads failed\n",
                                          console, None, "tcp")
    assert run.error == "ERROR: one or more worker threads failed"
