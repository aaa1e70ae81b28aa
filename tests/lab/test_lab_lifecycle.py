"""``lab up`` / ``lab down`` on the real machine: idempotent up, repair of a half-made lab,
and a down that leaves nothing of the lab behind.

Uses its own lab (prefix ``nbl``, slot 6, its own directory) so the session lab of the
other lab tests is not disturbed; runs under the same cross-process lock.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nicbench.config.loader import load_inventory
from nicbench.tools.registry import CATALOG
from nicbench.platforms.hosts import HostPool
from nicbench.errors import LabError
from nicbench.lab.lab import Lab, LabSpec

pytestmark = pytest.mark.lab

PREFIX = "nbl"
SLOT = 6


def netns_names() -> set[str]:
    out = subprocess.run(["ip", "-j", "netns", "list"], capture_output=True, text=True,
                         check=True, timeout=10).stdout
    return {n["name"] for n in json.loads(out or "[]")}


def root_links() -> list[str]:
    out = subprocess.run(["ip", "-br", "link"], capture_output=True, text=True, check=True,
                         timeout=10).stdout
    return [line.split()[0].split("@")[0] for line in out.splitlines() if line.strip()]


def sshd_pids_of(directory: Path) -> list[int]:
    """Live sshd processes whose command line names the lab directory (its -f config).

    sshd rewrites its command line ("sshd: /usr/sbin/sshd -f DIR/... [listener] ..."), so
    the whole of it is searched."""
    found = []
    needle = str(directory).encode() + b"/"
    for p in Path("/proc").glob("[0-9]*"):
        try:
            cmd = (p / "cmdline").read_bytes().replace(b"\0", b" ")
            stat = (p / "stat").read_text()
        except OSError:
            continue
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            continue
        if b"sshd" in cmd and needle in cmd:
            found.append(int(p.name))
    return found


def ssh_works(lab: Lab) -> list[str]:
    """Run `hostname` on every lab host over SSH; returns the answers."""
    with HostPool(load_inventory(lab.inventory_file, CATALOG)) as pool:
        return [pool.connection(h.name).run(["cat", "/proc/sys/kernel/hostname"], timeout=10).stdout
                for h in lab.spec.hosts()]


@pytest.fixture(scope="module")
def lifecycle_lab(labtests_lock, tmp_path_factory):
    """One lab directory for the module's tests. Each test begins with ``lab.up()``, which
    builds the lab where the test before took it down (or damaged it beyond repair) and
    finds it up otherwise: the repair tests damage a lab that is up either way, and the
    module builds 3 labs instead of 6 (issue 32: 20-40 s of the suite each)."""
    directory = tmp_path_factory.mktemp("nbl-lab")
    messages: list[str] = []
    lab = Lab(LabSpec(prefix=PREFIX, slot=SLOT, adapters=("gbe",)), directory,
              progress=messages.append)
    lab.messages = messages
    try:
        yield lab
    finally:
        lab.down()
        assert not {f"{PREFIX}-a", f"{PREFIX}-b"} & netns_names()


@pytest.fixture
def no_lifecycle_lab(lifecycle_lab):
    """For a test that needs no ``nbl`` lab at all (it makes its own, or checks that none
    is made): the module's lab, left up by the test before, is taken down first."""
    lifecycle_lab.down()


def assert_healthy(lab: Lab) -> None:
    rows = lab.status()
    assert [r["host"] for r in rows] == [f"{PREFIX}-a", f"{PREFIX}-b"]
    assert all(r["namespace"] and r["sshd_pid"] for r in rows), rows
    assert len(ssh_works(lab)) == 2


