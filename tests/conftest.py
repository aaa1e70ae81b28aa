"""Shared fixtures: the test labs (real namespaces, sshd and tools) and their inventory.

The lab tests run in two lanes (``LANES``), each with a session lab of its own, separate
from any lab a developer has up: lane a's prefix ``nbt``, slot 5 (management
198.19.81.0/24 and 198.19.82.0/24), lane b's ``nbu``, slot 14 (198.19.225.0/24 and
198.19.226.0/24); state in a pytest temp directory, adapters ``gbe,nojumbo,stall``
(override with ``NICBENCH_TEST_LAB_ADAPTERS=gbe,fe``). Lane a's links run at each
adapter's own rate (its physics checks need Gigabit Ethernet); lane b's, whose tests judge
no rate, at 100 Mbit/s (``Lane.rate``: a tenth of the CPU a trial costs). A module's lane
is fixed by its file (``LANE_B_MODULES``), also when the suite runs in one process.

Lab tests of several pytest processes (other engineers, CI) would fight over the same
namespace names, so a session holds an exclusive ``flock`` on a lane's lock
(``/run/nicbench-labtests.lock`` for lane a, ``/run/nicbench-labtests-b.lock`` for
lane b) from its first test of the lane to its end; a second process waits for it (at
most ``NICBENCH_LABTESTS_WAIT_S``, default 20 minutes) and then fails saying so.

The labs are always torn down: in the fixture's ``finally``, and, should the interpreter
be ended some other way, by an ``atexit`` hook (SIGTERM is turned into KeyboardInterrupt
for the session so that both run). Every lab interface must have its original MTU after
each lab test and at the end of the session, or the test (or session) fails.
"""

from __future__ import annotations

import atexit
import fcntl
import json
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable, Iterator

import pytest
import contextlib

LOCK_WAIT_S = float(os.environ.get("NICBENCH_LABTESTS_WAIT_S", 20 * 60))
TEST_ADAPTERS = tuple(a for a in os.environ.get("NICBENCH_TEST_LAB_ADAPTERS",
                                                "gbe,nojumbo,stall").split(",") if a)


@dataclass(frozen=True)
class Lane:
    """One session lab and the lock that makes its names this process's: the lab tests
    run in two lanes, each on an xdist worker of its own (or both in one process)."""

    name: str
    prefix: str                 # the session lab's hosts: <prefix>-a, <prefix>-b
    slot: int                   # its management networks (nicbench.lab.lab.LabSpec)
    lock: Path
    # labs of their own that the lane's modules build (tests/lab/test_lab_lifecycle.py's
    # nbl, test_campaign_lab.py's nbtc): their sshd left by a killed session are this
    # lane's to end too
    others: tuple[str, ...] = ()
    # The rate its lab's test links are shaped to, where not each adapter's own (LabSpec's
    # rate; the inventory's line rates stay): lane b's tests judge no rate, and a trial at
    # 1 Gbit/s costs this machine about 1.15 of its 2 cores (sender, receiver and the
    # shaping; 3 s of iperf3 measured by /proc/stat) against 0.13 at 100 Mbit/s, CPU
    # the tests beside it need.
    rate: str | None = None

    @property
    def prefixes(self) -> tuple[str, ...]:
        return (self.prefix, *self.others)


# Lane a is the lab tests' one lane as it always was (prefix nbt, slot 5, the lock
# README names); every module with a lab of its own (nbl, nbtc, test_faults.py's nbf)
# stays in it, so those names are still guarded by that lock alone. Lane b has only
# modules that use nothing but its own session lab (nbu, slot 14).
LANES = (Lane("a", "nbt", 5, Path("/run/nicbench-labtests.lock"), ("nbtc", "nbl")),
         Lane("b", "nbu", 14, Path("/run/nicbench-labtests-b.lock"), rate="100mbit"))
