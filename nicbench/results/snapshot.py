"""A run directory read as it stands, by whoever looks at it from outside the run (``nicbench
status``, a campaign's morning summary): its manifest and its current trials by pair,
each as far as it can be read. Nothing is written, locked or repaired: the controller
may still be writing, so a manifest not there yet or not readable is ``None`` and
trials.jsonl that cannot be read counts as no trials."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from nicbench.config.profile import Profile
from nicbench.errors import NicbenchError
from nicbench.results.manifest import Manifest
from nicbench.results.records import TrialRecord, current
from nicbench.results.rundir import RunDir


@dataclass(frozen=True)
class RunSnapshot:
    manifest: Manifest | None
    by_pair: dict[str, list[TrialRecord]] = field(default_factory=dict)  # current records
    # a line for each file that is there but was not read (corrupt, or a symbolic link or
    # special file, which nothing follows out of a results directory) and for each complete
    # line of trials.jsonl not counted (not a record, or one no trial can have), to be said
    unread: tuple[str, ...] = ()

    @property
    def profile(self) -> Profile | None:
        return self.manifest.profile if self.manifest is not None else None


def read_run(path: str | Path) -> RunSnapshot:
    run_dir = RunDir(path)
    unread: list[str] = []
    manifest: Manifest | None = None
    records: list[TrialRecord] = []
    try:
        manifest = Manifest.read(run_dir.manifest_file)
    except NicbenchError as exc:
        if os.path.lexists(run_dir.manifest_file):      # not there yet is no news
            unread.append(exc.one_line())
    try:
        records = current(run_dir.records(manifest=manifest, skipped=unread))
    except NicbenchError as exc:
        unread.append(exc.one_line())
    by_pair: dict[str, list[TrialRecord]] = {}
    for r in records:
        by_pair.setdefault(r.pair, []).append(r)
    return RunSnapshot(manifest, by_pair, tuple(unread))
