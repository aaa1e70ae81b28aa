"""Command lines the drivers build from profile parameters (tools not packaged here:
netio, ntttcp-for-linux; their syntax from the tools' own usage text)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from nicbench.tools.driver import Endpoints
from nicbench.tools.registry import TOOLS

ENDS = Endpoints(receiver_addr="198.18.0.1", sender_addr="198.18.0.2", protocol="tcp")


def test_default_runs_netios_own_series():
    plan = TOOLS["netio"].driver.plan("netio", "netio", {}, ENDS, "t1")
    assert plan.server == ["netio", "-s", "-t", "-p", "18767"]
    assert plan.client == ["netio", "-t", "-p", "18767", "198.18.0.1"]


def test_one_block_size():
    plan = TOOLS["netio"].driver.plan("netio", "netio", {"block": "8K"}, ENDS, "t1")
    assert plan.client == ["netio", "-t", "-p", "18767", "-b", "8k", "198.18.0.1"]


@pytest.mark.parametrize("bad, why", [("1500", "whole kilobytes"),
                                      (0, "out of range: a size is 1 byte to 1G")])
def test_block_must_be_whole_kilobytes(bad, why):
    with pytest.raises(ValidationError, match=why):
        TOOLS["netio"].driver.parse_params({"block": bad})


def test_ntttcp_for_linux_gets_every_parameter_it_has():
    plan = TOOLS["ntttcp"].driver.plan("ntttcp", "ntttcp", {"port": 6001, "length": "64K",
                                                      "duration_s": 5}, ENDS, "t1")
    for argv in (plan.server, plan.client):
        assert argv[argv.index("-p") + 1] == "6001"
        # its buffer length is -b (src/parameter.c); its -l is connections per thread
        assert argv[argv.index("-b") + 1] == str(64 * 1024)
        assert "-l" not in argv
    assert plan.port == 6001


def test_ntttcp_for_linux_has_no_receive_buffer():
    from nicbench.errors import UsageError

    with pytest.raises(UsageError, match="no socket receive buffer option"):
        TOOLS["ntttcp"].driver.plan("ntttcp", "ntttcp", {"receive_buffer": "1M"}, ENDS, "t1")



@pytest.mark.parametrize("params", [{"count": 10000}, {"async_count": 8}])
def test_ntttcp_for_linux_refuses_the_windows_only_parameters(params):
    from nicbench.errors import UsageError

    with pytest.raises(UsageError, match="ntttcp-for-linux has no -n"):
        TOOLS["ntttcp"].driver.plan("ntttcp", "ntttcp", params, ENDS, "t1")


UDP = Endpoints(receiver_addr="198.18.0.1", sender_addr="198.18.0.2", protocol="udp",
                offered_bps=1_000_000)


def test_iperf2_receive_buffer_is_the_servers_alone():
    """The small-packet profiles' receiver buffer: -w at the server only, so the sender's
    socket buffer stays the OS's (a large one overflows the link's queue: iperf2.py)."""
    plan = TOOLS["iperf2"].driver.plan("iperf", "iperf", {"receive_buffer": "4M"}, UDP, "t1")
    assert plan.server[plan.server.index("-w") + 1] == str(4 * 1024 * 1024)
    assert "-w" not in plan.client
    both = TOOLS["iperf2"].driver.plan("iperf", "iperf", {"window": "4M"}, UDP, "t1")
    assert "-w" in both.server and "-w" in both.client


def test_iperf2_window_and_receive_buffer_together_are_refused():
    with pytest.raises(ValidationError, match=r"window .* or receive_buffer .* not both"):
        TOOLS["iperf2"].driver.parse_params({"window": "1M", "receive_buffer": "4M"})