# Chosen by the seconds each module took (docs/suite-time.md): the lanes' tests that may
# run beside others about even (the physics checks run alone in either lane, and both
# lanes wait for them alike); a module whose figures need a Gigabit link's load on the
# machine stays in lane a (test_cpu_split_lab: a tool's CPU over 1 s at 100 Mbit/s reads
# 0 ticks).
LANE_B_MODULES = frozenset({
    "tests/faults/test_ownership.py", "tests/faults/test_results_dir.py",
    "tests/faults/test_signals.py", "tests/faults/test_trial_faults.py",
    "tests/lab/test_check.py", "tests/lab/test_check_profile.py",
    "tests/lab/test_engine_rules.py",
    "tests/lab/test_latency_lab.py", "tests/lab/test_mtu.py", "tests/lab/test_plan_lab.py",
    "tests/lab/test_ssh.py", "tests/lab/test_ssh_agent.py", "tests/lab/test_ssh_jump.py",
    "tests/lab/test_ssh_powershell.py", "tests/lab/test_store_lab.py",
    "tests/lab/test_two_tools.py",
})


def lane_of(nodeid: str) -> Lane:
    """The lane of a lab test (or module), by its file."""
    return LANES[1] if nodeid.split("::")[0] in LANE_B_MODULES else LANES[0]


def read_mtus(namespace: str) -> dict[str, int]:
    """Every interface of a namespace -> its MTU, read with ``ip -n NS -j link show``
    (independently of nicbench's own platform code)."""
    out = subprocess.run(["ip", "-n", namespace, "-j", "link", "show"], check=True,
                         capture_output=True, text=True, timeout=10).stdout
    return {link["ifname"]: int(link["mtu"]) for link in json.loads(out)}


class LabLocks:
    """The exclusive right, across processes, to a lane's names (its ``flock``), taken
    for the rest of the session when a test of the lane first needs it. Always in lane
    order, so that two processes never wait on each other: one process (``-n 0``) takes
    every lane its session has lab tests of at once; an xdist worker takes the lanes it
    is given, lane a's scope being sent before lane b's."""

    def __init__(self, pytestconfig, session):
        self.config = pytestconfig
        self.session = session
        self.held: dict[str, object] = {}

    def hold(self, lane: Lane) -> None:
        if lane.name in self.held:
            return
        if os.environ.get("PYTEST_XDIST_WORKER"):
            wanted = [lane]
        else:
            wanted = sorted({lane, *(lane_of(item.nodeid) for item in self.session.items
                                     if is_lab_nodeid(item.nodeid))}, key=lambda x: x.name)
        for each in wanted:
            if each.name not in self.held:
                self.held[each.name] = self._take(each)
                _kill_stale_test_sshd(each)

    def _take(self, lane: Lane):
        fh = open(lane.lock, "a+")  # noqa: SIM115 (held, locked, for the whole session)
        deadline = time.monotonic() + LOCK_WAIT_S
        waited = False
        while not _try_lock(fh):
            if time.monotonic() > deadline:
                fh.close()
                pytest.fail(f"waited {LOCK_WAIT_S:g} s for {lane.lock}: lab tests of "
                            f"another pytest are still running (see `fuser -v {lane.lock}`; "
                            "NICBENCH_LABTESTS_WAIT_S sets how long to wait)", pytrace=False)
            if not waited:
                capture = self.config.pluginmanager.getplugin("capturemanager")
                with capture.global_and_fixture_disabled():
                    print(f"\nwaiting for {lane.lock} (lab tests of another pytest)...",
                          flush=True)
                waited = True
            time.sleep(1)
        fh.seek(0)
        fh.truncate()
        fh.write(f"{os.getpid()}\n")
        fh.flush()
        return fh

    def release(self) -> None:
        for fh in reversed(list(self.held.values())):
            fcntl.flock(fh, fcntl.LOCK_UN)
            fh.close()
        self.held.clear()


