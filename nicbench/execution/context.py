"""What the phases of one run share: :class:`RunContext`, made once the run is open.

A run is phases (docs/architecture.md): open the run directory (:mod:`.opening`), prepare
each pair (:mod:`.prepare`), apply and restore each point (:mod:`.point`), measure each
test (:mod:`.measure`), store every record (:mod:`.store`); :mod:`.pair` walks one pair
through them and :mod:`.runner` schedules the pairs. Each phase takes this context
instead of reaching into a runner: what the run has opened, the journal of what it
changed on hosts, where records go, who is told, and when to stop.

Pairs measured at once share it: ``lock`` guards the manifest, and :meth:`tell` calls the
listener one event at a time; the recorder, the journal and the host pool guard their own.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

from nicbench.config.inventory import Inventory
from nicbench.config.profile import Profile, TestSpec
from nicbench.execution import events as ev
from nicbench.execution.ossettings import OsSettings
from nicbench.execution.recorder import Recorder
from nicbench.platforms.tuning import TuningSession
from nicbench.results.manifest import Manifest
from nicbench.execution.trialcontext import TrialContext
from nicbench.results.records import Kind, TrialRecord
from nicbench.results.rundir import RunDir

class TrialFn(Protocol):
    """One trial: its context, test and resolved params -> its record.
    ``execution.trial.run_trial`` on real hosts; ``--plan``'s scratch run plans."""

    def __call__(self, ctx: TrialContext, test: TestSpec, params: dict[str, Any], *,
                 repetition: int, kind: Kind = ..., offered_bps: int | None = None,
                 timeout_s: float = ...) -> TrialRecord: ...


class HostLost(Exception):
    """A host stopped answering and did not come back within its bound."""

    def __init__(self, host: str, reason: str):
        super().__init__(f"{host}: {reason}")
        self.host = host
        self.reason = reason


class Stopped(Exception):
    """The run was asked to stop: a pair's thread leaves before its next trial."""


@dataclass
class RunContext:
    profile: Profile
    inventory: Inventory
    run_dir: RunDir
    manifest: Manifest
    tuning: TuningSession
    os_settings: OsSettings
    recorder: Recorder
    trial: TrialFn
    stop: threading.Event
    lock: threading.RLock
    listener: ev.Listener
    lost: dict[str, str] = field(default_factory=dict)        # host -> why it was given up
    unmeasured: dict[str, str] = field(default_factory=dict)  # pair -> why none was measured

    @property
    def run_id(self) -> str:
        return self.manifest.run_id

    def tell(self, event: ev.Event) -> None:
        """Tell the run's listener, one event at a time whichever pair's thread it is."""
        with self.lock:
            self.listener(event)

    def check_stop(self) -> None:
        if self.stop.is_set():
            raise Stopped()

    def note(self, section: str, key: str, value: Any) -> None:
        """Set one entry of the manifest (hosts, interfaces, tools), under the lock."""
        with self.lock:
            getattr(self.manifest, section)[key] = value

    def write_manifest(self) -> None:
        with self.lock:
            self.manifest.write(self.run_dir.manifest_file)
