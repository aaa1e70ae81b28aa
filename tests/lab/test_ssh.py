"""SshConnection against the lab's real sshd: commands, timeouts that kill on the host,
background processes, host-key checking and unreachable hosts."""

from __future__ import annotations

import re
import time
import uuid
from dataclasses import replace

import pytest

from nicbench.errors import CommandFailed, CommandTimeout, ConnectError, HostKeyError
from nicbench.platforms.hosts import ssh_target
from nicbench.remote.command import Secret
from nicbench.remote.ssh import SshConnection, SshTarget

pytestmark = pytest.mark.lab


def target(lab_inventory, name: str) -> SshTarget:
    return replace(ssh_target(lab_inventory, lab_inventory.host(name)), connect_timeout_s=5)


@pytest.fixture
def conn(lab, lab_inventory):
    c = SshConnection(target(lab_inventory, lab.spec.hosts()[0].name))
    yield c
    c.close()


def accepted_logins(lab, host_index: int = 0) -> int:
    log = lab.host_dir(lab.spec.hosts()[host_index]) / "sshd.log"
    return log.read_text().count("Accepted publickey") if log.exists() else 0


def host_pub_key(lab, host_index: int) -> tuple[str, str]:
    kind, b64 = (lab.host_dir(lab.spec.hosts()[host_index]) /
                 "ssh_host_ed25519_key.pub").read_text().split()[:2]
    return kind, b64


def test_run_stdout_stderr_status(conn, lab):
    res = conn.run(["sh", "-c", 'echo "out $1"; echo "err $1" >&2; exit 3', "x", "a b;c"],
                   warn=True)
    assert (res.stdout, res.stderr, res.exit_status, res.ok) == \
        ("out a b;c\n", "err a b;c\n", 3, False)
    assert res.host == lab.spec.hosts()[0].name
    with pytest.raises(CommandFailed) as info:
        conn.run(["sh", "-c", "echo 'no such thing' >&2; exit 4"])
    assert str(info.value) == (f"{conn.host}: `sh -c 'echo '\"'\"'no such thing'\"'\"' >&2; "
                               "exit 4'` exited 4: no such thing")


def test_raw_keeps_the_bytes_as_sent_without_the_pid_line(conn):
    # `nicbench windows capture` saves these: CRLF and bytes that are not UTF-8 intact.
    res = conn.run(["printf", "a\\r\\nb\\377\\n"], warn=True)
    assert res.raw == (b"a\r\nb\xff\n", b"")
    assert res.stdout == "a\r\nb\ufffd\n"


def test_runs_inside_the_hosts_namespace(conn, lab):
    # The test address exists only inside the host's namespace.
    res = conn.run(["ip", "-br", "addr", "show", "dev", lab.spec.links()[0].ifname])
    assert lab.spec.links()[0].address("a") + "/24" in res.stdout


def test_large_output_and_secret(conn):
    res = conn.run(["sh", "-c", 'head -c 300000 /dev/zero | tr "\\0" x; printf "%s" "$1"',
                    "x", Secret("hunter2")])
    assert len(res.stdout) == 300000 + len("hunter2") and res.stdout.endswith("hunter2")
    assert "hunter2" not in res.command


def remote_pids(conn, pattern: str) -> list[str]:
    # pgrep -f with a [x] class: the regex does not match pgrep's own argument
    res = conn.run(["pgrep", "-f", pattern], warn=True, timeout=10)
    return res.stdout.split()


@pytest.mark.parametrize("warm", [False, True], ids=["channel", "warm-shell"])
def test_timeout_kills_the_command_on_the_host(conn, warm):
    marker = uuid.uuid4().hex[:12]
    seconds = f"300.{int(marker, 16) % 10 ** 6:06d}"       # a sleep argument nobody else uses
    argv = ["sh", "-c", 'sleep "$1"; echo finished', f"nbmarker-{marker}", seconds]
    t0 = time.monotonic()
    with pytest.raises(CommandTimeout) as info:
        conn.run(argv, timeout=1, warm=warm)
    # at its timeout, not the command's 300 s (the bound only tells a kill from a wait,
    # with room for a loaded machine)
    assert 1 <= time.monotonic() - t0 < 60
    assert info.value.result.timed_out and info.value.result.exit_status is None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        left = remote_pids(conn, f"[n]bmarker-{marker}") + remote_pids(conn, f"[s]leep {seconds}")
        if not left:
            break
        time.sleep(0.1)
    assert left == [], "the timed-out command is still running on the host"
    # The next call works (a warm shell whose command timed out is replaced).
    assert conn.run(["echo", "next"], warm=warm).stdout == "next\n"


