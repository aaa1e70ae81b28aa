"""A latency configuration's round trips pooled over its repetitions, and the percentiles
they can carry.

Each repetition keeps its round trips under the run's raw/ directory: sockperf's
``--full-log`` (every round trip, in send order, with its send time: the test's
``per_sample``), iperf 2's bounce-back its final histogram (the client's output; iperf
2.1.8 prints no per-sample output and no interval histograms). The trial record keeps the
counts and the tool's own summary (``Latency``); this module reads the raw files back.

A configuration's percentile q is the q-quantile of all its repetitions' round trips
pooled (nearest rank, ``ceil(q n)``), with

- ``n``, the round trips pooled, beside it;
- a percentile is printed only where at least ``TAIL_MIN`` (10) round trips lie beyond it:
  ``n >= 10 / (1 - q)``, 1,000 for p99, 10,000 for p99.9; otherwise the cell says how many
  it would need (:func:`needed`);
- a distribution-free 95 % confidence interval from order statistics: the ranks l, u with
  ``P(X(l) <= xi_q <= X(u)) >= 0.95`` under Binomial(n, q) (:func:`rank_interval`). It
  treats the round trips as independent draws; neighbours in time are not quite (the
  comparison of runs resamples time slices for that, ``compare_percentile``);
- the range of the repetitions' own percentiles (each repetition's from its own round
  trips, gated the same way), never one of them standing for the configuration;
- from a histogram, every figure is the bin its rank falls in (``lo``-``hi``, clipped to
  the exact min and max iperf prints), never interpolated.

Memory: a repetition's round trips are read into a float32 array (4 bytes each; sockperf's
full log is capped at ``sockperf.MAX_LOGGED_MESSAGES`` per trial), a histogram as its
non-empty bins; a configuration holds its repetitions' at once, nothing more.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from nicbench.errors import ParseError
from nicbench.tools import bounceback, sockperf

TAIL_MIN = 10                   # round trips beyond a percentile for it to be printed
CONFIDENCE = 0.95
QUANTILES = (("p50_us", 0.50, "p50"), ("p90_us", 0.90, "p90"), ("p99_us", 0.99, "p99"),
             ("p999_us", 0.999, "p99.9"))
SLICE_S = 0.25                  # a time slice of the block bootstrap (sockperf full logs)
MIN_SLICES = 8                  # slices (or repetitions) a side needs for a comparison
BOOTSTRAP = 1000                # resamples of a comparison
SEED = 30


def needed(q: float) -> int:
    """Round trips a percentile needs: ``TAIL_MIN`` of them beyond it (1,000 for p99)."""
    return math.ceil(TAIL_MIN / (1.0 - q) - 1e-6)


def rank_interval(n: int, q: float, confidence: float = CONFIDENCE) -> tuple[int, int]:
    """1-based ranks (l, u) of the order statistics bracketing the q-quantile with at least
    ``confidence``: P(l <= B < u) >= confidence, B ~ Binomial(n, q) the count below it."""
    tail = (1.0 - confidence) / 2.0
    lo = _binom_ppf(tail, n, q)                 # P(B <= lo) >= tail
    hi = _binom_ppf(1.0 - tail, n, q) + 1       # P(B < hi) >= 1 - tail
    return max(1, lo), min(n, hi)


def _binom_ppf(p: float, n: int, q: float) -> int:
    """The smallest k with P(B <= k) >= p, B ~ Binomial(n, q) (scipy.stats.binom.ppf's
    answer, by bisection over the cdf; scipy.stats takes 0.5 s to import, and a report
    whose round trips are not pooled needs none of scipy)."""
    from scipy.special import bdtr      # the binomial cdf

    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) // 2
        if float(bdtr(mid, n, q)) >= p:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _rank(n: int, q: float) -> int:
    return min(n, max(1, math.ceil(q * n - 1e-9)))


@dataclass
class Trips:
    """One repetition's (or a pool's) round trips: every one (``exact``, sorted) or a
    histogram's bins (``bins``: (low, high, count), clipped to the exact min and max)."""

    exact: np.ndarray | None = None
    bins: list[tuple[float, float, int]] = field(default_factory=list)
    slices: list[np.ndarray] = field(default_factory=list)   # in time order (exact only)

    @property
    def n(self) -> int:
        return int(self.exact.size) if self.exact is not None else sum(c for *_, c in self.bins)

    @property
    def binned(self) -> bool:
        return self.exact is None

    def at_rank(self, rank: int) -> tuple[float, float]:
        """The ``rank``-th smallest round trip (1-based): (value, value), or its bin."""
        if self.exact is not None:
            v = float(self.exact[rank - 1])
            return v, v
        before = 0
        for low, high, c in self.bins:
            if before + c >= rank:
                return low, high
            before += c
        low, high, _ = self.bins[-1]
        return low, high

    def quantile(self, q: float) -> tuple[float, float]:
        return self.at_rank(_rank(self.n, q))


