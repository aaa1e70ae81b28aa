"""The measure phase: how a test is measured at a point, behind one interface.

A :class:`Measure` says how many trials a test plans, whether its trials at a point all
stand already (a resume skips it), and runs them. Three strategies today:

- :class:`Repetitions`, the reviews' method: N trials of the same configuration, every one
  stored, given up after ``give_up_after`` failures in a row; and
  :class:`UntilStableRepetitions`, the same loop stopping once the 95 % interval of the
  figure is narrow enough (``repetitions: {min, max, until_ci_pct}``);
- :class:`UdpRateSearch`: the highest UDP rate that gets through (a sweep or a
  bisection, :mod:`.udpsearch`), every probe stored, replayed on resume;
- :class:`FrameRateSearch`: that search at each Ethernet frame size, for no loss (NDR)
  and a small loss (PDR): the small-packet rate (:mod:`.framesearch`).

:func:`measure_for` picks one for a test; a new way of measuring is a new
:class:`Measure`, chosen there. Both run their trials through
:class:`Trials`, which retries a trial once when a host's connection was lost and came
back, and turns a host that does not come back into :class:`HostLost`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from nicbench.config.profile import Point, Profile, TestSpec, UntilStable
from nicbench.errors import NicbenchError
from nicbench.execution import events as ev
from nicbench.execution.context import HostLost, RunContext
from nicbench.execution.framesearch import search_frames
from nicbench.execution.recorder import Recorder, Where
from nicbench.execution.trial import TrialContext
from nicbench.execution.udpsearch import bisect, sweep
from nicbench.results.policy import (Stop, fewest_for_interval, figure, first_stop, passes,
                                     stopped)
from nicbench.results.records import Failure, Kind, Status, TrialKey, TrialRecord
from nicbench.tools.params import resolve


class Trials:
    """One trial after another of a pair at a point, each retried once if a host's
    connection was lost and came back; the lost attempt is stored too (a later record of
    the same key supersedes it)."""

    def __init__(self, run: RunContext, ctx: TrialContext, point: Point):
        self.run = run
        self.ctx = ctx
        self.point = point

    @property
    def where(self) -> Where:
        return Where(self.ctx.pair, self.ctx.adapter, self.ctx.adapter_label, self.point)

    def key(self, test: TestSpec, kind: Kind, repetition: int | None) -> TrialKey:
        return TrialKey(self.ctx.pair, self.ctx.point, test.name, kind, repetition)

    def one(self, test: TestSpec, params: dict[str, Any], **kw: Any) -> TrialRecord:
        ctx = self.ctx
        self.run.tell(ev.TrialStarted(pair=ctx.pair, point=ctx.point, test=test.name))
        rec = self.run.trial(ctx, test, params, **kw)
        if rec.failure is not Failure.HOST_LOST:
            return rec
        self.run.recorder.store(rec)
        self._recover_hosts()
        again = self.run.trial(ctx, test, params, **kw)
        again.extra["retry_of"] = rec.trial_id
        return again

    def _recover_hosts(self) -> None:
        """Reach both hosts again; put back the settings in force if a host lost them
        (it rebooted); raise HostLost for a host that does not come back."""
        ctx, tuning = self.ctx, self.run.tuning
        for plat in (ctx.receiver, ctx.sender):
            bound = self.run.inventory.host(plat.host).ssh.reconnect_s
            try:
                plat.reconnect(bound)
                for change in tuning.pending():
                    if change.host != plat.host:
                        continue
                    now = plat.get_setting(change.kind, change.key)
                    if not plat.same_setting(change.kind, now, change.applied):
                        plat.set_setting(change.kind, change.key, change.applied)
            except NicbenchError as exc:
                raise HostLost(plat.host, exc.one_line()) from None
        self.run.tell(ev.Warning(f"{ctx.receiver.host}/{ctx.sender.host}: the connection "
                                 "dropped and came back; settings checked, trial retried"))


class Measure(ABC):
    """How one test is measured at a point."""

    def __init__(self, profile: Profile, test: TestSpec):
        self.profile = profile
        self.test = test

    def planned(self) -> int:
        """The most trials the test makes at one point (progress, the ETA, --plan): the
        profile's one count of them."""
        return self.profile.planned_trials(self.test)

    def planned_min(self) -> int:
        """The fewest trials it makes at one point when none fails."""
        return self.planned()

    @abstractmethod
    def stands(self, recorder: Recorder, pair: str, point: str) -> bool:
        """Do this test's trials at ``point`` all stand in the run already?"""

    @abstractmethod
    def run(self, run: RunContext, trials: Trials) -> None:
        """Measure the test at the trials' point, storing every trial."""


