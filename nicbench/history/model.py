"""What ``nicbench history`` finds: typed series of nights and the changes in them.

A :class:`Series` is one adapter's figure for one test at one point over the runs that
measured it (:class:`Night`: one value per run, the run's selected figure, with its spread
and n), and the :class:`Change` points found in it: where the figure's level moved, by how much
with its 95 % interval (see :data:`RULE`), and what differed in the setup around it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any


class Direction(StrEnum):
    """Which way a change went: a regression is the worse way (a lower rate, a longer
    round trip)."""

    REGRESSION = "regression"
    PROGRESSION = "progression"


class Figure(StrEnum):
    """What a series follows: each figure its own series. A rate (more is better), or a
    latency test's median or 99th-percentile round trip (us; less is better)."""

    THROUGHPUT = "throughput"
    P50 = "p50 round trip"
    P99 = "p99 round trip"

    @property
    def lower_better(self) -> bool:
        return self is not Figure.THROUGHPUT

    @property
    def unit(self) -> str:
        return "us" if self.lower_better else "bit/s"


class Flag(StrEnum):
    """Why a night's trials were not used to judge a change."""

    ABOVE_LINE_RATE = "above-line-rate"   # beyond what the link can carry (physics/link)
    IMPOSSIBLE = "impossible"             # beyond any link (results/plausible.MAX_BPS)


# How history judges a change, said wherever its figures are shown.
RULE = ("a change: the levels either side (each night one sample; the spread between "
        "nights estimated from the series with a prior of 0.5 %, each night's own "
        "repetitions its precision) "
        "differ with the whole 95 % interval of the shift beyond the comparison's "
        "threshold, as 'faster'/'slower' in a comparison; a level lasts at least 3 nights "
        "(the newest may be shorter), so a single odd night is no change")
RULE_KIND = "levels-t-interval"


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
    """A change: the level of the nights from ``run_id`` on differs from the level before
    it by the rule (:data:`RULE`). ``before_bps`` / ``after_bps`` are the two levels
    (the nights' figures weighted by their precision and the spread between nights);
    ``change_pct`` after against before, ``low_pct`` / ``high_pct`` its 95 % interval;
    ``threshold_pct`` the comparison's threshold it lies beyond; ``night_spread_pct``
    the night-to-night standard deviation the interval allowed for."""

    run_id: str                  # the first run after the change
    started_at: datetime
    before_run_id: str           # the last run before it
    before_bps: float
    after_bps: float
    change_pct: float
    low_pct: float
    high_pct: float
    threshold_pct: float
    night_spread_pct: float
    nights_before: int
    nights_after: int
    direction: Direction
    setup_changes: tuple[str, ...] = ()

    def interval_text(self) -> str:
        return f"{self.change_pct:+.1f} % [{self.low_pct:+.1f}, {self.high_pct:+.1f}]"

    def to_json(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "started_at": self.started_at.isoformat(),
                "before_run_id": self.before_run_id, "before_bps": self.before_bps,
                "after_bps": self.after_bps, "change_pct": self.change_pct,
                "interval_pct": [self.low_pct, self.high_pct],
                "threshold_pct": self.threshold_pct,
                "night_spread_pct": self.night_spread_pct,
                "nights_before": self.nights_before, "nights_after": self.nights_after,
                "rule": RULE_KIND, "direction": self.direction.value,
                "setup_changes": list(self.setup_changes)}


@dataclass
class Series:
    """One adapter, test, point and figure over the runs that measured it, oldest first
    (a night's ``value_bps`` is in the figure's unit: a round trip's in us)."""

    adapter: str
    adapter_label: str
    test: str
    tool: str
    point: str
    nights: list[Night]
    changes: list[Change] = field(default_factory=list)
    figure: Figure = Figure.THROUGHPUT

    @property
    def key(self) -> tuple[str, str, str, str]:
        return self.adapter, self.test, self.point, self.figure.value

    @property
    def mtu(self) -> int:
        return self.nights[-1].mtu if self.nights else 0

    def to_json(self) -> dict[str, Any]:
        return {"adapter": self.adapter, "adapter_label": self.adapter_label,
                "test": self.test, "tool": self.tool, "point": self.point,
                "figure": self.figure.value, "unit": self.figure.unit,
                "runs": [n.to_json() for n in self.nights],
                "changes": [c.to_json() for c in self.changes]}
