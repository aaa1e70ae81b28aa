"""The pair scheduler (execution/schedule.py): no two items that share a host at once,
host-disjoint ones at once up to ``parallel``, listed order otherwise, a worker's error
and a signal stopping the rest cooperatively.

Where running together is the point, the items meet at a ``threading.Barrier``: it passes
only if they do run at once, whatever the machine's load (its timeout, ``HANG_S``, only
turns a scheduler that never starts them together into a failure instead of a hang).
"""

from __future__ import annotations

import os
import signal
import threading

import pytest

from nicbench.execution.schedule import Schedule

PAIRS = {"p1": ("a", "b"), "p2": ("c", "d"), "p3": ("a", "b"), "p4": ("e", "f"),
         "p5": ("b", "c")}
HANG_S = 30.0       # only a scheduler that never runs them together waits this long


class Recorder:
    """Work that notes who ran at the same time; items in ``meet`` wait there (a
    barrier) while they count as running."""

    def __init__(self, meet: dict[str, threading.Barrier] | None = None):
        self.meet = meet or {}
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
        if item in self.meet:
            self.meet[item].wait(HANG_S)
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
    work = Recorder()
    Schedule(holds=hosts, work=work, parallel=1).run(PAIRS)
    assert work.started == list(PAIRS)
    assert work.threads == {threading.current_thread().name}


def test_pairs_that_share_a_host_never_run_together():
    three = threading.Barrier(3)
    work = Recorder(dict.fromkeys(("p1", "p2", "p4"), three))
    Schedule(holds=hosts, work=work, parallel=4).run(PAIRS)
    assert sorted(work.started) == sorted(PAIRS)
    assert not any(shares_a_host(group) for group in work.overlaps)
    assert work.most == 3      # p1, p2, p4 are host-disjoint; p3 waits for p1, p5 for both


def test_host_disjoint_pairs_run_together_up_to_parallel():
    items = {f"q{i}": (f"h{i}a", f"h{i}b") for i in range(6)}
    three = threading.Barrier(3)          # passes for q0-q2, then again for q3-q5
    work = Recorder(dict.fromkeys(items, three))
    Schedule(holds=lambda i: items[i], work=work, parallel=3).run(items)
    assert work.most == 3                 # three at once, never more


def test_waiting_pairs_start_in_their_order():
    both = threading.Barrier(2)           # p1 and p2 run together, or this never passes
    work = Recorder({"p1": both, "p2": both})
    Schedule(holds=hosts, work=work, parallel=2).run(["p1", "p3", "p2", "p4"])
    # p3 waits for p1's hosts, so p2 starts beside p1 (with parallel 2, nothing else can
    # start while both run); p4 takes the slot p2 frees (or p3 the one p1 frees) -- p3 is
    # never skipped for good.
    assert set(work.started[:2]) == {"p1", "p2"}
    assert set(work.started) == {"p1", "p2", "p3", "p4"}


def test_a_worker_error_stops_the_others_and_is_raised():
    stop_seen = []
    sched: Schedule[str] = Schedule(holds=hosts, work=lambda i: None, parallel=2)

    def work(item: str) -> None:
        if item == "p2":
            raise ValueError("p2 broke")
        # a long pair that checks stop between trials: told to stop, it ends
        if sched.stop.wait(HANG_S):
            stop_seen.append(item)

    sched.work = work
    with pytest.raises(ValueError, match="p2 broke"):
        sched.run(["p1", "p2", "p3", "p4"])
    assert stop_seen == ["p1"]            # p3 and p4 never started


def test_a_signal_stops_cooperatively_then_raises_keyboardinterrupt():
    finished: list[str] = []
    told: list[list[str]] = []
    told_once = threading.Event()
    both = threading.Barrier(2)

    def stopping(running: list[str]) -> None:
        told.append(running)
        told_once.set()

    sched: Schedule[str] = Schedule(holds=hosts, work=lambda i: None, parallel=2,
                                    on_stopping=stopping)

    def work(item: str) -> None:
        both.wait(HANG_S)                 # both pairs are running
        if item == "p2":
            os.kill(os.getpid(), signal.SIGINT)      # Ctrl-C, delivered to the main thread
        assert sched.stop.wait(HANG_S)
        # the trial in progress ends only once the main thread said it waits for it:
        # the main thread must still be waiting then, not gone on or raised
        assert told_once.wait(HANG_S)
        finished.append(item)

    sched.work = work
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        sched.run(["p1", "p2", "p4"])
    assert sorted(finished) == ["p1", "p2"]           # both ended their work; p4 not begun
    assert [sorted(t) for t in told] == [["p1", "p2"]]
    assert signal.getsignal(signal.SIGINT) is before  # the handler is put back
