"""``nicbench campaign``: several runs for one unattended night, into one directory.

A :class:`CampaignRunner` runs a campaign file's runs one after another, each an
ordinary :class:`~nicbench.execution.runner.Runner` into its own results directory under
the campaign directory (so ``report``, ``restore`` and ``run --resume`` work on it), each
with its pairs measured ``parallel`` at a time (host-disjoint ones only). Around them:

- ``campaign.json`` (:mod:`nicbench.results.campaign`): the file as run, the order (a
  shuffle's seed included, so a resume keeps it), start and end, each run's state,
  rewritten as each run starts and ends;
- ``heartbeat.json`` (:mod:`~nicbench.execution.heartbeat`), for ``nicbench status``
  from another terminal;
- the morning summary (:mod:`nicbench.results.morning`), written as the campaign ends,
  on Ctrl-C too, then ``on_finish`` run with its path.

A run that fails as a whole (its hosts cannot be reached to put back what a crashed
attempt left, a profile that no longer fits a resumed directory) is recorded with the
reason and the campaign goes on with the next. Ctrl-C stops the run in progress (every
host restored, see Runner), writes the summary and raises KeyboardInterrupt; ``--resume
DIR`` then skips the runs that are done and resumes the others, without a duplicate.

Runs go one after another: runs of disjoint host sets could overlap, but a campaign's
runs are usually methods over the same adapters, and pairs inside a run already fill
the hosts; keeping runs in sequence keeps each run's directory, report and restore
simple and the order of the night predictable.

The campaign's events reach its listener as the runner's do, plus the
:class:`CampaignEvent` kinds below; a :class:`~nicbench.execution.events.TrialDone`
carries the campaign's counts and ETA rather than the run's.
"""

from __future__ import annotations

import os
import random
import socket
import threading
import time
from contextlib import suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from collections.abc import Callable

from nicbench.config.campaign import LoadedCampaign, PlannedRun
from nicbench.config.inventory import Inventory
from nicbench.errors import CommandTimeout, NicbenchError, UsageError
from nicbench.execution import events as ev
from nicbench.execution.heartbeat import HEARTBEAT_FILE, Heartbeat
from nicbench.execution.plan import eta_prior
from nicbench.execution.runner import Hosts, RestorePending, Runner
from nicbench.execution.recorder import SinkFactory
from nicbench.results import morning
from nicbench.results.dirlock import owned
from nicbench.results.campaign import (CampaignState, CampaignStateName, OnFinish, RunState,
                                      RunStateName, is_campaign)

TAIL_CHARS = 2000


@dataclass(frozen=True)
class CampaignStarted:
    name: str
    runs: tuple[str, ...]         # the order they run in
    total: int                    # trials planned over every run
    done: int                     # of which already done (a resume)
    resumed: bool
    parallel: int
    shard: str | None


@dataclass(frozen=True)
class RunBegins:
    i: int                        # 1-based, of n
    n: int
    name: str
    profile: str
    pairs: tuple[str, ...]
    resumed: bool


@dataclass(frozen=True)
class RunEnds:
    name: str
    state: RunStateName           # done | interrupted | failed
    error: str | None
    report: str | None            # the run's report page, relative to the campaign dir


@dataclass(frozen=True)
class OnFinishRan:
    command: str
    exit_status: int | None
    error: str | None
    tail: str


@dataclass(frozen=True)
class CampaignEnded:
    state: CampaignStateName      # finished | interrupted | failed


CampaignEvent = CampaignStarted | RunBegins | RunEnds | OnFinishRan | CampaignEnded
Listener = Callable[[Any], None]


def _ignore(event: Any) -> None:
    pass