@pytest.fixture(scope="session")
def _lab_locks(pytestconfig, request) -> Iterator[LabLocks]:
    if os.geteuid() != 0:
        pytest.skip("lab tests need root: they create network namespaces, veth links and "
                    "sshd (run pytest as root, as CI does)")
    locks = LabLocks(pytestconfig, request.session)
    try:
        yield locks
    finally:
        locks.release()


@pytest.fixture(scope="module")
def labtests_lock(_lab_locks, request) -> None:
    """Root only; the exclusive right, across processes, to build the test labs of this
    module's lane."""
    _lab_locks.hold(lane_of(request.node.nodeid))


def _test_sshd(lane: Lane) -> re.Pattern[bytes]:
    """sshd of a lane's test lab: "sshd: /usr/sbin/sshd -f <pytest tmp>/nbt-lab0/nbt-a/
    sshd_config ..." (or of its bastion, tests/lab/bastion.py: .../nbt-lab0/nbt-jump/
    sshd_config, or of the two-host-pair lab of tests/lab/test_campaign_lab.py:
    .../nbtc-lab0/nbtc-c/sshd_config)."""
    names = "|".join(sorted(lane.prefixes, key=len, reverse=True))
    return re.compile(rf"sshd.* -f \S*/({names})-lab\d+/({names})-([a-n]|jump)/sshd_config"
                      .encode())


def _kill_stale_test_sshd(lane: Lane) -> None:
    """A session killed outright (SIGKILL, a crash) leaves its labs' sshd behind; ``lab up``
    replaces the namespaces by name but knows only its own directory's sshd. Holding the
    lane's lock, any sshd of the lane's test labs is such a leftover."""
    pattern = _test_sshd(lane)
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if pattern.search(cmdline):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(proc.name), signal.SIGTERM)


def _try_lock(fh) -> bool:
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


class SessionLabs:
    """The session labs, one per lane, built when a test of the lane first needs it (its
    lock taken first), each up and healthy; all torn down at the end of the session (or,
    should the interpreter be ended some other way, by ``atexit``: SIGTERM is turned
    into KeyboardInterrupt for the session so that both run)."""

    def __init__(self, locks: LabLocks, tmp_path_factory):
        self.locks = locks
        self.tmp = tmp_path_factory
        self.labs: dict[str, object] = {}
        self.old_term = None

    def get(self, lane: Lane):
        if lane.name in self.labs:
            return self.labs[lane.name]
        from nicbench.lab.lab import Lab, LabSpec

        self.locks.hold(lane)
        if not self.labs:
            atexit.register(self.down)
            self.old_term = signal.getsignal(signal.SIGTERM)
            if self.old_term in (signal.SIG_DFL, None):
                signal.signal(signal.SIGTERM, _term_as_interrupt)
        spec = LabSpec(prefix=lane.prefix, slot=lane.slot, adapters=TEST_ADAPTERS,
                       rate=lane.rate)
        the_lab = Lab(spec, self.tmp.mktemp(f"{lane.prefix}-lab"))
        self.labs[lane.name] = the_lab
        the_lab.up()
        the_lab.original_mtus = {h.name: read_mtus(h.name) for h in spec.hosts()}
        return the_lab

    def changed_mtus(self) -> list[str]:
        return [change for the_lab in self.labs.values()
                if getattr(the_lab, "original_mtus", None) is not None
                for change in _mtu_changes(the_lab)]

    def down(self) -> None:
        """Takes every lab down once, whichever of the fixture's finally / atexit gets
        there first."""
        labs = list(self.labs.values())
        self.labs.clear()
        try:
            for the_lab in labs:
                the_lab.down()
        finally:
            if labs:
                atexit.unregister(self.down)
                if self.old_term in (signal.SIG_DFL, None):
                    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@pytest.fixture(scope="session")
