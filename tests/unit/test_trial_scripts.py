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
from contextlib import closing

import pytest

from nicbench.platforms.base import ServerEnd
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


def python_listener(port: int) -> list[str]:
    return [sys.executable, "-c",
            "import socket, time\n"
            "s = socket.socket()\n"
            "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
            f"s.bind(('127.0.0.1', {port}))\n"
            "s.listen()\n"
            "time.sleep(30)\n"]


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
    assert not pidfile.exists()                     # removed when it ended
    # No pid file: nothing written or removed (it used to be /dev/null, which the script
    # then removed, as root).
    ran = plat.run_client(["echo", "hi"], 10, None, None)
    assert (ran.result.stdout, ran.result.exit_status) == ("hi\n", 0)
    assert ran.cpu0 is not None and ran.cpu1 is not None
