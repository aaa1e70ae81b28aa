"""Commands reach the program word for word, whatever the words contain.

Rendering is proved by running: each rendered string is executed by a real ``sh -c`` (as
sshd does with an exec request) and the program prints the argv it received, NUL-separated
(``printf '%s\\0'``) so that words with newlines come back intact.
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from nicbench.errors import CommandFailed
from nicbench.remote.command import Secret, display
from nicbench.remote.shell import PosixShell
from nicbench.remote.fake import FakeConnection
from nicbench.remote.local import LocalConnection
from nicbench.remote.result import make_result

SH = PosixShell()

NASTY = [
    "plain",
    "two words",
    "",                              # an empty argument must stay an argument
    "it's",
    'say "hi"',
    "a;reboot",
    "$(touch CANARY)",
    "`touch CANARY`",
    "$HOME",
    "${PATH}",
    "line1\nline2",
    "tab\there",
    "back\\slash",
    "*",
    "~",
    "-n",
    "a|b&c>d<e",
    "#comment",
    "'",
    '"',
    "héllo wörld ✓",
]


def printed_argv(stdout: bytes) -> list[str]:
    assert stdout.endswith(b"\0")
    return [w.decode() for w in stdout[:-1].split(b"\0")]


def sh(script: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["sh", "-c", script], cwd=cwd, capture_output=True, timeout=20)


def test_render_round_trips_through_sh(tmp_path):
    proc = sh(SH.render(["printf", "%s\\0", *NASTY]), tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert printed_argv(proc.stdout) == NASTY
    assert not (tmp_path / "CANARY").exists()      # no command substitution ran


@pytest.mark.parametrize("word", NASTY)
def test_each_word_alone(tmp_path, word):
    proc = sh(SH.render(["printf", "%s\\0", word]), tmp_path)
    assert printed_argv(proc.stdout) == [word]


def test_render_refuses_an_empty_command():
    with pytest.raises(ValueError):
        SH.render([])


def test_render_with_pid_prints_the_pid_of_the_exec_d_command(tmp_path):
    # The inner sh prints its own $$; the wrapper printed its pid first, then exec'd it, so
    # both numbers are the same process (what a timeout kill relies on).
    script = SH.render_with_pid(["sh", "-c", 'printf "%s\\0" "$$" "$@"', "inner", *NASTY])
    proc = sh(script, tmp_path)
    assert proc.returncode == 0, proc.stderr
    first, _, rest = proc.stdout.partition(b"\n")
    words = printed_argv(rest)
    assert first.decode() == words[0]
    assert words[1:] == NASTY
    assert not (tmp_path / "CANARY").exists()


def test_background_argv_keeps_words_and_writes_out_err_rc(tmp_path):
    # As over SSH: background_argv wrapped by render_with_pid, run by sh -c.
    argv = ["sh", "-c", 'printf "%s\\0" "$@"; echo oops >&2; exit 7', "bg", *NASTY]
    proc = sh(SH.render_with_pid(SH.background_argv(argv, str(tmp_path / "bg d'ir $x"))),
              tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.decode().splitlines()
    pid, workdir = lines[1].split(" ", 1)
    assert int(pid) > 1
    rc_file = Path(workdir) / "rc"
    # written, not only there: the wrapper creates it before it writes the status (the
    # bound only turns "never" into a failure, far above a loaded machine's delay)
    deadline = time.monotonic() + 30
    while not (rc_file.exists() and rc_file.stat().st_size) and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        assert rc_file.read_text().strip() == "7"
        assert printed_argv((Path(workdir) / "out").read_bytes()) == NASTY
        assert (Path(workdir) / "err").read_text() == "oops\n"
    finally:
        subprocess.run(SH.cleanup_argv(workdir), check=True)
    assert not (tmp_path / "CANARY").exists()


def fresh_dir() -> str:
    return f"/tmp/nicbench-test-{uuid.uuid4().hex}"


def test_background_through_a_local_connection():
    conn = LocalConnection()
    bg = conn.start(["sh", "-c", 'printf "%s\\0" "$@"; exec sleep 30', "bg", *NASTY],
                    fresh_dir())
    out = Path(bg.workdir) / "out"
    try:
        assert bg.is_running()
        # stopped once it has printed (not before it ran, on a loaded machine); the bound
        # only turns "never" into a failure
        deadline = time.monotonic() + 30
        while (not out.exists() or out.read_bytes().count(b"\0") < len(NASTY)) \
                and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        bg.stop(grace_s=2)
    assert not bg.is_running()
    res = bg.collect()
    assert printed_argv(res.stdout.encode()) == NASTY
    assert res.exit_status is None            # killed, not exited
    assert not Path(bg.workdir).exists()       # collect removes its temp directory


def test_background_exit_status_when_it_ends_by_itself():
    bg = LocalConnection().start(["sh", "-c", "echo out; echo err >&2; exit 4"], fresh_dir())
    assert bg.wait(10)
    res = bg.collect()
    assert (res.stdout, res.stderr, res.exit_status) == ("out\n", "err\n", 4)


def test_kill_argv_kills_the_whole_group(tmp_path):
    conn = LocalConnection()
    marker = f"{30 + os.getpid() % 1000 / 1000:.3f}"
    bg = conn.start(["sh", "-c", f"sleep {marker} & sleep {marker}; wait"], fresh_dir())
    assert bg.is_running()
    conn.run(SH.kill_argv(bg.pid, "KILL"), timeout=10)
    assert bg.wait(5)
    assert not [p for p in Path("/proc").glob("[0-9]*")
                if _cmdline(p) == ["sleep", marker]]
    bg.collect()


def _cmdline(proc_dir: Path) -> list[str]:
    try:
        raw = (proc_dir / "cmdline").read_bytes()
    except OSError:
        return []
    return [w.decode(errors="replace") for w in raw.split(b"\0") if w]


# -- secrets ---------------------------------------------------------------------------
def test_secret_is_rendered_but_never_displayed(tmp_path):
    argv = ["printf", "%s\\0", "--password", Secret("hunter2 $(x)")]
    assert display(argv) == "printf '%s\\0' --password ***"
    proc = sh(SH.render(argv), tmp_path)
    assert printed_argv(proc.stdout) == ["--password", "hunter2 $(x)"]
    assert "hunter2" not in repr(argv[-1])


def test_secret_masked_in_result_and_errors():
    conn = LocalConnection()
    res = conn.run(["sh", "-c", 'printf "%s" "$1"', "x", Secret("hunter2")])
    assert res.stdout == "hunter2"                     # the program got the real word
    assert res.command == "sh -c 'printf \"%s\" \"$1\"' x ***"
    with pytest.raises(CommandFailed) as info:
        conn.run(["sh", "-c", 'echo "denied" >&2; exit 3', "x", Secret("hunter2")])
    assert "hunter2" not in str(info.value)
    assert str(info.value) == "localhost: `sh -c 'echo \"denied\" >&2; exit 3' x ***` exited 3: denied"


def test_secret_masked_in_fake_and_background():
    fake = FakeConnection(default=("", "access denied", 1))
    res = fake.run(["mysql", "-u", "root", "-p", Secret("hunter2")], warn=True)
    assert res.command == "mysql -u root -p ***"
    assert fake.commands == ["mysql -u root -p ***"]
    assert fake.calls[0][-1] == "hunter2"             # what would really run
    assert make_result("h", ["x", Secret("s")]).command == "x ***"
    bg = LocalConnection().start(["true", Secret("hunter2")], fresh_dir())
    assert bg.command == "true ***"
    bg.wait(5)
    assert "hunter2" not in bg.collect().command
