"""What ``nicbench history`` finds: typed series of nights and the changes in them.

A :class:`Series` is one adapter's figure for one test at one point over the runs that
measured it (:class:`Night`: one value per run, the run's selected figure, with its spread
and n), and the :class:`Change` points found in it: where the figure moved, by how much,
how sure the detector is (its ``score``, see :data:`SCORE`), and what differed in the
setup between the run before and the run after.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any


class Direction(StrEnum):
    """Which way a change went: a regression is a lower figure (every figure of history is
    a rate: more is better)."""

    REGRESSION = "regression"
    PROGRESSION = "progression"


class Flag(StrEnum):
    """Why a night's trials were not used to judge a change."""

    ABOVE_LINE_RATE = "above-line-rate"   # beyond what the link can carry (physics/link)
    IMPOSSIBLE = "impossible"             # beyond any link (results/plausible.MAX_BPS)


# How the detector judges a change, said wherever its figure is shown.
SCORE = ("score: bits of description length the split saves (CSIT jumpavg, minimum "
         "message length: each group of runs a normal distribution; a split stands only "
         "when it makes the data shorter to describe, so any score > 0 is a change)")
SCORE_KIND = "jumpavg-bits"


@dataclass(frozen=True)
class Night:
    """One run's figure of a series: the profile's ``select`` statistic (best, mean or
    median) over that run's successful repetitions, with their spread and count."""

    run_id: str
    started_at: datetime
    pair: str
    mtu: int
    select: str
    value_bps: float | None
    n: int                       # successful repetitions the value is taken over
    stdev_bps: float | None
    min_bps: float | None
    max_bps: float | None
    flagged: int = 0             # repetitions beyond a physical bound (not judged)
    flag: Flag | None = None
    limit_bps: float | None = None   # the link's goodput limit, where the line rate is known
    tool: str = ""               # the tool that measured it (a profile may change it)
    setup: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "started_at": self.started_at.isoformat(),
                "pair": self.pair, "mtu": self.mtu, "select": self.select,
                "value_bps": self.value_bps, "n": self.n, "stdev_bps": self.stdev_bps,
                "min_bps": self.min_bps, "max_bps": self.max_bps, "flagged": self.flagged,
                "flag": self.flag.value if self.flag else None, "limit_bps": self.limit_bps,
                "tool": self.tool, "setup": dict(self.setup)}


@dataclass(frozen=True)
class Change:
    """A change point: the figure of the runs from ``run_id`` on differs from the runs
    before it. ``before_bps`` / ``after_bps`` are the means of the two groups' runs (the
    detector's own levels); ``change_pct`` is after against before."""

    run_id: str                  # the first run after the change
    started_at: datetime
    before_run_id: str           # the last run before it
    before_bps: float
    after_bps: float
    change_pct: float
    score: float                 # bits saved by the split (see SCORE)
    direction: Direction
    setup_changes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "started_at": self.started_at.isoformat(),
                "before_run_id": self.before_run_id, "before_bps": self.before_bps,
                "after_bps": self.after_bps, "change_pct": self.change_pct,
                "score": self.score, "score_kind": SCORE_KIND,
                "direction": self.direction.value,
                "setup_changes": list(self.setup_changes)}


@dataclass
class Series:
    """One adapter, test and point over the runs that measured it, oldest first."""

    adapter: str
    adapter_label: str
    test: str
    tool: str
    point: str
    nights: list[Night]
    changes: list[Change] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str, str]:
        return self.adapter, self.test, self.point

    @property
    def mtu(self) -> int:
        return self.nights[-1].mtu if self.nights else 0

    def to_json(self) -> dict[str, Any]:
        return {"adapter": self.adapter, "adapter_label": self.adapter_label,
                "test": self.test, "tool": self.tool, "point": self.point,
                "runs": [n.to_json() for n in self.nights],
                "changes": [c.to_json() for c in self.changes]}
