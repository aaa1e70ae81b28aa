"""Where a series of nights changed level: nights as samples, the comparison's rule.

The model (docs/comparison.md, "How history decides"): each night's figure is one sample
of its series, ``y = level + u + e``: ``e`` the night's own error, known from its
repetitions (its standard error ``se``), ``u`` the night-to-night variation, the same for
every night of the series, its variance ``tau2`` estimated from the series itself (the
spread of the nights around their levels beyond what their own errors explain, pooled
with a prior of :data:`NIGHT_PRIOR_PCT` counted as :data:`NIGHT_PRIOR_DF` nights). A
level's figure is the nights' mean weighted by ``1 / (tau2 + se2)``.

A change is called where the levels before and after differ as the comparison's
``faster`` / ``slower`` do (``report/compare.py``): the whole 95 % interval of the shift
(Student's t over the nights, ``tau2``'s degrees of freedom) lies beyond the comparison's
threshold (``MIN_CHANGE_PCT`` of the level before), so a change in the history and a
faster / slower in a comparison mean the same. A level lasts at least
:data:`MIN_NIGHTS` nights (fewer only in a shorter series), so a night that stands out alone (a spike) is never a change;
only the newest level may be shorter, as news (a spike on the newest night is said as a
change until the nights after it say otherwise).

The levels are found by binary segmentation (the split of a stretch whose shift is
surest, kept where the rule holds with the interval widened for having looked at every
night of the stretch, Bonferroni; then each half again), then every change is judged
again by the rule between its neighbouring levels with ``tau2`` from the whole series,
the weakest failing one merged away until all hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from nicbench.judging.words import MIN_CHANGE_PCT

CONFIDENCE = 0.95
MIN_NIGHTS = 3          # a level's fewest nights, the newest level's excepted
# What is known of the spread between nights before a series says it: two real runs of
# one profile differed by 0.35 % in the median configuration, 0.95 % RMS (issue 29): a
# standard deviation of 0.4 to 0.7 % a night. Counted as NIGHT_PRIOR_DF nights' worth of
# evidence beside the series' own: a short series' spread from one or two degrees of
# freedom would make any interval as wide as the t quantile of 1 df, 12.7 standard
# errors; a long series' own spread outweighs it.
NIGHT_PRIOR_PCT = 0.5
NIGHT_PRIOR_DF = 4


@dataclass(frozen=True)
class Split:
    """A change: ``at`` is the index of the first night after it; the levels either side,
    the shift's 95 % interval (after - before) and the threshold, in the figure's unit;
    ``tau`` the night-to-night spread the interval allowed for."""

    at: int
    before_mean: float
    after_mean: float
    low: float
    high: float
    threshold: float
    tau: float
    nights_before: int
    nights_after: int


@dataclass(frozen=True)
class _Judged:
    shift: float
    low: float
    high: float
    threshold: float
    before: float
    after: float
    margin: float        # how far the interval clears the threshold, in standard errors

    @property
    def change(self) -> bool:
        return self.low > self.threshold or self.high < -self.threshold


def t_quantile(p: float, df: int) -> float:
    """Student's t quantile (scipy.special: scipy.stats takes seconds to import)."""
    from scipy.special import stdtrit

    return float(stdtrit(df, p))


def _prior2(y: np.ndarray) -> float:
    """The night-to-night variance known before the series: NIGHT_PRIOR_PCT of its level."""
    return (NIGHT_PRIOR_PCT / 100.0 * float(np.median(np.abs(y)))) ** 2


def _pooled(tau2: np.ndarray | float, df: int, prior2: float) -> np.ndarray | float:
    """The series' own estimate and the prior, each by its degrees of freedom."""
    return (df * tau2 + NIGHT_PRIOR_DF * prior2) / (df + NIGHT_PRIOR_DF)