def pool(parts: Sequence[Trips]) -> Trips:
    """Every repetition's round trips as one sample."""
    if parts and all(not p.binned for p in parts):
        exact = np.sort(np.concatenate([p.exact for p in parts if p.exact is not None]))
        return Trips(exact=exact, slices=[s for p in parts for s in p.slices])
    counts: Counter[tuple[float, float]] = Counter()
    for p in parts:
        if p.exact is not None:     # a mix: each exact round trip as a bin of its own
            for v in p.exact.tolist():
                counts[(v, v)] += 1
        for low, high, c in p.bins:
            counts[(low, high)] += c
    return Trips(bins=sorted((lo, hi, c) for (lo, hi), c in counts.items()))


@dataclass(frozen=True)
class Percentile:
    """One percentile of a configuration's pooled round trips (us)."""

    label: str                      # "p99"
    q: float
    n: int                          # round trips pooled
    need: int                       # round trips it needs to be printed
    low: float | None = None        # the value (low == high), or its bin's edges
    high: float | None = None
    ci_low: float | None = None     # 95 % distribution-free confidence interval
    ci_high: float | None = None
    reps_low: float | None = None   # range of the repetitions' own percentiles
    reps_high: float | None = None
    reps: int = 0                   # repetitions with enough round trips for their own
    each: bool = False              # n and need are per repetition (not pooled)

    @property
    def printed(self) -> bool:
        return self.low is not None

    @property
    def value(self) -> float | None:
        """The figure a chart or a rank takes: the value, or its bin's upper edge (the
        bound the data can vouch for)."""
        return self.high

    @property
    def binned(self) -> bool:
        return self.low is not None and self.high is not None and self.high > self.low

    def figure(self) -> str:
        """"41.2" or "0.0-100.0" (a bin), or "needs 10,000 round trips (has 1,600)"."""
        if self.low is None or self.high is None:
            if self.each:
                return f"needs {self.need:,} round trips a repetition (fewest {self.n:,})"
            return f"needs {self.need:,} round trips (has {self.n:,})"
        if self.binned:
            return f"{self.low:.1f}-{self.high:.1f}"
        return f"{self.low:.1f}"

    def interval(self) -> str:
        if self.ci_low is None or self.ci_high is None:
            return ""
        return f"{self.ci_low:.1f}-{self.ci_high:.1f}"

    def spread(self) -> str:
        if self.reps_low is None or self.reps_high is None:
            return ""
        return f"{self.reps_low:.1f}-{self.reps_high:.1f}"

    def words(self) -> str:
        """The whole cell: figure, n, CI and the repetitions' range."""
        if not self.printed:
            return self.figure()
        bits = [f"n = {self.n:,}"]
        if self.interval():
            bits.append(f"95 % CI {self.interval()}")
        if self.spread() and self.reps > 1:
            bits.append(f"{self.reps} repetitions {self.spread()}")
        return f"{self.figure()} us ({'; '.join(bits)})"


