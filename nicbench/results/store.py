"""A run's results directory: append-only, versioned, resumable.

::

    DIR/manifest.json     profile, inventory (no secrets), host facts, versions, times
    DIR/trials.jsonl      one JSON object per trial, appended and flushed as it ends
    DIR/raw/              every tool output, one file per trial and end
    DIR/summary.csv       one row per configuration (pair, point, test), rebuilt at the end
    DIR/tuning.json       the tuning journal: originals of every setting changed

Every record carries ``format_version``; readers accept older versions. Resuming a run
reads trials.jsonl and skips the (pair, point, test, repetition) keys already there.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Iterator

FORMAT_VERSION = 1


@dataclass
class TrialRecord:
    run_id: str
    trial_id: str
    pair: str
    adapter: str
    adapter_label: str
    tool: str
    test: str
    protocol: str
    point: str
    mtu: int
    repetition: int | None            # None for a skipped configuration
    kind: str                         # "repetition" | "udp-search" | "skipped" | "given-up"
    status: str                       # "ok" | "failed" | "skipped"
    reason: str | None = None
    throughput_bps: float | None = None
    sent_bps: float | None = None
    offered_bps: float | None = None
    duration_s: float | None = None   # the tool's own duration
    wall_s: float | None = None       # what the trial took, all included
    cpu_sender_pct: float | None = None     # /proc/stat busy % of the sending host
    cpu_receiver_pct: float | None = None   # /proc/stat busy % of the receiving host
    cpu_tool_pct: float | None = None       # the tool's own CPU figure, if it prints one
    udp: dict | None = None
    points: list[dict] = field(default_factory=list)
    version: str | None = None
    commands: dict[str, str] = field(default_factory=dict)
    hosts: dict[str, str] = field(default_factory=dict)   # role -> host name
    raw: dict[str, str] = field(default_factory=dict)     # role -> path relative to DIR
    exit_status: dict[str, int | None] = field(default_factory=dict)
    started_at: float = 0.0
    ended_at: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)
    format_version: int = FORMAT_VERSION

    @property
    def key(self) -> tuple:
        return (self.pair, self.point, self.test, self.kind, self.repetition)

    @classmethod
    def from_dict(cls, data: dict) -> "TrialRecord":
        """A stored record back as an object (unknown keys from newer versions dropped)."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


class RunDir:
    def __init__(self, path: str | Path):
        self.path = Path(path)

    @property
    def trials_file(self) -> Path:
        return self.path / "trials.jsonl"

    @property
    def manifest_file(self) -> Path:
        return self.path / "manifest.json"

    @property
    def raw_dir(self) -> Path:
        return self.path / "raw"

    @property
    def journal_file(self) -> Path:
        return self.path / "tuning.json"

    @property
    def summary_file(self) -> Path:
        return self.path / "summary.csv"

    def create(self) -> "RunDir":
        self.raw_dir.mkdir(parents=True, exist_ok=True)
        return self

    def write_manifest(self, manifest: dict) -> None:
        manifest = {"format_version": FORMAT_VERSION, **manifest}
        tmp = self.manifest_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(manifest, indent=1, default=str))
        tmp.replace(self.manifest_file)

    def read_manifest(self) -> dict:
        return json.loads(self.manifest_file.read_text())

    def write_raw(self, trial_id: str, role: str, text: str) -> str:
        rel = f"raw/{trial_id}.{role}.txt"
        (self.path / rel).write_text(text)
        return rel

    def append(self, record: TrialRecord) -> None:
        line = json.dumps(asdict(record), default=str)
        with open(self.trials_file, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def records(self) -> Iterator[dict]:
        """Every trial record; a torn last line (a crash mid-write) is skipped."""
        if not self.trials_file.exists():
            return
        with open(self.trials_file, encoding="utf-8") as fh:
            for line in fh:
                line = line.strip()
                if not line:
                    continue
                try:
                    yield json.loads(line)
                except json.JSONDecodeError:
                    continue

    def done_keys(self) -> set[tuple]:
        return {(r["pair"], r["point"], r["test"], r["kind"], r["repetition"])
                for r in self.records()}


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S")