def _tau2(y: np.ndarray, se2: np.ndarray, bounds: Sequence[int],
          prior2: float) -> tuple[float, int]:
    """The night-to-night variance: the nights' spread around their segments' means
    beyond their own errors (method of moments, nights - segments degrees of freedom)
    pooled with the prior; and the degrees of freedom of the two together."""
    ss, df = 0.0, 0
    for a, b in pairwise(bounds):
        seg = y[a:b]
        ss += float(((seg - seg.mean()) ** 2).sum())
        df += b - a - 1
    own = max(0.0, ss / df - float(se2.mean())) if df > 0 else 0.0
    return float(_pooled(own, max(df, 0), prior2)), max(df, 0) + NIGHT_PRIOR_DF


def _level(y: np.ndarray, se2: np.ndarray, tau2: float) -> tuple[float, float]:
    """A level's weighted mean and its variance."""
    var = tau2 + se2
    if np.all(var <= 0):
        return float(y.mean()), 0.0
    w = 1.0 / np.maximum(var, 1e-300)
    return float((w * y).sum() / w.sum()), float(1.0 / w.sum())


def _judge(y: np.ndarray, se2: np.ndarray, a: int, k: int, b: int, tau2: float,
           df: int, threshold_pct: float, confidence: float = CONFIDENCE) -> _Judged | None:
    """The shift between nights [a, k) and [k, b) by the rule; None without an estimate
    of the night-to-night spread (no degrees of freedom)."""
    if df <= 0:
        return None
    before, vb = _level(y[a:k], se2[a:k], tau2)
    after, va = _level(y[k:b], se2[k:b], tau2)
    shift = after - before
    se = (vb + va) ** 0.5
    half = t_quantile(0.5 + confidence / 2, df) * se
    threshold = threshold_pct / 100.0 * abs(before)
    clear = (abs(shift) - half - threshold) / se if se > 0 else (
        np.inf if abs(shift) > threshold else -np.inf)
    return _Judged(shift, shift - half, shift + half, threshold, before, after, float(clear))


def shortest(n: int) -> int:
    """A level's fewest nights in a series of ``n``: MIN_NIGHTS, fewer only where the
    series itself is shorter (three or four nights: two, and the newest one)."""
    return max(2, min(MIN_NIGHTS, n - 2))


def _best_split(y: np.ndarray, se2: np.ndarray, a: int, b: int, n: int,
                threshold_pct: float, prior2: float) -> tuple[int, _Judged] | None:
    """The split of nights [a, b) whose shift clears the rule by the most, the spread
    estimated from the stretch under two levels; None where none holds. Every split at
    once (a night by split matrix of weights)."""
    least = shortest(n)
    last = b - 1 if b == n else b - least       # the newest level may be short
    ks = np.arange(a + least, last + 1)
    m = b - a
    df = m - 2
    if not len(ks) or df <= 0:
        return None
    # the search looks at every night of the stretch: its interval is widened for that
    # (Bonferroni), so that noise alone rarely offers a split to judge
    searched = 1 - (1 - CONFIDENCE) / len(ks)
    ys, vs = y[a:b], se2[a:b]
    c1 = np.concatenate([[0.0], np.cumsum(ys)])
    c2 = np.concatenate([[0.0], np.cumsum(ys * ys)])
    left = ks - a
    right = m - left
    ss = (c2[left] - c1[left] ** 2 / left) + \
        ((c2[m] - c2[left]) - (c1[m] - c1[left]) ** 2 / right)
    tau2 = np.asarray(_pooled(np.maximum(0.0, ss / df - float(vs.mean())), df, prior2))
    df += NIGHT_PRIOR_DF
    w = 1.0 / np.maximum(tau2[None, :] + vs[:, None], 1e-300)       # night x split
    before_mask = np.arange(m)[:, None] < left[None, :]
    wl, wr = np.where(before_mask, w, 0.0), np.where(before_mask, 0.0, w)
    before = (wl * ys[:, None]).sum(0) / wl.sum(0)
    after = (wr * ys[:, None]).sum(0) / wr.sum(0)
    flat = (tau2[None, :] + vs[:, None] <= 0).all(0)       # no spread at all: plain means
    before = np.where(flat, c1[left] / left, before)
    after = np.where(flat, (c1[m] - c1[left]) / right, after)
    se = np.where(flat, 0.0, np.sqrt(1.0 / wl.sum(0) + 1.0 / wr.sum(0)))
    shift = after - before
    half = t_quantile(0.5 + searched / 2, df) * se
    threshold = threshold_pct / 100.0 * np.abs(before)
    low, high = shift - half, shift + half
    change = (low > threshold) | (high < -threshold)
    if not change.any():
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        margin = np.where(se > 0, (np.abs(shift) - half - threshold) / se, np.inf)
    i = int(np.argmax(np.where(change, margin, -np.inf)))
    return int(ks[i]), _Judged(float(shift[i]), float(low[i]), float(high[i]),
                               float(threshold[i]), float(before[i]), float(after[i]),
                               float(margin[i]))


