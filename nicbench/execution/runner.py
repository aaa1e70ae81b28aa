"""``nicbench run``: a profile over pairs, point by point, every trial stored as it ends.

For each pair and each tuning point: record the originals and apply the tuning on both
hosts, prove the path carries the MTU, run each test with its repetitions (or its UDP
search), and restore. A point the hardware refuses (the kernel's "Invalid argument") is
stored as a skipped configuration with that reason and the run goes on, as the reviews
did.

A :class:`Runner` holds one run's state: the profile and inventory, the results directory,
the keys already stored, the progress, the hosts and the journal of what it changed or
left on them. Hosts come from a :class:`Hosts` provider (SSH to the inventory's hosts by
default; tests give fakes), and what happens is told to a
:class:`~nicbench.execution.events.Listener`.

What it survives (docs/reliability.md lists each with its test):

- a resume (``resume=True``) first puts back whatever an earlier, crashed run left in
  the journal (settings, processes, files), cuts a torn last line off trials.jsonl, then
  skips every trial that stands (a success, or a refusal by the driver or kernel);
  failures, give-ups and points skipped for reasons that may pass are measured again
  unless ``keep_failed``; a resume with another profile or inventory is refused;
- a missing or down test interface fails that pair and the run goes on;
- a host whose SSH connection drops is reconnected (bounded by the inventory's
  ``ssh.reconnect_s``), its settings in force are checked and put back if they were lost,
  and the trial is retried once; a host that does not come back is recorded as lost for
  its pairs, and the others go on;
- a results directory that cannot be written (a full disk) stops the run with one line,
  settings put back, every trial written so far intact;
- settings that cannot be put back at the end are listed (``problems``) for the CLI to
  report with the ``nicbench restore DIR`` line;
- with ``parallel`` above 1, pairs that share no host are measured at the same time, one
  thread each (:mod:`~nicbench.execution.schedule`): a pair that fails or loses a host
  ends alone, each pair puts back its own hosts after each point, and Ctrl-C lets every
  running pair end its trial and restore before the run restores what is left.

Pairs measured at once share the run's state: one lock (``_lock``) guards what they
write (trials.jsonl, manifest.json, the progress counts) and every call of the listener,
which therefore never sees two events at once; the journal (TuningSession) and the
HostPool guard their own.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from collections.abc import Callable

from nicbench import __version__
from nicbench.config.inventory import Inventory, Pair
from nicbench.config.profile import Point, Profile, TestSpec, check_platforms
from nicbench.errors import (ConnectError, HostKeyError, NicbenchError, ResultsWriteError,
                             TuningError, TuningErrorKind, UsageError)
from nicbench.execution import events as ev
from nicbench.execution.ossettings import OsSettings, grouped, set_reboot_timeout
from nicbench.execution.schedule import Schedule
from nicbench.execution.trial import TrialContext, run_trial
from nicbench.execution.udpsearch import bisect, sweep
from nicbench.platforms.base import Platform
from nicbench.platforms.hosts import HostPool
from nicbench.platforms.tuning import Change, Problem, TuningSession
from nicbench.results.facts import LinkState
from nicbench.results.manifest import Manifest, differences
from nicbench.results.policy import passes
from nicbench.results.records import Failure, Kind, Status, TrialKey, TrialRecord
from nicbench.results.store import RunDir, new_run_id
from nicbench.results.summary import SummaryRow, summary_rows, write_summary
from nicbench.tools.params import resolve


class Hosts(Protocol):
    """Where a run gets each host's platform: one per host name, kept for the run."""

    def platform(self, name: str) -> Platform: ...

    def close(self) -> None: ...


TrialFn = Callable[..., TrialRecord]


class HostLost(Exception):
    """A host stopped answering and did not come back within its bound."""

    def __init__(self, host: str, reason: str):
        super().__init__(f"{host}: {reason}")
        self.host = host
        self.reason = reason


@dataclass
class Progress:
    """Counts trials and estimates the time left from what has been measured."""

    total: int
    done: int = 0
    started: float = field(default_factory=time.monotonic)
    measured: int = 0           # trials run by this process (not replayed or skipped)

    def eta_s(self) -> float | None:
        if self.measured == 0:
            return None
        rate = (time.monotonic() - self.started) / self.measured
        return rate * (self.total - self.done)


