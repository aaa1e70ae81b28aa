"""Reading results directories for a report: manifest, trials and per-configuration summaries.

A report combines one or more results directories (``nicbench run --out DIR``). Each is
read whole and checked before anything is drawn, so a bad directory is one line saying
which file and line is wrong, never a half-written report:

- the directory must exist and hold ``trials.jsonl``;
- every line of ``trials.jsonl`` must be a trial record (``RunDir.records(strict=True)``);
  the one exception is a torn *last* line without its newline (a run that crashed
  mid-write), which the store itself skips: it is skipped here too, with a warning;
- ``manifest.json`` is optional (a run killed before writing it still has trials); when
  present it must be a manifest (``Manifest.read``).

Records stay the :class:`TrialRecord` they were written as (those that stand:
``records.current``, as a resume may have measured some again), the manifest a
:class:`Manifest` (its profile a :class:`Profile`), and the summaries are recomputed from
the trials with the engine's own rules (``summary_rows`` with the run's profile), so a run
that stopped before writing summary.csv reports the same as a finished one.

Runs are named A, B, C ... in the order given; ``--label A=driver-7.1`` (or the
directory's name instead of the letter) gives a run a short label of its own.
"""

from __future__ import annotations

import os
import string
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable, Sequence

from nicbench.config.inventory import Adapter, Inventory
from nicbench.config.profile import Point, Profile, TestSpec
from nicbench.errors import UsageError
from nicbench.results.manifest import Manifest
from nicbench.results.records import TrialRecord, current
from nicbench.results.rundir import RunDir
from nicbench.results.summary import SummaryRow, summary_rows

Warn = Callable[[str], None]
LETTERS = string.ascii_uppercase
MAX_LABEL = 40


@dataclass
class Run:
    """One results directory, read and checked."""

    path: Path
    manifest: Manifest | None
    records: list[TrialRecord]
    summary: list[SummaryRow]
    index: int = 0
    label: str = "A"
    torn_line: int | None = None

    @property
    def letter(self) -> str:
        return letter(self.index)

    @property
    def run_id(self) -> str:
        if self.manifest is not None:
            return self.manifest.run_id
        ids = sorted({r.run_id for r in self.records if r.run_id})
        return ids[0] if ids else self.path.name

    @property
    def name(self) -> str:
        return self.path.resolve().name

    @property
    def profile(self) -> Profile | None:
        return self.manifest.profile if self.manifest is not None else None

    @property
    def inventory(self) -> Inventory | None:
        return self.manifest.inventory if self.manifest is not None else None

    def adapter(self, adapter_id: str) -> Adapter | None:
        inv = self.inventory
        return next((a for a in inv.adapters if a.id == adapter_id), None) if inv else None

    def test_spec(self, name: str) -> TestSpec | None:
        return self.profile.test(name) if self.profile is not None else None

    def point_spec(self, name: str) -> Point | None:
        return self.profile.point(name) if self.profile is not None else None


def letter(index: int) -> str:
    """A, B, ... Z, then A2, B2 ...: the short name of the run at ``index``."""
    return LETTERS[index % 26] + (str(index // 26 + 1) if index >= 26 else "")


def load_run(path: str | Path, warn: Warn | None = None) -> Run:
    warn = warn or (lambda m: None)
    d = Path(path)
    if not d.exists():
        raise UsageError(f"{d}: no such results directory")
    if not d.is_dir():
        raise UsageError(f"{d}: not a directory (give a results directory of nicbench run)")
    run_dir = RunDir(d)
    # a link or special file is there but refused by the reader, never followed
    if not os.path.lexists(run_dir.trials_file):
        raise UsageError(f"{d}: not a results directory: no trials.jsonl "
                         "(give the --out directory of a nicbench run)")
    manifest = None
    if os.path.lexists(run_dir.manifest_file):
        manifest = Manifest.read(run_dir.manifest_file)
    else:
        warn(f"{run_dir.manifest_file}: missing: the report has no hosts, versions or link "
             "rates for this run")
    # the records that stand (a resume that measured a configuration again appended to
    # the file, and the engine's summary reads the same ones), each checked against the
    # manifest: a trial for a pair, adapter, point or test the run does not have is refused
    records = current(run_dir.records(strict=True, manifest=manifest))
    torn = None
    if run_dir.torn_tail():
        torn = run_dir.line_count()
        warn(f"{run_dir.trials_file}:{torn}: torn last line skipped (the run stopped "
             "mid-write)")
    if not records:
        raise UsageError(f"{run_dir.trials_file}: no trial records (the run measured "
                         "nothing yet)")
    summary = summary_rows(records, manifest.profile if manifest else None, Path(d))
    return Run(path=d, manifest=manifest, records=records, summary=summary, torn_line=torn)


def load_runs(paths: Sequence[str | Path], warn: Warn | None = None,
              labels: Sequence[str] = ()) -> list[Run]:
    if not paths:
        raise UsageError("give at least one results directory")
    runs = []
    seen: dict[Path, str] = {}
    for i, p in enumerate(paths):
        real = Path(p).resolve()
        if real in seen:
            raise UsageError(f"{p}: given twice (also as {seen[real]})")
        seen[real] = str(p)
        run = load_run(p, warn)
        run.index, run.label = i, letter(i)
        runs.append(run)
    _apply_labels(runs, labels)
    return runs


def _apply_labels(runs: list[Run], labels: Sequence[str]) -> None:
    """``--label A=driver-7.1``: the run named by its letter or directory name gets a
    short label of its own (at most 40 characters, each run once)."""
    given: dict[int, str] = {}
    for item in labels:
        name, sep, text = item.partition("=")
        name, text = name.strip(), text.strip()
        if not sep or not name or not text:
            raise UsageError(f"--label {item!r}: give RUN=LABEL, e.g. A=driver-7.1 (RUN: "
                             "the run's letter in the order given, or its directory name)")
        if len(text) > MAX_LABEL:
            raise UsageError(f"--label {item!r}: the label is {len(text)} characters; keep "
                             f"it to {MAX_LABEL} (it is drawn beside every bar)")
        matches = [r for r in runs if name in (r.letter, r.name)]
        if not matches:
            known = ", ".join(f"{r.letter}={r.name}" for r in runs)
            raise UsageError(f"--label {item!r}: no run {name!r} (runs: {known})")
        if len(matches) > 1:
            raise UsageError(f"--label {item!r}: {name!r} names several runs; use the "
                             f"letters ({', '.join(r.letter for r in matches)})")
        run = matches[0]
        if run.index in given:
            raise UsageError(f"--label {item!r}: run {run.letter} already has the label "
                             f"{given[run.index]!r}")
        given[run.index] = text
        run.label = text
    texts = [r.label for r in runs]
    dup = next((t for t in texts if texts.count(t) > 1), None)
    if dup is not None:
        raise UsageError(f"--label: two runs are labelled {dup!r}; give each its own label")


def check_rate_names(rates: dict[str, float], runs: list[Run]) -> None:
    """Every --link-rate NAME is a pair or an adapter of these runs."""
    known: set[str] = set()
    for run in runs:
        for r in run.records:
            known.update((r.pair, r.adapter))
    for name in rates:
        if name not in known:
            raise UsageError(f"--link-rate {name}=...: no pair or adapter named {name!r} in "
                             f"these runs (pairs and adapters: {', '.join(sorted(known))})")