def test_up_twice_then_down_leaves_nothing(lifecycle_lab):
    lab = lifecycle_lab
    lab.up()
    assert_healthy(lab)
    pids = sorted(r["sshd_pid"] for r in lab.status())
    assert sorted(sshd_pids_of(lab.dir)) == pids

    lab.messages.clear()
    lab.up()                                          # second up: nothing to do
    assert lab.messages == ["lab already up"]
    assert sorted(r["sshd_pid"] for r in lab.status()) == pids
    assert_healthy(lab)

    removed = lab.down()
    assert f"namespace {PREFIX}-a" in removed and f"namespace {PREFIX}-b" in removed
    assert not {f"{PREFIX}-a", f"{PREFIX}-b"} & netns_names()
    assert not [l for l in root_links() if l.startswith(f"{PREFIX}m")]
    assert sshd_pids_of(lab.dir) == []
    assert not lab.state_file.exists() and not lab.inventory_file.exists()
    assert lab.down() == []                           # a second down is harmless


def processes_in(inodes: set[int]) -> list[int]:
    """Live processes whose network namespace is one of ``inodes`` (found through
    /proc/PID/ns/net, so also after the namespace's name was deleted)."""
    found = []
    for p in Path("/proc").glob("[0-9]*"):
        try:
            ns = os.readlink(p / "ns" / "net")
            state = (p / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and int(ns.strip("net:[]")) in inodes:
            found.append(int(p.name))
    return found


def test_down_ends_every_process_of_the_lab_even_with_a_connection_open(lifecycle_lab):
    lab = lifecycle_lab
    lab.up()
    inodes = {os.stat(f"/run/netns/{h.name}").st_ino for h in lab.spec.hosts()}
    pool = HostPool(load_inventory(lab.inventory_file, CATALOG))
    try:
        conn = pool.connection(f"{PREFIX}-a")
        conn.start(["sleep", "300"], f"/tmp/nicbench-test-down-{os.getpid()}")
        before = processes_in(inodes)
        assert len(before) >= 4       # 2 sshd, a session of the open connection, the sleep
        removed = lab.down()          # the connection is still open: a crashed controller
        assert any(r.endswith(f"processes in {PREFIX}-a") for r in removed), removed
        assert processes_in(inodes) == []
    finally:
        pool.close()
        subprocess.run(["rm", "-rf", f"/tmp/nicbench-test-down-{os.getpid()}"], timeout=10)


def test_up_repairs_a_dead_sshd(lifecycle_lab):
    lab = lifecycle_lab
    lab.up()
    victim = lab.status()[1]["sshd_pid"]
    os.kill(victim, signal.SIGKILL)
    _wait_gone(victim)
    assert lab.status()[1]["sshd_pid"] is None
    lab.messages.clear()
    lab.up()
    assert "replacing an existing or half-made lab" in lab.messages
    assert_healthy(lab)
    assert victim not in sshd_pids_of(lab.dir)


def test_up_repairs_a_deleted_namespace(lifecycle_lab):
    lab = lifecycle_lab
    lab.up()
    subprocess.run(["ip", "netns", "del", f"{PREFIX}-a"], check=True, timeout=10)
    assert f"{PREFIX}-a" not in netns_names()
    lab.up()
    assert {f"{PREFIX}-a", f"{PREFIX}-b"} <= netns_names()
    assert_healthy(lab)
    # the old sshd of nbl-a (its namespace gone) was stopped, not left behind
    assert len(sshd_pids_of(lab.dir)) == 2


def test_up_replaces_leftovers_without_state(lifecycle_lab):
    # A crash before state.json was written: namespaces exist, the directory knows nothing.
    lab = lifecycle_lab
    lab.up()
    old = sshd_pids_of(lab.dir)
    lab.state_file.unlink()
    lab.up()
    assert_healthy(lab)
    assert not set(old) & set(sshd_pids_of(lab.dir))
    assert len(sshd_pids_of(lab.dir)) == 2


def test_a_lab_up_elsewhere_is_neither_replaced_nor_removed(lifecycle_lab, tmp_path):
    # A second checkout with the same prefix must not strand the first one's lab.
    lab = lifecycle_lab
    lab.up()
    pids = sorted(r["sshd_pid"] for r in lab.status())
    other = Lab(lab.spec, tmp_path / "other-lab")
    for action in (other.up, other.down):
        with pytest.raises(LabError) as info:
            action()
        assert str(info.value) == (
            f"lab '{PREFIX}' is up and belongs to {lab.dir.resolve()}: bring it down there "
            f"(nicbench lab down --dir {lab.dir.resolve()}) or choose another "
            "NICBENCH_LAB_PREFIX")
    assert sorted(r["sshd_pid"] for r in lab.status()) == pids
    assert_healthy(lab)


def _wait_gone(pid: int, timeout_s: float = 5) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return
        if state == "Z":
            return
        time.sleep(0.05)
    raise AssertionError(f"process {pid} still alive after {timeout_s} s")


# -- not root ----------------------------------------------------------------------------
def _as_nobody(argv: list[str], cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                           *argv], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("action", ["up", "down"])
def test_not_root_is_one_clear_lab_error(action, labtests_lock, no_lifecycle_lab, tmp_path):
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed")
    tmp_path.chmod(0o777)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
           "NICBENCH_LAB_PREFIX": PREFIX, "NICBENCH_LAB_SLOT": str(SLOT),
           "NICBENCH_LAB_DIR": str(tmp_path / "lab")}
    probe = _as_nobody([sys.executable, "-c", "import nicbench.cli"], tmp_path, env)
    if probe.returncode != 0:
        pytest.skip(f"user nobody cannot run {sys.executable} with nicbench: "
                    f"{probe.stderr.strip()[-200:]}")
    proc = _as_nobody([sys.executable, "-m", "nicbench.cli", "lab", action], tmp_path, env)
    assert proc.returncode == 1
    assert proc.stderr == ("nicbench: error: the lab needs root (it creates network namespaces "
                           "and runs sshd): run nicbench lab as root\n")
    assert not (tmp_path / "lab").exists()
    assert not {f"{PREFIX}-a", f"{PREFIX}-b"} & netns_names()


