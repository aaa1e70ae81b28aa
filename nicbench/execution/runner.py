"""``nicbench run``: a profile over pairs, point by point, every trial stored as it ends.

For each pair and each tuning point: record the originals and apply the tuning on both
hosts, prove the path carries the MTU, run each test with its repetitions (or its UDP
search), and restore. A point the hardware refuses (the kernel's "Invalid argument") is
stored as a skipped configuration with that reason and the run goes on, as the reviews
did.

A :class:`Runner` is the run's schedule over its phases, each a module of its own: open
the results directory or resume it (:mod:`.opening`), prepare a pair (:mod:`.prepare`),
apply and restore a point (:mod:`.point`), measure a test (:mod:`.measure`), store every
record (:mod:`.store`); :mod:`.pair` walks one pair through them, and
:mod:`.schedule` runs host-disjoint pairs at once. What the phases share is a
:class:`~nicbench.execution.context.RunContext`. Hosts come from a
:class:`~nicbench.execution.sides.Hosts` provider (SSH to the inventory's hosts by
default; tests give fakes), and what happens is told to a
:class:`~nicbench.execution.events.Listener`.

What it survives (docs/reliability.md lists each with its test):

- a resume (``resume=True``) first puts back whatever an earlier, crashed run left in
  the journal (settings, processes, files), cuts a torn last line off trials.jsonl, then
  skips every trial that stands (a success, or a refusal by the driver or kernel);
  failures, give-ups and points skipped for reasons that may pass are measured again
  unless ``keep_failed``; a resume with another profile or inventory is refused;
- a pair not ready (a tool missing, an interface absent or down: ``nicbench check``'s
  reasons) is recorded as not measurable before anything changes and the others run; a
  run with no pair ready is refused (exit 2); a pair that measured nothing makes the run
  end in error (``unmeasured``, exit 1);
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

Pairs measured at once share the run's state: one lock guards what they write
(trials.jsonl, manifest.json, the progress counts) and every call of the listener, which
therefore never sees two events at once; the journal (TuningSession) and the HostPool
guard their own.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from nicbench.config.inventory import Inventory, Pair
from nicbench.config.profile import Profile, check_platforms
from nicbench.errors import NotReadyError, ResultsWriteError, UsageError
from nicbench.execution import events as ev
from nicbench.execution.context import HostLost, RunContext, TrialFn
from nicbench.execution.opening import (Opened, RestorePending, open_run,
                                        recover_previous, refuse_unopenable)
from nicbench.execution.ossettings import OsSettings
from nicbench.execution.pair import PairRun
from nicbench.execution.readiness import NotReady, pairs_not_ready
from nicbench.execution.schedule import Schedule
from nicbench.execution.sides import Hosts
from nicbench.execution.recorder import Progress, Recorder, Subscriber
from nicbench.execution.trial import run_trial
from nicbench.platforms.base import PlatformOptions
from nicbench.platforms.hosts import HostPool
from nicbench.platforms.tuning import Change, Problem, TuningSession
from nicbench.results.dirlock import LOCK_FILE, owned
from nicbench.results.manifest import Manifest
from nicbench.results.records import Failure, TrialKey, TrialRecord, current
from nicbench.results.rundir import RunDir, ScratchRunDir
from nicbench.results.summary import SummaryRow, summary_rows, write_summary

__all__ = ["HostLost", "Hosts", "Progress", "RestorePending", "Runner", "run_profile"]


class Runner:
    """One run of a profile over pairs of an inventory into a results directory."""

    def __init__(self, profile: Profile, inventory: Inventory, out: str | Path, *,
                 pairs: list[str] | None = None, resume: bool = False,
                 keep_failed: bool = False, listener: ev.Listener = ev.ignore,
                 hosts: Hosts | None = None, trust_new_keys: bool = False,
                 trial: TrialFn = run_trial, parallel: int = 1,
                 stop: threading.Event | None = None, sinks: Sequence[Subscriber] = (),
                 scratch: bool = False,
                 eta_prior: tuple[float, dict[str, float]] | None = None):
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
        # Told each record as it is stored, in file order (a results store, a live view).
        self.sinks = list(sinks)
        # A scratch run (``--plan``'s, over planning hosts, into a temporary directory)
        # keeps its trials in memory, no journal file and no summary: nobody reads them;
        # nor does it ask whether its pairs are ready (planning hosts always are).
        self.scratch = scratch
        self.run_dir = ScratchRunDir(out) if scratch else RunDir(out)
        self.progress = Progress(total=profile.trials_per_pair * len(self.pairs))
        if eta_prior is not None:   # the ETA starts from --plan's estimate (plan.eta_prior)
            self.progress.plan_s, self.progress.per_test_s = eta_prior
        self.manifest: Manifest | None = None
        self.tuning: TuningSession | None = None
        self.summary: list[SummaryRow] = []
        self.problems: list[Problem] = []      # what could not be put back at the end
        self.lost: dict[str, str] = {}         # host -> why it was given up
        self.unmeasured: dict[str, str] = {}   # pair -> why none of it could be measured
        self.done: set[TrialKey] = set()
        self._unwritable = False               # the run stopped on its directory's error

    def listener(self, event: ev.Event) -> None:
        """Tell the run's listener, one event at a time whichever pair's thread it is."""
        with self._lock:
            self._listener(event)

    # -- the run --------------------------------------------------------------------------
    @contextmanager
    def owning(self) -> Iterator[None]:
        """Own the results directory (made first if new) for the block: a second
        nicbench on it is refused before it reads or writes anything there
        (:mod:`nicbench.results.dirlock`). :meth:`run` takes it too; a caller may hold it
        around more than the run (the CLI, for the whole command). A directory this
        block made and left holding nothing (a run refused before it began) is taken
        away again, while it is still owned."""
        made = False
        if not self.resume:
            made = not self.run_dir.path.exists()
            self.run_dir.make()
        elif not self.run_dir.path.is_dir():
            raise UsageError(f"{self.run_dir.path}: no such results directory to resume")
        with owned(self.run_dir.path):
            try:
                yield
            finally:
                if made:
                    self._unmake()

    def _unmake(self) -> None:
        """Remove the results directory if it holds nothing but its lock and an empty
        raw/ (a run refused before it wrote anything); else leave it all as it is."""
        path, raw = self.run_dir.path, self.run_dir.raw_dir
        with contextlib.suppress(OSError):
            if {p.name for p in path.iterdir()} <= {LOCK_FILE, raw.name} and \
                    not (raw.is_dir() and any(raw.iterdir())):
                if raw.is_dir():
                    raw.rmdir()
                (path / LOCK_FILE).unlink(missing_ok=True)
                path.rmdir()

    def run(self) -> RunDir:
        with self.owning():
            return self._run()

    def _run(self) -> RunDir:
        hosts, opened, not_ready = self._start()
        self.manifest, self.done = opened.manifest, opened.stored
        self.tuning = TuningSession(None, on_restore=self._restored) if self.scratch else \
            TuningSession.load(self.run_dir.journal_file, on_restore=self._restored)
        context = RunContext(
            profile=self.profile, inventory=self.inventory, run_dir=self.run_dir,
            manifest=self.manifest, tuning=self.tuning,
            os_settings=OsSettings(self.tuning, self.listener),
            recorder=Recorder(self.run_dir, self.manifest.run_id, self.done, self.progress,
                              self.listener, self._lock),
            trial=self.trial, stop=self.stop, lock=self._lock, listener=self._listener,
            lost=self.lost, unmeasured=self.unmeasured)
        for sink in self.sinks:
            context.recorder.subscribe(sink)
        try:
            if self.tuning.hosts():
                recover_previous(self.run_dir, self.tuning, hosts, self.listener)
            if not_ready is None:     # a resume: asked once what a crash left is put back
                not_ready = self._not_ready(hosts)
            self.listener(ev.RunStarted(out=str(self.run_dir.path), profile=self.profile.name,
                                        pairs=tuple(p.name for p in self.pairs),
                                        total=self.progress.total, resumed=self.resume,
                                        parallel=self.parallel))
            for pair in self.pairs:
                if pair.name in not_ready:
                    why = not_ready[pair.name]
                    PairRun(context, hosts, pair).not_ready(why.failure, why.reason)
            self._run_pairs(context, hosts,
                            [p for p in self.pairs if p.name not in not_ready])
        except ResultsWriteError:
            # The run ends saying why the directory cannot be written: the end's own
            # writes there fail for the same cause and are not said again.
            self._unwritable = True
            raise
        finally:
            try:
                self._finish(context)
            finally:
                hosts.close()
        return self.run_dir

    def _start(self) -> tuple[Hosts, Opened, dict[str, NotReady] | None]:
        """The hosts, the results directory opened, and the pairs not ready (None: not
        asked yet). What the directory refuses is said before any host is asked
        anything: a resume is opened first (its directory is there already); a new
        run's directory, made by :meth:`owning`, is taken away again there if no pair
        is ready."""
        if self.resume:
            opened = self._open()
            return self._make_hosts(), opened, None
        refuse_unopenable(self.run_dir, self.profile, self.inventory, resume=False)
        self.run_dir.create()
        hosts = self._make_hosts()
        try:
            not_ready = self._not_ready(hosts)
            return hosts, self._open(), not_ready
        except BaseException:
            hosts.close()
            raise

    def _make_hosts(self) -> Hosts:
        return self._hosts or HostPool(self.inventory, trust_new_keys=self._trust_new_keys,
                                       options=PlatformOptions.of(self.profile))

    def _open(self) -> Opened:
        return open_run(self.run_dir, self.profile, self.inventory, self.pairs,
                        resume=self.resume, keep_failed=self.keep_failed, tell=self.listener)

    def _not_ready(self, hosts: Hosts) -> dict[str, NotReady]:
        """The pairs not ready to measure, with why; NotReadyError if none is."""
        if self.scratch:
            return {}
        found = pairs_not_ready(self.profile, self.pairs, hosts)
        if len(found) == len(self.pairs):
            raise NotReadyError([f"{p}: {why.reason}" for p, why in found.items()],
                                self.profile.name)
        return found

    def _run_pairs(self, context: RunContext, hosts: Hosts, pairs: list[Pair]) -> None:
        """Every pair, host-disjoint ones at once up to ``parallel``; raises
        KeyboardInterrupt when stopped before the end."""
        def holds(pair: Pair) -> tuple[str, str]:
            return (pair.a.host, pair.b.host)

        def stopping(running: list[Pair]) -> None:
            self.listener(ev.Warning(
                "stopping: " + ", ".join(p.name for p in running) + " end the trial they "
                "are in and put their hosts back (each trial is bounded by its timeout); "
                "then every setting left is restored"))

        Schedule(holds=holds, work=lambda pair: PairRun(context, hosts, pair).alone(),
                 parallel=self.parallel, stop=self.stop, on_stopping=stopping
                 ).run(pairs)
        if self.stop.is_set():
            raise KeyboardInterrupt

    # -- the run's restore ----------------------------------------------------------------
    def _finish(self, context: RunContext) -> None:
        """Put back everything the run still has changed, and close its files."""
        tuning, manifest = context.tuning, context.manifest
        self.problems = tuning.restore()
        for p in self.problems:
            self.listener(ev.Warning(f"not put back: {p}"))
        if tuning.journal_error and not self._unwritable:
            self.listener(ev.Warning(tuning.journal_error))
        manifest.ended_at = time.time()
        for host, notes in context.os_settings.notes.items():
            manifest.note_registry(host, list(notes))
        manifest.restore_problems = [str(p) for p in self.problems]
        manifest.lost_hosts = dict(self.lost)
        try:
            manifest.write(self.run_dir.manifest_file)
            if not self.scratch:
                self.summary = write_summary(self.run_dir, self.profile)
        except ResultsWriteError as exc:
            if not self._unwritable:
                self.listener(ev.Warning(exc.one_line()))
            self.summary = summary_rows(self.run_dir.records(), self.profile)
        if not self.stop.is_set():
            for pair, why in measured_nothing(self.run_dir.records(), self.pairs).items():
                self.unmeasured.setdefault(pair, why)

    def _restored(self, change: Change) -> None:
        self.listener(ev.SettingRestored(host=change.host, kind=change.kind, key=change.key,
                                         value=change.original))


def measured_nothing(records: Iterable[TrialRecord], pairs: Sequence[Pair]) -> dict[str, str]:
    """pair name -> why, for each pair of which no trial that stands measured (a point
    the driver or kernel refused is a result: a pair with one measured something)."""
    found: dict[str, TrialRecord | None] = {p.name: None for p in pairs}
    for rec in current(records):
        if rec.pair not in found:
            continue
        if rec.ok or rec.failure is Failure.REFUSED:
            found.pop(rec.pair)
        elif found[rec.pair] is None:
            found[rec.pair] = rec
    return {pair: "no trial measured"
            + (f" (first: {rec.failure}: {rec.reason})" if rec is not None else "")
            for pair, rec in found.items()}


def run_profile(profile: Profile, inventory: Inventory, out: str | Path, **kw: Any) -> RunDir:
    """Run ``profile`` over ``inventory``'s pairs into ``out`` (see :class:`Runner`)."""
    return Runner(profile, inventory, out, **kw).run()