def planned_trials(profile: Profile, test: TestSpec) -> int:
    if test.udp_search:
        s = test.udp_search
        steps = (s.stop_bps - s.start_bps) // s.step_bps + 1
        return steps * s.trials_per_rate if s.method == "sweep" else \
            (max(1, (steps - 1).bit_length()) + 2) * s.trials_per_rate
    return profile.repetitions_for(test)


@dataclass
class _Side:
    """The two ends of a pair for one run: platforms, interfaces, addresses."""

    pair: Pair
    adapter_id: str
    adapter_label: str
    receiver: Platform
    sender: Platform

    @property
    def ends(self) -> tuple[tuple[Platform, str, str], tuple[Platform, str, str]]:
        r, s = self.pair.receiver_side, self.pair.sender_side
        return ((self.receiver, r.interface, r.address), (self.sender, s.interface, s.address))


class Runner:
    """One run of a profile over pairs of an inventory into a results directory."""

    def __init__(self, profile: Profile, inventory: Inventory, out: str | Path, *,
                 pairs: list[str] | None = None, resume: bool = False,
                 keep_failed: bool = False, listener: ev.Listener = ev.ignore,
                 hosts: Hosts | None = None, trust_new_keys: bool = False,
                 trial: TrialFn = run_trial, parallel: int = 1,
                 stop: threading.Event | None = None):
        self.profile = profile
        self.inventory = inventory
        self.pairs = [inventory.pair(p) for p in pairs] if pairs else list(inventory.pairs)
        if not self.pairs:
            raise UsageError("the inventory has no pairs to run")
        check_platforms(profile, inventory, self.pairs)
        self.resume = resume
        self.keep_failed = keep_failed
        if parallel < 1:
            raise UsageError(f"parallel {parallel}: give 1 or more pairs at once")
        self.parallel = parallel
        # Set (by Ctrl-C while pairs run in threads, or by whoever runs this runner) to
        # stop before the next trial; the run then ends as on Ctrl-C.
        self.stop = stop or threading.Event()
        self._lock = threading.RLock()
        self._listener = listener
        self.trial = trial
        self._hosts = hosts
        self._trust_new_keys = trust_new_keys
        self.run_dir = RunDir(out)
        self.done: set[TrialKey] = set()
        self.progress = Progress(total=sum(planned_trials(profile, t) for t in profile.tests)
                                 * len(profile.points) * len(self.pairs))
        self.manifest: Manifest | None = None
        self.tuning: TuningSession | None = None
        self.os_settings: OsSettings | None = None
        self.summary: list[SummaryRow] = []
        self.problems: list[Problem] = []      # what could not be put back at the end
        self.lost: dict[str, str] = {}         # host -> why it was given up
        self.unmeasured: dict[str, str] = {}   # pair -> why none of it could be measured

    # -- the run --------------------------------------------------------------------------
    def run(self) -> RunDir:
        self._open()
        hosts = self._hosts or HostPool(self.inventory, trust_new_keys=self._trust_new_keys)
        self.tuning = TuningSession.load(self.run_dir.journal_file, on_restore=self._restored)
        self.os_settings = OsSettings(self.profile, self.tuning, self.listener)
        try:
            if self.tuning.hosts():
                self._recover_previous(hosts)
            self.listener(ev.RunStarted(out=str(self.run_dir.path), profile=self.profile.name,
                                        pairs=tuple(p.name for p in self.pairs),
                                        total=self.progress.total, resumed=self.resume,
                                        parallel=self.parallel))
            self._run_pairs(hosts)
        finally:
            try:
                self._finish()
            finally:
                hosts.close()
        return self.run_dir

    def _open(self) -> None:
        rd = self.run_dir
        old: Manifest | None = None
        if self.resume:
            if not rd.manifest_file.exists():
                raise UsageError(f"{rd.path}: no manifest.json, so not a run that can be "
                                 "resumed (start a new run with --out)")
            old = Manifest.read(rd.manifest_file)
            self._refuse_another_method(old)
            torn = rd.repair_torn_tail()
            if torn is not None:
                self.listener(ev.Warning(f"{rd.trials_file}: its last line was torn (the run "
                                         f"stopped mid-write); kept in {torn.name} and cut "
                                         "off, that trial is measured again"))
            self.done = rd.done_keys(self.keep_failed)
        elif rd.trials_file.exists() and rd.trials_file.stat().st_size:
            raise UsageError(f"{rd.path} already holds trials: resume it with --resume or "
                             "choose another --out")
        rd.create()
        self.manifest = Manifest(
            run_id=old.run_id if old else new_run_id(), nicbench_version=__version__,
            profile=self.profile, profile_file=self.profile.file,
            inventory=self.inventory, inventory_file=self.inventory.file,
            inventory_dir=self.inventory.base_dir,
            pairs=[p.name for p in self.pairs],
            started_at=old.started_at if old else time.time(),
            resumed_at=([*old.resumed_at, time.time()]) if old else [])
        self.manifest.write(rd.manifest_file)

    def _refuse_another_method(self, old: Manifest) -> None:
        """A resume measures what is missing of the same run: the same profile, and the
        same hosts, adapters and pairs, or its trials would not belong together."""
        what = []
        for name, was, now in (
                ("profile", old.profile.model_dump(mode="json"),
                 self.profile.model_dump(mode="json")),
                ("inventory", old.inventory.model_dump(mode="json"),
                 self.inventory.model_dump(mode="json"))):
            diff = differences(was, now)
            if diff:
                shown = ", ".join(diff[:3]) + (f" and {len(diff) - 3} more" if len(diff) > 3
                                              else "")
                what.append(f"the {name} differs ({shown})")
        if what:
            raise UsageError(f"{self.run_dir.path} was run with another method: "
                             f"{'; '.join(what)}: resume it with the profile and inventory it "
                             f"was made with ({old.profile_file or old.profile.name}, "
                             f"{old.inventory_file or 'its inventory'}), or start a new run")

    def _recover_previous(self, hosts: Hosts) -> None:
        """Put back what a run that died left on its hosts, before anything else."""
        assert self.tuning is not None
        try:
            platforms = {h: hosts.platform(h) for h in sorted(self.tuning.hosts())}
        except (NicbenchError, KeyError) as exc:
            raise RestorePending(self.run_dir.path, [f"cannot reach the hosts: {exc}"]) \
                from None
        self.tuning.bind(platforms)
        set_reboot_timeout(platforms.values(), self.profile.reboot_timeout_s)
        pending = self.tuning.pending()
        leftovers = list(self.tuning.leftovers)
        problems = self.tuning.restore()
        if problems:
            raise RestorePending(self.run_dir.path, [str(p) for p in problems])
        self.tuning.forget_restored()
        self.listener(ev.Warning(
            f"put back what the interrupted run left: {len(pending)} settings, "
            f"{len(leftovers)} processes or files"))

    def _finish(self) -> None:
        assert self.tuning is not None and self.manifest is not None
        self.problems = self.tuning.restore()
        for p in self.problems:
            self.listener(ev.Warning(f"not put back: {p}"))
        if self.tuning.journal_error:
            self.listener(ev.Warning(self.tuning.journal_error))
        self.manifest.ended_at = time.time()
        if self.os_settings is not None:
            for host, notes in self.os_settings.notes.items():
                self.manifest.note_registry(host, list(notes))
        self.manifest.restore_problems = [str(p) for p in self.problems]
        self.manifest.lost_hosts = dict(self.lost)
        try:
            self.manifest.write(self.run_dir.manifest_file)
            self.summary = write_summary(self.run_dir, self.profile)
        except ResultsWriteError as exc:
            self.listener(ev.Warning(exc.one_line()))
            self.summary = summary_rows(self.run_dir.records(), self.profile)

    def _restored(self, change: Change) -> None:
        self.listener(ev.SettingRestored(host=change.host, kind=change.kind, key=change.key,
                                         value=change.original))

    # -- a pair ---------------------------------------------------------------------------
    def _run_pair(self, hosts: Hosts, pair: Pair) -> None:
        assert self.manifest is not None
        self.listener(ev.PairStarted(pair=pair.name, hosts=(pair.a.host, pair.b.host)))
        adapter = self.inventory.adapter(pair.adapter)
        names = (pair.receiver_side.host, pair.sender_side.host)
        lost = [h for h in names if h in self.lost]
        if lost:
            self._give_up_pair(pair, self.profile.points, Failure.HOST_LOST,
                               f"{lost[0]}: {self.lost[lost[0]]}")
            return
        try:
            side = _Side(pair=pair, adapter_id=adapter.id, adapter_label=adapter.label,
                         receiver=hosts.platform(names[0]), sender=hosts.platform(names[1]))
            for plat, iface, _ in side.ends:
                host_facts = plat.host_facts()
                facts = plat.interface_facts(iface)
                with self._lock:
                    self.manifest.hosts[plat.host] = host_facts
                    self.manifest.interfaces[f"{pair.name}/{plat.host}"] = facts
                if facts.link is LinkState.DOWN:
                    raise TuningError(plat.host, "interface", iface,
                                      f"{iface} is {facts.state}", kind=TuningErrorKind.INTERFACE)
                versions = {t.tool: plat.tool_version(t.tool) for t in self.profile.tests}
                with self._lock:
                    self.manifest.tools[plat.host] = versions
        except TuningError as exc:
            reason = (f"{exc.host}: {exc.kernel_message} (check the cable and "
                      "pairs[].a/b.interface in the inventory)")
            self.unmeasured[pair.name] = reason
            self._give_up_pair(pair, self.profile.points, Failure.INTERFACE, reason)
            return
        except (ConnectError, HostKeyError) as exc:
            self.lost[exc.host] = exc.message
            self._give_up_pair(pair, self.profile.points, Failure.HOST_LOST, exc.one_line())
            return
        with self._lock:
            self.manifest.write(self.run_dir.manifest_file)
        points = grouped(self.profile.points)   # one reboot per Windows registry set
        for k, point in enumerate(points):
            self._check_stop()
            try:
                self._run_point(side, point, points[k + 1] if k + 1 < len(points) else None)
            except HostLost as exc:
                self.lost[exc.host] = exc.reason
                self.listener(ev.Warning(f"{exc.host} is lost ({exc.reason}): the rest of "
                                         f"pair {pair.name} is not measured"))
                self._give_up_pair(pair, points[k:], Failure.HOST_LOST, str(exc))
                return

    def _give_up_pair(self, pair: Pair, points: list[Point], failure: Failure,
                      reason: str) -> None:
        """Record every configuration of ``pair`` at ``points`` not measured yet as not
        measurable now, with the reason."""
        adapter = self.inventory.adapter(pair.adapter)
        self.listener(ev.Warning(f"pair {pair.name}: {reason}"))
        for point in points:
            for test in self.profile.tests:
                if self._all_done(pair, point, test):
                    continue
                self._store_marker(pair.name, adapter.id, adapter.label, point, test,
                                   Kind.SKIPPED, failure, reason,
                                   not_run=planned_trials(self.profile, test))
                self._advance(planned_trials(self.profile, test))

    # -- a point --------------------------------------------------------------------------
    def _run_point(self, side: _Side, point: Point, next_point: Point | None = None) -> None:
        pair = side.pair
        pending = [t for t in self.profile.tests if not self._all_done(pair, point, t)]
        self._advance(sum(planned_trials(self.profile, t) for t in self.profile.tests
                          if t not in pending))
        if not pending:
            return
        self.listener(ev.PointStarted(pair=pair.name, point=point.name))
        (receiver, _r_if, r_addr), (sender, _s_if, s_addr) = side.ends
        ctx = TrialContext(run_dir=self.run_dir, run_id=self.run_id, pair=pair.name,
                           adapter=side.adapter_id, adapter_label=side.adapter_label,
                           point=point.name, mtu=point.ip_mtu, receiver=receiver,
                           sender=sender, receiver_addr=r_addr, sender_addr=s_addr,
                           journal=self.tuning)
        try:
            try:
                self._apply(side, point, pending)
            except TuningError as exc:
                self._skip_point(ctx, point, pending, exc)
                return
            except (ConnectError, HostKeyError) as exc:
                raise HostLost(exc.host, exc.message) from None
            for test in pending:
                if test.udp_search:
                    self._udp_search(ctx, test, point)
                else:
                    self._repetitions(ctx, test, point)
        finally:
            self._restore_point(side, next_point)

    def _apply(self, side: _Side, point: Point, tests: list[TestSpec]) -> None:
        assert self.tuning is not None and self.os_settings is not None
        (receiver, r_if, r_addr), (sender, s_if, s_addr) = side.ends
        for name, value in {**self.profile.sysctl, **point.sysctl}.items():
            self.tuning.set_sysctl(receiver, name, str(value))
            self.tuning.set_sysctl(sender, name, str(value))
        self.os_settings.apply(side, point, tests)   # Windows: registry (+reboot), firewall
        self.tuning.set_mtu(receiver, r_if, point.ip_mtu)
        self.tuning.set_mtu(sender, s_if, point.ip_mtu)
        sender.verify_path_mtu(s_if, r_addr, point.ip_mtu)
        receiver.verify_path_mtu(r_if, s_addr, point.ip_mtu)

    def _skip_point(self, ctx: TrialContext, point: Point, pending: list[TestSpec],
                    exc: TuningError) -> None:
        failure = Failure.of_tuning(exc.kind)
        reason = f"{exc.host}: {exc.setting} {exc.value}: {exc.kernel_message}"
        self.listener(ev.PointSkipped(pair=ctx.pair, point=ctx.point, failure=failure,
                                      reason=reason))
        for test in pending:
            self._store_marker(ctx.pair, ctx.adapter, ctx.adapter_label, point, test,
                               Kind.SKIPPED, failure, reason,
                               not_run=self.profile.repetitions_for(test),
                               kernel_message=exc.kernel_message, extra={"host": exc.host})
            self._advance(planned_trials(self.profile, test))

    def _restore_point(self, side: _Side, next_point: Point | None = None) -> None:
        # Each point starts from the hosts' own settings, so a refused point cannot leave
        # the next one on a half-applied state; only Windows registry values stay for a
        # next point that sets them too (each change costs a reboot). What cannot be put
        # back now (a host gone) stays in the journal for the end of the run, and for
        # `nicbench restore`. Only this pair's hosts: other pairs may be in the middle of
        # their own points.
        assert self.tuning is not None and self.os_settings is not None
        self.tuning.restore(hosts={side.receiver.host, side.sender.host},
                            only=self.os_settings.restore_filter(next_point))
        self.tuning.forget_restored()

    # -- trials ---------------------------------------------------------------------------
    def _measure(self, ctx: TrialContext, test: TestSpec, params: dict[str, Any],
                 **kw: Any) -> TrialRecord:
        """One trial, retried once if a host's connection was lost and came back; the
        lost attempt is stored too (a later record of the same key supersedes it)."""
        self.listener(ev.TrialStarted(pair=ctx.pair, point=ctx.point, test=test.name,
                                      i=kw.get("repetition", 0)))
        rec = self.trial(ctx, test, params, **kw)
        if rec.failure is not Failure.HOST_LOST:
            return rec
        self._store(rec)
        self._recover_hosts(ctx)
        again = self.trial(ctx, test, params, **kw)
        again.extra["retry_of"] = rec.trial_id
        return again

    def _recover_hosts(self, ctx: TrialContext) -> None:
        """Reach both hosts again; put back the settings in force if a host lost them
        (it rebooted); raise HostLost for a host that does not come back."""
        assert self.tuning is not None
        for plat in (ctx.receiver, ctx.sender):
            bound = self.inventory.host(plat.host).ssh.reconnect_s
            try:
                plat.reconnect(bound)
                for change in self.tuning.pending():
                    if change.host != plat.host:
                        continue
                    now = plat.get_setting(change.kind, change.key)
                    if not plat.same_setting(change.kind, now, change.applied):
                        plat.set_setting(change.kind, change.key, change.applied)
            except NicbenchError as exc:
                raise HostLost(plat.host, exc.one_line()) from None
        self.listener(ev.Warning(f"{ctx.receiver.host}/{ctx.sender.host}: the connection "
                                 "dropped and came back; settings checked, trial retried"))

    def _repetitions(self, ctx: TrialContext, test: TestSpec, point: Point) -> None:
        params = resolve(test.params, point.vars)
        reps = self.profile.repetitions_for(test)
        limit = self.profile.give_up_after_for(test)
        timeout = self.profile.timeout_for(test)
        failures_in_a_row = 0
        for rep in range(1, reps + 1):
            if TrialKey(ctx.pair, ctx.point, test.name, Kind.REPETITION, rep) in self.done:
                self._advance(1)
                continue
            self._check_stop()
            rec = self._measure(ctx, test, params, repetition=rep, timeout_s=timeout)
            self._store(rec)
            self._told(rec, rep, reps)
            if rec.failure is Failure.HOST_LOST:
                raise HostLost(rec.hosts.get("sender", ctx.sender.host), rec.reason or "")
            failures_in_a_row = failures_in_a_row + 1 if rec.status is Status.FAILED else 0
            if limit and failures_in_a_row >= limit and rep < reps:
                self._give_up(ctx, test, point, rec, limit, reps - rep)
                self._advance(reps - rep)
                break

    def _give_up(self, ctx: TrialContext, test: TestSpec, point: Point, last: TrialRecord,
                 limit: int, left: int) -> None:
        reason = (f"{left} repetitions not run after {limit} consecutive failures "
                  f"(last: {last.reason})")
        self.listener(ev.GaveUp(pair=ctx.pair, point=ctx.point, test=test.name,
                                reason=reason))
        self._store_marker(ctx.pair, ctx.adapter, ctx.adapter_label, point, test,
                           Kind.GIVEN_UP, Failure.GIVEN_UP, reason, not_run=left,
                           extra={"consecutive_failures": limit,
                                  "last_failure": str(last.failure) if last.failure else None})

    # -- UDP search -----------------------------------------------------------------------
    def _udp_search(self, ctx: TrialContext, test: TestSpec, point: Point) -> None:
        s = test.udp_search
        assert s is not None
        params = resolve(test.params, point.vars)
        timeout = self.profile.timeout_for(test)
        counter = 0
        # A resumed search replays the trials it already made: the search is deterministic
        # given their results, so it walks the same rates and measures only from where it
        # stopped.
        mine = (ctx.pair, ctx.point, test.name, Kind.UDP_SEARCH)
        stored = {r.repetition: r for r in self.run_dir.records() if r.key[:4] == mine} \
            if any(key[:4] == mine for key in self.done) else {}

        def one(rate: int) -> TrialRecord:
            nonlocal counter
            counter += 1
            old = stored.get(counter)
            if old is not None and old.offered_bps == rate:
                self._advance(1)
                return old
            self._check_stop()
            rec = self._measure(ctx, test, params, repetition=counter, kind=Kind.UDP_SEARCH,
                                offered_bps=rate, timeout_s=timeout)
            rec.search_method = s.method
            if old is not None:    # the search took another path: keep both, mark the new
                rec.trial_id += ".replayed"
                rec.extra["superseded_stored_trial"] = old.trial_id
            self._store(rec)
            self._told(rec, counter, None)
            if rec.failure is Failure.HOST_LOST:
                raise HostLost(ctx.sender.host, rec.reason or "")
            return rec

        def trial(rate: int) -> TrialRecord:
            # trials_per_rate > 1: the rate is offered that many times and its best trial
            # (one that passes, then the most received) speaks for it; all are stored.
            recs = [one(rate) for _ in range(s.trials_per_rate)]
            return max(recs, key=lambda r: (passes(r, s.loss_pct), r.ok,
                                            r.throughput_bps or 0.0))

        if s.method == "sweep":
            result = sweep(trial, s.start_bps, s.stop_bps, s.step_bps)
        else:
            result = bisect(trial, s.start_bps, s.stop_bps, s.step_bps, s.loss_pct)
        self.listener(ev.UdpSearchDone(
            pair=ctx.pair, point=ctx.point, test=test.name, method=result.method,
            best_bps=result.best_bps, offered_bps=result.best_offered_bps,
            trials=len(result.trials)))

    # -- records --------------------------------------------------------------------------
    @property
    def run_id(self) -> str:
        assert self.manifest is not None
        return self.manifest.run_id

    def _all_done(self, pair: Pair, point: Point, test: TestSpec) -> bool:
        key = (pair.name, point.name, test.name)
        if TrialKey(*key, Kind.SKIPPED, None) in self.done or \
                TrialKey(*key, Kind.GIVEN_UP, None) in self.done:
            return True
        if test.udp_search:
            return False
        return all(TrialKey(*key, Kind.REPETITION, r) in self.done
                   for r in range(1, self.profile.repetitions_for(test) + 1))

    def _store_marker(self, pair: str, adapter: str, adapter_label: str, point: Point,
                      test: TestSpec, kind: Kind, failure: Failure, reason: str, *,
                      not_run: int, kernel_message: str | None = None,
                      extra: dict | None = None) -> None:
        """Store the one record that stands for a test's trials not run at a point: the
        point was not applied or the pair could not be measured (``skipped``), or too many
        failures in a row (``given-up``)."""
        now = time.time()
        self._store(TrialRecord(
            run_id=self.run_id, trial_id=f"{pair}.{point.name}.{test.name}.{kind.value}",
            pair=pair, adapter=adapter, adapter_label=adapter_label, tool=test.tool,
            test=test.name, protocol=test.protocol, point=point.name, mtu=point.ip_mtu,
            repetition=None, kind=kind, status=Status.SKIPPED, failure=failure,
            reason=reason, not_run=not_run, kernel_message=kernel_message,
            started_at=now, ended_at=now, extra=extra or {}))

    def _store(self, rec: TrialRecord) -> None:
        with self._lock:
            self.run_dir.append(rec)
            self.done.add(rec.key)

    def _told(self, rec: TrialRecord, i: int, n: int | None) -> None:
        with self._lock:
            self.progress.done += 1
            self.progress.measured += 1
            self.listener(ev.TrialDone(record=rec, i=i, n=n, done=self.progress.done,
                                       total=self.progress.total,
                                       eta_s=self.progress.eta_s()))

    # -- pairs at once (parallel) ---------------------------------------------------------
    def listener(self, event: ev.Event) -> None:
        """Tell the run's listener, one event at a time whichever pair's thread it is."""
        with self._lock:
            self._listener(event)

    def _advance(self, trials: int) -> None:
        with self._lock:
            self.progress.done += trials

    def _check_stop(self) -> None:
        if self.stop.is_set():
            raise _Stopped()

    def _run_pairs(self, hosts: Hosts) -> None:
        """Every pair, host-disjoint ones at once up to ``parallel``; raises
        KeyboardInterrupt when stopped before the end."""
        def holds(pair: Pair) -> tuple[str, str]:
            return (pair.a.host, pair.b.host)

        def stopping(running: list[Pair]) -> None:
            self.listener(ev.Warning(
                "stopping: " + ", ".join(p.name for p in running) + " end the trial they "
                "are in and put their hosts back (each trial is bounded by its timeout); "
                "then every setting left is restored"))

        Schedule(holds=holds, work=lambda pair: self._run_pair_alone(hosts, pair),
                 parallel=self.parallel, stop=self.stop, on_stopping=stopping
                 ).run(self.pairs)
        if self.stop.is_set():
            raise KeyboardInterrupt

    def _run_pair_alone(self, hosts: Hosts, pair: Pair) -> None:
        """One pair, whatever becomes of the others: a stop ends it between trials, and an
        error of its own (a host answering oddly) ends only it, recorded as the reason
        its remaining configurations were not measured. A results directory that cannot
        be written stops the run."""
        state = ev.PairState.STOPPED   # unless it ends otherwise (Ctrl-C in the main thread)
        try:
            self._run_pair(hosts, pair)
            state = ev.PairState.DONE
        except _Stopped:
            pass
        except ResultsWriteError:
            state = ev.PairState.FAILED
            raise
        except NicbenchError as exc:
            state = ev.PairState.FAILED
            reason = exc.one_line()
            with self._lock:
                self.unmeasured[pair.name] = reason
            self._give_up_pair(pair, self.profile.points, Failure.REMOTE, reason)
        except Exception:
            state = ev.PairState.FAILED
            raise
        finally:
            self.listener(ev.PairEnded(pair=pair.name, state=state))


class _Stopped(Exception):
    """The run was asked to stop: a pair's thread leaves before its next trial."""


class RestorePending(NicbenchError):
    """A resume found settings or processes a crashed run left on its hosts that it
    cannot put back now: nothing is measured until they are."""

    def __init__(self, run_dir: Path, problems: list[str]):
        self.problems = problems
        self.run_dir = run_dir
        super().__init__(f"{run_dir}: the interrupted run left hosts changed and they cannot "
                         f"be put back now: {'; '.join(problems)}")

    def lines(self) -> list[str]:
        return [f"not put back: {p}" for p in self.problems] + [
            f"{self.run_dir}: the interrupted run left these hosts changed; when they answer, "
            f"run `nicbench restore {self.run_dir}`, then resume"]


def run_profile(profile: Profile, inventory: Inventory, out: str | Path, **kw: Any) -> RunDir:
    """Run ``profile`` over ``inventory``'s pairs into ``out`` (see :class:`Runner`)."""
    return Runner(profile, inventory, out, **kw).run()