# -- a damaged lab is made again as it was ------------------------------------------------
def test_up_rebuilds_a_damaged_two_pair_lab_with_its_two_pairs(labtests_lock, no_lifecycle_lab,
                                                                tmp_path):
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("NICBENCH_")},
           "NICBENCH_LAB_PREFIX": PREFIX, "NICBENCH_LAB_SLOT": str(SLOT),
           "NICBENCH_LAB_DIR": str(tmp_path / "lab")}
    names = {f"{PREFIX}-{x}" for x in "abcd"}

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "nicbench.cli", "lab", *args],
                              cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=300)

    try:
        made = cli("up", "--pairs", "2", "--adapters", "gbe")
        assert made.returncode == 0, made.stderr
        assert names <= netns_names()
        # a card slowed with `lab shape` is rebuilt slowed (both pairs' links)
        slowed = cli("shape", "gbe", "--rate", "300mbit")
        assert slowed.returncode == 0, slowed.stderr
        subprocess.run(["ip", "netns", "del", f"{PREFIX}-c"], check=True, timeout=10)
        again = cli("up")                       # no options: as it was made
        assert again.returncode == 0, again.stderr
        assert "replacing an existing or half-made lab" in again.stdout
        assert "lab up: 4 hosts, 2 test links" in again.stdout, again.stdout
        assert names <= netns_names()
        spec = json.loads((tmp_path / "lab" / "state.json").read_text())["spec"]
        assert (spec["pairs"], spec["adapters"]) == (2, ["gbe"])
        assert spec["ceilings"] == {"gbe": "300mbit"}
        for ns in sorted(names):
            tc = subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "show", "dev", "gbe"],
                                capture_output=True, text=True, timeout=10, check=True)
            assert " rate 300Mbit " in tc.stdout, (ns, tc.stdout)
        inventory = (tmp_path / "lab" / "inventory.yaml").read_text()
        assert "name: p1-gbe" in inventory and "name: p2-gbe" in inventory, inventory
        status = cli("status")
        assert status.returncode == 0 and "lab is up" in status.stdout, status.stdout
    finally:
        down = cli("down")
    assert down.returncode == 0, down.stderr
    assert not names & netns_names()
    assert not [l for l in root_links() if l.startswith(f"{PREFIX}m")]
    assert sshd_pids_of(tmp_path / "lab") == []