class CampaignRunner:
    """One campaign (a loaded file) over an inventory into a campaign directory."""

    def __init__(self, loaded: LoadedCampaign, inventory: Inventory, out: str | Path, *,
                 resume: bool = False, parallel: int | None = None,
                 only_pairs: list[str] | None = None, shard: tuple[int, int] | None = None,
                 listener: Listener = _ignore, trust_new_keys: bool = False,
                 hosts: Callable[[], Hosts] | None = None,
                 build_report: Callable[[Path], Path] | None = None,
                 stop: threading.Event | None = None, sinks: SinkFactory | None = None,
                 history: Callable[[], Any] | None = None):
        self.loaded = loaded
        self.inventory = inventory
        self.dir = Path(out)
        self.resume = resume
        self.parallel = parallel or loaded.campaign.parallel
        self.only_pairs = only_pairs
        self.shard = shard
        self.listener = listener
        self.trust_new_keys = trust_new_keys
        self._hosts = hosts
        # Set to stop as Ctrl-C does (each run's stop, see Runner); Ctrl-C itself reaches
        # the run in progress directly.
        self.stop = stop or threading.Event()
        self._build_report = build_report if loaded.campaign.report else None
        # Each run's records also go to a results store as they are stored.
        self._sinks = sinks
        # Opens the results store the morning summary judges this night against (None:
        # the campaign directories beside this one are its history).
        self._history = history
        self.state: CampaignState | None = None
        self.exit_status: int | None = None
        self.morning: morning.Morning | None = None
        self._heartbeat: Heartbeat | None = None
        self._done_before = 0
        self._total = 0
        self._measured = 0
        self._t0 = time.monotonic()

    # -- the campaign ---------------------------------------------------------------------
    def run(self) -> int:
        """Run every run not done yet; returns the exit status (0: everything measured,
        1: not). Ctrl-C: the summary is written, then KeyboardInterrupt is raised."""
        self.dir.mkdir(parents=True, exist_ok=True)
        # One controller per campaign directory: a second one, or a resume while the
        # first still runs, is refused rather than racing it.
        with owned(self.dir):
            state = self.state = self._open()
            self._heartbeat = Heartbeat(self.dir / HEARTBEAT_FILE, kind="campaign",
                                        name=state.name).start()
            self._total = sum(r.planned for r in state.runs)
            self._done_before = sum(r.planned for r in state.runs
                                    if r.state is RunStateName.DONE)
            self._heartbeat.set_run(None, self._total)
            ending = CampaignStateName.FAILED
            try:
                self.listener(CampaignStarted(
                    name=state.name, runs=tuple(r.name for r in state.runs),
                    total=self._total, done=self._done_before, resumed=self.resume,
                    parallel=self.parallel, shard=state.shard))
                todo = [r for r in state.runs if r.state is not RunStateName.DONE]
                for run in todo:
                    if self.stop.is_set():
                        raise KeyboardInterrupt
                    self._run_one(run, state.runs.index(run) + 1, len(state.runs))
                ending = CampaignStateName.FINISHED
            except KeyboardInterrupt:
                ending = CampaignStateName.INTERRUPTED
                raise
            finally:
                self._finish(ending)
        assert self.exit_status is not None
        return self.exit_status

    def _open(self) -> CampaignState:
        c = self.loaded.campaign
        controller = {"pid": os.getpid(), "host": socket.gethostname()}
        if self.resume:
            state = CampaignState.read(self.dir)
            self._refuse_another_campaign(state)
            state.resumed_at.append(time.time())
            state.state, state.ended_at, state.exit_status = CampaignStateName.RUNNING, None, None
            state.on_finish = None
            state.controller = controller
            state.parallel = self.parallel
        else:
            if is_campaign(self.dir):
                raise UsageError(f"{self.dir} already holds a campaign: resume it with "
                                 "--resume or choose another --out")
            seed = c.seed
            if c.order == "shuffle" and seed is None:
                seed = random.SystemRandom().randrange(2**32)
            shard = f"{self.shard[0]}/{self.shard[1]}" if self.shard else None
            state = CampaignState(
                name=c.name, file=c.file, text=self.loaded.text,
                inventory_file=self.inventory.file, parallel=self.parallel, order=c.order,
                seed=seed, shard=shard, only_pairs=self.only_pairs, controller=controller,
                runs=plan(self.loaded, self.inventory, self.only_pairs, self.shard, seed))
        state.write(self.dir)
        return state

    def _refuse_another_campaign(self, state: CampaignState) -> None:
        planned = {p.name: p for p in self.loaded.runs}
        wrong = [r.name for r in state.runs
                 if r.name not in planned or planned[r.name].profile.name != r.profile]
        if wrong or state.name != self.loaded.name:
            raise UsageError(
                f"{self.dir} was run from another campaign file ({state.file}: "
                + (f"runs {', '.join(wrong)} differ" if wrong else f"name {state.name}")
                + "): resume it with the file it was made with (its text is in "
                "campaign.json), or start a new campaign")
        if self.only_pairs or self.shard:
            raise UsageError("--resume keeps the pairs the campaign was started with: "
                             "leave out --pair and --shard")

    # -- one run --------------------------------------------------------------------------
    def _run_one(self, rs: RunState, i: int, n: int) -> None:
        assert self.state is not None and self._heartbeat is not None
        planned = next(p for p in self.loaded.runs if p.name == rs.name)
        run_dir = self.dir / rs.name
        resumed = (run_dir / "manifest.json").is_file()
        rs.state, rs.started_at, rs.ended_at, rs.error = \
            RunStateName.RUNNING, time.time(), None, None
        self.state.write(self.dir)
        self._heartbeat.set_run(rs.name)
        self.listener(RunBegins(i=i, n=n, name=rs.name, profile=rs.profile,
                                pairs=tuple(rs.pairs), resumed=resumed))
        runner: Runner | None = None
        sink = self._sinks(run_dir, self._forward) if self._sinks else None
        try:
            runner = Runner(planned.profile, self.inventory, run_dir, pairs=list(rs.pairs),
                            resume=resumed, keep_failed=planned.keep_failed,
                            listener=self._forward, trust_new_keys=self.trust_new_keys,
                            hosts=self._hosts() if self._hosts else None,
                            parallel=self.parallel, stop=self.stop,
                            sinks=[sink] if sink else [],
                            eta_prior=eta_prior(planned.profile, self.inventory,
                                                list(rs.pairs), self.parallel))
            runner.run()
            rs.state = RunStateName.DONE
        except KeyboardInterrupt:
            rs.state = RunStateName.INTERRUPTED
            raise
        except NicbenchError as exc:
            rs.state = RunStateName.FAILED
            rs.error = "; ".join(exc.lines()) if isinstance(exc, RestorePending) \
                else exc.one_line()
            self.listener(ev.Warning(f"run {rs.name} failed: {rs.error}; the campaign goes "
                                     "on with the next run"))
        except Exception as exc:
            rs.state = RunStateName.FAILED
            rs.error = f"internal error: {type(exc).__name__}: {exc}"
            raise
        finally:
            if sink is not None:
                sink.close()
            rs.ended_at = time.time()
            if runner is not None:
                rs.restore_problems = [str(p) for p in runner.problems]
                rs.lost_hosts = dict(runner.lost)
                rs.unmeasured = dict(runner.unmeasured)
            self._done_before += rs.planned
            self._write_state()
        if self._build_report is not None and (run_dir / "trials.jsonl").is_file():
            self._report(rs, run_dir)
        self._write_state()
        self.listener(RunEnds(name=rs.name, state=rs.state, error=rs.error, report=rs.report))

    def _report(self, rs: RunState, run_dir: Path) -> None:
        assert self._build_report is not None
        try:
            page = self._build_report(run_dir)
            rs.report = os.path.relpath(page, self.dir)
            rs.report_error = None
        except Exception as exc:      # a report that fails never stops the night
            rs.report_error = (exc.one_line() if isinstance(exc, NicbenchError)
                               else f"{type(exc).__name__}: {exc}")
            self.listener(ev.Warning(f"run {rs.name}: no report: {rs.report_error}"))

    def _forward(self, event: ev.Event) -> None:
        """A run's event, with the campaign's counts on trials, to the heartbeat and the
        listener."""
        if isinstance(event, ev.TrialDone):
            self._measured += 1
            done = self._done_before + event.done
            rate = (time.monotonic() - self._t0) / self._measured
            event = replace(event, done=done, total=self._total,
                            eta_s=max(0.0, rate * (self._total - done)))
        if self._heartbeat is not None:
            self._heartbeat(event)
        self.listener(event)

    def _write_state(self) -> None:
        assert self.state is not None
        try:
            self.state.write(self.dir)
        except NicbenchError as exc:
            self.listener(ev.Warning(exc.one_line()))

    # -- the end --------------------------------------------------------------------------
    def _against_history(self) -> list[str]:
        """What this night changed against the earlier nights beside it; a history that
        cannot be read is said once and leaves the summary without it."""
        source = None
        try:
            source = self._history() if self._history is not None else None
            return against_history(self.dir, source)
        except NicbenchError as exc:
            self.listener(ev.Warning(f"no history in the summary: {exc.one_line()}"))
            return []
        finally:
            if source is not None:
                source.close()

    def _finish(self, ending: CampaignStateName) -> None:
        """Summary, index, on_finish, the heartbeat's last beat: on every way out."""
        state = self.state
        assert state is not None and self._heartbeat is not None
        state.state = ending
        state.ended_at = time.time()
        for r in state.runs:
            if r.state is RunStateName.RUNNING:
                r.state = RunStateName.INTERRUPTED if ending is CampaignStateName.INTERRUPTED \
                    else RunStateName.FAILED
        summary = self.dir / morning.SUMMARY_MD
        index = self.dir / morning.INDEX_HTML
        try:
            summary, index, m = morning.write(self.dir, state, self._against_history())
            self.morning = m
            measured = m.everything_measured
        except NicbenchError as exc:
            self.listener(ev.Warning(f"no summary: {exc.one_line()}"))
            measured = False
        self.exit_status = 130 if ending is CampaignStateName.INTERRUPTED \
            else (0 if measured else 1)
        state.exit_status = self.exit_status
        self._write_state()
        c = self.loaded.campaign
        if c.on_finish:
            state.on_finish = run_on_finish(c.on_finish, c.on_finish_timeout_s, {
                "{summary}": str(summary.resolve()), "{index}": str(index.resolve()),
                "{dir}": str(self.dir.resolve()), "{status}": str(self.exit_status)})
            o = state.on_finish
            self.listener(OnFinishRan(command=" ".join(c.on_finish),
                                      exit_status=o.exit_status, error=o.error,
                                      tail=o.output_tail))
            self._write_state()
            if self.morning is not None:      # the page shows how on_finish went
                with suppress(NicbenchError):
                    morning.write_index(self.dir, self.morning)
        self._heartbeat.close(ending)
        self.listener(CampaignEnded(state=ending))


