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

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from nicbench.errors import UsageError
from nicbench.results.summary import summary_rows

# What a report reads from every trial record; older or foreign records lacking one are
# refused with the file and line.
REQUIRED_KEYS = ("pair", "adapter", "tool", "test", "protocol", "point", "mtu", "kind",
                 "status")

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
    trials = d / "trials.jsonl"
    if not trials.is_file():
        raise UsageError(f"{d}: not a results directory: no trials.jsonl "
                         "(give the --out directory of a nicbench run)")
    records, skipped = _read_trials(trials)
    for n in skipped:
        warn(f"{trials}:{n}: torn last line skipped (the run stopped mid-write)")
    if not records:
        raise UsageError(f"{trials}: no trial records (the run measured nothing yet)")
    manifest = _read_manifest(d / "manifest.json", warn)
    select_for, loss_for = {}, {}
    for t in (manifest.get("profile") or {}).get("tests") or []:
        rule = t.get("select") or (manifest.get("profile") or {}).get("select")
        if rule:
            select_for[t["name"]] = rule
        if t.get("udp_search"):
            loss_for[t["name"]] = t["udp_search"].get("loss_pct", 0.1)
    summary = summary_rows(records, select_for, loss_for)
    return Run(path=d, manifest=manifest, records=records, summary=summary,
               skipped_lines=skipped)


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


def _read_trials(path: Path) -> tuple[list[dict], list[int]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") \
            from exc
    lines = text.split("\n")
    torn_tail = not text.endswith("\n")
    records, skipped = [], []
    for i, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            if torn_tail and i == len(lines):
                skipped.append(i)
                continue
            raise UsageError(f"{path}:{i}: not a JSON trial record ({exc.msg} at column "
                             f"{exc.colno}): the file is corrupt") from None
        if not isinstance(rec, dict):
            raise UsageError(f"{path}:{i}: not a JSON object: the file is corrupt")
        missing = [k for k in REQUIRED_KEYS if k not in rec]
        if missing:
            raise UsageError(f"{path}:{i}: trial record without {', '.join(missing)}: "
                             "not a nicbench trials file, or a corrupt one")
        if not isinstance(rec["mtu"], int):
            raise UsageError(f"{path}:{i}: mtu {rec['mtu']!r} is not a number")
        records.append(rec)
    return records, skipped


def _read_manifest(path: Path, warn: Warn) -> dict:
    if not path.exists():
        warn(f"{path}: missing: the report has no hosts, versions or link rates for this run")
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") \
            from exc
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg}): the file is "
                         "corrupt") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path}: not a JSON object: the file is corrupt")
    return data