class Repetitions(Measure):
    """The reviews' method: the same trial N times, every one kept. The one repetition
    loop: a subclass decides, after each repetition, whether the figure is good enough
    to stop (:meth:`enough`)."""

    reads_stored = False      # does enough() need the figures of stored repetitions?

    def stands(self, recorder: Recorder, pair: str, point: str) -> bool:
        return all(recorder.stored(TrialKey(pair, point, self.test.name, Kind.REPETITION, r))
                   for r in range(1, self.planned() + 1))

    def enough(self, values: list[float], ran: int) -> Stop | None:
        """Stop after ``ran`` repetitions whose successful figures are ``values``?"""
        return None

    def run(self, run: RunContext, trials: Trials) -> None:
        test, recorder = self.test, run.recorder
        params = resolve(test.params, trials.point.vars)
        reps = self.planned()
        limit = self.profile.give_up_after_for(test)
        timeout = self.profile.timeout_for(test)
        failures_in_a_row = 0
        values: list[float] = []
        for rep in range(1, reps + 1):
            key = trials.key(test, Kind.REPETITION, rep)
            if recorder.stored(key):
                recorder.advance(1)
                rec = recorder.record(key) if self.reads_stored else None
            else:
                run.check_stop()
                rec = trials.one(test, params, repetition=rep, timeout_s=timeout)
                recorder.store(rec)
                recorder.measured(rec, rep, reps)
                if rec.failure is Failure.HOST_LOST:
                    raise HostLost(rec.hosts.get("sender", trials.ctx.sender.host),
                                   rec.reason or "")
                failures_in_a_row = failures_in_a_row + 1 if rec.status is Status.FAILED \
                    else 0
                if limit and failures_in_a_row >= limit and rep < reps:
                    self._give_up(run, trials, rec, limit, reps - rep)
                    recorder.advance(reps - rep)
                    break
            value = figure(rec) if rec is not None and rec.ok else None
            if value is not None:
                values.append(value)
            stop = self.enough(values, rep)
            if stop is not None:
                run.tell(ev.RepetitionsStopped(pair=trials.ctx.pair, point=trials.ctx.point,
                                               test=test.name, ran=rep, why=stop.words()))
                recorder.advance(reps - rep)
                break

    def _give_up(self, run: RunContext, trials: Trials, last: TrialRecord, limit: int,
                 left: int) -> None:
        reason = (f"{left} repetitions not run after {limit} consecutive failures "
                  f"(last: {last.reason})")
        run.tell(ev.GaveUp(pair=trials.ctx.pair, point=trials.ctx.point, test=self.test.name,
                           reason=reason))
        run.recorder.marker(trials.where, self.test, Kind.GIVEN_UP, Failure.GIVEN_UP, reason,
                            not_run=left,
                            extra={"consecutive_failures": limit,
                                   "last_failure": str(last.failure) if last.failure
                                   else None})


class UntilStableRepetitions(Repetitions):
    """Repetitions added while the 95 % interval of the figure reaches further than the
    profile's target (``repetitions: {min, max, until_ci_pct}``), between min and max
    (``results/policy.stopped``)."""

    reads_stored = True

    def __init__(self, profile: Profile, test: TestSpec, policy: UntilStable):
        super().__init__(profile, test)
        self.policy = policy
        self.select = profile.select_for(test)

    def planned_min(self) -> int:
        """The policy's min, or the fewest repetitions that give the judged statistic an
        interval at all (the median's: 6 at 95 %)."""
        return max(self.policy.min, fewest_for_interval(self.select))

    def enough(self, values: list[float], ran: int) -> Stop | None:
        return stopped(values, ran, self.policy, self.select)

    def stands(self, recorder: Recorder, pair: str, point: str) -> bool:
        """The stored repetitions, in order, already reached the stop."""
        return first_stop((recorder.record(TrialKey(pair, point, self.test.name,
                                                     Kind.REPETITION, rep))
                           for rep in range(1, self.policy.max + 1)), self.policy,
                          self.select) is not None


