"""The pair scheduler (execution/schedule.py): no two items that share a host at once,
host-disjoint ones at once up to ``parallel``, listed order otherwise, a worker's error
and a signal stopping the rest cooperatively."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from nicbench.execution.schedule import Schedule

PAIRS = {"p1": ("a", "b"), "p2": ("c", "d"), "p3": ("a", "b"), "p4": ("e", "f"),
         "p5": ("b", "c")}


class Recorder:
    """Work that takes ``seconds`` and notes who ran at the same time."""

    def __init__(self, seconds: float = 0.05):
        self.seconds = seconds
        self.lock = threading.Lock()
        self.active: set[str] = set()
        self.started: list[str] = []
        self.overlaps: list[set[str]] = []
        self.threads: set[str] = set()
        self.most = 0

    def __call__(self, item: str) -> None:
        with self.lock:
            self.started.append(item)
            self.active.add(item)
            self.overlaps.append(set(self.active))
            self.most = max(self.most, len(self.active))
            self.threads.add(threading.current_thread().name)
        time.sleep(self.seconds)
        with self.lock:
            self.active.discard(item)


def hosts(item: str) -> tuple[str, ...]:
    return PAIRS[item]


def shares_a_host(group: set[str]) -> bool:
    seen: set[str] = set()
    for item in group:
        if seen & set(PAIRS[item]):
            return True
        seen |= set(PAIRS[item])
    return False


def test_parallel_one_is_a_plain_loop_in_the_calling_thread():
    work = Recorder(0)
    Schedule(holds=hosts, work=work, parallel=1).run(PAIRS)
    assert work.started == list(PAIRS)
    assert work.threads == {threading.current_thread().name}


def test_pairs_that_share_a_host_never_run_together():
    work = Recorder()
    Schedule(holds=hosts, work=work, parallel=4).run(PAIRS)
    assert sorted(work.started) == sorted(PAIRS)
    assert not any(shares_a_host(group) for group in work.overlaps)
    assert work.most == 3      # p1, p2, p4 are host-disjoint; p3 waits for p1, p5 for both


def test_host_disjoint_pairs_run_together_up_to_parallel():
    items = {f"q{i}": (f"h{i}a", f"h{i}b") for i in range(6)}
    work = Recorder(0.1)
    Schedule(holds=lambda i: items[i], work=work, parallel=3).run(items)
    assert work.most == 3                 # three at once, never more (no wall-clock bound)


def test_waiting_pairs_start_in_their_order():
    work = Recorder(0.05)
    Schedule(holds=hosts, work=work, parallel=2).run(["p1", "p3", "p2", "p4"])
    # p3 waits for p1's hosts, so p2 starts beside p1; p4 takes the slot p2 frees (or p3
    # the one p1 frees) -- p3 is never skipped for good.
    assert work.started[:2] == ["p1", "p2"]
    assert set(work.started) == {"p1", "p2", "p3", "p4"}


def test_a_worker_error_stops_the_others_and_is_raised():
    stop_seen = []
    sched: Schedule[str] = Schedule(holds=hosts, work=lambda i: None, parallel=2)

    def work(item: str) -> None:
        if item == "p2":
            raise ValueError("p2 broke")
        for _ in range(100):             # a long pair that checks stop between trials
            if sched.stop.is_set():
                stop_seen.append(item)
                return
            time.sleep(0.01)

    sched.work = work
    with pytest.raises(ValueError, match="p2 broke"):
        sched.run(["p1", "p2", "p3", "p4"])
    assert stop_seen == ["p1"]            # p3 and p4 never started


def test_a_signal_stops_cooperatively_then_raises_keyboardinterrupt():
    finished: list[str] = []
    told: list[list[str]] = []
    sched: Schedule[str] = Schedule(holds=hosts, work=lambda i: None, parallel=2,
                                    on_stopping=told.append)

    def work(item: str) -> None:
        if item == "p2":
            os.kill(os.getpid(), signal.SIGINT)      # Ctrl-C, delivered to the main thread
        while not sched.stop.is_set():
            time.sleep(0.01)
        time.sleep(0.5)                   # the trial in progress ends
        finished.append(item)

    sched.work = work
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        sched.run(["p1", "p2", "p4"])
    assert sorted(finished) == ["p1", "p2"]           # both ended their work; p4 not begun
    assert [sorted(t) for t in told] == [["p1", "p2"]]
    assert signal.getsignal(signal.SIGINT) is before  # the handler is put back
