"""A run directory read as it stands, by whoever looks at it from outside the run (``nicbench
status``, a campaign's morning summary): its manifest and its current trials by pair,
each as far as it can be read. Nothing is written, locked or repaired: the controller
may still be writing, so a manifest not there yet or not readable is ``None`` and
trials.jsonl that cannot be read counts as no trials."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from nicbench.config.profile import Profile
from nicbench.errors import NicbenchError
from nicbench.results.manifest import Manifest
from nicbench.results.records import TrialRecord, current
from nicbench.results.store import RunDir


@dataclass(frozen=True)
class RunSnapshot:
    manifest: Manifest | None
    by_pair: dict[str, list[TrialRecord]] = field(default_factory=dict)  # current records

    @property
    def profile(self) -> Profile | None:
        return self.manifest.profile if self.manifest is not None else None


def read_run(path: str | Path) -> RunSnapshot:
    run_dir = RunDir(path)
    try:
        manifest: Manifest | None = Manifest.read(run_dir.manifest_file)
    except NicbenchError:
        manifest = None
    try:
        records = current(run_dir.records())
    except NicbenchError:
        records = []
    by_pair: dict[str, list[TrialRecord]] = {}
    for r in records:
        by_pair.setdefault(r.pair, []).append(r)
    return RunSnapshot(manifest, by_pair)
