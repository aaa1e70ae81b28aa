"""Repetitions and selection: every sample kept, a summary per configuration.

The reviews ran each TCP test 15 times and kept the best; netio averaged 10 runs. The
selected value follows the profile's ``select`` (best | mean | median); the summary always
carries best, median, mean, min, max, stdev and the counts, so a reader sees the spread.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass


@dataclass(frozen=True)
class Summary:
    best: float | None
    median: float | None
    mean: float | None
    min: float | None
    max: float | None
    stdev: float | None

    def selected(self, rule: str) -> float | None:
        return {"best": self.best, "mean": self.mean, "median": self.median}[rule]


def summarize(values: list[float]) -> Summary:
    if not values:
        return Summary(None, None, None, None, None, None)
    return Summary(
        best=max(values),
        median=statistics.median(values), mean=statistics.fmean(values),
        min=min(values), max=max(values),
        stdev=statistics.stdev(values) if len(values) > 1 else 0.0)