def against_history(directory: Path, source: Any = None) -> list[str]:
    """The lines of what this night changed against the nights before it (``source``, a
    results store, else the campaign directories beside this one): nicbench.history's
    words, regressions first."""
    from nicbench.history.regressions import campaign_changes

    return [c.line() for c in campaign_changes(directory, source)]


def run_on_finish(argv: list[str], timeout_s: float, words: dict[str, str]) -> OnFinish:
    """Run the campaign's on_finish command: no shell, the placeholders replaced, bounded
    by ``timeout_s``; its exit status and the tail of its output are kept."""
    from nicbench.remote.local import LocalConnection

    actual = list(argv)
    for key, value in words.items():
        actual = [w.replace(key, value) for w in actual]
    t0 = time.monotonic()
    record = OnFinish(argv=list(argv))
    try:
        res = LocalConnection("controller").run(actual, timeout=timeout_s, warn=True)
        record.exit_status = res.exit_status
        record.output_tail = (res.stdout + res.stderr)[-TAIL_CHARS:]
        if res.exit_status == 127 and "command not found" in res.stderr:
            record.error = f"{argv[0]}: command not found"
        elif res.exit_status:
            record.error = f"exited {res.exit_status}"
    except CommandTimeout as exc:
        record.error = f"ran past {timeout_s:g} s (on_finish_timeout_s) and was killed"
        record.output_tail = (exc.result.stdout + exc.result.stderr)[-TAIL_CHARS:]
    except NicbenchError as exc:
        record.error = exc.one_line()
    except KeyboardInterrupt:
        record.error = "interrupted (Ctrl-C) and killed"
    record.duration_s = time.monotonic() - t0
    return record


