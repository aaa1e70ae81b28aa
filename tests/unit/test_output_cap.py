"""Every capture from a host is capped (nicbench/limits.py: the 8 MB ``nicbench parse``
reads): a command that prints more is killed as soon as its reply passes the limit, the
head of it is kept and marked, and the controller never holds more than the limit of it.
Run for real on this machine's shell (LocalConnection: the same scripts a host runs);
the SSH channels are tested the same way on the lab (tests/faults/test_trial_faults.py).
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from nicbench.errors import OutputTooLarge
from nicbench.execution.runner import Runner
from nicbench.limits import CAPTURE_LIMIT_BYTES, MAX_OUTPUT_BYTES, TRUNCATED_MARK
from nicbench.platforms.fake import Answer
from nicbench.platforms.linux import LinuxPlatform
from nicbench.remote.local import LocalConnection
from nicbench.remote.shell import PosixShell
from nicbench.results.records import Failure, Status
from nicbench.results.rundir import RunDir

from test_runner import INVENTORY, IPERF3_TCP, fake, profile

ONE = """\
    repetitions: 1
    mtu: [1500]
    tests:
      - {name: tcp, tool: iperf3, params: {duration_s: 1}}
    """


def test_parse_and_the_captures_share_one_limit():
    from nicbench.cli import parse

    assert parse.MAX_OUTPUT_BYTES is MAX_OUTPUT_BYTES == 8 << 20


def test_an_endless_command_is_killed_at_the_limit_and_holds_no_more(tmp_path):
    pidfile = tmp_path / "pid"
    tracemalloc.start()
    try:
        with pytest.raises(OutputTooLarge) as err:
            LocalConnection().run(["sh", "-c", 'echo "$$" >"$1"; exec yes nicbench-chatter',
                                   "nicbench", str(pidfile)], timeout=120, warn=True)
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    res = err.value.result
    assert res.truncated and not res.timed_out and res.exit_status is None
    assert len(res.stdout) <= CAPTURE_LIMIT_BYTES
    assert res.stdout.startswith("nicbench-chatter\n")
    # The reply is endless: holding it all would never end; a few copies of the limit
    # is what reading, decoding and the Result take.
    assert peak < 3 * CAPTURE_LIMIT_BYTES, peak
    stat = Path(f"/proc/{int(pidfile.read_text())}/stat")
    assert not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"


def test_a_reply_within_the_limit_is_read_whole():
    res = LocalConnection().run(["sh", "-c", "head -c 1000000 /dev/zero | tr '\\0' x"])
    assert (res.ok, len(res.stdout), res.truncated) == (True, 1_000_000, False)


def test_a_background_tool_s_output_is_sent_one_byte_over_what_is_kept(tmp_path):
    d = tmp_path / "bg"
    d.mkdir()
    (d / "out").write_bytes(b"y" * (MAX_OUTPUT_BYTES + 5000))
    (d / "err").write_text("an error line\n")
    (d / "rc").write_text("0\n")
    shell = PosixShell()
    res = LocalConnection().run(shell.collect_argv(str(d)))
    out, err, rc = shell.parse_collected(res.stdout)
    assert (len(out), err, rc) == (MAX_OUTPUT_BYTES + 1, "an error line\n", 0)


def test_a_client_over_the_limit_is_killed_and_its_pid_file_left_for_the_reap(tmp_path):
    plat = LinuxPlatform(LocalConnection())
    pidfile = tmp_path / "client.pid"
    with pytest.raises(OutputTooLarge):
        plat.run_client(["sh", "-c", "exec yes nicbench-client"], 120, str(pidfile), None)
    assert pidfile.exists()           # the trial reaps it (RoleRun._reap), as on a timeout
    assert plat.reap([str(pidfile)]) == {str(pidfile): "gone"}


def test_a_trial_whose_tool_printed_over_the_cap_fails_and_keeps_the_head(tmp_path):
    chatter = IPERF3_TCP + "x" * (MAX_OUTPUT_BYTES + 10)
    hosts = fake(lambda call: Answer(client=chatter))
    out = tmp_path / "out"
    Runner(profile(tmp_path, ONE), INVENTORY, out, hosts=hosts).run()
    (rec,) = RunDir(out).records()
    assert (rec.status, rec.failure) == (Status.FAILED, Failure.OUTPUT_CAP)
    assert rec.reason == ("client output over 8 MB (nicbench keeps at most 8 MB of a "
                          "tool's output)")
    kept = (out / rec.raw["client"]).read_text()
    assert kept == chatter[:MAX_OUTPUT_BYTES] + TRUNCATED_MARK
