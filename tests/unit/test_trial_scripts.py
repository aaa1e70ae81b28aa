"""The Linux trial scripts' port checks, run for real on this machine's loopback through
``LocalConnection`` (no root, no lab): ``listening`` through ss and through its /proc
fallback, and ``server_start.sh`` giving a port that is still held a second to come free.

The "servers" here are small Python listeners on 127.0.0.1, so nothing leaves loopback.
"""

from __future__ import annotations

import os
import socket
import subprocess
import signal
import sys
import threading
import time
import uuid
from contextlib import closing, contextmanager

from pathlib import Path

import pytest

from nicbench.platforms.base import ServerEnd, cpu_split
from nicbench.platforms.linux import LinuxPlatform
from nicbench.remote.local import LocalConnection
from nicbench.remote.shell import _script

LISTENING = _script("listening.sh")
NO_SS = {**os.environ, "PATH": "/nonexistent"}   # sh is run by path; ss cannot be found


def free_port(kind: int = socket.SOCK_STREAM) -> int:
    with closing(socket.socket(socket.AF_INET, kind)) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int, proto: str, env: dict | None = None) -> bool:
    res = subprocess.run(["/bin/sh", "-c", LISTENING + 'listening "$1" "$2"', "t",
                          str(port), proto], env=env, timeout=10)
    return res.returncode == 0


@pytest.mark.parametrize("env", [None, NO_SS], ids=["ss", "proc"])
def test_listening_sees_a_tcp_listener_and_not_a_closed_or_connected_port(env):
    port = free_port()
    assert not listening(port, "tcp", env)
    with closing(socket.socket()) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        assert not listening(port, "tcp", env)       # bound, not listening yet
        s.listen()
        assert listening(port, "tcp", env)
        assert not listening(port, "udp", env)
    assert not listening(port, "tcp", env)


@pytest.mark.parametrize("env", [None, NO_SS], ids=["ss", "proc"])
def test_listening_sees_a_bound_udp_socket(env):
    port = free_port(socket.SOCK_DGRAM)
    with closing(socket.socket(socket.AF_INET, socket.SOCK_DGRAM)) as s:
        s.bind(("127.0.0.1", port))
        assert listening(port, "udp", env)
        assert not listening(port, "tcp", env)
    assert not listening(port, "udp", env)


def held_by(port: int, proto: str, pid: int, env: dict | None = None) -> bool:
    res = subprocess.run(["/bin/sh", "-c", LISTENING + 'held_by "$1" "$2" "$3"', "t",
                          str(port), proto, str(pid)], env=env, timeout=10)
    return res.returncode == 0


@pytest.mark.skipif(os.geteuid() != 0, reason="ss -p names other processes for root")
def test_held_by_names_the_process_that_listens_and_no_other():
    port = free_port()
    proc = subprocess.Popen(python_listener(port))
    try:
        deadline = time.monotonic() + 10
        while not listening(port, "tcp") and time.monotonic() < deadline:
            time.sleep(0.02)
        assert held_by(port, "tcp", proc.pid)
        assert not held_by(port, "tcp", os.getpid())       # another process
        assert not held_by(port, "udp", proc.pid)           # another protocol
        assert not held_by(port, "tcp", proc.pid, NO_SS)    # no ss: cannot say, so no
    finally:
        proc.kill()
        proc.wait()
    assert not held_by(port, "tcp", proc.pid)


def python_listener(port: int) -> list[str]:
    return [sys.executable, "-c",
            "import socket, time\n"
            "s = socket.socket()\n"
            "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
            f"s.bind(('127.0.0.1', {port}))\n"
            "s.listen()\n"
            "time.sleep(30)\n"]


# Waits here are for an event (a file gone, a process there), bounded only to turn "never"
# into a failure: far above what a loaded 2-core machine takes, far below the 30-90 s a
# wrong wait (a server never stopped, a sleep never woken) would take.
HANG_S = 20.0
UNWOKEN_HANG_S = 60.0    # where the wrong wait is the 90 s sleep of an unwoken finish


def until(predicate, within_s: float = HANG_S) -> bool:
    """Has ``predicate()`` come true within ``within_s``?"""
    deadline = time.monotonic() + within_s
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.01)
    return bool(predicate())


def gone_soon(path, within_s: float = HANG_S) -> bool:
    deadline = time.monotonic() + within_s
    while os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.01)
    return not os.path.exists(path)


def finish(platform: LinuxPlatform, server):
    return platform.finish_server(server, ServerEnd(False, None, 1, 0.0, "KILL"))