def percentile(pooled: Trips, parts: Sequence[Trips], label: str, q: float) -> Percentile:
    n, need = pooled.n, needed(q)
    own = [p.quantile(q) for p in parts if p.n >= need]
    reps_low = min((lo for lo, _ in own), default=None)
    reps_high = max((hi for _, hi in own), default=None)
    if n < need or n == 0:
        return Percentile(label, q, n, need, reps_low=reps_low, reps_high=reps_high,
                          reps=len(own))
    low, high = pooled.quantile(q)
    lo_rank, hi_rank = rank_interval(n, q)
    ci_low, _ = pooled.at_rank(lo_rank)
    _, ci_high = pooled.at_rank(hi_rank)
    return Percentile(label, q, n, need, low, high, ci_low, ci_high, reps_low=reps_low,
                      reps_high=reps_high, reps=len(own))


@dataclass(frozen=True)
class Pooled:
    """A configuration's round trips pooled: how they were kept and each percentile."""

    n: int
    repetitions: int
    source: str                      # "full log" | "histogram" | "summaries"
    percentiles: dict[str, Percentile]
    mean_us: float | None = None     # exact, from the tools' own means (weighted by n)

    def __getitem__(self, label: str) -> Percentile:
        return self.percentiles[label]

    @property
    def words(self) -> str:
        """How the figures were obtained, for a caption or a statistic column."""
        one = self.repetitions == 1
        reps = "one repetition" if one else f"{self.repetitions} repetitions"
        match self.source:
            case "full log":
                return (f"{'the round trips' if one else 'pooled round trips'} of {reps} "
                        "kept whole")
            case "histogram":
                return (f"{'the histogram' if one else 'pooled histograms'} of {reps} "
                        "read as their bins")
            case _:
                if one:
                    return "one repetition's own percentiles, no round trips kept"
                return (f"median of {reps}' own percentiles, no round trips kept, each "
                        "given only where every repetition has enough")


# -- reading the kept round trips ---------------------------------------------------
_LOG_ROW = re.compile(rb"^\d+, ([\d.]+), [\d.]+, ([\d.]+)\s*$", re.M)


def read_full_log(text: str | bytes) -> Trips:
    """A sockperf --full-rtt --full-log file: every round trip, sorted, and in time
    slices of ``SLICE_S`` by send time. ParseError if it is not one."""
    raw = text.encode() if isinstance(text, str) else text
    if b"avg-rtt" not in raw:
        raise ParseError(sockperf.NAME, "a full log written with --full-rtt (avg-rtt=)",
                         "no avg-rtt line")
    rows = np.array(_LOG_ROW.findall(raw), dtype=np.float64).reshape(-1, 2)
    if rows.size == 0:
        raise ParseError(sockperf.NAME, "a --full-log file's per-message rows", "none")
    tx, rtt = rows[:, 0], rows[:, 1].astype(np.float32)
    slot = np.floor((tx - tx[0]) / SLICE_S).astype(np.int64)
    cuts = np.flatnonzero(np.diff(slot)) + 1
    slices = [s for s in np.split(rtt, cuts) if s.size]
    return Trips(exact=np.sort(rtt), slices=slices)


def read_histogram(text: str) -> Trips:
    """An iperf 2 bounce-back client's output: its final histogram's bins clipped to the
    exact min and max. ParseError if it has none."""
    lines = text.splitlines()
    h, lo, hi = bounceback.final_histogram(lines)
    return Trips(bins=[(low, high, c) for low, high, c in h.spread(lo, hi) if c])


def kept(run_path: Path, raw: dict[str, str], tool: str) -> Trips | None:
    """A repetition's kept round trips (``raw``: end -> path under the run), or None
    where its output kept none (sockperf without per_sample) or cannot be read."""
    try:
        if tool == sockperf.NAME and raw.get("outfile"):
            return read_full_log((run_path / raw["outfile"]).read_bytes())
        if tool == bounceback.NAME and raw.get("client"):
            return read_histogram((run_path / raw["client"]).read_text(errors="replace"))
    except (OSError, ParseError, ValueError):
        return None
    return None