def _session_labs(_lab_locks, tmp_path_factory) -> Iterator[SessionLabs]:
    labs = SessionLabs(_lab_locks, tmp_path_factory)
    try:
        yield labs
        changed = labs.changed_mtus()
        assert not changed, f"lab interfaces left with another MTU at session end: {changed}"
    finally:
        labs.down()


@pytest.fixture(scope="module")
def lab(_session_labs, request):
    """The session lab of this module's lane (``nicbench.lab.lab.Lab``), up and healthy;
    always torn down at the end of the session."""
    return _session_labs.get(lane_of(request.node.nodeid))


def _term_as_interrupt(*_):
    raise KeyboardInterrupt


def _mtu_changes(the_lab) -> list[str]:
    changed = []
    for ns, before in the_lab.original_mtus.items():
        now = read_mtus(ns)
        for ifname, mtu in before.items():
            if now.get(ifname) != mtu:
                changed.append(f"{ns} {ifname}: {mtu} -> {now.get(ifname)}")
    return changed


@pytest.fixture(autouse=True)
def _lab_mtus_restored(request):
    """After every test that used the session lab: every interface has its original MTU."""
    yield
    if "lab" in request.fixturenames:
        changed = _mtu_changes(request.getfixturevalue("lab"))
        assert not changed, f"test left lab interfaces with another MTU: {changed}"


@pytest.fixture(scope="module")
def lab_inventory(lab):
    """The inventory the lab wrote (``lab.inventory_file``), loaded like a user's."""
    from nicbench.config.loader import load_inventory
    from nicbench.tools.registry import CATALOG

    return load_inventory(lab.inventory_file, CATALOG)


@pytest.fixture
def pool(lab_inventory):
    """A HostPool (SSH connections + platforms) over the lab's hosts, closed after the test."""
    from nicbench.platforms.hosts import HostPool

    with HostPool(lab_inventory) as p:
        yield p


@pytest.fixture
def mtus() -> Callable[[str], dict[str, int]]:
    """``mtus(namespace)`` -> {ifname: mtu}, read with ip(8) directly."""
    return read_mtus


# -- the results store (issue 21) ---------------------------------------------------------
# A run in a test writes no results store unless the test names one: not the default
# reports/nicbench.duckdb of wherever pytest runs, nor a developer's NICBENCH_STORE.
os.environ["NICBENCH_STORE"] = "none"


@pytest.fixture(scope="session")
def pg_server():
    """A throwaway PostgreSQL server (tests/pgserver.py) for the session, or the reason
    it cannot start here."""
    import pgserver

    try:
        server = pgserver.start()
    except pgserver.Unavailable as exc:
        yield exc
        return
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(params=["duckdb", "postgresql"])
def store_at(request, tmp_path):
    """Where a test's new, empty store is: a DuckDB file in the test's temp directory, and
    (the second time) a new database on the session's PostgreSQL server; the PostgreSQL
    case skips, saying why, only if the server cannot start."""
    if request.param == "duckdb":
        yield str(tmp_path / "store.duckdb")
        return
    import pgserver

    server = request.getfixturevalue("pg_server")
    if isinstance(server, pgserver.Unavailable):
        pytest.skip(f"no PostgreSQL server for the store tests: {server}")
    url = server.new_database()
    try:
        yield url
    finally:
        server.drop_database(url)


# -- what the lab tests cost, in facts the machine's load does not change -----------------
# Wall-clock on a shared 2-core box says little; how many labs a session built and how many
# trials of how many seconds it ran say what a change to the suite saved. Printed at the
# end of every session that built a lab (issue 32).
_LABS_BUILT: list[str] = []