def test_background_start_is_running_stop_collect(conn):
    seconds = f"300.{uuid.uuid4().int % 10 ** 6:06d}"
    bg = conn.start(["sh", "-c", 'echo started; echo "to err" >&2; exec sleep "$1"', "bg",
                     seconds], f"/tmp/nicbench-test-{uuid.uuid4().hex}")
    # the unique argument is in the shell's argv before it execs sleep, and in sleep's after
    mine = f"[3]{seconds[1:]}"
    try:
        assert bg.is_running()
        assert remote_pids(conn, mine), "the background command is not running"
        bg.stop(grace_s=2)
        assert not bg.is_running()
        assert remote_pids(conn, mine) == []
        res = bg.collect()
    except BaseException:               # a failed check leaves no sleep and no directory
        bg.stop(grace_s=2)
        bg.collect()
        raise
    assert (res.stdout, res.stderr, res.exit_status) == ("started\n", "to err\n", None)
    assert conn.run(["test", "-e", bg.workdir], warn=True).exit_status == 1


def test_background_that_ends_by_itself(conn):
    bg = conn.start(["sh", "-c", "echo done; exit 6"], f"/tmp/nicbench-test-{uuid.uuid4().hex}")
    assert bg.wait(10)
    assert not bg.is_running()
    res = bg.collect()
    assert (res.stdout, res.exit_status) == ("done\n", 6)


def test_wrong_host_key_is_refused_before_login(lab, lab_inventory, tmp_path):
    # known_hosts says host a has host b's key: a man in the middle, as far as we know.
    a = lab.spec.hosts()[0]
    kind, b64 = host_pub_key(lab, 1)
    known = tmp_path / "known_hosts"
    known.write_text(f"{a.address} {kind} {b64}\n")
    before = accepted_logins(lab)
    c = SshConnection(replace(target(lab_inventory, a.name), known_hosts=str(known)))
    with pytest.raises(HostKeyError) as info:
        c.run(["true"])
    assert str(info.value).startswith(f"{a.name}: host key of {a.address} differs from the one "
                                      f"in {known}")
    assert accepted_logins(lab) == before                 # never logged in
    assert known.read_text() == f"{a.address} {kind} {b64}\n"   # and never rewrote the file
    # not even with trust_new_keys: only unknown hosts are recorded, never replaced
    c2 = SshConnection(replace(target(lab_inventory, a.name), known_hosts=str(known)),
                       trust_new_keys=True)
    with pytest.raises(HostKeyError):
        c2.run(["true"])
    assert accepted_logins(lab) == before


def test_unknown_host_without_known_hosts_file(lab, lab_inventory, tmp_path):
    a = lab.spec.hosts()[0]
    missing = tmp_path / "none" / "known_hosts"
    c = SshConnection(replace(target(lab_inventory, a.name), known_hosts=str(missing)))
    with pytest.raises(HostKeyError, match="does not exist"):
        c.run(["true"])
    assert not missing.exists()


def test_host_missing_from_known_hosts(lab, lab_inventory, tmp_path):
    a = lab.spec.hosts()[0]
    kind, b64 = host_pub_key(lab, 1)
    known = tmp_path / "known_hosts"
    known.write_text(f"{lab.spec.hosts()[1].address} {kind} {b64}\n")    # only host b
    before = accepted_logins(lab)
    c = SshConnection(replace(target(lab_inventory, a.name), known_hosts=str(known)))
    with pytest.raises(HostKeyError) as info:
        c.run(["true"])
    assert str(info.value).startswith(f"{a.name}: {a.address} is not in {known}")
    assert accepted_logins(lab) == before


def test_trust_new_keys_records_the_key(lab, lab_inventory, tmp_path):
    a = lab.spec.hosts()[0]
    known = tmp_path / "new" / "known_hosts"
    c = SshConnection(replace(target(lab_inventory, a.name), known_hosts=str(known)),
                      trust_new_keys=True)
    assert c.run(["echo", "hi"]).stdout == "hi\n"
    c.close()
    kind, b64 = host_pub_key(lab, 0)
    assert known.read_text() == f"{a.address} {kind} {b64}\n"
    # the recorded file now works without the opt-in
    c3 = SshConnection(replace(target(lab_inventory, a.name), known_hosts=str(known)))
    assert c3.run(["true"]).ok
    c3.close()


