"""Results directories into a store: ``nicbench store import`` and ``rebuild``.

A run's row comes from its directory alone (:func:`run_row`): manifest.json (read and
checked as ``report`` reads it), and, for a run of a campaign, the campaign's name, start
and shard from campaign.json beside it. The live writer (``store/sink.py``) makes the row
the same way, so a store rebuilt from the directories equals the one written as they ran.

Importing is idempotent: each run's trials are compared with what the store holds (by
run_id and trial_id, and the record's JSON): a second import adds nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from typing import TYPE_CHECKING

from nicbench.errors import UsageError
from nicbench.store.schema import RunRow, standing_lines, trial_row
from nicbench.store.store import Store

if TYPE_CHECKING:
    from nicbench.results.manifest import Manifest
    from nicbench.results.records import TrialRecord

# An import writes (and holds a DuckDB store) at most every BATCH_S of reading, or for
# BATCH_TRIALS trials at once. Each batch's open and close (a DuckDB checkpoint) costs
# about 0.07 s of CPU beyond its rows on this project's machines, 0.14 s at a million
# trials: 7 to 14 % of an import in batches of a second, 2 to 5 % in batches of three.
# A run writing the store meanwhile waits up to that long (it waits up to
# backend.LOCK_WAIT_S, then goes on without the store).
BATCH_S = 3.0
BATCH_TRIALS = 100_000
PARALLEL_FROM = 8       # runs from which an import reads them in worker processes


@dataclass
class ImportCounts:
    runs_added: int = 0
    runs_already: int = 0
    trials_added: int = 0
    trials_already: int = 0
    trials_removed: int = 0
    skipped_lines: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)     # run_id held by another run


def run_row(run_dir: str | Path, results_dir: str | None = None,
            manifest: Manifest | None = None) -> RunRow:
    """The store's row of the run in ``run_dir`` (UsageError if it holds no readable
    manifest); ``results_dir``: the directory as the user gave it (default: as given);
    ``manifest``: its manifest, if read already."""
    from nicbench.results.campaign import CampaignState, is_campaign
    from nicbench.results.manifest import Manifest

    path = Path(run_dir)
    if manifest is None:
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


@dataclass
class _Prepared:
    """One run read from its directory, ready to write: its row and its trials' rows."""

    named: str
    row: RunRow
    rows: list[tuple]
    skipped: list[str]


def _prepare(directory: str, named: str) -> _Prepared:
    """Read a run directory as every reader does (each line checked) and make its rows;
    run in worker processes for an import of many runs."""
    from nicbench.results.manifest import Manifest
    from nicbench.results.rundir import RunDir

    manifest = Manifest.read(Path(directory) / "manifest.json")
    row = run_row(directory, named, manifest)
    skipped: list[str] = []
    run_dir = RunDir(directory)
    # each line checked as a trial of this run (plausible.py): its run_id, its time in
    # the run's window, its pair in the manifest, its values within physical bounds
    numbered = list(run_dir.numbered_records(skipped=skipped, manifest=manifest))
    lines = _lines(run_dir.trials_file) if numbered else []
    numbered = [(n, rec) for n, rec in numbered
                if not _not_text(lines[n - 1], f"{run_dir.trials_file}:{n}", skipped)
                and not _not_of(rec, manifest, f"{run_dir.trials_file}:{n}", skipped)]
    rows = [trial_row(rec, line) for rec, line in standing_lines(numbered, lines)]
    return _Prepared(named, row, rows, skipped)


def _not_of(rec: TrialRecord, manifest: Manifest, where: str, skipped: list[str]) -> bool:
    """Is ``rec`` not a trial of the run whose manifest it sits beside? Said in
    ``skipped``."""
    from nicbench.results.plausible import of_run

    bad = of_run(rec, manifest)
    if bad is not None:
        skipped.append(f"{where}: {bad}: not a trial of this run (copied from another "
                       "run, edited, or corrupt)")
    return bad is not None


