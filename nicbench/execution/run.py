"""``nicbench run``: a profile over pairs, point by point, every trial stored as it ends.

For each pair and each tuning point: record the originals and apply the tuning on both
hosts, prove the path carries the MTU, run each test with its repetitions (or its UDP
search), and restore. A point the hardware refuses (the kernel's "Invalid argument") is
stored as a skipped configuration with that reason and the run goes on, as the reviews
did. Resuming skips every (pair, point, test, repetition) already in trials.jsonl.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from nicbench import __version__
from nicbench.config.inventory import Inventory, Pair
from nicbench.config.profile import Point, Profile, TestSpec
from nicbench.errors import TuningError, UsageError
from nicbench.execution.trial import TrialContext, run_trial
from nicbench.execution.udpsearch import bisect, passes, sweep
from nicbench.hosts import HostPool
from nicbench.platforms.tuning import TuningSession
from nicbench.results.store import RunDir, TrialRecord, new_run_id
from nicbench.results.summary import write_summary
from nicbench.tools.params import resolve

Events = Callable[[str, dict], None]
PER_TRIAL_OVERHEAD_S = 0.3   # first ETA guess; replaced by the measured figure


@dataclass
class Progress:
    """Counts trials and estimates the time left from what has been measured."""

    total: int
    done: int = 0
    started: float = field(default_factory=time.monotonic)
    expected_left_s: float = 0.0

    def eta_s(self) -> float | None:
        if self.done == 0:
            return self.expected_left_s or None
        rate = (time.monotonic() - self.started) / self.done
        return rate * (self.total - self.done)


def planned_trials(profile: Profile, test: TestSpec) -> int:
    if test.udp_search:
        s = test.udp_search
        steps = (s.stop_bps - s.start_bps) // s.step_bps + 1
        return steps * s.trials_per_rate if s.method == "sweep" else \
            (max(1, (steps - 1).bit_length()) + 2) * s.trials_per_rate
    return profile.repetitions_for(test)


def check_platforms(profile: Profile, inventory: Inventory, pairs: list[Pair]) -> None:
    if profile.platform == "any":
        return
    for pair in pairs:
        for side in (pair.a, pair.b):
            host = inventory.host(side.host)
            if host.os != profile.platform:
                raise UsageError(
                    f"profile {profile.name} is the {profile.platform} method "
                    f"({profile.source.split(';')[0]}) but pair {pair.name} host {host.name} "
                    f"runs {host.os}: choose a {host.os} profile or a {profile.platform} pair")


def run_profile(profile: Profile, inventory: Inventory, out: str | Path, *,
                pairs: list[str] | None = None, resume: bool = False,
                events: Events | None = None, trust_new_keys: bool = False) -> RunDir:
    emit = events or (lambda kind, data: None)
    chosen = [inventory.pair(p) for p in pairs] if pairs else list(inventory.pairs)
    if not chosen:
        raise UsageError("the inventory has no pairs to run")
    check_platforms(profile, inventory, chosen)
    run_dir = RunDir(out).create()
    done = run_dir.done_keys() if resume else set()
    if not resume and run_dir.trials_file.exists() and run_dir.trials_file.stat().st_size:
        raise UsageError(f"{out} already holds trials: resume it with --resume or choose "
                         "another --out")
    old = run_dir.read_manifest() if resume and run_dir.manifest_file.exists() else None
    manifest = {"run_id": old["run_id"] if old else new_run_id(),
                "nicbench_version": __version__,
                "profile": profile.model_dump(mode="json"), "profile_file": profile.file,
                "inventory": inventory.model_dump(mode="json"), "inventory_file": inventory.file,
                "pairs": [p.name for p in chosen], "started_at": time.time(), "hosts": {},
                "interfaces": {}, "tools": {}}
    run_id = manifest["run_id"]
    if old:
        manifest["started_at"] = old.get("started_at", manifest["started_at"])
        manifest["resumed_at"] = old.get("resumed_at", []) + [time.time()]
    total = sum(planned_trials(profile, t) for t in profile.tests) * len(profile.points) * len(chosen)
    progress = Progress(total=total)
    with HostPool(inventory, trust_new_keys=trust_new_keys) as pool, \
            TuningSession(run_dir.journal_file,
                          log=lambda m: emit("restore", {"message": m})) as tuning:
        try:
            for pair in chosen:
                _run_pair(profile, inventory, pair, pool, tuning, run_dir, run_id, done,
                          manifest, progress, emit)
        finally:
            problems = tuning.restore()
            for p in problems:
                emit("warning", {"message": p})
            manifest["ended_at"] = time.time()
            manifest["restore_problems"] = problems
            run_dir.write_manifest(manifest)
            write_summary(run_dir, profile)
    return run_dir


def _run_pair(profile, inventory, pair, pool, tuning, run_dir, run_id, done, manifest,
              progress, emit) -> None:
    adapter = inventory.adapter(pair.adapter)
    recv_side, send_side = pair.receiver_side, pair.sender_side
    receiver = pool.platform(recv_side.host)
    sender = pool.platform(send_side.host)
    for plat, side in ((receiver, recv_side), (sender, send_side)):
        manifest["hosts"][plat.host] = vars(plat.host_facts())
        facts = plat.interface_facts(side.interface)
        manifest["interfaces"][f"{pair.name}/{plat.host}"] = {
            k: v for k, v in vars(facts).items()}
        manifest["tools"][plat.host] = {t.tool: plat.tool_version(t.tool)
                                        for t in profile.tests}
    run_dir.write_manifest(manifest)
    for point in profile.points:
        _run_point(profile, pair, adapter, point, receiver, sender, recv_side, send_side,
                   tuning, run_dir, run_id, done, progress, emit)


def _run_point(profile, pair, adapter, point: Point, receiver, sender, recv_side, send_side,
               tuning: TuningSession, run_dir, run_id, done, progress, emit) -> None:
    pending = [t for t in profile.tests if not _all_done(profile, t, pair, point, done)]
    if not pending:
        progress.done += sum(planned_trials(profile, t) for t in profile.tests)
        return
    emit("point", {"pair": pair.name, "point": point.name})
    ctx = TrialContext(run_dir=run_dir, run_id=run_id, pair=pair.name, adapter=adapter.id,
                       adapter_label=adapter.label, point=point.name, mtu=point.ip_mtu,
                       receiver=receiver, sender=sender, receiver_addr=recv_side.address,
                       sender_addr=send_side.address)
    try:
        for name, value in {**profile.sysctl, **point.sysctl}.items():
            tuning.set_sysctl(receiver, name, str(value))
            tuning.set_sysctl(sender, name, str(value))
        tuning.set_mtu(receiver, recv_side.interface, point.ip_mtu)
        tuning.set_mtu(sender, send_side.interface, point.ip_mtu)
        sender.verify_path_mtu(send_side.interface, recv_side.address, point.ip_mtu)
        receiver.verify_path_mtu(recv_side.interface, send_side.address, point.ip_mtu)
    except TuningError as exc:
        reason = f"{exc.host}: {exc.setting} {exc.value}: {exc.kernel_message}"
        emit("skip", {"pair": pair.name, "point": point.name, "reason": reason})
        for test in pending:
            _store_marker(ctx, test, "skipped", reason, run_dir, done,
                          kernel_message=exc.kernel_message, host=exc.host)
            progress.done += planned_trials(profile, test)
        _restore_point(tuning)
        return
    try:
        for test in pending:
            params = resolve(test.params, point.vars)
            timeout = profile.timeout_for(test)
            if test.udp_search:
                _udp_search(ctx, test, params, timeout, run_dir, done, progress, emit)
                continue
            reps = profile.repetitions_for(test)
            limit = profile.give_up_after_for(test)
            failures_in_a_row = 0
            for rep in range(1, reps + 1):
                key = (pair.name, point.name, test.name, "repetition", rep)
                if key in done:
                    progress.done += 1
                    continue
                rec = run_trial(ctx, test, params, repetition=rep, timeout_s=timeout)
                _store(run_dir, rec, done)
                progress.done += 1
                emit("trial", {"record": rec, "i": rep, "n": reps, "eta_s": progress.eta_s(),
                               "done": progress.done, "total": progress.total})
                failures_in_a_row = failures_in_a_row + 1 if rec.status == "failed" else 0
                if limit and failures_in_a_row >= limit and rep < reps:
                    _give_up(ctx, test, rec, limit, reps - rep, run_dir, done, emit)
                    progress.done += reps - rep
                    break
    finally:
        _restore_point(tuning)


def _give_up(ctx, test, last: TrialRecord, limit: int, left: int, run_dir, done,
             emit) -> None:
    reason = (f"{left} repetitions not run after {limit} consecutive failures "
              f"(last: {last.reason})")
    emit("give-up", {"pair": ctx.pair, "point": ctx.point, "test": test.name,
                     "reason": reason})
    _store_marker(ctx, test, "given-up", reason, run_dir, done,
                  not_run=left, consecutive_failures=limit)


def _store_marker(ctx: TrialContext, test, kind: str, reason: str, run_dir, done,
                  **extra) -> None:
    """Store the one record that stands for a test's trials not run at a point: "skipped"
    (the point was refused) or "given-up" (too many failures in a row)."""
    now = time.time()
    _store(run_dir, TrialRecord(
        run_id=ctx.run_id, trial_id=f"{ctx.pair}.{ctx.point}.{test.name}.{kind}",
        pair=ctx.pair, adapter=ctx.adapter, adapter_label=ctx.adapter_label,
        tool=test.tool, test=test.name, protocol=test.protocol, point=ctx.point,
        mtu=ctx.mtu, repetition=None, kind=kind, status="skipped", reason=reason,
        started_at=now, ended_at=now, extra=extra), done)

def _restore_point(tuning: TuningSession) -> None:
    # Each point starts from the hosts' own settings, so a refused point cannot leave
    # the next one on a half-applied state.
    tuning.restore()
    tuning.forget_restored()


def _udp_search(ctx, test, params, timeout, run_dir, done, progress, emit) -> None:
    s = test.udp_search
    counter = {"n": 0}
    # A resumed search replays the trials it already made: the search is deterministic
    # given their results, so it walks the same rates and measures only from where it
    # stopped.
    mine = (ctx.pair, ctx.point, test.name, "udp-search")
    stored = {r["repetition"]: r for r in run_dir.records()
              if (r["pair"], r["point"], r["test"], r["kind"]) == mine} \
        if any(key[:4] == mine for key in done) else {}

    def one(rate: int) -> TrialRecord:
        counter["n"] += 1
        old = stored.get(counter["n"])
        if old is not None and old.get("offered_bps") == rate:
            progress.done += 1
            return TrialRecord.from_dict(old)
        rec = run_trial(ctx, test, params, repetition=counter["n"], kind="udp-search",
                        offered_bps=rate, timeout_s=timeout)
        rec.extra["search_method"] = s.method
        if old is not None:    # the search took another path: keep both, mark the new one
            rec.trial_id += ".replayed"
            rec.extra["superseded_stored_trial"] = old.get("trial_id")
        _store(run_dir, rec, done)
        progress.done += 1
        emit("trial", {"record": rec, "i": counter["n"], "n": None, "eta_s": progress.eta_s(),
                       "done": progress.done, "total": progress.total})
        return rec

    def trial(rate: int) -> TrialRecord:
        # trials_per_rate > 1: the rate is offered that many times and its best trial
        # (one that passes, then the most received) speaks for it; all are stored.
        recs = [one(rate) for _ in range(s.trials_per_rate)]
        return max(recs, key=lambda r: (passes(r, s.loss_pct), r.status == "ok",
                                        r.throughput_bps or 0.0))

    if s.method == "sweep":
        result = sweep(trial, s.start_bps, s.stop_bps, s.step_bps)
    else:
        result = bisect(trial, s.start_bps, s.stop_bps, s.step_bps, s.loss_pct)
    emit("udp-result", {"pair": ctx.pair, "point": ctx.point, "test": test.name,
                        "method": result.method, "best_bps": result.best_bps,
                        "offered_bps": result.best_offered_bps, "trials": len(result.trials)})


def _all_done(profile, test, pair, point, done) -> bool:
    if (pair.name, point.name, test.name, "skipped", None) in done or \
            (pair.name, point.name, test.name, "given-up", None) in done:
        return True
    if test.udp_search:
        return False
    return all((pair.name, point.name, test.name, "repetition", r) in done
               for r in range(1, profile.repetitions_for(test) + 1))


def _store(run_dir: RunDir, rec: TrialRecord, done: set) -> None:
    run_dir.append(rec)
    done.add(rec.key)
