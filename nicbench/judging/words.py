"""The comparison's rule, below everything that judges: the words a change of a figure
can get (:class:`Word`), how an interval and its threshold decide one (:func:`decide`, as
an equivalence test reads an interval), the same rule over two plain samples
(:func:`judge_samples`), and a seeded simulation of how often the words are wrong
(:func:`error_rates`).

A run against a run (``report/compare.py``), the verdict's ranks and ties
(``report/verdict.py``) and history's changes (``history/``) all decide by this one
rule, so "faster" means the same wherever it is printed. It stands on its statistics
(``judging/stats.py``) and nothing else of nicbench.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from enum import StrEnum

from nicbench.judging.stats import ALPHA, mann_whitney_p, shift_interval, testable

MIN_CHANGE_PCT = 1.0


class Word(StrEnum):
    """A comparison row's word (``docs/comparison.md``, "The words")."""

    FASTER = "faster"
    SLOWER = "slower"
    LOWER_LATENCY = "lower latency"         # a round trip: lower is better
    HIGHER_LATENCY = "higher latency"
    WITHIN = "within"                       # printed with its threshold: "within ±1.00 %"
    INCONCLUSIVE = "inconclusive"
    UNTESTABLE = "not testable"
    NOT_COMPARABLE = "not comparable"
    ABOVE_LIMIT = "above the limit"         # a figure the link cannot give: not judged
    BELOW_FLOOR = "below the wire's minimum"   # a round trip the link cannot give


FASTER, SLOWER, WITHIN, INCONCLUSIVE = Word.FASTER, Word.SLOWER, Word.WITHIN, Word.INCONCLUSIVE
UNTESTABLE, NOT_COMPARABLE = Word.UNTESTABLE, Word.NOT_COMPARABLE
ABOVE_LIMIT, BELOW_FLOOR = Word.ABOVE_LIMIT, Word.BELOW_FLOOR
LOWER_LATENCY, HIGHER_LATENCY = Word.LOWER_LATENCY, Word.HIGHER_LATENCY
WORDS = tuple(Word)
# The words that say a change: the only ones a rank may be split by.
CHANGED = (FASTER, SLOWER, LOWER_LATENCY, HIGHER_LATENCY)

@dataclass(frozen=True)
class Decision:
    """A row's word and the interval it was judged on."""

    word: Word
    low: float | None          # the judged interval (None: unbounded on that side)
    high: float | None
    widened: bool              # a fully tied interval, widened by the printed resolution


def decide(shift: float, low: float | None, high: float | None, threshold: float,
           resolution: float, p_adjusted: float, lower_better: bool = False) -> Decision:
    """The word of a testable row, as an equivalence test (two one-sided tests) reads an
    interval: beyond +-``threshold`` as a whole with ``p_adjusted`` below ``ALPHA``:
    faster or slower (a round trip: higher or lower latency); inside [-threshold,
    +threshold] as a whole: within; anything else: inconclusive. An interval of one value
    (every pairwise difference the same, the figures fully tied) is widened by the
    ``resolution`` either side: a figure printed to it may differ by up to it unseen."""
    widened = low is not None and high is not None and low == high
    if widened:
        assert low is not None and high is not None
        low, high = low - resolution, high + resolution
    if p_adjusted < ALPHA:
        up = low is not None and low > threshold and shift > 0
        down = high is not None and high < -threshold and shift < 0
        if up or down:
            if lower_better:
                word = HIGHER_LATENCY if up else LOWER_LATENCY
            else:
                word = FASTER if up else SLOWER
            return Decision(word, low, high, widened)
    if low is not None and high is not None and -threshold <= low and high <= threshold:
        return Decision(WITHIN, low, high, widened)
    return Decision(INCONCLUSIVE, low, high, widened)


# -- how often the words are wrong: a seeded simulation ------------------------------------
def judge_samples(sa: list[float], sb: list[float], resolution: float = 0.0,
                  min_change_pct: float = MIN_CHANGE_PCT,
                  lower_better: bool = False) -> Decision:
    """The word one row of these two samples gets when it is the only row of its
    comparison (its p is its adjusted p): the same statistic, threshold and rule as a
    report's row (:func:`fill`, :func:`decide`)."""
    if not testable(len(sa), len(sb)):
        return Decision(UNTESTABLE, None, None, False)
    a_median = statistics.median(sa)
    threshold = max(min_change_pct / 100.0 * abs(a_median), resolution)
    p = mann_whitney_p(sa, sb)
    assert p is not None
    shift = shift_interval(sa, sb)
    return decide(shift.estimate, shift.low, shift.high, threshold, resolution, p,
                  lower_better)


@dataclass(frozen=True)
class ErrorRates:
    """How often the comparison's words are wrong, measured on simulated runs
    (:func:`error_rates`): shares of ``trials`` comparisons each."""

    trials: int
    repetitions: int            # per run
    noise_pct: float            # the repetitions' standard deviation, % of the level
    min_change_pct: float
    false_change: float         # faster or slower where nothing changed
    within_no_change: float     # within ±threshold where nothing changed
    power_2pct: float           # faster where run B is 2 % faster
    power_4pct: float           # faster where run B is 4 % faster
    wrong_within_4pct: float    # within ±threshold where run B is 4 % faster

    def line(self) -> str:
        return (f"comparison ({self.trials} x {self.repetitions} vs {self.repetitions} "
                f"repetitions, {self.noise_pct:g} % noise, threshold {self.min_change_pct:g} "
                f"%): false faster/slower {100 * self.false_change:.1f} %, within "
                f"{100 * self.within_no_change:.1f} % under no change; power "
                f"{100 * self.power_2pct:.1f} % at 2 %, {100 * self.power_4pct:.1f} % at 4 %")


def error_rates(seed: int = 29, trials: int = 200, repetitions: int = 15,
                noise_pct: float = 0.5, min_change_pct: float = MIN_CHANGE_PCT,
                level: float = 940.0, resolution: float = 0.0) -> ErrorRates:
    """Seeded simulation of the comparison's error rates: ``trials`` pairs of runs of
    ``repetitions`` normal repetitions each (standard deviation ``noise_pct`` % of
    ``level`` Mbit/s; with a ``resolution``, every figure rounded to it as a tool that
    prints it would), judged by :func:`judge_samples`: under no change (run B as run A),
    and with run B 2 % and 4 % faster. Called by bench/judgement.py; the same seed gives
    the same figures."""
    import numpy as np

    rng = np.random.default_rng(seed)
    sd = noise_pct / 100.0 * level

    def run(mean: float) -> list[float]:
        xs = rng.normal(mean, sd, repetitions)
        if resolution > 0:
            xs = np.round(xs / resolution) * resolution
        return [float(x) for x in xs]

    def words(factor: float) -> list[Word]:
        return [judge_samples(run(level), run(level * factor), resolution,
                              min_change_pct).word for _ in range(trials)]

    same, two, four = words(1.0), words(1.02), words(1.04)

    def share(ws: list[Word], *which: Word) -> float:
        return sum(w in which for w in ws) / len(ws)

    return ErrorRates(trials=trials, repetitions=repetitions, noise_pct=noise_pct,
                      min_change_pct=min_change_pct,
                      false_change=share(same, FASTER, SLOWER),
                      within_no_change=share(same, WITHIN),
                      power_2pct=share(two, FASTER), power_4pct=share(four, FASTER),
                      wrong_within_4pct=share(four, WITHIN))
