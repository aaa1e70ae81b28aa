"""Change points of a series by CSIT's jumpavg (PyPI ``jumpavg``), not by hand.

``jumpavg.classify`` groups consecutive runs so that the whole series takes the fewest
bits to describe (minimum message length, each group a normal distribution). A run's
repetitions go in as one indivisible sample (``AvgStdevStats``), so a group boundary is
always between two runs, never inside one, and a run's own spread tells the detector how
far apart two runs must be to differ: there is no threshold to tune. The significance of
a boundary is its score: how many bits merging its two groups again would cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Split:
    """A boundary of the grouping: ``at`` is the index of the first sample after it."""

    at: int
    before_mean: float
    after_mean: float
    score: float


def splits(samples: Sequence[np.ndarray]) -> list[Split]:
    """The group boundaries jumpavg finds in ``samples`` (one array of repetitions per
    run, oldest first; each with at least one value)."""
    if len(samples) < 2:
        return []
    import jumpavg

    runs = [np.asarray(s, dtype="float64").tolist() for s in samples]
    groups = jumpavg.classify(runs)
    if len(groups) < 2:
        return []
    sizes = [len(g.run_list) for g in groups]
    out = []
    at = 0
    for k in range(1, len(groups)):
        at += sizes[k - 1]
        merged = _bits_with_merged(groups, k)
        out.append(Split(at=at, before_mean=float(groups[k - 1].stats.avg),
                         after_mean=float(groups[k].stats.avg),
                         score=float(merged - groups.bits)))
    return out


def _bits_with_merged(groups, k: int) -> float:
    """The bits of the same grouping with groups k-1 and k made one."""
    from jumpavg import BitCountingGroupList

    merged = BitCountingGroupList(max_value=groups.max_value, unit=groups.unit)
    for i, g in enumerate(groups):
        if i == k:
            continue
        runs = list(g.run_list) + (list(groups[k].run_list) if i == k - 1 else [])
        merged.append_group_of_runs(runs)
    return float(merged.bits)