def test_unreachable_address_fails_within_the_connect_timeout(lab, lab_inventory):
    # An unused address inside host a's own management /24: the packets stay on the lab's
    # veth (no route leaves the machine), and nothing answers ARP.
    a = lab.spec.hosts()[0]
    unused = f"{a.mgmt_net}.77"
    t = replace(target(lab_inventory, a.name), address=unused, connect_timeout_s=2)
    t0 = time.monotonic()
    with pytest.raises(ConnectError) as info:
        SshConnection(t).run(["true"])
    elapsed = time.monotonic() - t0
    assert elapsed < t.connect_timeout_s + 2
    assert re.match(rf"{a.name}: (cannot reach {re.escape(unused)}:22|{re.escape(unused)}:22 "
                    r"did not answer within 2 s)", str(info.value)), str(info.value)


def test_output_is_complete_even_when_the_exit_status_comes_first(conn):
    # sshd may send exit-status before the last output; 256 KB used to be all that arrived.
    for size in (300_000, 2_000_000):
        res = conn.run(["sh", "-c", f'head -c {size} /dev/zero | tr "\\0" x; echo; echo end'])
        assert res.stdout == "x" * size + "\nend\n"


def test_a_leftover_child_holding_the_output_open_does_not_hang_the_call(conn):
    seconds = f"30.{uuid.uuid4().int % 10 ** 6:06d}"
    t0 = time.monotonic()
    res = conn.run(["sh", "-c", 'sleep "$1" & echo started', "x", seconds], timeout=20)
    try:
        assert (res.stdout, res.exit_status) == ("started\n", 0)
        assert time.monotonic() - t0 < 5
    finally:
        conn.run(["pkill", "-f", f"^sleep {seconds}$"], warn=True)


# -- the warm shell: a trial's commands through one long-lived sh (ssh.WarmShell) -----------

WARM_CASES = [
    ["sh", "-c", 'echo "out $1"; echo "err $1" >&2; exit 3', "x", "a b;c"],
    ["printf", "a\\r\\nb\\377"],                               # no newline at the end, not UTF-8
    ["sh", "-c", 'printf "\\n@@nicbench-done 1.x 0\\n"; head -c 300000 /dev/zero | tr "\\0" x'],
    ["sh", "-c", "cat; echo read-nothing"],                  # stdin is /dev/null, not the shell's
    ["sh", "-c", "kill -TERM $$"],
]


def test_warm_runs_give_what_a_channel_of_their_own_gives(conn):
    for argv in WARM_CASES:
        cold = conn.run(argv, warn=True)
        warm = conn.run(argv, warn=True, warm=True)
        want = (cold.stdout, cold.stderr, cold.raw)
        assert (warm.stdout, warm.stderr, warm.raw) == want, argv
        # A signal: sshd reports no exit status (-1) where the shell says 128 + signal.
        assert warm.exit_status == (143 if cold.exit_status == -1 else cold.exit_status), argv


def test_warm_runs_share_one_shell_and_each_is_a_session_of_its_own(conn):
    parents, sessions = set(), set()
    for _ in range(3):
        res = conn.run(["sh", "-c", 'echo "$PPID $(ps -o sid= -p $$) $$"'], warm=True)
        ppid, sid, pid = res.stdout.split()
        parents.add(ppid)
        sessions.add(sid)
        assert sid == pid            # its own session and group: what a timeout kills
    assert len(parents) == 1 and len(sessions) == 3
    cold = conn.run(["sh", "-c", 'echo "$PPID"']).stdout.split()[0]
    assert cold not in parents


def test_the_warm_shell_ends_with_its_connection(conn, lab, lab_inventory):
    shell_pid = conn.run(["sh", "-c", 'echo "$PPID"'], warm=True).stdout.strip()
    other = SshConnection(target(lab_inventory, lab.spec.hosts()[0].name))
    try:
        assert other.run(["kill", "-0", shell_pid], warn=True).ok
        conn.close()
        deadline = time.monotonic() + 5
        while other.run(["kill", "-0", shell_pid], warn=True).ok:
            assert time.monotonic() < deadline, "the warm shell outlived its connection"
            time.sleep(0.1)
    finally:
        other.close()
