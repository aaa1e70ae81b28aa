"""MTU and sysctl changes on the lab's hosts through LinuxPlatform over SSH, and their
restore: normally, after an exception, and after Ctrl-C (SIGINT) of another process.

MTUs are read back independently with ``ip -n <ns> -j link show`` (the ``mtus`` fixture),
not with the code under test.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest

from nicbench.errors import TuningError
from nicbench.platforms.tuning import TuningSession

pytestmark = pytest.mark.lab

JUMBO = 9000


def both(lab, key):
    link = next(l for l in lab.spec.links() if l.adapter.key == key)
    return link, link.host_a.name, link.host_b.name


def test_jumbo_mtu_applied_verified_and_restored(lab, pool, mtus):
    link, a, b = both(lab, "gbe")
    original = {a: mtus(a)[link.ifname], b: mtus(b)[link.ifname]}
    with TuningSession() as session:
        for host in (a, b):
            session.set_mtu(pool.platform(host), link.ifname, JUMBO)
        assert mtus(a)[link.ifname] == mtus(b)[link.ifname] == JUMBO
        pool.platform(a).verify_path_mtu(link.ifname, link.address("b"), JUMBO)
        pool.platform(b).verify_path_mtu(link.ifname, link.address("a"), JUMBO)
        # one byte more than the path carries is refused, so the check can fail
        with pytest.raises(TuningError, match="path MTU"):
            pool.platform(a).verify_path_mtu(link.ifname, link.address("b"), JUMBO + 1)
    assert {a: mtus(a)[link.ifname], b: mtus(b)[link.ifname]} == original
    assert session.pending() == [] and session.restore() == []


def test_path_mtu_check_fails_when_only_one_side_is_jumbo(lab, pool, mtus):
    link, a, _b = both(lab, "gbe")
    with TuningSession() as session:
        session.set_mtu(pool.platform(a), link.ifname, JUMBO)
        with pytest.raises(TuningError) as info:
            pool.platform(a).verify_path_mtu(link.ifname, link.address("b"), JUMBO)
        assert info.value.setting == f"path MTU to {link.address('b')}"


def test_restore_after_an_exception_mid_way(lab, pool, mtus):
    link, a, b = both(lab, "gbe")
    original = {a: mtus(a)[link.ifname], b: mtus(b)[link.ifname]}
    with pytest.raises(RuntimeError, match="mid-run failure"), TuningSession() as session:
        session.set_mtu(pool.platform(a), link.ifname, JUMBO)
        session.set_mtu(pool.platform(b), link.ifname, JUMBO)
        assert mtus(b)[link.ifname] == JUMBO
        raise RuntimeError("mid-run failure")
    assert {a: mtus(a)[link.ifname], b: mtus(b)[link.ifname]} == original


SIGINT_SCRIPT = textwrap.dedent("""\
    import sys, time
    from nicbench.config.loader import load_inventory
    from nicbench.tools.registry import CATALOG
    from nicbench.platforms.hosts import HostPool
    from nicbench.platforms.tuning import TuningSession

    inventory, iface, mtu, hosts = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    with HostPool(load_inventory(inventory, CATALOG)) as pool:
        try:
            with TuningSession() as session:
                for host in hosts:
                    session.set_mtu(pool.platform(host), iface, mtu)
                print("applied", flush=True)
                time.sleep(120)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(130)
    sys.exit(3)
""")


def test_restore_after_sigint(lab, mtus, tmp_path):
    link, a, b = both(lab, "gbe")
    original = {a: mtus(a)[link.ifname], b: mtus(b)[link.ifname]}
    script = tmp_path / "hold_mtu.py"
    script.write_text(SIGINT_SCRIPT)
    proc = subprocess.Popen([sys.executable, str(script), str(lab.inventory_file), link.ifname,
                             str(JUMBO), a, b], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        line = _read_line(proc, timeout_s=30)
        assert line == "applied\n", proc.stderr.read() if proc.poll() is not None else line
        assert mtus(a)[link.ifname] == mtus(b)[link.ifname] == JUMBO
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert (proc.returncode, out) == (130, "interrupted\n"), err
    assert {a: mtus(a)[link.ifname], b: mtus(b)[link.ifname]} == original


def _read_line(proc: subprocess.Popen, timeout_s: float) -> str:
    import selectors

    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    if not sel.select(timeout_s):
        raise AssertionError(f"no output from the helper within {timeout_s} s")
    return proc.stdout.readline()


def test_nojumbo_refuses_with_the_kernels_words(lab, pool, mtus):
    link, a, b = both(lab, "nojumbo")
    # What the kernel says, asked directly (not through nicbench):
    direct = subprocess.run(["ip", "-n", a, "link", "set", "dev", link.ifname, "mtu",
                             str(JUMBO)], capture_output=True, text=True, timeout=10)
    assert direct.returncode != 0
    with TuningSession() as session, pytest.raises(TuningError) as info:
        session.set_mtu(pool.platform(a), link.ifname, JUMBO)
    err = info.value
    assert err.kernel_message == direct.stderr.strip() == "RTNETLINK answers: Invalid argument"
    assert (err.host, err.setting, err.value) == (a, f"MTU of {link.ifname}", JUMBO)
    assert mtus(a)[link.ifname] == 1500 and mtus(b)[link.ifname] == 1500
    # and check shows why: the macvlan's ceiling is its lower device's MTU
    assert pool.platform(a).interface_facts(link.ifname).max_mtu == 1500


SYSCTL = "net.ipv4.tcp_rmem"      # per network namespace (unlike net.core.rmem_max)


def _sysctl(ns: str | None, name: str) -> str:
    argv = (["ip", "netns", "exec", ns] if ns else []) + ["sysctl", "-n", name]
    return subprocess.run(argv, capture_output=True, text=True, check=True,
                          timeout=10).stdout.strip()


def test_sysctl_apply_and_restore_stays_in_the_namespace(lab, pool):
    a, b = (h.name for h in lab.spec.hosts())
    before = {ns: _sysctl(ns, SYSCTL) for ns in (a, b, None)}
    fields = before[a].split()
    wanted = f"{fields[0]} {int(fields[1]) * 2} {int(fields[2]) * 2}"
    with TuningSession() as session:
        session.set_sysctl(pool.platform(a), SYSCTL, wanted)
        assert _sysctl(a, SYSCTL).split() == wanted.split()
        # only host a's namespace changed: not host b, not the machine itself
        assert _sysctl(b, SYSCTL) == before[b] and _sysctl(None, SYSCTL) == before[None]
        session.set_sysctl(pool.platform(a), "net.ipv4.tcp_timestamps",
                           "0" if _sysctl(a, "net.ipv4.tcp_timestamps") == "1" else "1")
    assert {ns: _sysctl(ns, SYSCTL) for ns in (a, b, None)} == before
    assert _sysctl(a, "net.ipv4.tcp_timestamps") == _sysctl(b, "net.ipv4.tcp_timestamps")


def test_unknown_sysctl_is_refused(lab, pool):
    a = lab.spec.hosts()[0].name
    with pytest.raises(TuningError) as info:
        pool.platform(a).set_sysctl("net.ipv4.nicbench_no_such_key", "1")
    assert info.value.kernel_message == ("sysctl: cannot stat "
                                         "/proc/sys/net/ipv4/nicbench_no_such_key: "
                                         "No such file or directory")
