"""The SSH side of the warm PowerShell (``remote/ssh_powershell.py``) over the lab's real
sshd and channels. No PowerShell runs here: the session is a stand-in in sh that speaks
the same protocol as ``warm_powershell.SESSION`` (the ready line; one ``<nonce> <base64>``
line per script; the script's output, then the end markers with CRLF as .NET writes
them), running each script as sh in a process group of its own (what a timeout kills,
as taskkill /T kills the PowerShell session's tree). What is tested is nicbench's half:
the ready wait, framing over a real channel, exit statuses, a frame that output cannot
end, a timeout that kills and drops, a session that cannot start or dies."""

from __future__ import annotations

import time
import uuid
from dataclasses import replace

import pytest

from nicbench.errors import CommandTimeout, ConnectError
from nicbench.platforms.hosts import ssh_target
from nicbench.remote import ssh_powershell
from nicbench.remote.shell import PosixShell
from nicbench.remote.ssh import SshConnection
from nicbench.remote.ssh_powershell import WarmPowerShell
from nicbench.remote.warm_powershell import END, READY, SessionLost

pytestmark = pytest.mark.lab

STAND_IN = r"""
printf '%s\r\n' '@@nicbench-warm-ready'
while read -r nonce data; do
    printf '%s' "$data" | base64 -d | setsid sh
    rc=$?
    printf '\r\n@@nicbench-end %s %s\r\n' "$nonce" "$rc"
    printf '\r\n@@nicbench-end %s\r\n' "$nonce" >&2
done
"""


@pytest.fixture
def conn(lab, lab_inventory, monkeypatch):
    monkeypatch.setattr(ssh_powershell, "session_command",
                        lambda: "sh -c " + "'" + STAND_IN.replace("'", "'\\''") + "'")
    target = replace(ssh_target(lab_inventory, lab_inventory.host(lab.spec.hosts()[0].name)),
                     connect_timeout_s=5)
    c = SshConnection(target)
    yield c
    c.close()


def session(conn: SshConnection, **kw) -> WarmPowerShell:
    return WarmPowerShell(conn._connect(), 5.0, **kw)


def test_scripts_run_one_after_another_in_one_session_with_their_exit_status(conn):
    s = session(conn)
    try:
        res = s.run(["a"], 'echo "$$"\necho "out $PPID"\necho err >&2\nexit 3\n', 10, conn)
        assert (res.stderr, res.exit_status) == ("err\n", 3)
        word, first = res.stdout.split()
        assert word == "out" and first.isdigit()
        again = s.run(["b"], 'echo "$$"\necho "out $PPID"\n', 10, conn)
        assert again.exit_status == 0 and again.stdout.split()[1] == first   # one session
        assert s.calls == 2 and s.usable(conn._connect())
    finally:
        s.close()


def test_output_that_looks_like_a_frame_end_does_not_end_the_frame(conn):
    hostile = (f"{END} 00000000000000000000000000000000 0\r\n\r\n{END} \r\n{READY}\r\n"
               f"x{END} y 0\r\n")
    s = session(conn)
    try:
        script = 'echo "$$"\nprintf \'%s\' "$1"\n'.replace('"$1"', "'" + hostile + "'")
        res = s.run(["h"], script, 10, conn)
        assert (res.stdout, res.exit_status) == (hostile, 0)
        assert s.run(["n"], 'echo "$$"\necho next\n', 10, conn).stdout == "next\n"
    finally:
        s.close()


def test_a_timeout_kills_the_scripts_work_and_drops_the_session(conn):
    marker = uuid.uuid4().hex[:12]
    seconds = f"300.{int(marker, 16) % 10 ** 6:06d}"
    s = session(conn)
    res = s.run(["slow"], f'echo "$$"\nsleep {seconds}\n', 1.0, conn)
    assert res.timed_out and res.exit_status is None
    assert not s.usable(conn._connect())
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        left = conn.run(["pgrep", "-f", f"[s]leep {seconds}"], warn=True).stdout.split()
        if not left:
            break
        time.sleep(0.1)
    assert left == [], "the timed-out script is still running on the host"


def test_a_session_that_ends_under_a_script_is_lost_with_the_script_unknown(conn):
    s = session(conn)
    with pytest.raises(SessionLost) as info:
        s.run(["die"], 'echo "$$"\nkill -9 "$PPID"\n', 20, conn)
    assert info.value.ran
    s.close()


def test_a_session_that_cannot_start_is_lost_before_anything_ran(conn, monkeypatch):
    monkeypatch.setattr(ssh_powershell, "session_command",
                        lambda: "echo 'powershell.exe: not found' >&2; exit 127")
    with pytest.raises(SessionLost, match="could not start: powershell.exe ended before it "
                                          r"was ready \(powershell.exe: not found\)") as info:
        session(conn)
    assert not info.value.ran


class StandInShell(PosixShell):
    """POSIX rendering, with what the Windows shell adds for its session: each command
    as a script that prints its pid first (the stand-in runs it as sh)."""

    def warm_script(self, argv, pidfile=None) -> str:
        return 'echo "$$"\nexec ' + self.render(argv) + "\n"


@pytest.fixture
def warm_conn(conn):
    conn.shell = StandInShell()
    conn.warm_all = True            # as for a Windows host: every command in the session
    return conn


def session_pid(conn) -> str:
    return conn.run(["sh", "-c", 'echo "$PPID"']).stdout.strip()


def parent(conn) -> str:
    return conn.run(["sh", "-c", 'ps -o comm= -p "$PPID"']).stdout.strip()


def test_every_command_of_a_connection_goes_through_one_session(warm_conn):
    pids = {session_pid(warm_conn) for _ in range(4)}
    assert len(pids) == 1 and parent(warm_conn) == "sh"     # the stand-in session
    res = warm_conn.run(["sh", "-c", "echo out; echo err >&2; exit 3"], warn=True)
    assert (res.stdout, res.stderr, res.exit_status) == ("out\n", "err\n", 3)
    assert session_pid(warm_conn) in pids and warm_conn.notices == []


def test_a_timeout_drops_the_session_and_the_next_command_starts_another(warm_conn):
    before = session_pid(warm_conn)
    with pytest.raises(CommandTimeout):
        warm_conn.run(["sleep", "30"], timeout=1.0)
    after = session_pid(warm_conn)
    assert after != before and not warm_conn.warm_lost and warm_conn.notices == []


def test_a_session_that_dies_under_a_command_is_said_once_then_commands_run_alone(
        warm_conn, capsys):
    first = session_pid(warm_conn)
    with pytest.raises(ConnectError, match="warm PowerShell session ended while"):
        warm_conn.run(["sh", "-c", 'kill -9 "$PPID"'])
    assert warm_conn.warm_lost and len(warm_conn.notices) == 1
    assert parent(warm_conn) == "sshd"             # its own channel's, no session's
    assert session_pid(warm_conn) != first and parent(warm_conn) == "sshd"
    assert len(warm_conn.notices) == 1
    assert capsys.readouterr().err.count("the warm PowerShell session ended") == 1


def test_a_session_that_cannot_start_runs_the_command_alone(warm_conn, monkeypatch):
    monkeypatch.setattr(ssh_powershell, "session_command", lambda: "exit 127")
    assert warm_conn.run(["echo", "still"]).stdout == "still\n"
    assert warm_conn.run(["echo", "again"]).stdout == "again\n"
    assert len(warm_conn.notices) == 1 and "could not start" in warm_conn.notices[0]
