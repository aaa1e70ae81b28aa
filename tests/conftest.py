"""Shared fixtures: the test lab (real namespaces, sshd and tools) and its inventory.

The session lab is separate from any lab a developer has up: prefix ``nbt``, slot 5
(management 198.19.81.0/24 and 198.19.82.0/24), state in a pytest temp directory, adapters
``gbe,nojumbo,stall`` (override with ``NICBENCH_TEST_LAB_ADAPTERS=gbe,fe``).

Lab tests of several pytest processes (other engineers, CI) would fight over the same
namespace names, so the whole session holds an exclusive ``flock`` on
``/run/nicbench-labtests.lock`` while any test lab exists; a second process waits for it
(at most ``NICBENCH_LABTESTS_WAIT_S``, default 20 minutes) and then fails saying so.

The lab is always torn down: in the fixture's ``finally``, and, should the interpreter be
ended some other way, by an ``atexit`` hook (SIGTERM is turned into KeyboardInterrupt for
the session so that both run). Every lab interface must have its original MTU after each
lab test and at the end of the session, or the test (or session) fails.
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
from pathlib import Path
from collections.abc import Callable, Iterator

import pytest
import contextlib

LOCK_PATH = Path("/run/nicbench-labtests.lock")
LOCK_WAIT_S = float(os.environ.get("NICBENCH_LABTESTS_WAIT_S", 20 * 60))
TEST_PREFIX = "nbt"
TEST_SLOT = 5
TEST_ADAPTERS = tuple(a for a in os.environ.get("NICBENCH_TEST_LAB_ADAPTERS",
                                                "gbe,nojumbo,stall").split(",") if a)


def read_mtus(namespace: str) -> dict[str, int]:
    """Every interface of a namespace -> its MTU, read with ``ip -n NS -j link show``
    (independently of nicbench's own platform code)."""
    out = subprocess.run(["ip", "-n", namespace, "-j", "link", "show"], check=True,
                         capture_output=True, text=True, timeout=10).stdout
    return {link["ifname"]: int(link["mtu"]) for link in json.loads(out)}


@pytest.fixture(scope="session")
def labtests_lock(pytestconfig) -> Iterator[None]:
    """Root only; the exclusive right, across processes, to build test labs."""
    if os.geteuid() != 0:
        pytest.skip("lab tests need root: they create network namespaces, veth links and "
                    "sshd (run pytest as root, as CI does)")
    fh = open(LOCK_PATH, "a+")  # noqa: SIM115 (held, locked, for the whole session)
    deadline = time.monotonic() + LOCK_WAIT_S
    waited = False
    while not _try_lock(fh):
        if time.monotonic() > deadline:
            fh.close()
            pytest.fail(f"waited {LOCK_WAIT_S:g} s for {LOCK_PATH}: lab tests of another "
                        f"pytest are still running (see `fuser -v {LOCK_PATH}`; "
                        "NICBENCH_LABTESTS_WAIT_S sets how long to wait)", pytrace=False)
        if not waited:
            capture = pytestconfig.pluginmanager.getplugin("capturemanager")
            with capture.global_and_fixture_disabled():
                print(f"\nwaiting for {LOCK_PATH} (lab tests of another pytest)...",
                      flush=True)
            waited = True
        time.sleep(1)
    fh.seek(0)
    fh.truncate()
    fh.write(f"{os.getpid()}\n")
    fh.flush()
    _kill_stale_test_sshd()
    try:
        yield
    finally:
        fcntl.flock(fh, fcntl.LOCK_UN)
        fh.close()


# sshd of a test lab: "sshd: /usr/sbin/sshd -f <pytest tmp>/nbt-lab0/nbt-a/sshd_config ..."
# (or of its bastion, tests/lab/bastion.py: .../nbt-lab0/nbt-jump/sshd_config, or of
# the two-host-pair lab of tests/lab/test_campaign_lab.py: .../nbtc-lab0/nbtc-c/sshd_config)
_TEST_SSHD = re.compile(rb"sshd.* -f \S*/(nbtc|nbt|nbl)-lab\d+/(nbtc|nbt|nbl)-([a-n]|jump)/sshd_config")


def _kill_stale_test_sshd() -> None:
    """A session killed outright (SIGKILL, a crash) leaves its labs' sshd behind; ``lab up``
    replaces the namespaces by name but knows only its own directory's sshd. Holding the
    lock, any test-lab sshd is such a leftover."""
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if _TEST_SSHD.search(cmdline):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(proc.name), signal.SIGTERM)


def _try_lock(fh) -> bool:
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


class _Teardown:
    """Takes a lab down once, whichever of finally / atexit gets there first."""

    def __init__(self, lab):
        self.lab = lab
        self.done = False

    def __call__(self) -> None:
        if self.done:
            return
        self.done = True
        self.lab.down()