def pooled(parts: Sequence[Trips], means: Iterable[tuple[int, float | None]] = ()
           ) -> Pooled | None:
    """The pooled percentiles of repetitions' kept round trips (None without any)."""
    if not parts:
        return None
    everything = pool(parts)
    mean_pairs = [(n, m) for n, m in means if m is not None and n]
    total = sum(n for n, _ in mean_pairs)
    mean = sum(n * m for n, m in mean_pairs) / total if total else None
    return Pooled(n=everything.n, repetitions=len(parts),
                  source="histogram" if everything.binned else "full log",
                  percentiles={label: percentile(everything, parts, label, q)
                               for _, q, label in QUANTILES},
                  mean_us=mean)


def from_summaries(lats: Sequence[tuple[int, dict[str, float]]]) -> Pooled | None:
    """Without kept round trips: each percentile the median of the repetitions' own
    (``(samples, {field: value})``), printed only where every repetition has the round
    trips it needs; the spread their range. Never the lowest of each taken apart."""
    if not lats:
        return None
    n = sum(s for s, _ in lats)
    out = {}
    for name, q, label in QUANTILES:
        need = needed(q)
        vals = [v[name] for s, v in lats if s >= need]
        if len(vals) < len(lats) or not vals:
            out[label] = Percentile(label, q, min(s for s, _ in lats), need, each=True)
            continue
        med = float(np.median(vals))
        out[label] = Percentile(label, q, n, need, med, med, reps_low=min(vals),
                                reps_high=max(vals), reps=len(vals))
    return Pooled(n=n, repetitions=len(lats), source="summaries", percentiles=out)


# -- comparing two runs: a block bootstrap over time slices ----------------------------
@dataclass(frozen=True)
class Shift:
    """B - A of a pooled percentile, with its bootstrap interval and p."""

    a_us: float
    b_us: float
    shift_us: float
    ci_low_us: float
    ci_high_us: float
    p: float
    a_blocks: int
    b_blocks: int


def blocks(parts: Sequence[Trips]) -> list[np.ndarray]:
    """The blocks a comparison resamples: time slices where the round trips were kept in
    time order, else each repetition whole (a histogram's repetitions; exact only)."""
    out: list[np.ndarray] = []
    for p in parts:
        if p.slices:
            out += p.slices
        elif p.exact is not None:
            out.append(p.exact)
    return out


def compare_percentile(a: Sequence[np.ndarray], b: Sequence[np.ndarray], q: float,
                       resamples: int = BOOTSTRAP, seed: int = SEED,
                       confidence: float = CONFIDENCE) -> Shift | None:
    """A moving-block-free (non-overlapping) block bootstrap of the pooled q-quantile's
    shift B - A: each side's blocks drawn with replacement, as many as it has, pooled,
    the quantile taken; the percentile interval of the shifts and a two-sided p (twice
    the smaller share of shifts on either side of 0). None if a side has fewer than
    ``MIN_SLICES`` blocks or fewer round trips than the percentile needs."""
    if len(a) < MIN_SLICES or len(b) < MIN_SLICES:
        return None
    na, nb = sum(x.size for x in a), sum(x.size for x in b)
    if min(na, nb) < needed(q):
        return None
    rng = np.random.default_rng(seed)

    def one(side: Sequence[np.ndarray]) -> np.ndarray:
        out = np.empty(resamples)
        k = len(side)
        for i in range(resamples):
            pick = np.concatenate([side[j] for j in rng.integers(0, k, k)])
            out[i] = _nearest_rank(pick, q)
        return out

    qa, qb = _nearest_rank(np.concatenate(a), q), _nearest_rank(np.concatenate(b), q)
    d = one(b) - one(a)
    tail = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(d, [tail, 1.0 - tail])
    p = min(1.0, 2.0 * min(float(np.mean(d <= 0)), float(np.mean(d >= 0))))
    return Shift(qa, qb, qb - qa, float(lo), float(hi), p, len(a), len(b))


def _nearest_rank(x: np.ndarray, q: float) -> float:
    k = _rank(x.size, q) - 1
    return float(np.partition(x, k)[k])
