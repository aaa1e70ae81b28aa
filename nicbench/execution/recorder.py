"""The store phase: every record of a run goes through one :class:`Recorder`.

It appends each record to trials.jsonl (fsynced, under one lock, as pairs measured at
once share the file), keeps the keys a resume skips, counts progress for the ETA, and
hands each stored record to its subscribers, in the order stored: a results store (or
anything else that wants trials as they end) subscribes with :meth:`Recorder.subscribe`
rather than reading the file back.

It also writes the one record that stands for trials not run (a point refused, a pair
not measurable, repetitions given up): :meth:`Recorder.marker`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from nicbench.config.profile import Point, TestSpec
from nicbench.execution import events as ev
from nicbench.results.records import Failure, Kind, Status, TrialKey, TrialRecord, current
from nicbench.results.rundir import RunDir

Subscriber = Callable[[TrialRecord], None]


class RunSink(Protocol):
    """A subscriber that lives as long as one run (a results store's writer): told every
    record, then closed once the run has ended."""

    def __call__(self, rec: TrialRecord) -> None: ...
    def close(self) -> None: ...


# Makes the sink of one run of a campaign: its results directory, and whom to tell.
SinkFactory = Callable[[Path, ev.Listener], RunSink | None]


@dataclass
class Progress:
    """Counts trials and estimates the time left: from the plan's estimate (what --plan
    prints) at the start, corrected by the measured trial times as they come.

    Each trial is planned at its test's share of the plan's whole time (a netPIPE curve
    weighs more than a 1 s iperf run), so a run whose first trials are its short ones is
    not extrapolated from them. The correction is the ratio of the time measured to the
    time planned for the trials run, shrunk toward 1 by ``PRIOR_SHARE`` of the plan:
    early on the plan's estimate stands, by a fifth of the run the measurements lead."""

    total: int
    done: int = 0
    started: float = field(default_factory=time.monotonic)
    measured: int = 0           # trials run by this process (not replayed or skipped)
    plan_s: float | None = None                 # the plan's estimate of the whole run
    per_test_s: dict[str, float] = field(default_factory=dict)   # planned s per trial
    plan_done_s: float = 0.0    # planned time of the trials measured
    plan_gone_s: float = 0.0    # planned time of trials replayed or not run

    PRIOR_SHARE = 0.2

    def planned(self, test: str | None) -> float:
        if self.plan_s is None:
            return 0.0
        if test is not None and test in self.per_test_s:
            return self.per_test_s[test]
        return self.plan_s / max(1, self.total)

    def eta_s(self) -> float | None:
        elapsed = time.monotonic() - self.started
        if self.plan_s is None:
            if self.measured == 0:
                return None
            return elapsed / self.measured * (self.total - self.done)
        left = max(0.0, self.plan_s - self.plan_done_s - self.plan_gone_s)
        prior = self.PRIOR_SHARE * self.plan_s
        factor = (elapsed + prior) / (self.plan_done_s + prior) if prior > 0 else 1.0
        return left * factor


@dataclass(frozen=True)
class Where:
    """What a record names besides its test: the pair, its adapter, and the point."""

    pair: str
    adapter: str
    adapter_label: str
    point: Point


class Recorder:
    """Writes a run's records, knows which are stored, and tells who listens."""

    def __init__(self, run_dir: RunDir, run_id: str, done: set[TrialKey], progress: Progress,
                 tell: ev.Listener, lock: threading.RLock):
        self.run_dir = run_dir
        self.run_id = run_id
        self.done = done
        self.progress = progress
        self._tell = tell
        self._lock = lock
        self._subscribers: list[Subscriber] = []
        self._records: dict[TrialKey, TrialRecord] | None = None   # read on first need

    def subscribe(self, subscriber: Subscriber) -> None:
        """Have ``subscriber`` called with every record once it is stored (under the
        recorder's lock, so one at a time and in file order; it must not block)."""
        self._subscribers.append(subscriber)

    def store(self, rec: TrialRecord) -> None:
        with self._lock:
            self.run_dir.append(rec)
            self.done.add(rec.key)
            if self._records is not None:
                self._records[rec.key] = rec
            for subscriber in self._subscribers:
                subscriber(rec)

    def stored(self, key: TrialKey) -> bool:
        return key in self.done

    def record(self, key: TrialKey) -> TrialRecord | None:
        """The stored record that stands for ``key``: trials.jsonl is read once, the first
        time a stored one is asked for (a resume's repetitions and UDP probes)."""
        with self._lock:
            if key not in self.done:
                return None
            if self._records is None:
                self._records = {r.key: r for r in current(self.run_dir.records())}
            return self._records.get(key)

    def marker(self, where: Where, test: TestSpec, kind: Kind, failure: Failure, reason: str,
               *, not_run: int, kernel_message: str | None = None,
               extra: dict | None = None) -> None:
        """Store the one record that stands for a test's trials not run at a point: the
        point was not applied or the pair could not be measured (``skipped``), or too many
        failures in a row (``given-up``)."""
        now = time.time()
        point = where.point
        self.store(TrialRecord(
            run_id=self.run_id, trial_id=f"{where.pair}.{point.name}.{test.name}.{kind.value}",
            pair=where.pair, adapter=where.adapter, adapter_label=where.adapter_label,
            tool=test.tool, test=test.name, protocol=test.protocol, point=point.name,
            mtu=point.ip_mtu, repetition=None, kind=kind, status=Status.SKIPPED,
            failure=failure, reason=reason, not_run=not_run, kernel_message=kernel_message,
            started_at=now, ended_at=now, extra=extra or {}))

    def measured(self, rec: TrialRecord, i: int, n: int | None) -> None:
        """Count a trial this process ran and tell the listener it is done."""
        with self._lock:
            self.progress.done += 1
            self.progress.measured += 1
            self.progress.plan_done_s += self.progress.planned(rec.test)
            self._tell(ev.TrialDone(record=rec, i=i, n=n, done=self.progress.done,
                                    total=self.progress.total, eta_s=self.progress.eta_s()))

    def extend(self, trials: int) -> None:
        """A search takes more trials than it was planned as: the total grows with it, so
        that the count and the ETA go on saying what is left."""
        with self._lock:
            self.progress.total += trials

    def advance(self, trials: int) -> None:
        """Count trials that stand already or will not be run."""
        with self._lock:
            self.progress.done += trials
            self.progress.plan_gone_s += trials * self.progress.planned(None)