def test_server_start_waits_for_a_port_still_held_then_starts_its_server():
    port = free_port()
    plat = LinuxPlatform(LocalConnection())
    # The previous trial's server, letting go of the port 0.4 s from now.
    holder = socket.socket()
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    holder.bind(("127.0.0.1", port))
    holder.listen()
    letting_go = threading.Timer(0.4, holder.close)
    try:
        t0 = time.monotonic()
        letting_go.start()
        started = plat.start_server(python_listener(port),
                                    f"/tmp/nicbench-test-{uuid.uuid4().hex}", port, "tcp", 5.0)
        took = time.monotonic() - t0
        try:
            assert started.listening and not started.ended, started
            assert took >= 0.35, took            # it waited for the port, then started
        finally:
            res = finish(plat, started.server)
        assert res.result.exit_status == 128 + signal.SIGKILL   # ours, running till stopped
    finally:
        letting_go.cancel()
        holder.close()


def test_server_start_tells_a_port_held_for_good_from_its_own_server():
    port = free_port()
    plat = LinuxPlatform(LocalConnection())
    with closing(socket.socket()) as rival:
        rival.bind(("127.0.0.1", port))          # no SO_REUSEADDR: ours cannot bind
        rival.listen()
        started = plat.start_server(python_listener(port),
                                    f"/tmp/nicbench-test-{uuid.uuid4().hex}", port, "tcp", 5.0)
        res = finish(plat, started.server)
    assert started.ended, started                # ours failed to bind and ended
    assert res.result.exit_status == 1
    assert "Address already in use" in res.result.stderr


def test_run_client_keeps_its_pid_file_while_it_runs_and_takes_none(tmp_path):
    plat = LinuxPlatform(LocalConnection())
    pidfile = tmp_path / "client.pid"
    ran = plat.run_client(["sh", "-c", 'cat "$1"', "x", str(pidfile)], 10, str(pidfile), None)
    pid, start = ran.result.stdout.split()
    assert int(pid) > 1 and int(start) > 0          # "<pid> <start time>" while it ran
    # Removed as it ended, in the background (the reply does not wait for rm): gone
    # within moments, never left behind.
    assert gone_soon(pidfile), pidfile
    # No pid file: nothing written or removed (it used to be /dev/null, which the script
    # then removed, as root).
    ran = plat.run_client(["echo", "hi"], 10, None, None)
    assert (ran.result.stdout, ran.result.exit_status) == ("hi\n", 0)
    assert ran.cpu0 is not None and ran.cpu1 is not None


# -- the finish sent as the client starts (LinuxPlatform.begin_finish) -----------------------
REPORT = "0.0-1.0 sec done"


def reporting_server(port: int, report_after_s: float | None, then: str = "sleep") -> list[str]:
    """A listener that prints a report line after ``report_after_s`` (None: never), then
    sleeps (as an iperf 2 server, which never exits) or exits 0."""
    report = (f"time.sleep({report_after_s})\nprint({REPORT!r}, flush=True)\n"
              if report_after_s is not None else "")
    return [sys.executable, "-c",
            "import socket, sys, time\n"
            "s = socket.socket()\n"
            "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
            f"s.bind(('127.0.0.1', {port}))\n"
            "s.listen()\n" + report + ("time.sleep(30)\n" if then == "sleep" else "sys.exit(0)\n")]


@contextmanager
def begun(plat: LinuxPlatform, argv: list[str], port: int, end: ServerEnd):
    """A server started and its finish begun: (directory, server, finishing). Whatever
    the test asserts, the server is stopped and its directory removed afterwards."""
    d = f"/tmp/nicbench-test-{uuid.uuid4().hex}"
    started = plat.start_server(argv, d, port, "tcp", 5.0)
    finishing = None
    try:
        assert started.listening and not started.ended, started
        finishing = plat.begin_finish(started.server, end)
        yield d, started.server, finishing
    finally:
        if finishing is not None:
            finishing.abandon()
        if not started.server.collected:
            finish(plat, started.server)


def report_end(client_s: float, wait_s: float = 2.0, limit_s: float = 15.0) -> ServerEnd:
    return ServerEnd(False, REPORT, 1, wait_s, "KILL", client_s=client_s,
                     client_limit_s=client_s + limit_s)


def children(pid: int) -> list[str]:
    """The commands of a process's children (from /proc: no ps needed)."""
    out = []
    for stat in os.listdir("/proc"):
        if not stat.isdigit():
            continue
        try:
            with open(f"/proc/{stat}/stat") as fh:
                fields = fh.read().rsplit(")", 1)
            comm = fields[0].split("(", 1)[1]
        except (OSError, IndexError):
            continue
        if int(fields[1].split()[1]) == pid:
            out.append(comm)
    return out


