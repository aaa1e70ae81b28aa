"""nicbench's ntttcp driver against ntttcp-for-linux 1.4.3 as it ran on the lab
(tests/golden/captures/ntttcp-linux-1.4.3-lab_*, their provenance in that folder's README):
the argv the driver builds is the one that ran, a trial's two consoles give the receiver's
rate and the sender's, and a UDP receiver (which never exits) is stopped on the last line
it printed. The parser's own figures per file are golden cases (tests/golden/cases)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from nicbench.tools import ntttcp
from nicbench.tools.driver import Endpoints
from nicbench.tools.registry import TOOLS

CAPTURES = Path(__file__).resolve().parents[1] / "golden" / "captures"
PREFIX = "ntttcp-linux-1.4.3-lab"


def capture(name: str) -> str:
    return (CAPTURES / f"{PREFIX}_{name}").read_text()


def plan(protocol: str):
    ends = Endpoints(receiver_addr="198.18.0.1", sender_addr="198.18.0.2", protocol=protocol)
    return TOOLS["ntttcp"].driver.plan("ntttcp", "ntttcp", {"duration_s": 3}, ends, "t1")


@pytest.mark.parametrize("protocol", ["tcp", "udp"])
def test_the_driver_builds_the_argv_that_ran(protocol):
    p = plan(protocol)
    udp = ["-u"] if protocol == "udp" else []
    assert p.server == ["ntttcp", "-r", "-m", "1,0,198.18.0.1", "-t", "3", "-p", "5001",
                        "-b", "262144", *udp]
    assert p.client == ["ntttcp", "-s", *p.server[2:]]
    # what 262144 was taken for: a buffer length ("-b"), not 1000 connections ("-l")
    sender = capture(f"{protocol}_sender_console.txt")
    assert "1 connections tested" in sender and "too many connections" not in sender


def test_a_tcp_trial_reads_the_receivers_rate_and_the_senders():
    run = TOOLS["ntttcp"].driver.interpret(capture("tcp_sender_console.txt"),
                                           capture("tcp_receiver_console.txt"), None, "tcp")
    assert run.error is None
    assert run.throughput_bps == pytest.approx(716.86e6)     # receiver "716.86Mbps"
    assert run.sent_bps == pytest.approx(728.66e6)           # sender "728.66Mbps"
    assert run.cpu_pct == pytest.approx(16.41)               # the sender's "cpu busy (all)"
    assert run.extra["receiver_cpu_pct"] == pytest.approx(18.72)


def test_a_udp_trial_and_its_receiver_that_does_not_exit():
    p = plan("udp")
    assert (p.server_exits, p.listen_protocol, p.stop_signal) == (False, "udp", "KILL")
    receiver = capture("udp_receiver_console.txt")
    # the receiver's last line, the one the trial waits for before stopping it, as the
    # remote side matches it: grep -E
    last = receiver.rstrip("\n").splitlines()[-1]
    assert "cpu busy (all)" in last and not last.startswith("---")
    found = subprocess.run(["grep", "-cE", p.report_re or ""], input=receiver,
                           capture_output=True, text=True, timeout=10)
    assert found.stdout.strip() == str(p.report_count) == "1"
    run = TOOLS["ntttcp"].driver.interpret(capture("udp_sender_console.txt"), receiver,
                                           None, "udp")
    assert run.protocol == "udp" and run.error is None
    assert run.throughput_bps == pytest.approx(462.46e6)
    assert run.sent_bps == pytest.approx(472.52e6)


def test_the_version_is_read_from_the_h_banner():
    probe = TOOLS["ntttcp"].version
    assert probe.args == ("-h",)
    text = capture("h.txt")
    assert re.search(probe.regex, text)[1] == "1.4.3"
    # -V, the probe it replaced, is verbose mode in this tool's own usage
    assert re.search(r"^\s*-V\s+Verbose mode", text, re.M)


def test_the_captures_are_in_the_linux_formats():
    kinds = {name: ntttcp.parse(capture(name)).extra["format"]
             for name in ("tcp_receiver.xml", "tcp_sender.json", "udp_receiver_console.txt")}
    assert kinds == {"tcp_receiver.xml": "linux_xml", "tcp_sender.json": "linux_json",
                     "udp_receiver_console.txt": "linux_console"}
