"""What a run tells whoever watches it: typed events, one class per kind.

The runner calls its :class:`Listener` with each event as it happens; the CLI prints
them, a campaign counts them, tests collect them. A listener must not raise. Pairs
measured at once call it from their own threads, one event at a time (the runner holds
its lock around each call): a listener needs no lock of its own, and must not block.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

from nicbench.physics.ethernet import Bound
from nicbench.results.records import Failure, TrialRecord

if TYPE_CHECKING:      # only the annotation: the CLI imports events without the platforms
    from nicbench.platforms.base import SettingKind


@dataclass(frozen=True)
class RunStarted:
    out: str
    profile: str
    pairs: tuple[str, ...]
    total: int                 # trials planned (a UDP search counts its expected trials)
    resumed: bool
    parallel: int = 1          # most pairs measured at once


@dataclass(frozen=True)
class PairStarted:
    pair: str


class PairState(StrEnum):
    """How a pair's part of the run ended (the heartbeat file says its value)."""

    DONE = "done"
    STOPPED = "stopped"        # before its end (the run was asked to stop)
    FAILED = "failed"          # its own error


@dataclass(frozen=True)
class PairEnded:
    pair: str
    state: PairState


@dataclass(frozen=True)
class PointStarted:
    pair: str
    point: str


@dataclass(frozen=True)
class PointSkipped:
    pair: str
    point: str
    failure: Failure
    reason: str


@dataclass(frozen=True)
class TrialStarted:
    pair: str
    point: str
    test: str


@dataclass(frozen=True)
class TrialDone:
    record: TrialRecord
    i: int                     # repetition (or search trial) number
    n: int | None              # repetitions planned; None for a UDP search
    done: int                  # trials done in the run so far
    total: int
    eta_s: float | None


@dataclass(frozen=True)
class GaveUp:
    pair: str
    point: str
    test: str
    reason: str


@dataclass(frozen=True)
class RepetitionsStopped:
    """An until-stable test stopped adding repetitions at a point, and why."""

    pair: str
    point: str
    test: str
    ran: int
    why: str                   # "stable at 0.41 % after 6", "max reached (30) at 2.30 % spread"


@dataclass(frozen=True)
class UdpSearchDone:
    pair: str
    point: str
    test: str
    method: str
    best_bps: float | None
    offered_bps: int | None
    trials: int


@dataclass(frozen=True)
class FrameRateFound:
    """A small-packet search's outcome at one frame size and bound (None: no full-length
    trial passed), with its bracket's top (the lowest rate failed above it) and the
    confirmation's duration and loss."""

    pair: str
    point: str
    test: str
    frame_bytes: int
    bound: Bound
    pps: float | None
    line_pps: float
    trials: int
    hi_pps: int | None = None
    confirm_s: float | None = None
    loss_pct: float | None = None


@dataclass(frozen=True)
class SettingRestored:
    host: str
    kind: SettingKind
    key: str
    value: str | None        # None: the setting did not exist and was removed again


@dataclass(frozen=True)
class HostRebooted:
    host: str
    seconds: float           # from the restart command to the host answering again
    reason: str


@dataclass(frozen=True)
class Warning:
    message: str


Event = (RunStarted | PairStarted | PairEnded | PointStarted | PointSkipped | TrialStarted
         | TrialDone | GaveUp | RepetitionsStopped | UdpSearchDone | FrameRateFound
         | SettingRestored | HostRebooted | Warning)


class Listener(Protocol):
    def __call__(self, event: Event) -> None: ...


def ignore(event: Event) -> None:
    """The listener of a run nobody watches."""
