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

from nicbench.platforms.hosts import ssh_target
from nicbench.remote import ssh_powershell
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