@pytest.fixture(scope="session", autouse=True)
def _count_lab_builds():
    """Counts every ``Lab.up`` of this process that found no lab up (a build or rebuild);
    labs made by a ``nicbench lab up`` subprocess are not seen here."""
    try:
        from nicbench.lab.lab import Lab
    except ImportError:  # pragma: no cover (the package is always installed in .venv)
        yield
        return
    original = Lab.up

    def counted(self, *args, **kwargs):
        if self.read_state() is None:
            _LABS_BUILT.append(self.spec.prefix)
        return original(self, *args, **kwargs)

    Lab.up = counted  # type: ignore[method-assign]
    try:
        yield
    finally:
        Lab.up = original  # type: ignore[method-assign]


# The directories the lab tests had (their tmp_path, and any path a module's fixture gave
# them, e.g. test_loaded_lab.py's one run): the facts are read there only, not in what
# the other tests copy or forge (golden runs, hostile trials.jsonl files).
_LAB_TEST_DIRS: list[str] = []

# Every test's (worker, node id, kind, start as Unix time, seconds waiting for the quiet
# lock, seconds run from the lock taken to the test's end): the session's timeline. The
# "suite time" and wait lines sum it in every run; written as CSV to
# NICBENCH_SUITE_TIMELINE when that names a file (which worker waited, when, and what set
# the wall time).
Row = tuple[str, str, str, float, float, float]
_TIMELINE: list[Row] = []


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item):
    if not is_lab_nodeid(item.nodeid):
        return
    for value in getattr(item, "funcargs", {}).values():
        for each in value if isinstance(value, tuple) else (value,):
            if isinstance(each, Path):
                _LAB_TEST_DIRS.append(str(each))


def lab_facts(dirs: list[Path]) -> tuple[int, int, float]:
    """(trial records, runs, seconds of trial wall time) in every ``trials.jsonl`` under
    ``dirs`` (the lab tests' own directories), each file counted once."""
    records = runs = 0
    wall = 0.0
    seen: set[Path] = set()
    for path in (p for d in dirs if d.is_dir() for p in d.rglob("trials.jsonl")):
        if path in seen or path.is_symlink() or not path.is_file():   # a FIFO would block
            continue
        seen.add(path)
        try:
            text = path.read_text(errors="replace")
        except OSError:            # a test's unreadable or vanished file: not a run's
            continue
        runs += 1
        for line in text.splitlines():
            try:
                rec = json.loads(line)
            except (ValueError, RecursionError):   # tests write hostile lines on purpose
                continue
            if not isinstance(rec, dict):
                continue
            records += 1
            value = rec.get("wall_s")
            if isinstance(value, (int, float)) and 0 <= value < 1e6:
                wall += value
    return records, runs, wall


def pytest_sessionfinish(session):
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:                      # an xdist worker: tell the controller
        workeroutput["nicbench_labs_built"] = list(_LABS_BUILT)
        workeroutput["nicbench_lab_test_dirs"] = list(_LAB_TEST_DIRS)
        workeroutput["nicbench_timeline"] = list(_TIMELINE)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """The controller of an xdist session gathers its workers' lab builds and lab tests'
    directories."""
    output = getattr(node, "workeroutput", {})
    _LABS_BUILT.extend(output.get("nicbench_labs_built", []))
    _LAB_TEST_DIRS.extend(output.get("nicbench_lab_test_dirs", []))
    _TIMELINE.extend(tuple(row) for row in output.get("nicbench_timeline", []))


def suite_time_line(timeline: list[Row]) -> str:
    """Where a session's time went, by kind of test: the physics checks run alone (no
    other test beside them), so their sum is a floor of the session's wall time."""
    seconds: dict[str, list[float]] = {}
    for _, _, kind, _, _, ran in timeline:
        seconds.setdefault(kind, []).append(ran)
    order = ["physics checks alone", "lab lane a", "lab lane b", "the rest"]
    kinds = sorted(seconds, key=lambda k: order.index(k) if k in order else len(order))
    return "suite time: " + "; ".join(
        f"{kind} {sum(seconds[kind]):.0f} s ({len(seconds[kind])} "
        f"test{'' if len(seconds[kind]) == 1 else 's'})" for kind in kinds)


