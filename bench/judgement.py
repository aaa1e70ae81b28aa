"""How often nicbench's judgements are wrong, by seeded simulation: one line of figures.

Every rule that says "changed" or "same" is run here on figures whose truth is known:

- the comparison of two runs (``report/compare.py``, called through :func:`verdict`,
  the one adapter to its public functions): 15 repetitions a run, 1 % normal noise
  within a run; how often it says faster or slower where nothing changed, and how often
  it says the right word for a 2 % and a 4 % change (its power);
- the until-stable rule (``results/policy.stopped``; min 5, max 60, a 1 % target, the
  profile's median): the share of stops whose figure lies within the target of the true
  one, on normal (1.5 %), skewed (lognormal tail) and two-mode (70 % at 940, 30 % at
  900 Mbit/s) noise; the lowest of the three is the coverage;
- history (``history/series.changes``, the whole rule from nights to named setup
  differences): 60 nights, each 5 repetitions with 0.3 % noise within the night and
  0.5 % between nights; a stable series false-alarms where any change is said; a 2 % or
  4 % shift, planted at a random night from 10 to 50 with a driver change on that
  night, is found where a change is said within one night of it and names the driver.

    PASS when history's false alarms are at most 5 % of stable series, 4 % shifts are
    found in at least 95 % and 2 % shifts in at least 80 %, and the stopping rule's
    coverage is at least 95 %.

The last line is the figure, for machines: ``judgement: compare_false=... PASS|FAIL``.

    python bench/judgement.py [--seed 29] [--runs 200]
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nicbench.config.profile import UntilStable
from nicbench.history.model import Night, Series
from nicbench.history.series import changes
from nicbench.results.policy import stopped

TARGETS = {"history_false": 0.05, "history_found4": 0.95, "history_found2": 0.80,
           "stop_coverage": 0.95}


# -- the comparison -----------------------------------------------------------------------
def verdict(a: list[float], b: list[float]) -> str:
    """The comparison's word for run B's repetitions against run A's (Mbit/s): the same
    rule, threshold and statistic as a report's row (``nicbench.judging.words``)."""
    from nicbench.judging.words import judge_samples

    return str(judge_samples(a, b).word)


def comparison(rng: np.random.Generator, runs: int) -> dict[str, float]:
    FASTER, SLOWER = "faster", "slower"     # the words that say a change of a rate

    def words(change: float) -> list[str]:
        return [verdict(list(900 * (1 + rng.normal(0, 0.01, 15))),
                        list(900 * (1 + change) * (1 + rng.normal(0, 0.01, 15))))
                for _ in range(runs)]

    same = words(0.0)
    return {"compare_false": sum(w in (FASTER, SLOWER) for w in same) / runs,
            "compare_power2": sum(w == SLOWER for w in words(-0.02)) / runs,
            "compare_power4": sum(w == SLOWER for w in words(-0.04)) / runs}


# -- the stopping rule --------------------------------------------------------------------
def card(kind: str, rng: np.random.Generator, n: int) -> np.ndarray:
    if kind == "normal":
        return 940e6 * (1 + rng.normal(0, 0.015, n))
    if kind == "skewed":
        return 940e6 * (1 - 0.01 * rng.lognormal(0, 0.8, n))
    return np.where(rng.random(n) < 0.7, 940e6, 900e6) * (1 + rng.normal(0, 0.003, n))


def coverage(rng: np.random.Generator, runs: int) -> dict[str, float]:
    policy = UntilStable(min=5, max=60, until_ci_pct=1.0)
    out = {}
    for kind in ("normal", "skewed", "two-mode"):
        true = float(np.median(card(kind, np.random.default_rng(0), 400_000)))
        within = 0
        for _ in range(runs):
            values = card(kind, rng, policy.max)
            for ran in range(1, policy.max + 1):
                if stopped(list(values[:ran]), ran, policy, "median") is not None:
                    break
            within += abs(float(np.median(values[:ran])) - true) <= 0.01 * true
        out[f"stop_{kind}"] = within / runs
    out["stop_coverage"] = min(out.values())
    return out


# -- history ------------------------------------------------------------------------------
NIGHTS, START = 60, datetime(2026, 1, 1, 3, tzinfo=UTC)


def series(rng: np.random.Generator, shift: float = 0.0, at: int = NIGHTS
           ) -> tuple[Series, list[tuple[int, np.ndarray]]]:
    """60 nights of 5 repetitions (0.3 % within a night, 0.5 % between nights), the level
    ``1 + shift`` from night ``at`` on, where the driver changes too."""
    nights, judged = [], []
    for i in range(NIGHTS):
        level = 900e6 * (1 + (shift if i >= at else 0.0)) * (1 + rng.normal(0, 0.005))
        values = level * (1 + rng.normal(0, 0.003, 5))
        nights.append(Night(
            run_id=f"n{i:02d}", started_at=START + timedelta(days=i), pair="p", mtu=1500,
            select="median", value_bps=float(np.median(values)), n=5,
            stdev_bps=float(values.std(ddof=1)), min_bps=float(values.min()),
            max_bps=float(values.max()), tool="iperf3",
            setup={"h p driver_version": "2.0" if i >= at else "1.0"}))
        judged.append((i, values))
    return Series("x", "x", "tcp", "iperf3", "mtu1500", nights), judged


def history(rng: np.random.Generator, runs: int) -> dict[str, float]:
    false = sum(bool(changes(*series(rng))) for _ in range(runs))
    out = {"history_false": false / runs}
    for pct in (4, 2):
        found = 0
        for _ in range(runs):
            at = int(rng.integers(10, 51))
            s, judged = series(rng, -pct / 100, at)
            days = [n.run_id for n in s.nights]
            found += any(abs(days.index(c.run_id) - at) <= 1
                         and any("driver_version 1.0 -> 2.0" in x for x in c.setup_changes)
                         for c in changes(s, judged))
        out[f"history_found{pct}"] = found / runs
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--seed", type=int, default=29)
    p.add_argument("--runs", type=int, default=200, help="simulated cases of each kind")
    args = p.parse_args()
    rng = np.random.default_rng(args.seed)
    got = {**comparison(rng, args.runs), **coverage(rng, args.runs),
           **history(rng, args.runs)}
    ok = (got["history_false"] <= TARGETS["history_false"]
          and all(got[k] >= v for k, v in TARGETS.items() if k != "history_false"))
    figures = " ".join(f"{k}={100 * v:.1f}%" for k, v in got.items())
    print(f"judgement: {figures} runs={args.runs} seed={args.seed} "
          f"{'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
