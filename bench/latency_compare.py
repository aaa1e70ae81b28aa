"""How often the round-trip comparison's block bootstrap is wrong: a seeded simulation.

``report/compare.py`` compares two runs' pooled round trips by a block bootstrap over
0.25 s time slices (``results/roundtrips.compare_percentile``; docs/comparison.md, "Round
trips"). Round trips next to each other are correlated (a busy core delays a run of them),
which a bootstrap of single round trips ignores. This simulates runs shaped like the lab's
(3 repetitions of 2 s, ~7,000 round trips per 0.25 s slice... scaled down to 1,000 a slice
to keep it quick), each round trip a base of 12 us times a log-normal AR(1) noise (phi
0.9: a slow stretch lasts) plus a rare scheduler stall (0.5 %, 200-2000 us), and counts:

- **false change**: two runs of the same link (no change) whose 95 % interval of the
  shift excludes 0 (p < 0.05): should be near 5 %, and the interval must be wide enough
  for the correlation (a bootstrap of single round trips says "changed" far more often);
- **found**: a 10 % slower link (every round trip x 1.1) whose interval excludes 0, for
  p50 and p99.

No lab, no root; about a minute. Ends with one line of figures.

    python bench/latency_compare.py [--trials 200] [--seed 30]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nicbench.results import roundtrips

SLICES = 18            # 3 repetitions of 2 s, ~1.5 s valid each, in 0.25 s slices
PER_SLICE = 1000
PHI = 0.9


def run(rng: np.random.Generator, scale: float = 1.0) -> list[np.ndarray]:
    """One run's round trips (us) in time slices: AR(1) log-normal noise, rare stalls."""
    n = SLICES * PER_SLICE
    e = rng.normal(0.0, 0.25, n)
    x = np.empty(n)
    x[0] = e[0]
    for i in range(1, n):
        x[i] = PHI * x[i - 1] + e[i] * np.sqrt(1 - PHI * PHI)
    trips = 12.0 * np.exp(x)
    stall = rng.random(n) < 0.005
    trips[stall] += rng.uniform(200.0, 2000.0, int(stall.sum()))
    trips *= scale
    return [s.astype(np.float32) for s in np.split(trips, SLICES)]


def iid(a: list[np.ndarray], b: list[np.ndarray], q: float, rng: np.random.Generator,
        resamples: int) -> bool:
    """The naive bootstrap (every round trip on its own): does it call a change?"""
    xa, xb = np.concatenate(a), np.concatenate(b)
    d = [np.quantile(rng.choice(xb, xb.size), q) - np.quantile(rng.choice(xa, xa.size), q)
         for _ in range(resamples)]
    lo, hi = np.quantile(d, [0.025, 0.975])
    return bool(lo > 0 or hi < 0)


def changed(a: list[np.ndarray], b: list[np.ndarray], q: float, seed: int,
            resamples: int) -> bool:
    s = roundtrips.compare_percentile(a, b, q, resamples=resamples, seed=seed)
    assert s is not None
    return s.ci_low_us > 0 or s.ci_high_us < 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--trials", type=int, default=200)
    p.add_argument("--resamples", type=int, default=300)
    p.add_argument("--seed", type=int, default=30)
    args = p.parse_args()
    rng = np.random.default_rng(args.seed)
    counts = dict.fromkeys(("null50", "null99", "iid50", "iid99", "found50", "found99"), 0)
    for t in range(args.trials):
        a, same, slower = run(rng), run(rng), run(rng, 1.1)
        counts["null50"] += changed(a, same, 0.5, t, args.resamples)
        counts["null99"] += changed(a, same, 0.99, t, args.resamples)
        counts["found50"] += changed(a, slower, 0.5, t, args.resamples)
        counts["found99"] += changed(a, slower, 0.99, t, args.resamples)
        if t < args.trials // 4:     # the naive one is slow: a quarter of the trials
            counts["iid50"] += iid(a, same, 0.5, rng, args.resamples // 3)
            counts["iid99"] += iid(a, same, 0.99, rng, args.resamples // 3)
    n, n_iid = args.trials, max(1, args.trials // 4)
    pct = {k: 100.0 * v / (n_iid if k.startswith("iid") else n) for k, v in counts.items()}
    print(f"latency_compare: trials={n} slices={SLICES}x{PER_SLICE} phi={PHI} "
          f"false_change_p50={pct['null50']:.1f}% false_change_p99={pct['null99']:.1f}% "
          f"iid_false_change_p50={pct['iid50']:.1f}% iid_false_change_p99={pct['iid99']:.1f}% "
          f"found_10pct_p50={pct['found50']:.1f}% found_10pct_p99={pct['found99']:.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