def waited_line(timeline: list[Row]) -> str:
    """How long the tests of each worker waited for the quiet lock (a physics check running
    alone, or other tests to end before one could): the price of judging physics."""
    waits: dict[str, float] = {}
    for worker, _, _, _, wait, _ in timeline:
        waits[worker] = waits.get(worker, 0.0) + wait
    return "waiting for the quiet lock: " + ", ".join(
        f"{worker} {waits[worker]:.0f} s" for worker in sorted(waits))


def write_timeline(path: Path, timeline: list[Row]):
    """The session's tests as CSV, in the order they started, times from the first start."""
    import csv

    rows = sorted(timeline, key=lambda row: row[3])
    first = rows[0][3] if rows else 0.0
    with open(path, "w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["worker", "test", "kind", "start_s", "waited_s", "ran_s"])
        for worker, nodeid, kind, start, wait, ran in rows:
            out.writerow([worker, nodeid, kind, f"{start - first:.2f}", f"{wait:.2f}",
                          f"{ran:.2f}"])


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if _TIMELINE:
        terminalreporter.write_line(suite_time_line(_TIMELINE))
    if len({row[0] for row in _TIMELINE}) > 1:        # workers shared the quiet lock
        terminalreporter.write_line(waited_line(_TIMELINE))
    if os.environ.get("NICBENCH_SUITE_TIMELINE") and _TIMELINE:
        write_timeline(Path(os.environ["NICBENCH_SUITE_TIMELINE"]), _TIMELINE)
    if not _LABS_BUILT:
        return
    records, runs, wall = lab_facts([Path(d) for d in dict.fromkeys(_LAB_TEST_DIRS)])
    kinds = ", ".join(f"{p} {_LABS_BUILT.count(p)}" for p in sorted(set(_LABS_BUILT)))
    terminalreporter.write_line(
        f"lab facts: {len(_LABS_BUILT)} labs built in this process ({kinds}); "
        f"{records} trials in {runs} results directories of lab tests, {wall:.0f} s of "
        "trial wall time")


# -- three workers: the lab tests in two lanes, beside the rest (issue 32) ---------------
# pyproject runs the suite on three pytest-xdist workers. The lab tests (tests/lab and
# tests/faults) are two units of xdist's scheduling, their lanes (LANES above): each lane
# runs on one worker, in file order, with its own session lab and lock, as a campaign runs
# host-disjoint pairs at once; they are put first and sent first, so that two workers
# start on them at once while the third runs the unit, golden, report and CLI tests.
# (xdist's own ``--dist loadgroup`` marks no group under pytest 9.2: it renames a node id
# pytest no longer reads.) A lab test that judges physics or time on the machine (its
# module uses loadcheck, or it is marked ``quiet``) must have the machine to itself, as
# loadcheck counts any other work as load: it takes the session's "quiet" lock
# exclusively, and every other test, on any worker, holds it shared while it runs. So a
# physics check never runs beside another test of the session, the other lane's
# included, and tells a busy machine from a broken link as when the suite runs in one
# process.
LAB_DIRS = ("tests/lab/", "tests/faults/")
LAB_GROUP = "lab"


def is_lab_nodeid(nodeid: str) -> bool:
    return nodeid.startswith(LAB_DIRS)


def needs_quiet(item) -> bool:
    """A lab test that must not share the machine with another test of the session."""
    if item.get_closest_marker("quiet") is not None:
        return True
    if item.get_closest_marker("shares_machine") is not None:
        return False
    module = getattr(item, "module", None)
    return is_lab_nodeid(item.nodeid) and module is not None and any(
        getattr(value, "__module__", None) == "loadcheck" for value in vars(module).values())


def pytest_collection_modifyitems(config, items):
    lab = [item for item in items if is_lab_nodeid(item.nodeid)]
    if lab:
        lab.sort(key=lambda item: lane_of(item.nodeid).name)     # stable: file order kept
        items[:] = lab + [item for item in items if not is_lab_nodeid(item.nodeid)]


def scope_of(nodeid: str) -> str:
    """xdist's unit of scheduling: a lane of lab tests, or one other test."""
    return f"{LAB_GROUP}-{lane_of(nodeid).name}" if is_lab_nodeid(nodeid) else nodeid


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """xdist's scope scheduling with one scope per lane of lab tests and one per other
    test, in collection order: lane a, lane b, then the rest (xdist's reordering by size
    is turned off: lane a's scope must come first, see LabLocks)."""
    from xdist.scheduler import LoadScopeScheduling

    class LabLanesScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

    config.option.loadscopereorder = False
    return LabLanesScheduling(config, log)


class QuietGate:
    """A readers-writer lock across the workers of one session, on two ``flock`` files in
    the session's temp directory: a writer (a test that needs a quiet machine) first takes
    the turnstile, so that no new reader starts, then waits for the readers running
    (tests of the other worker) to end; readers pass the turnstile, then share."""

    def __init__(self, directory: Path):
        directory.mkdir(parents=True, exist_ok=True)
        self.turnstile = open(directory / "quiet-turnstile.lock", "a+")  # noqa: SIM115
        self.gate = open(directory / "quiet.lock", "a+")  # noqa: SIM115

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        fcntl.flock(self.turnstile, fcntl.LOCK_EX)
        try:
            fcntl.flock(self.gate, fcntl.LOCK_EX)
        finally:
            fcntl.flock(self.turnstile, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(self.gate, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def shared(self) -> Iterator[None]:
        fcntl.flock(self.turnstile, fcntl.LOCK_EX)
        fcntl.flock(self.turnstile, fcntl.LOCK_UN)
        fcntl.flock(self.gate, fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(self.gate, fcntl.LOCK_UN)

    def close(self) -> None:
        self.turnstile.close()
        self.gate.close()


_QUIET: list[QuietGate] = []


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "quiet: a lab test that judges the machine's physics or time: no other "
        "test of the session runs beside it (also every lab test whose module uses loadcheck)")
    config.addinivalue_line(
        "markers", "shares_machine: a test of a module that uses loadcheck which judges "
        "neither physics nor time (no figure held to a floor, no wall-clock bound): it runs "
        "beside other tests, as those that are not quiet do")
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        # Started with Ctrl-C ignored (a background job of a shell without job control):
        # every nicbench the tests start would inherit the ignore, and the tests of what
        # Ctrl-C does would see nothing happen. A handler of this process's own is reset
        # to the default in each child, as a terminal starts a command.
        signal.signal(signal.SIGINT, signal.default_int_handler)
    basetemp = getattr(config.option, "basetemp", None)
    if os.environ.get("PYTEST_XDIST_WORKER") and basetemp:
        # A worker's basetemp is <the session's basetemp>/<worker id>: the parent is shared.
        _QUIET.append(QuietGate(Path(basetemp).parent / "nicbench-quiet"))


def pytest_unconfigure(config):
    while _QUIET:
        _QUIET.pop().close()


def time_kind(item) -> str:
    if needs_quiet(item):
        return "physics checks alone"
    if is_lab_nodeid(item.nodeid):
        return f"lab lane {lane_of(item.nodeid).name}"
    return "the rest"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    with contextlib.ExitStack() as stack:
        asked = time.monotonic()
        if _QUIET:
            stack.enter_context(_QUIET[0].exclusive() if needs_quiet(item)
                                else _QUIET[0].shared())
        started = time.monotonic()
        started_at = time.time()
        try:
            return (yield)
        finally:
            _TIMELINE.append((os.environ.get("PYTEST_XDIST_WORKER", "main"), item.nodeid,
                              time_kind(item), started_at, started - asked,
                              time.monotonic() - started))