_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _not_text(line: bytes, where: str, skipped: list[str]) -> bool:
    """Does a record's line hold a lone surrogate (``\\ud800`` written as an escape: JSON
    takes it, UTF-8 cannot hold it, no database's text can)? Said in ``skipped``."""
    if not _ESCAPED_SURROGATE.search(line):
        return False
    found: list[str] = []

    def walk(value: object, path: str) -> None:
        if isinstance(value, str) and _SURROGATE.search(value):
            found.append(path)
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(k, f"{path}.{k!r}")
                walk(v, f"{path}.{k}" if path else str(k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, f"{path}[{i}]")

    walk(json.loads(line), "")
    if found:
        skipped.append(f"{where}: {found[0]} holds a lone surrogate (a \\ud800-\\udfff escape "
                       "without its pair): not text a store can keep (the file was edited "
                       "or is corrupt)")
    return bool(found)


def _prepare_args(args: tuple[str, str]) -> _Prepared:
    return _prepare(*args)


def import_dirs(open_: Callable[[], Store], dirs: Iterable[str],
                note: Callable[[str], None] | None = None,
                workers: int | None = None) -> ImportCounts:
    """Import every run of ``dirs`` into the store ``open_`` opens. Runs are read (and
    their lines checked) by ``workers`` processes (default: one per CPU, for 8 runs or
    more) while the store is written; the store is opened for each batch of runs (at
    most BATCH_S of reading, or BATCH_TRIALS trials) and closed in between, so that a
    run writing a DuckDB store meanwhile waits for it briefly."""
    counts = ImportCounts()
    todo = list(run_dirs_of(dirs))
    workers = workers if workers is not None else \
        (min(os.cpu_count() or 1, 4) if len(todo) >= PARALLEL_FROM else 1)
    with contextlib.ExitStack() as stack:
        if workers > 1:
            from nicbench.workers import process_pool

            # forked workers that die with this process (kill -9 included)
            pool = stack.enter_context(process_pool(workers))
            prepared: Iterator[_Prepared] = pool.map(_prepare_args, todo, chunksize=2)
        else:
            prepared = (_prepare(d, n) for d, n in todo)
        batch: list[_Prepared] = []
        since = time.monotonic()
        for item in prepared:
            batch.append(item)
            if sum(len(b.rows) for b in batch) >= BATCH_TRIALS or \
                    time.monotonic() - since >= BATCH_S:
                _write_batch(open_, batch, counts, note)
                batch, since = [], time.monotonic()
        _write_batch(open_, batch, counts, note)
    return counts


def _write_batch(open_: Callable[[], Store], batch: list[_Prepared], counts: ImportCounts,
                 note: Callable[[str], None] | None) -> None:
    """Runs read, written in one transaction; their new trials in one bulk insert."""
    if not batch:
        return
    with open_() as store, store.transaction():
        new: list[tuple] = []
        new_runs: list[RunRow] = []
        added_now: set[str] = set()
        # another import of these runs at once (PostgreSQL) waits here for this one's
        # commit, then finds them there: each run imported once
        store.backend.lock_runs([item.row.run_id for item in batch])
        known = store.runs_started([item.row.run_id for item in batch])
        for item in batch:
            there = known.get(item.row.run_id)
            if there is not None and there != item.row.started_at:
                counts.conflicts.append(
                    f"{item.named}: run_id {item.row.run_id} is another run's in the store "
                    "(started at another time): not imported")
                continue
            counts.skipped_lines.extend(item.skipped)
            if item.row.run_id in added_now:    # a run given twice: the first one in
                store.insert_runs(new_runs)
                store.insert_rows(new)
                new, new_runs = [], []
                added_now.clear()
            added, rows = store.write_run_rows(item.row, item.rows, new_run=there is None)
            if there is None:
                new_runs.append(item.row)
                added_now.add(item.row.run_id)
            known[item.row.run_id] = item.row.started_at      # a run given twice
            new.extend(rows)
            counts.runs_added += there is None
            counts.runs_already += there is not None
            counts.trials_added += added.added
            counts.trials_already += added.already
            counts.trials_removed += added.removed
        store.insert_runs(new_runs)
        store.insert_rows(new)
    for item in batch:
        if note is not None:
            note(item.named)


def _lines(path: Path) -> list[bytes]:
    """trials.jsonl's lines as bytes, numbered as ``RunDir.numbered_records`` numbers
    them (read again: the reader checked the file before)."""
    from nicbench.textfile import open_regular

    with open_regular(path, nofollow=True) as fh:
        return fh.read().split(b"\n")