# -- which pairs, in which order ----------------------------------------------------------
def plan(loaded: LoadedCampaign, inventory: Inventory, only_pairs: list[str] | None,
         shard: tuple[int, int] | None, seed: int | None) -> list[RunState]:
    """The runs in the order they will run, each with its pairs in order; --pair and
    --shard keep a share of the pairs (runs left with none are left out)."""
    keep: set[str] | None = set(only_pairs) if only_pairs else None
    if shard is not None:
        used = [p.name for p in inventory.pairs
                if any(r.pairs is None or p.name in r.pairs for r in loaded.runs)]
        mine = shard_pairs(inventory, used, *shard)
        keep = mine if keep is None else keep & mine
    runs: list[tuple[PlannedRun, list[str]]] = []
    for r in loaded.runs:
        pairs = [p.name for p in inventory.pairs if r.pairs is None or p.name in r.pairs]
        if r.pairs is not None:       # the file's order
            pairs = [p for p in r.pairs if p in pairs]
        if keep is not None:
            pairs = [p for p in pairs if p in keep]
        if pairs:
            runs.append((r, pairs))
    if not runs:
        raise UsageError("no pairs left to run" + (" in this shard" if shard else "")
                         + (" with --pair" if only_pairs else ""))
    if loaded.campaign.order == "shuffle":
        rng = random.Random(seed)
        rng.shuffle(runs)
        for _, pairs in runs:
            rng.shuffle(pairs)
    return [RunState(name=r.name, profile=r.profile.name, profile_file=r.profile_file,
                     pairs=pairs,
                     planned=len(pairs) * r.profile.trials_per_pair)
            for r, pairs in runs]


def shard_pairs(inventory: Inventory, pairs: list[str], k: int, n: int) -> set[str]:
    """The pairs of shard ``k`` of ``n`` (1-based). Pairs that share a host, directly or
    through other pairs, stay in one shard (two controllers must never measure on one
    host at once); such groups are dealt largest first, each to the shard with the fewest
    pairs so far. The same inventory and pairs give every controller the same split."""
    if not 1 <= k <= n:
        raise UsageError(f"--shard {k}/{n}: K must be 1 to N")
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for name in pairs:
        p = inventory.pair(name)
        parent[root(p.a.host)] = root(p.b.host)
    groups: dict[str, list[str]] = {}
    for name in pairs:
        groups.setdefault(root(inventory.pair(name).a.host), []).append(name)
    shares: list[list[str]] = [[] for _ in range(n)]
    for group in sorted(groups.values(), key=lambda g: (-len(g), g[0])):
        min(shares, key=len).extend(group)
    return set(shares[k - 1])


def parse_shard(text: str) -> tuple[int, int]:
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise UsageError(f"--shard {text!r}: write K/N, e.g. 1/2") from None
    if not 1 <= k <= n <= 64:
        raise UsageError(f"--shard {text}: K from 1 to N, N at most 64")
    return k, n
