"""How a trial ends a receiver that does not exit by itself (iperf 2): Background waits
for its report in its output, then stops it; and how it tells a server that ended at once
(port taken).

Runs the real shell scripts through ``LocalConnection`` (no root, no lab): the same
``sh`` code that runs on a lab host over SSH. The report pattern is checked with ``grep
-E`` itself, since that is what reads it on the host, against real iperf 2 server output.
"""

from __future__ import annotations

import subprocess
import time
import uuid
from pathlib import Path

import pytest

from nicbench.execution.trial import client_timeout_s, server_end
from nicbench.remote.local import LocalConnection
from nicbench.tools.driver import Endpoints, Plan
from nicbench.tools.iperf2 import IPERF2_WHOLE_RUN_ROW
from nicbench.tools.registry import TOOLS

SAMPLES = Path(__file__).resolve().parents[1] / "golden" / "samples"
ROW = "[  1] 0.0000-1.0172 sec   114 MBytes   941 Mbits/sec  22937=22601:272:24:11:9:9:4:7"


def grep_count(path: Path) -> int:
    res = subprocess.run(["grep", "-cE", "--", IPERF2_WHOLE_RUN_ROW, str(path)],
                         capture_output=True, text=True, timeout=10)
    return int(res.stdout.strip() or 0)


@pytest.mark.parametrize("name, rows", [
    # one stream, no -i: its whole-run row
    ("iperf2_tcp_server_text.txt", 1),
    # enhanced, a second client run with -P 2: 1 + 2 stream rows + [SUM]
    ("iperf2_tcp_server_enhanced.txt", 4),
    # CSV has no text rows: never "seen" (the 2 s bound applies; the driver never asks -y C)
    ("iperf2_tcp_server_csv.txt", 0),
])
def test_whole_run_rows_of_real_server_output(name, rows):
    assert grep_count(SAMPLES / name) == rows


def test_with_intervals_the_first_interval_row_also_matches():
    # -i 1 over 3 s: rows 0-1, 1-2, 2-3 and 0-3; those starting at 0.0 match. Hence the
    # driver never passes -i to the server: the first row would read as the report.
    assert grep_count(SAMPLES / "iperf2_udp_server_text.txt") == 2


def test_iperf2_plan_counts_a_sum_row_for_several_streams():
    drv = TOOLS["iperf2"].driver
    ends = Endpoints("198.18.0.1", "198.18.0.2", "tcp")
    one = drv.plan("iperf", "iperf", {"duration_s": 1}, ends, "t")
    two = drv.plan("iperf", "iperf", {"duration_s": 1, "streams": 2}, ends, "t")
    assert (one.report_re, one.report_count, one.stop_signal) == (IPERF2_WHOLE_RUN_ROW, 1, "KILL")
    assert two.report_count == 3
    assert one.settle_s == 0 and not one.server_exits


@pytest.mark.parametrize("tool, protocol, params, overlaps", [
    ("iperf2", "tcp", {"duration_s": 1}, True),     # its report: the server owes nothing more
    ("iperf2", "udp", {"duration_s": 1}, False),    # it still sends the client its report
    ("iperf3", "tcp", {"duration_s": 1}, True),     # it exits by itself
    ("netio", "tcp", {}, False),                    # a settle time, and no known duration
])
def test_which_finishes_may_wait_while_the_client_runs(tool, protocol, params, overlaps):
    plan = TOOLS[tool].driver.plan(tool, tool, params, Endpoints("198.18.0.1", "198.18.0.2",
                                                                 protocol), "t")
    end = server_end(plan, timeout_s=60)
    assert (end.client_s is not None) == overlaps, end
    if overlaps:
        assert end.client_s == plan.expected_s
        assert end.client_limit_s == client_timeout_s(plan, 60)
    # Both ends over one connection (one host): never, whatever the tool.
    assert server_end(plan, timeout_s=60, overlap=False).client_s is None


def test_a_settle_time_is_never_waited_for_alongside_the_client():
    # It starts when the client has ended, whatever the tool says of its duration.
    plan = Plan(server=["srv"], client=["cli"], port=5001, listen_protocol="tcp",
                server_exits=False, expected_s=1.0, settle_s=0.5)
    end = server_end(plan, timeout_s=60)
    assert (end.client_s, end.report_re, end.wait_s) == (None, None, 0.5)


def stop(server, p: Plan) -> str:
    return server.stop_after_output(p.report_re, p.report_count, p.report_wait_s,
                                    p.stop_signal)


def plan(report_wait_s: float = 2.0, count: int = 1) -> Plan:
    return Plan(server=[], client=[], port=0, listen_protocol="tcp", server_exits=False,
                expected_s=None, report_re=IPERF2_WHOLE_RUN_ROW, report_count=count,
                report_wait_s=report_wait_s, stop_signal="KILL")


# Upper bounds on time here only tell a bounded wait from a hang: each is far below what a
# wait for the wrong thing would take (the servers sleep 60 s; the report waits 60 s
# where "at once" is the point) and far above what a loaded 2-core machine needs
# (the scripts poll a set number of times, each poll slower under load).
HANG_S = 30.0


def start(script: str):
    return LocalConnection().start(["sh", "-c", script],
                                   f"/tmp/nicbench-test-{uuid.uuid4().hex}")


def test_report_seen_then_server_stopped_at_once():
    server = start(f"sleep 0.3; echo 'header'; echo '{ROW}'; sleep 60")
    t0 = time.monotonic()
    assert stop(server, plan(report_wait_s=60)) == "stopped"
    took = time.monotonic() - t0
    assert 0.25 < took < HANG_S, took      # after the report; not the 60 s it may wait
    assert not server.is_running()
    assert ROW in server.collect().stdout


def test_waits_for_every_row_it_needs():
    rows = f"echo '{ROW}'; sleep 0.4; echo '{ROW.replace('[  1]', '[SUM]')}'"
    server = start(f"{rows}; sleep 60")
    t0 = time.monotonic()
    assert stop(server, plan(count=2)) == "stopped"
    assert time.monotonic() - t0 > 0.35
    assert server.collect().stdout.count("941 Mbits/sec") == 2


def test_no_report_is_bounded_and_the_caller_stops_the_server():
    server = start("echo 'Server listening on TCP port 5001'; sleep 60")
    t0 = time.monotonic()
    assert stop(server, plan(report_wait_s=0.5)) == "not seen"
    assert 0.45 < time.monotonic() - t0 < HANG_S      # not the server's 60 s
    assert server.is_running()
    server.stop(grace_s=1, signal="KILL")
    assert not server.is_running()
    server.collect()


def test_a_server_that_died_without_a_report_is_not_waited_for():
    server = start("echo 'bind failed: Address already in use' >&2; exit 1")
    assert server.ended(wait_s=HANG_S)       # it has died (an event, not a sleep)
    t0 = time.monotonic()
    assert stop(server, plan(report_wait_s=60)) == "exited"
    assert time.monotonic() - t0 < HANG_S    # not the 60 s it would wait for a report
    assert server.collect().exit_status == 1


def test_server_ended_reads_the_exit_without_waiting():
    alive = start("sleep 60")
    dead = start("exit 3")
    try:
        assert dead.ended(wait_s=2) is True
        t0 = time.monotonic()
        assert alive.ended() is False
        assert alive.ended(wait_s=0.3) is False
        assert 0.25 < time.monotonic() - t0 < HANG_S      # not the command's 60 s
    finally:
        alive.stop(grace_s=1, signal="KILL")
        alive.collect()
        dead.collect()
