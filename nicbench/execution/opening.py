"""The open phase: the results directory made or resumed, its manifest written, and what
an interrupted run left on its hosts put back before anything is measured.

A resume measures what is missing of the same run: it is refused with another profile or
inventory; a torn last line of trials.jsonl (the run died mid-write) is kept aside and cut
off; the keys that stand are returned so that the run skips them.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from nicbench import __version__
from nicbench.config.inventory import Inventory, Pair
from nicbench.config.profile import Profile
from nicbench.errors import NicbenchError, UsageError
from nicbench.execution import events as ev
from nicbench.execution.sides import Hosts
from nicbench.platforms.base import Platform
from nicbench.platforms.tuning import TuningSession
from nicbench.results.manifest import Manifest, differences
from nicbench.results.records import TrialKey
from nicbench.results.rundir import RunDir, new_run_id


@dataclass(frozen=True)
class Opened:
    manifest: Manifest
    stored: set[TrialKey]      # what a resume finds standing (empty for a new run)


def refuse_unopenable(run_dir: RunDir, profile: Profile, inventory: Inventory, *,
                      resume: bool) -> Manifest | None:
    """What :func:`open_run` refuses, found by reading only (before any host is asked
    anything): a resume of what is not a run, or of another method's run; a new run
    into a directory that holds trials. The manifest a resume continues."""
    if resume:
        if not run_dir.manifest_file.exists():
            raise UsageError(f"{run_dir.path}: no manifest.json, so not a run that can be "
                             "resumed (start a new run with --out)")
        old = Manifest.read(run_dir.manifest_file)
        _refuse_another_method(run_dir, old, profile, inventory)
        return old
    if run_dir.trials_file.exists() and run_dir.trials_file.stat().st_size:
        raise UsageError(f"{run_dir.path} already holds trials: resume it with --resume or "
                         "choose another --out")
    return None


def open_run(run_dir: RunDir, profile: Profile, inventory: Inventory, pairs: list[Pair], *,
             resume: bool, keep_failed: bool, tell: ev.Listener) -> Opened:
    stored: set[TrialKey] = set()
    old = refuse_unopenable(run_dir, profile, inventory, resume=resume)
    if resume:
        torn = run_dir.repair_torn_tail()
        if torn is not None:
            tell(ev.Warning(f"{run_dir.trials_file}: its last line was torn (the run "
                            f"stopped mid-write); kept in {torn.name} and cut off, that "
                            "trial is measured again"))
        stored = run_dir.done_keys(keep_failed, manifest=old)
    run_dir.create()
    manifest = Manifest(
        run_id=old.run_id if old else new_run_id(), nicbench_version=__version__,
        profile=profile, profile_file=profile.file,
        inventory=inventory, inventory_file=inventory.file,
        inventory_dir=inventory.base_dir, pairs=[p.name for p in pairs],
        started_at=old.started_at if old else time.time(),
        resumed_at=[*old.resumed_at, time.time()] if old else [])
    manifest.write(run_dir.manifest_file)
    return Opened(manifest, stored)


def _refuse_another_method(run_dir: RunDir, old: Manifest, profile: Profile,
                           inventory: Inventory) -> None:
    """A resume measures what is missing of the same run: the same profile, and the same
    hosts, adapters and pairs, or its trials would not belong together."""
    what = []
    for name, was, now in (
            ("profile", old.profile.model_dump(mode="json"), profile.model_dump(mode="json")),
            ("inventory", old.inventory.model_dump(mode="json"),
             inventory.model_dump(mode="json"))):
        diff = differences(was, now)
        if diff:
            shown = ", ".join(diff[:3]) + (f" and {len(diff) - 3} more" if len(diff) > 3
                                          else "")
            what.append(f"the {name} differs ({shown})")
    if what:
        raise UsageError(f"{run_dir.path} was run with another method: {'; '.join(what)}: "
                         f"resume it with the profile and inventory it was made with "
                         f"({old.profile_file or old.profile.name}, "
                         f"{old.inventory_file or 'its inventory'}), or start a new run")


def recover_previous(run_dir: RunDir, tuning: TuningSession, hosts: Hosts,
                     tell: ev.Listener) -> None:
    """Put back what a run that died left on its hosts, before anything else."""
    try:
        platforms: Mapping[str, Platform] = {h: hosts.platform(h)
                                             for h in sorted(tuning.hosts())}
    except (NicbenchError, KeyError) as exc:
        raise RestorePending(run_dir.path, [f"cannot reach the hosts: {exc}"]) from None
    tuning.bind(platforms)
    pending = tuning.pending()
    leftovers = list(tuning.leftovers)
    problems = tuning.restore()
    if problems:
        raise RestorePending(run_dir.path, [str(p) for p in problems])
    tuning.forget_restored()
    tell(ev.Warning(f"put back what the interrupted run left: {len(pending)} settings, "
                    f"{len(leftovers)} processes or files"))


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
