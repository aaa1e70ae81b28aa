"""A campaign's directory and ``campaign.json``: what ran, in which order, how it ended.

::

    DIR/campaign.json     the file as run, the order (and shuffle seed), start/end, each
                          run's state, on_finish's outcome; rewritten atomically
    DIR/heartbeat.json    the controller's pulse while it runs (execution/heartbeat.py)
    DIR/summary.md        the morning summary; DIR/index.html the same with links
    DIR/<run>/            one ordinary results directory per run (manifest.json,
                          trials.jsonl, ...), so ``report``, ``restore`` and ``run
                          --resume`` work on it as on any run

Every path inside campaign.json is relative to DIR, so the directory can be copied or
mounted elsewhere and still read.
"""

from __future__ import annotations

import json
import time
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from nicbench.errors import UsageError
from nicbench.textfile import TextFileError, decode_utf8, read_bytes, write_atomic

CAMPAIGN_VERSION = 1
CAMPAIGN_FILE = "campaign.json"
# The campaign file as run, its order and each run's state: tens of KB for a night of
# hundreds of runs. 16 MB is not a campaign.json.
MAX_CAMPAIGN_BYTES = 16 << 20

class RunStateName(StrEnum):
    """Where one run of a campaign is (campaign.json's ``runs[].state``)."""

    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    INTERRUPTED = "interrupted"
    FAILED = "failed"


class CampaignStateName(StrEnum):
    """Where the campaign is (campaign.json's ``state``)."""

    RUNNING = "running"
    FINISHED = "finished"
    INTERRUPTED = "interrupted"
    FAILED = "failed"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RunState(_Model):
    name: str                         # its directory, relative to the campaign directory
    profile: str                      # the profile's name
    profile_file: str = ""
    pairs: list[str]                  # in the order they are scheduled
    planned: int = 0                  # trials planned (a UDP search: its estimate)
    state: RunStateName = RunStateName.PENDING
    started_at: float | None = None
    ended_at: float | None = None
    error: str | None = None          # why the run as a whole failed
    report: str | None = None         # its report page, relative to the campaign directory
    report_error: str | None = None
    restore_problems: list[str] = Field(default_factory=list)
    lost_hosts: dict[str, str] = Field(default_factory=dict)
    unmeasured: dict[str, str] = Field(default_factory=dict)   # pair -> why


class OnFinish(_Model):
    argv: list[str]
    exit_status: int | None = None    # None: it could not be started, or timed out
    error: str | None = None
    output_tail: str = ""
    duration_s: float = 0.0


class CampaignState(_Model):
    format_version: int = CAMPAIGN_VERSION
    name: str
    file: str                         # the campaign file's name (as given, for messages)
    text: str                         # the campaign file as it was run
    inventory_file: str = ""
    parallel: int = 1
    order: str = "listed"
    seed: int | None = None           # shuffle's seed, so a resume keeps the order
    shard: str | None = None          # "K/N" when this controller runs a share of the pairs
    only_pairs: list[str] | None = None
    state: CampaignStateName = CampaignStateName.RUNNING
    started_at: float = Field(default_factory=time.time)
    ended_at: float | None = None
    resumed_at: list[float] = Field(default_factory=list)
    controller: dict[str, Any] = Field(default_factory=dict)    # pid, host of the last one
    runs: list[RunState]              # in the order they run
    exit_status: int | None = None
    on_finish: OnFinish | None = None

    def write(self, directory: str | Path) -> None:
        """Atomically (a reader never sees half a file), fsynced."""
        from nicbench.results.rundir import write_error

        try:
            write_atomic(Path(directory) / CAMPAIGN_FILE,
                         json.dumps(self.model_dump(mode="json"), indent=1), fsync=True)
        except OSError as exc:
            raise write_error(Path(directory), exc) from exc

    @classmethod
    def read(cls, directory: str | Path) -> CampaignState:
        path = Path(directory) / CAMPAIGN_FILE
        try:
            data = json.loads(decode_utf8(read_bytes(path, MAX_CAMPAIGN_BYTES,
                                                     "not a nicbench campaign.json",
                                                     nofollow=True)))
        except FileNotFoundError:
            raise UsageError(f"{path}: missing (not a campaign directory)") from None
        except TextFileError as exc:
            raise UsageError(f"{path}{f':{exc.line}' if exc.line else ''}: {exc.message}") \
                from None
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") \
                from exc
        except json.JSONDecodeError as exc:
            raise UsageError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg}): the file is "
                             "corrupt") from None
        if isinstance(data, dict) and isinstance(data.get("format_version"), int) and \
                data["format_version"] > CAMPAIGN_VERSION:
            raise UsageError(f"{path}: format_version {data['format_version']} is newer than "
                             "this nicbench reads: read it with a newer nicbench")
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(s) for s in err["loc"]) or "top level"
            raise UsageError(f"{path}: {where}: {err['msg']}: not a campaign.json this "
                             "nicbench can read") from None


def is_campaign(directory: str | Path) -> bool:
    return (Path(directory) / CAMPAIGN_FILE).is_file()


def run_dirs(directory: str | Path) -> list[Path]:
    """A campaign directory's run directories (those that hold a run), in run order; a
    run directory is itself."""
    directory = Path(directory)
    if not is_campaign(directory):
        return [directory]
    state = CampaignState.read(directory)
    return [directory / r.name for r in state.runs
            if (directory / r.name / "manifest.json").is_file()]
