"""One owner per results directory (nicbench.results.dirlock), between real processes:
each step is synchronised with events and a barrier, never with sleeps."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import socket
import threading

import pytest

from nicbench.errors import UsageError
from nicbench.results.dirlock import LOCK_FILE, DirectoryInUse, owned

CTX = multiprocessing.get_context("fork")
WAIT_S = 60          # a bound for a hung test, never what makes it pass


def _hold(directory: str, held, release) -> None:
    with owned(directory):
        held.set()
        release.wait(WAIT_S)


def _try(directory: str, barrier, results, release) -> None:
    barrier.wait(WAIT_S)
    try:
        with owned(directory):
            results.put(("took", os.getpid()))
            release.wait(WAIT_S)          # hold it until every other one has tried
    except DirectoryInUse as exc:
        results.put(("refused", str(exc)))


def test_a_second_process_is_refused_naming_the_owner_then_takes_it_once_released(tmp_path):
    held, release = CTX.Event(), CTX.Event()
    owner = CTX.Process(target=_hold, args=(str(tmp_path), held, release))
    owner.start()
    try:
        assert held.wait(WAIT_S)
        with pytest.raises(DirectoryInUse) as refused, owned(tmp_path):
            pass
        assert isinstance(refused.value, UsageError) and refused.value.exit_code == 2
        text = str(refused.value)
        assert text.startswith(f"{tmp_path} is in use by nicbench pid {owner.pid} on "
                               f"{socket.gethostname()} (started 20")
        assert text.endswith("); wait for it or stop it")
        assert "\n" not in text
    finally:
        release.set()
        owner.join(WAIT_S)
    assert owner.exitcode == 0
    with owned(tmp_path):
        assert json.loads((tmp_path / LOCK_FILE).read_text())["pid"] == os.getpid()


def test_a_lock_left_by_a_killed_process_is_taken_over(tmp_path):
    held, release = CTX.Event(), CTX.Event()
    owner = CTX.Process(target=_hold, args=(str(tmp_path), held, release))
    owner.start()
    assert held.wait(WAIT_S)
    os.kill(owner.pid, signal.SIGKILL)
    owner.join(WAIT_S)
    assert owner.exitcode == -signal.SIGKILL
    # the dead owner's pid is still written there: information, never honoured
    assert json.loads((tmp_path / LOCK_FILE).read_text())["pid"] == owner.pid
    with owned(tmp_path):
        assert json.loads((tmp_path / LOCK_FILE).read_text())["pid"] == os.getpid()


def test_of_processes_started_at_once_exactly_one_owns_the_directory(tmp_path):
    n = 4
    barrier, results, release = CTX.Barrier(n), CTX.Queue(), CTX.Event()
    procs = [CTX.Process(target=_try, args=(str(tmp_path), barrier, results, release))
             for _ in range(n)]
    for p in procs:
        p.start()
    try:
        got = [results.get(timeout=WAIT_S) for _ in range(n)]
    finally:
        release.set()
        for p in procs:
            p.join(WAIT_S)
    took = [who for what, who in got if what == "took"]
    refused = [why for what, why in got if what == "refused"]
    assert len(took) == 1 and len(refused) == n - 1, got
    assert all(f"in use by nicbench pid {took[0]} " in why for why in refused), refused


def test_the_owning_thread_may_take_it_again_another_thread_may_not(tmp_path):
    outcome: list[BaseException | None] = []

    def other() -> None:
        try:
            with owned(tmp_path):
                outcome.append(None)
        except DirectoryInUse as exc:
            outcome.append(exc)

    with owned(tmp_path), owned(tmp_path / "." ):
        t = threading.Thread(target=other)
        t.start()
        t.join(WAIT_S)
    (exc,) = outcome
    assert isinstance(exc, DirectoryInUse) and f"pid {os.getpid()} " in str(exc)
    # released once the outer block ended: another thread takes it now
    outcome.clear()
    t = threading.Thread(target=other)
    t.start()
    t.join(WAIT_S)
    assert outcome == [None]