class UdpRateSearch(Measure):
    """The highest UDP rate that gets through: every probe stored; a resumed search
    replays the probes it already made (the search is deterministic given their
    results), so it walks the same rates and measures only from where it stopped."""

    def stands(self, recorder: Recorder, pair: str, point: str) -> bool:
        return False      # a search is replayed, never skipped whole

    def run(self, run: RunContext, trials: Trials) -> None:
        s = self.test.udp_search
        assert s is not None
        probe = _Probes(run, trials, self.test)
        if s.method == "sweep":
            result = sweep(probe.best_of_rate, s.start_bps, s.stop_bps, s.step_bps)
        else:
            result = bisect(probe.best_of_rate, s.start_bps, s.stop_bps, s.step_bps,
                            s.loss_pct)
        run.tell(ev.UdpSearchDone(
            pair=trials.ctx.pair, point=trials.ctx.point, test=self.test.name,
            method=result.method, best_bps=result.best_bps,
            offered_bps=result.best_offered_bps, trials=len(result.trials)))


class _Probes:
    """The trials of one UDP search, numbered in the order made, replayed from the
    stored ones where the search walks the same rates again."""

    def __init__(self, run: RunContext, trials: Trials, test: TestSpec):
        self.run, self.trials, self.test = run, trials, test
        assert test.udp_search is not None
        self.search = test.udp_search
        self.params = resolve(test.params, trials.point.vars)
        self.timeout = run.profile.timeout_for(test)
        self.made = 0

    def best_of_rate(self, rate: int) -> TrialRecord:
        # trials_per_rate > 1: the rate is offered that many times and its best trial
        # (one that passes, then the most received) speaks for it; all are stored.
        recs = [self._one(rate) for _ in range(self.search.trials_per_rate)]
        return max(recs, key=lambda r: (passes(r, self.search.loss_pct), r.ok,
                                        r.throughput_bps or 0.0))

    def _one(self, rate: int) -> TrialRecord:
        self.made += 1
        recorder = self.run.recorder
        old = recorder.record(self.trials.key(self.test, Kind.UDP_SEARCH, self.made))
        if old is not None and old.offered_bps == rate:
            recorder.advance(1)
            return old
        self.run.check_stop()
        rec = self.trials.one(self.test, self.params, repetition=self.made,
                              kind=Kind.UDP_SEARCH, offered_bps=rate, timeout_s=self.timeout)
        rec.search_method = self.search.method
        if old is not None:    # the search took another path: keep both, mark the new
            rec.trial_id += ".replayed"
            rec.extra["superseded_stored_trial"] = old.trial_id
        recorder.store(rec)
        recorder.measured(rec, self.made, None)
        if rec.failure is Failure.HOST_LOST:
            raise HostLost(self.trials.ctx.sender.host, rec.reason or "")
        return rec


class FrameRateSearch(Measure):
    """The small-packet rate: NDR and PDR at each frame size (:mod:`.framesearch`),
    every probe stored, replayed on resume as :class:`UdpRateSearch`'s."""

    def stands(self, recorder: Recorder, pair: str, point: str) -> bool:
        return False      # a search is replayed, never skipped whole

    def run(self, run: RunContext, trials: Trials) -> None:
        search_frames(run, trials, self.test, self.planned())


def measure_for(profile: Profile, test: TestSpec) -> Measure:
    if test.frame_search:
        return FrameRateSearch(profile, test)
    if test.udp_search:
        return UdpRateSearch(profile, test)
    policy = profile.repetition_policy(test)
    if isinstance(policy, UntilStable):
        return UntilStableRepetitions(profile, test, policy)
    return Repetitions(profile, test)