def splits(figures: Sequence[float], ses: Sequence[float] | None = None,
           threshold_pct: float = MIN_CHANGE_PCT) -> list[Split]:
    """The changes of a series of nights' ``figures`` (oldest first), each night's own
    standard error in ``ses`` (0 where unknown: the night-to-night spread then carries
    it)."""
    y = np.asarray(figures, dtype="float64")
    n = len(y)
    se2 = np.zeros(n) if ses is None else np.asarray(ses, dtype="float64") ** 2
    se2 = np.nan_to_num(se2)
    if n < 3:
        return []
    cuts: list[int] = []
    todo = [(0, n)]
    while todo:
        a, b = todo.pop()
        found = _best_split(y, se2, a, b, n, threshold_pct, _prior2(y))
        if found is not None:
            k = found[0]
            cuts.append(k)
            todo += [(a, k), (k, b)]
    cuts.sort()
    # every change again between its neighbours, the spread from the whole series
    while cuts:
        bounds = [0, *cuts, n]
        tau2, df = _tau2(y, se2, bounds, _prior2(y))
        judged = [_judge(y, se2, bounds[i], bounds[i + 1], bounds[i + 2], tau2, df,
                         threshold_pct) for i in range(len(cuts))]
        failing = [(j.margin if j is not None else -np.inf, i)
                   for i, j in enumerate(judged) if j is None or not j.change]
        if not failing:
            return [_split(bounds, i, j, tau2) for i, j in enumerate(judged) if j is not None]
        del cuts[min(failing)[1]]
    return []


def moved(figures: Sequence[float], ses: Sequence[float] | None, cuts: Sequence[int],
          threshold_pct: float = MIN_CHANGE_PCT) -> list[Split]:
    """The changes at ``cuts`` (first nights after them) judged by the rule as they stand,
    the spread from the whole series: for a change moved to the night its setup changed.
    A cut the rule does not hold at is left out."""
    y = np.asarray(figures, dtype="float64")
    n = len(y)
    se2 = np.zeros(n) if ses is None else np.nan_to_num(np.asarray(ses, "float64") ** 2)
    bounds = [0, *cuts, n]
    tau2, df = _tau2(y, se2, bounds, _prior2(y))
    out = []
    for i, k in enumerate(cuts):
        j = _judge(y, se2, bounds[i], k, bounds[i + 2], tau2, df, threshold_pct)
        if j is not None and j.change:
            out.append(_split(bounds, i, j, tau2))
    return out


def _split(bounds: list[int], i: int, j: _Judged, tau2: float) -> Split:
    """The change at ``bounds[i + 1]`` between its neighbouring levels, as judged."""
    a, k, b = bounds[i], bounds[i + 1], bounds[i + 2]
    return Split(at=k, before_mean=j.before, after_mean=j.after, low=j.low, high=j.high,
                 threshold=j.threshold, tau=tau2 ** 0.5, nights_before=k - a,
                 nights_after=b - k)