def test_an_overlapped_finish_sleeps_through_the_transfer_then_waits_for_the_report():
    port = free_port()
    plat = LinuxPlatform(LocalConnection())
    # The client should take 0.4 s; the server's report comes at 0.9 s, after it.
    with begun(plat, reporting_server(port, 0.9), port, report_end(0.4)) \
            as (d, server, finishing):
        assert finishing.overlapped
        finisher_file = Path(f"{d}/finisher")
        assert until(lambda: finisher_file.exists() and finisher_file.read_text().strip())
        finisher = int(finisher_file.read_text())
        # While the client runs, the finish is one shell asleep: no polling on the receiver.
        assert until(lambda: children(finisher) == ["sleep"]), children(finisher)
        time.sleep(0.3)                      # the "client" ends at 0.5 s or later
        res = finishing.result()
        # Past its sleep it waited for the report and stopped the server only then (KILL):
        # the report in its output says it waited (it comes 0.9 s after the start).
        assert REPORT in res.result.stdout, res.result
        assert res.result.exit_status == 128 + signal.SIGKILL
        assert res.cpu is not None
        assert server.collected and gone_soon(d)
        assert not children(finisher)         # nothing of it left running


def test_an_overlapped_finish_whose_report_comes_with_the_client_is_done_when_it_ends():
    port = free_port()
    plat = LinuxPlatform(LocalConnection())
    exits = ServerEnd(True, None, 1, 5.0, "TERM", client_s=0.25, client_limit_s=15.25)
    with begun(plat, reporting_server(port, 0.3, then="exit"), port, exits) \
            as (d, _server, finishing):
        # the client, longer than the server: the finish ends on its own meanwhile (no
        # wake, no call after the client), however long the loaded machine takes
        assert until(lambda: not finishing.under_way())
        res = finishing.result()
        assert (res.result.exit_status, res.result.stdout.strip()) == (0, REPORT)
        assert gone_soon(d)


def test_an_overlapped_finish_is_woken_when_the_client_ends_without_a_report():
    port = free_port()
    plat = LinuxPlatform(LocalConnection())
    with begun(plat, reporting_server(port, None), port,
               report_end(0.2, wait_s=0.3, limit_s=90.0)) as (d, server, finishing):
        time.sleep(0.4)                      # the client failed: no report will come
        t0 = time.monotonic()
        res = finishing.result()
        took = time.monotonic() - t0
        # The same wait as a finish sent after the client (0.3 s), then woken and stopped
        # (unwoken, it would wait for the client's limit: 90 s more).
        assert 0.25 < took < HANG_S, took
        assert res.result.exit_status == 128 + signal.SIGKILL and REPORT not in res.result.stdout
        assert server.collected and gone_soon(d)


def test_an_overlapped_finish_abandoned_at_once_still_stops_and_removes_its_server():
    port = free_port()
    plat = LinuxPlatform(LocalConnection())
    # Abandoned before its shell has even said where it sleeps (Ctrl-C as the client
    # starts): the wake waits for that, then the server is stopped and collected.
    with begun(plat, reporting_server(port, None), port, report_end(90.0)) \
            as (d, server, finishing):
        t0 = time.monotonic()
        finishing.abandon()
        # abandon() waits a bounded while (WAKE_JOIN_S) for the stop; on a loaded machine
        # the finish may still be collecting after it: wait for its thread, bounded.
        # Unwoken it would sleep for 90 s first: this test's bound is 60 s, not HANG_S
        # (under 30 s), which the CI's loaded machine has reached here.
        while finishing.under_way() and time.monotonic() - t0 < UNWOKEN_HANG_S:
            time.sleep(0.01)
        assert time.monotonic() - t0 < UNWOKEN_HANG_S
        assert server.collected and gone_soon(d)
        assert not listening(port, "tcp")


def test_a_finish_without_the_clients_time_is_not_overlapped():
    # server_end() gives none where the end cannot be waited for alongside (one
    # connection, a settle time, UDP iperf 2: tests/unit/test_server_finish.py).
    port = free_port()
    plat = LinuxPlatform(LocalConnection())
    with begun(plat, python_listener(port), port, ServerEnd(False, REPORT, 1, 0.2, "KILL")) \
            as (d, _server, finishing):
        assert not finishing.overlapped
        assert finishing.result().result.exit_status == 128 + signal.SIGKILL
        assert gone_soon(d)