@pytest.fixture(scope="session")
def lab(labtests_lock, tmp_path_factory):
    """The session's lab (``nicbench.lab.lab.Lab``), up and healthy; always torn down."""
    from nicbench.lab.lab import Lab, LabSpec

    spec = LabSpec(prefix=TEST_PREFIX, slot=TEST_SLOT, adapters=TEST_ADAPTERS)
    the_lab = Lab(spec, tmp_path_factory.mktemp("nbt-lab"))
    teardown = _Teardown(the_lab)
    atexit.register(teardown)
    old_term = signal.getsignal(signal.SIGTERM)
    if old_term in (signal.SIG_DFL, None):
        signal.signal(signal.SIGTERM, _term_as_interrupt)
    try:
        the_lab.up()
        the_lab.original_mtus = {h.name: read_mtus(h.name) for h in spec.hosts()}
        yield the_lab
        changed = _mtu_changes(the_lab)
        assert not changed, f"lab interfaces left with another MTU at session end: {changed}"
    finally:
        try:
            teardown()
        finally:
            atexit.unregister(teardown)
            if old_term in (signal.SIG_DFL, None):
                signal.signal(signal.SIGTERM, signal.SIG_DFL)


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


@pytest.fixture(scope="session")
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


def lab_facts(base: Path) -> tuple[int, int, float]:
    """(trial records, runs, seconds of trial wall time) in every ``trials.jsonl`` under
    ``base`` (the session's temp directory, where every lab test writes its results)."""
    records = runs = 0
    wall = 0.0
    for path in base.rglob("trials.jsonl"):
        if path.is_symlink() or not path.is_file():   # a test's FIFO would block the read
            continue
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


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """The controller of an xdist session gathers its workers' lab builds."""
    _LABS_BUILT.extend(getattr(node, "workeroutput", {}).get("nicbench_labs_built", []))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not _LABS_BUILT:
        return
    base = config._tmp_path_factory.getbasetemp()     # pytest's own factory of tmp_path
    records, runs, wall = lab_facts(Path(base))
    kinds = ", ".join(f"{p} {_LABS_BUILT.count(p)}" for p in sorted(set(_LABS_BUILT)))
    terminalreporter.write_line(
        f"lab facts: {len(_LABS_BUILT)} labs built in this process ({kinds}); "
        f"{records} trials in {runs} results directories, {wall:.0f} s of trial wall time")


# -- two workers: the lab tests on one, beside the rest (issue 32) ------------------------
# pyproject runs the suite on two pytest-xdist workers. The lab tests (tests/lab and
# tests/faults) are one unit of xdist's scheduling, so one worker runs them all, in file
# order, with the one session lab (and the lock above); they are put first and, the
# largest unit, are sent first, so that worker starts on them at once while the other
# worker runs the unit, golden, report and CLI tests. (xdist's own ``--dist loadgroup``
# marks no group under pytest 9.2: it renames a node id pytest no longer reads.) A lab test
# that judges physics or time on the machine (its module uses loadcheck, or it is marked
# ``quiet``) must have the machine to itself, as loadcheck counts any other work as load:
# it takes the session's "quiet" lock exclusively, and every other test, on any worker,
# holds it shared while it runs. So a physics check never runs beside another test of the
# session, and tells a busy machine from a broken link as when the suite runs in one
# process.
LAB_DIRS = ("tests/lab/", "tests/faults/")
LAB_GROUP = "lab"


def is_lab_nodeid(nodeid: str) -> bool:
    return nodeid.startswith(LAB_DIRS)


def needs_quiet(item) -> bool:
    """A lab test that must not share the machine with another test of the session."""
    if item.get_closest_marker("quiet") is not None:
        return True
    module = getattr(item, "module", None)
    return is_lab_nodeid(item.nodeid) and module is not None and any(
        getattr(value, "__module__", None) == "loadcheck" for value in vars(module).values())


def pytest_collection_modifyitems(config, items):
    lab = [item for item in items if is_lab_nodeid(item.nodeid)]
    if lab:
        items[:] = lab + [item for item in items if not is_lab_nodeid(item.nodeid)]


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """xdist's scope scheduling with one scope for every lab test and one per other test
    (largest scope first: the lab)."""
    from xdist.scheduler import LoadScopeScheduling

    class LabAsOneScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return LAB_GROUP if is_lab_nodeid(nodeid) else nodeid

    return LabAsOneScheduling(config, log)


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
    basetemp = getattr(config.option, "basetemp", None)
    if os.environ.get("PYTEST_XDIST_WORKER") and basetemp:
        # A worker's basetemp is <the session's basetemp>/<worker id>: the parent is shared.
        _QUIET.append(QuietGate(Path(basetemp).parent / "nicbench-quiet"))


def pytest_unconfigure(config):
    while _QUIET:
        _QUIET.pop().close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if not _QUIET:
        return (yield)
    with _QUIET[0].exclusive() if needs_quiet(item) else _QUIET[0].shared():
        return (yield)
