"""Results, the errors that carry them, the local and fake connections, and restore order.

Output in the error-message tests comes from really running the command (locally), and
the expected text is built from an independent ``subprocess.run`` of the same command.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from nicbench.errors import (CommandFailed, CommandTimeout, ConfigError, ConfigErrors,
                             NicbenchError, TuningError)
from nicbench.platforms.base import CpuTimes, HostFacts, InterfaceFacts
from nicbench.platforms.linux import LinuxPlatform
from nicbench.platforms.tuning import TuningSession, read_journal_entries
from nicbench.remote.fake import FakeConnection
from nicbench.remote.local import LocalConnection
from nicbench.remote.result import make_result


# -- Result ----------------------------------------------------------------------------
def test_ok():
    assert make_result("h", ["true"], exit_status=0).ok
    assert not make_result("h", ["false"], exit_status=1).ok
    assert not make_result("h", ["sleep", "9"], exit_status=None, timed_out=True).ok
    assert not make_result("h", ["x"], exit_status=0, timed_out=True).ok


def test_tail_prefers_stderr_and_keeps_the_last_lines():
    r = make_result("h", ["x"], stdout="o1\no2\n", stderr="e1\n\n  e2  \ne3\ne4\n\n")
    assert r.tail() == "e2 | e3 | e4"
    assert r.tail(1) == "e4"
    assert make_result("h", ["x"], stdout="a\nb\n", stderr=" \n").tail() == "a | b"
    assert make_result("h", ["x"]).tail() == ""


def test_run_raises_on_a_non_zero_exit_unless_warned():
    answers = {"true": ("", "", 0),
               "ip link": ("", "RTNETLINK answers: Invalid argument\n", 2)}
    conn = FakeConnection("h", replies=answers)
    assert conn.run(["true"]).ok
    assert conn.run(["ip", "link"], warn=True).exit_status == 2
    with pytest.raises(CommandFailed) as info:
        conn.run(["ip", "link"], hint="try a smaller MTU")
    assert info.value.result.exit_status == 2
    assert str(info.value) == ("h: `ip link` exited 2: RTNETLINK answers: Invalid argument "
                               "(try a smaller MTU)")


def test_command_failed_carries_command_and_output_tail(tmp_path):
    missing = tmp_path / "no such dir"
    argv = ["ls", str(missing)]
    real = subprocess.run(argv, capture_output=True, text=True)
    with pytest.raises(CommandFailed) as info:
        LocalConnection("ctl").run(argv)
    err = info.value
    assert err.host == "ctl"
    assert err.result.exit_status == real.returncode != 0
    assert err.result.stderr == real.stderr
    assert str(err) == (f"ctl: `ls '{missing}'` exited {real.returncode}: "
                        f"{real.stderr.strip()}")
    assert err.exit_code == 1 and isinstance(err, NicbenchError)


def test_warn_returns_the_failed_result():
    res = LocalConnection().run(["sh", "-c", "echo out; echo err >&2; exit 5"], warn=True)
    assert (res.stdout, res.stderr, res.exit_status, res.ok) == ("out\n", "err\n", 5, False)
    assert res.command == "sh -c 'echo out; echo err >&2; exit 5'"
    assert res.duration_s > 0 and res.started_at > 0


def test_missing_program_is_exit_127():
    res = LocalConnection().run(["nicbench-no-such-program"], warn=True)
    assert (res.exit_status, res.stderr) == (127, "nicbench-no-such-program: command not found")


def _procs_with_argv(argv: list[str]) -> list[int]:
    found = []
    for p in Path("/proc").glob("[0-9]*"):
        try:
            raw = (p / "cmdline").read_bytes()
        except OSError:
            continue
        if [w.decode(errors="replace") for w in raw.split(b"\0") if w] == argv:
            found.append(int(p.name))
    return found


def test_local_timeout_raises_quickly_and_kills():
    marker = f"30.{os.getpid()}{int(time.time() * 1000) % 100000}"
    t0 = time.monotonic()
    with pytest.raises(CommandTimeout) as info:
        LocalConnection().run(["sh", "-c", f"echo started; sleep {marker}; echo never"],
                              timeout=0.5)
    elapsed = time.monotonic() - t0
    # at its timeout, not the command's 30 s: the upper bound only tells a kill from a
    # wait for the command's end (half of it), far above what a loaded machine takes
    assert 0.5 <= elapsed < 15, elapsed
    err = info.value
    assert err.timeout_s == 0.5
    assert err.result.timed_out and err.result.exit_status is None
    assert str(err) == (f"localhost: `sh -c 'echo started; sleep {marker}; echo never'` "
                        "timed out after 0.5 s and was killed: started")
    assert _procs_with_argv(["sleep", marker]) == []
    assert _procs_with_argv(["sh", "-c", f"echo started; sleep {marker}; echo never"]) == []


def test_timeout_raises_even_with_warn():
    with pytest.raises(CommandTimeout):
        LocalConnection().run(["sleep", "5"], timeout=0.2, warn=True)


# -- ConfigErrors ----------------------------------------------------------------------
def test_config_errors_lines():
    errs = ConfigErrors([
        ConfigError("unknown host 'nb-c' (hosts: nb-a, nb-b)", file="inv.yaml", line=14,
                    key="pairs[0].a.host"),
        ConfigError("file is empty", file="p.yaml"),
        ConfigError("no line", key="x"),
    ])
    assert errs.lines() == ["inv.yaml:14: pairs[0].a.host: unknown host 'nb-c' (hosts: nb-a, nb-b)",
                            "p.yaml: file is empty",
                            "x: no line"]
    assert str(errs) == "\n".join(errs.lines())
    assert (errs.file, errs.line, errs.key) == ("inv.yaml", 14, "pairs[0].a.host")
    assert errs.exit_code == 2
    assert errs.one_line() == errs.lines()[0]


def test_tuning_error_keeps_the_kernel_words():
    err = TuningError("nb-a", "MTU of nojumbo", 9000, "RTNETLINK answers: Invalid argument\n",
                      "the driver or device does not accept this MTU")
    assert err.kernel_message == "RTNETLINK answers: Invalid argument"
    assert str(err) == ("nb-a: cannot set MTU of nojumbo to 9000: RTNETLINK answers: Invalid "
                        "argument (the driver or device does not accept this MTU)")


# -- FakeConnection --------------------------------------------------------------------
def test_fake_connection_records_and_replies():
    seen = []

    def handler(argv):
        seen.append(argv)
        return ("from handler\n", "", 0) if argv[0] == "uname" else None

    fake = FakeConnection("nb-a", replies={"ip link set": ("", "RTNETLINK answers: Invalid "
                                                           "argument\n", 2)},
                          default=("default\n", "", 0), handler=handler)
    assert fake.run(["uname", "-r"]).stdout == "from handler\n"
    with pytest.raises(CommandFailed) as info:
        fake.run(["ip", "link", "set", "dev", "x y", "mtu", 9000])
    assert str(info.value) == ("nb-a: `ip link set dev 'x y' mtu 9000` exited 2: "
                               "RTNETLINK answers: Invalid argument")
    assert fake.run(["hostname"]).stdout == "default\n"
    assert fake.calls == [["uname", "-r"], ["ip", "link", "set", "dev", "x y", "mtu", "9000"],
                          ["hostname"]]
    assert fake.commands[1] == "ip link set dev 'x y' mtu 9000"
    assert seen == fake.calls


# -- TuningSession ---------------------------------------------------------------------
class FakePlatform(LinuxPlatform):
    """Settings in a dict; every get/set appended to a shared log."""

    os_name = "fake"

    def __init__(self, host: str, log: list, mtus: dict, sysctls: dict, refuse=None):
        super().__init__(FakeConnection(host))
        self.log, self.mtus, self.sysctls = log, dict(mtus), dict(sysctls)
        self.refuse = refuse or (lambda kind, key, value: None)

    def get_mtu(self, iface):
        return self.mtus[iface]

    def set_mtu(self, iface, mtu):
        self.log.append((self.host, "mtu", iface, mtu))
        msg = self.refuse("mtu", iface, mtu)
        if msg:
            raise TuningError(self.host, f"MTU of {iface}", mtu, msg)
        self.mtus[iface] = mtu

    def get_sysctl(self, name):
        return self.sysctls[name]

    def set_sysctl(self, name, value):
        self.log.append((self.host, "sysctl", name, value))
        msg = self.refuse("sysctl", name, value)
        if msg:
            raise TuningError(self.host, name, value, msg)
        self.sysctls[name] = value

    def host_facts(self):  # pragma: no cover - not used here
        return HostFacts("fake", "0", None, None)

    def interface_facts(self, iface):  # pragma: no cover
        return InterfaceFacts(iface, self.mtus[iface], None, "up", True)

    def verify_path_mtu(self, iface, peer, mtu):  # pragma: no cover
        pass

    def reaches(self, iface, peer):  # pragma: no cover
        return True

    def cpu_times(self):  # pragma: no cover
        return CpuTimes(0, 0)

    def wait_listening(self, port, protocol, timeout_s):  # pragma: no cover
        pass

    def probe_version(self, tool, exe):  # pragma: no cover
        return None

    def scratch_file(self, name):  # pragma: no cover
        return name


@pytest.fixture
def two_hosts():
    log: list = []
    a = FakePlatform("a", log, {"eth1": 1500}, {"net.ipv4.tcp_rmem": "4096\t131072\t6291456"})
    b = FakePlatform("b", log, {"eth1": 1500}, {"net.ipv4.tcp_rmem": "4096\t131072\t6291456"})
    return log, a, b


def test_restore_in_reverse_order(two_hosts, tmp_path):
    log, a, b = two_hosts
    journal = tmp_path / "tuning.json"
    with TuningSession(journal=journal) as s:
        s.set_mtu(a, "eth1", 9000)
        s.set_mtu(b, "eth1", 9000)
        s.set_sysctl(a, "net.ipv4.tcp_rmem", "4096 262144 8388608")
        s.set_mtu(a, "eth1", 6000)                 # second change of a key
        assert [(c.host, c.key, c.original) for c in read_journal_entries(journal)[0]] == [
            ("a", "eth1", "1500"), ("b", "eth1", "1500"), ("a", "net.ipv4.tcp_rmem",
                                                           "4096\t131072\t6291456")]
        del log[:]
    assert log == [("a", "sysctl", "net.ipv4.tcp_rmem", "4096\t131072\t6291456"),
                   ("b", "mtu", "eth1", 1500),
                   ("a", "mtu", "eth1", 1500)]     # the true original, not 9000
    assert a.mtus == b.mtus == {"eth1": 1500}
    assert s.pending() == [] and s.restore() == []
    assert all(c.restored for c in read_journal_entries(journal)[0])


def test_unchanged_values_are_not_recorded(two_hosts):
    log, a, _ = two_hosts
    with TuningSession() as s:
        s.set_mtu(a, "eth1", 1500)
        s.set_sysctl(a, "net.ipv4.tcp_rmem", "4096 131072  6291456")   # same, other spaces
    assert s.changes == [] and log == []


def test_restore_after_an_exception_in_the_block(two_hosts):
    log, a, b = two_hosts
    with pytest.raises(RuntimeError, match="mid-run"), TuningSession() as s:
        s.set_mtu(a, "eth1", 9000)
        s.set_mtu(b, "eth1", 9000)
        raise RuntimeError("mid-run")
    assert log[-2:] == [("b", "mtu", "eth1", 1500), ("a", "mtu", "eth1", 1500)]
    assert a.mtus == b.mtus == {"eth1": 1500}


def test_refused_change_is_still_restored_and_other_restores_go_on(two_hosts):
    _log, a, b = two_hosts
    b.refuse = lambda kind, key, value: ("RTNETLINK answers: Invalid argument"
                                         if kind == "mtu" and value == 9000 else None)
    with pytest.raises(TuningError) as info, TuningSession() as s:
        s.set_mtu(a, "eth1", 9000)
        s.set_mtu(b, "eth1", 9000)
    assert info.value.kernel_message == "RTNETLINK answers: Invalid argument"
    assert a.mtus == b.mtus == {"eth1": 1500}
    # b's restore failing does not stop a's
    a.mtus["eth1"] = 9000
    b.refuse = lambda kind, key, value: "Operation not permitted"
    s2 = TuningSession()
    s2.set_mtu(a, "eth1", 6000)
    b.refuse = lambda *_: None
    s2.set_mtu(b, "eth1", 6000)
    b.refuse = lambda kind, key, value: "Operation not permitted"
    problems = s2.restore()
    assert [str(p) for p in problems] == [
        "b: mtu eth1 (to put back: 1500, now: 6000): b: cannot set MTU of eth1 to 1500: "
        "Operation not permitted"]
    assert a.mtus["eth1"] == 9000 and [c.host for c in s2.pending()] == ["b"]
    assert s2.restore() == problems        # asked again: the same problem, once


def test_ctrl_c_during_restore_is_held_until_restore_is_done(two_hosts):
    _log, a, b = two_hosts
    s = TuningSession()
    s.set_mtu(a, "eth1", 9000)
    s.set_mtu(b, "eth1", 9000)
    original_set = b.set_mtu

    def set_and_interrupt(iface, mtu):
        original_set(iface, mtu)
        os.kill(os.getpid(), signal.SIGINT)       # Ctrl-C in the middle of restoring
        time.sleep(0.05)

    b.set_mtu = set_and_interrupt
    with pytest.raises(KeyboardInterrupt):
        s.restore()
    assert a.mtus == b.mtus == {"eth1": 1500}     # a was still restored after b's Ctrl-C
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