def test_server_start_refuses_a_directory_that_is_already_there(tmp_path):
    # The directory is made first, as journaled: one that exists (not this trial's) is
    # never used, and nothing is started.
    from nicbench.errors import RemoteError
    port = free_port()
    plat = LinuxPlatform(LocalConnection())
    there = tmp_path / "someone-elses.d"
    there.mkdir()
    with pytest.raises(RemoteError, match=r"exited 97: mkdir: .*File exists"):
        plat.start_server(python_listener(port), str(there), port, "tcp", 2.0)
    assert list(there.iterdir()) == []
    assert not listening(port, "tcp")


# -- the tools' own CPU time (client_run.sh, the server's wrapper, collect_dir) ---------------
BURN_S = 0.3
TICKS = os.sysconf("SC_CLK_TCK")


def burner(then: str = "") -> list[str]:
    """A process that burns ``BURN_S`` s of its own CPU time (not wall time), then runs
    ``then``."""
    return [sys.executable, "-c",
            "import time\n"
            "t = time.process_time()\n"
            f"while time.process_time() - t < {BURN_S}:\n"
            "    pass\n" + then]


def test_run_client_reads_the_clients_own_cpu_time_beside_the_hosts():
    plat = LinuxPlatform(LocalConnection())
    ran = plat.run_client(burner(), 30, None, None)
    assert ran.result.exit_status == 0 and ran.result.stderr == ""   # marked lines taken out
    assert ran.cpu0 is not None and ran.cpu1 is not None and ran.tool_ticks is not None
    # At least what it burned (whole ticks: one less at most), and never more than all
    # CPUs' time between the two readings around it.
    assert BURN_S * TICKS - 1 <= ran.tool_ticks <= ran.cpu1.total - ran.cpu0.total
    split = cpu_split(ran.cpu0, ran.cpu1, ran.tool_ticks)
    assert split.busy is not None and split.tool is not None and split.other is not None
    assert split.tool > 0
    # The host's busy time holds the tool's (within the readings' whole ticks, sampled
    # per CPU: two ticks of slack each way).
    slack = 100.0 * 2 * 2 / (ran.cpu1.total - ran.cpu0.total)
    assert split.tool <= split.busy + slack


def test_a_client_that_used_no_cpu_reads_next_to_none():
    plat = LinuxPlatform(LocalConnection())
    ran = plat.run_client(["true"], 30, None, None)
    assert ran.tool_ticks is not None and ran.tool_ticks <= 2


def test_the_servers_own_cpu_time_comes_back_with_its_finish():
    port = free_port()
    plat = LinuxPlatform(LocalConnection())
    # Listens, burns, exits: its wrapper writes "cpu" before "rc", which the finish
    # waits for.
    serve = reporting_server(port, None, then="exit")
    serve[2] = serve[2].replace("sys.exit(0)\n", "") + "\n".join(burner()[2].splitlines()[1:])
    d = f"/tmp/nicbench-test-{uuid.uuid4().hex}"
    started = plat.start_server(serve, d, port, "tcp", 5.0)
    assert started.listening and not started.ended and started.cpu is not None
    res = plat.finish_server(started.server, ServerEnd(True, None, 1, 10.0, "KILL"))
    assert res.result.exit_status == 0, res.result
    assert res.tool_ticks is not None and res.tool_ticks >= BURN_S * TICKS - 1
    # Sent after the client: no cpu0 (the window starts at the server's start), and cpu1
    # read as it begins (here before the burn: a real client has ended by then).
    assert res.cpu0 is None and res.cpu is not None
    assert gone_soon(d)


def test_an_overlapped_finish_reads_the_receiver_from_the_transfers_start():
    port = free_port()
    plat = LinuxPlatform(LocalConnection())
    exits = ServerEnd(True, None, 1, 5.0, "TERM", client_s=0.3, client_limit_s=15.3)
    with begun(plat, reporting_server(port, 0.4, then="exit"), port, exits) \
            as (d, _server, finishing):
        res = finishing.result()
        assert res.result.exit_status == 0
        # cpu0 as its sleep began (the transfer's start), cpu1 at the server's end
        assert res.cpu0 is not None and res.cpu is not None
        assert res.cpu.total > res.cpu0.total
        assert res.tool_ticks is not None
        assert gone_soon(d)


def test_a_killed_server_has_no_cpu_time():
    port = free_port()
    plat = LinuxPlatform(LocalConnection())
    d = f"/tmp/nicbench-test-{uuid.uuid4().hex}"
    started = plat.start_server(python_listener(port), d, port, "tcp", 5.0)
    assert started.listening
    res = finish(plat, started.server)      # stopped by KILL: its wrapper still writes
    assert res.result.exit_status == 128 + signal.SIGKILL
    assert res.tool_ticks is not None       # the wrapper outlives the tool it waits for
