"""Reading results directories for a report: manifest, trials and per-configuration summaries.

A report combines one or more results directories (``nicbench run --out DIR``). Each is
read whole and checked before anything is drawn, so a bad directory is one line saying
which file and line is wrong, never a half-written report:

- the directory must exist and hold ``trials.jsonl``;
- every line of ``trials.jsonl`` must be a JSON object with the keys a report needs; the
  one exception is a torn *last* line without its newline (a run that crashed mid-write),
  which the store itself skips: it is skipped here too, with a warning;
- ``manifest.json`` is optional (a run killed before writing it still has trials); when
  present it must be a JSON object.

Summaries are recomputed from the trials with the engine's own rules
(``nicbench.results.summary.summary_rows``) and the profile's ``select`` from the manifest,
so a run that stopped before writing summary.csv reports the same as a finished one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from nicbench.errors import UsageError
from nicbench.results.manifest import Manifest
from nicbench.results.store import RunDir
from nicbench.results.summary import row_dict, summary_rows

Warn = Callable[[str], None]


@dataclass
class Run:
    """One results directory, read and checked."""

    path: Path
    manifest: dict
    records: list[dict]
    summary: list[dict]
    skipped_lines: list[int] = field(default_factory=list)

    @property
    def run_id(self) -> str:
        ids = sorted({r.get("run_id") for r in self.records if r.get("run_id")})
        return self.manifest.get("run_id") or (ids[0] if ids else self.path.name)

    @property
    def name(self) -> str:
        return self.path.resolve().name

    @property
    def profile(self) -> dict:
        return self.manifest.get("profile") or {}

    @property
    def inventory(self) -> dict:
        return self.manifest.get("inventory") or {}

    def adapter(self, adapter_id: str) -> dict:
        for a in self.inventory.get("adapters") or []:
            if a.get("id") == adapter_id:
                return a
        return {}

    def test_spec(self, name: str) -> dict:
        for t in self.profile.get("tests") or []:
            if t.get("name") == name:
                return t
        return {}

    def point_spec(self, name: str) -> dict:
        for p in self.profile.get("points") or []:
            label = p.get("label") or (f"mtu{p['mtu']}" if p.get("mtu") is not None
                                       else f"frame{p.get('frame_size')}")
            if label == name:
                return p
        return {}


def load_run(path: str | Path, warn: Warn | None = None) -> Run:
    warn = warn or (lambda m: None)
    d = Path(path)
    if not d.exists():
        raise UsageError(f"{d}: no such results directory")
    if not d.is_dir():
        raise UsageError(f"{d}: not a directory (give a results directory of nicbench run)")
    run_dir = RunDir(d)
    if not run_dir.trials_file.is_file():
        raise UsageError(f"{d}: not a results directory: no trials.jsonl "
                         "(give the --out directory of a nicbench run)")
    typed = list(run_dir.records(strict=True))
    if run_dir.torn_tail():
        n = run_dir.trials_file.read_text(encoding="utf-8").count("\n") + 1
        warn(f"{run_dir.trials_file}:{n}: torn last line skipped (the run stopped mid-write)")
    if not typed:
        raise UsageError(f"{run_dir.trials_file}: no trial records (the run measured "
                         "nothing yet)")
    manifest = None
    if run_dir.manifest_file.exists():
        manifest = Manifest.read(run_dir.manifest_file)
    else:
        warn(f"{run_dir.manifest_file}: missing: the report has no hosts, versions or link "
             "rates for this run")
    summary = summary_rows(typed, manifest.profile if manifest else None)
    return Run(path=d, manifest=manifest.model_dump(mode="json") if manifest else {},
               records=[r.to_dict() for r in typed],
               summary=[row_dict(s) for s in summary])


def load_runs(paths: list[str | Path], warn: Warn | None = None) -> list[Run]:
    if not paths:
        raise UsageError("give at least one results directory")
    runs = []
    seen: dict[Path, str] = {}
    for p in paths:
        real = Path(p).resolve()
        if real in seen:
            raise UsageError(f"{p}: given twice (also as {seen[real]})")
        seen[real] = str(p)
        runs.append(load_run(p, warn))
    return runs
