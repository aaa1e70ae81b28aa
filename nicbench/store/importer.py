"""Results directories into a store: ``nicbench store import`` and ``rebuild``.

A run's row comes from its directory alone (:func:`run_row`): manifest.json (read and
checked as ``report`` reads it), and, for a run of a campaign, the campaign's name, start
and shard from campaign.json beside it. The live writer (``store/sink.py``) makes the row
the same way, so a store rebuilt from the directories equals the one written as they ran.

Importing is idempotent: each run's trials are compared with what the store holds (by
run_id and trial_id, and the record's JSON): a second import adds nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from nicbench.errors import UsageError
from nicbench.results.records import current
from nicbench.store.schema import RunRow, standing
from nicbench.store.store import Store

REOPEN_S = 1.0      # a DuckDB import lets live writers in at least this often


@dataclass
class ImportCounts:
    runs_added: int = 0
    runs_already: int = 0
    trials_added: int = 0
    trials_already: int = 0
    trials_removed: int = 0
    skipped_lines: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)     # run_id held by another run


def run_row(run_dir: str | Path, results_dir: str | None = None) -> RunRow:
    """The store's row of the run in ``run_dir`` (UsageError if it holds no readable
    manifest); ``results_dir``: the directory as the user gave it (default: as given)."""
    from nicbench.results.campaign import CampaignState, is_campaign
    from nicbench.results.manifest import Manifest

    path = Path(run_dir)
    manifest = Manifest.read(path / "manifest.json")
    text = (path / "manifest.json").read_text(encoding="utf-8")
    campaign = started = shard = None
    if is_campaign(path.parent):
        state = CampaignState.read(path.parent)
        if any(r.name == path.name for r in state.runs):
            campaign, started, shard = state.name, state.started_at, state.shard
    return RunRow(run_id=manifest.run_id, started_at=manifest.started_at,
                  ended_at=manifest.ended_at, profile=manifest.profile.name,
                  campaign=campaign, campaign_started_at=started, shard=shard,
                  results_dir=results_dir if results_dir is not None else str(run_dir),
                  manifest=text, nicbench_version=manifest.nicbench_version)


def run_dirs_of(given: Iterable[str]) -> Iterator[tuple[str, str]]:
    """(directory, as the user would name it) of each run: a run directory stands for
    itself, a campaign directory for its runs; anything else is one UsageError line."""
    from nicbench.results.campaign import is_campaign, run_dirs

    for g in given:
        path = Path(g)
        if not path.is_dir():
            raise UsageError(f"{g}: {'not a directory' if path.exists() else 'no such directory'}"
                             ": give a run's or a campaign's results directory")
        if is_campaign(path):
            for d in run_dirs(path):
                yield str(d), str(Path(g) / d.name)
        elif (path / "manifest.json").is_file():
            yield g, g
        else:
            raise UsageError(f"{g}: neither a run's results directory (manifest.json) nor a "
                             "campaign's (campaign.json)")


def import_dirs(open_: Callable[[], Store], dirs: Iterable[str],
                note: Callable[[str], None] | None = None) -> ImportCounts:
    """Import every run of ``dirs`` into the store ``open_`` opens (called again now and
    then: a DuckDB store is closed between runs at least every REOPEN_S, so that live
    writers wait for it briefly)."""
    counts = ImportCounts()
    todo = list(run_dirs_of(dirs))
    store = open_()
    opened = time.monotonic()
    try:
        for directory, named in todo:
            if store.backend.kind == "duckdb" and time.monotonic() - opened > REOPEN_S:
                store.close()
                store = open_()
                opened = time.monotonic()
            _import_one(store, directory, named, counts)
            if note is not None:
                note(named)
    finally:
        store.close()
    return counts


def _import_one(store: Store, directory: str, named: str, counts: ImportCounts) -> None:
    from nicbench.results.store import RunDir

    row = run_row(directory, named)
    there = store.run_started(row.run_id)
    if there is not None and there != row.started_at:
        counts.conflicts.append(f"{named}: run_id {row.run_id} is another run's in the store "
                                "(started at another time): not imported")
        return
    skipped: list[str] = []
    records = standing(current(RunDir(directory).records(skipped=skipped)))
    counts.skipped_lines.extend(skipped)
    added = store.write_run_records(row, records)
    if there is None:
        counts.runs_added += 1
    else:
        counts.runs_already += 1
    counts.trials_added += added.added
    counts.trials_already += added.already
    counts.trials_removed += added.removed
