"""The until-stable rule keeps its promise, by seeded simulation: where it stops, the
figure it reports lies within the target of the true value in at least 95 % of stops, on
normal, skewed and two-mode noise; a two-mode card is said to be two-mode; and the gap
test behind that word rarely fires on one mode."""

from __future__ import annotations

import numpy as np
import pytest

from nicbench.config.profile import UntilStable
from nicbench.results.policy import GAP_FEWEST, Stop, stopped, two_modes

TRUE = 940e6
POLICY = UntilStable(min=5, max=60, until_ci_pct=1.0)


def noise(kind: str, rng: np.random.Generator, n: int) -> np.ndarray:
    """Figures of one card: normal 1.5 %; skewed (a slow tail down, lognormal); two modes
    (70 % at 940, 30 % at 900 Mbit/s, 0.3 % within each)."""
    if kind == "normal":
        return TRUE * (1 + rng.normal(0, 0.015, n))
    if kind == "skewed":
        return TRUE * (1 - 0.01 * rng.lognormal(0, 0.8, n))
    upper = rng.random(n) < 0.7
    return np.where(upper, TRUE, 900e6) * (1 + rng.normal(0, 0.003, n))


def truth(kind: str, statistic: str) -> float:
    big = noise(kind, np.random.default_rng(99), 400_000)
    return float(big.mean() if statistic == "mean" else np.median(big))


def run_until_stop(values: np.ndarray, select: str) -> tuple[Stop, list[float]]:
    seen: list[float] = []
    for ran, v in enumerate(values, 1):
        seen.append(float(v))
        stop = stopped(seen, ran, POLICY, select)
        if stop is not None:
            return stop, seen
    raise AssertionError("max always stops")


@pytest.mark.parametrize(("select", "kind"), [("median", "normal"), ("median", "skewed"),
                                              ("median", "two-mode"), ("mean", "normal"),
                                              ("mean", "skewed"), ("best", "two-mode")])
def test_the_figure_lands_within_the_target_in_95_percent_of_stops(select, kind):
    rng = np.random.default_rng(sum(map(ord, select + kind)))
    statistic = "mean" if select == "mean" else "median"
    true = truth(kind, statistic)
    within, ran = 0, []
    stops = 400
    for _ in range(stops):
        stop, seen = run_until_stop(noise(kind, rng, POLICY.max), select)
        assert stop.ran >= POLICY.min
        figure = float(np.mean(seen) if statistic == "mean" else np.median(seen))
        assert stop.interval is None or stop.interval.figure == pytest.approx(figure)
        within += abs(figure - true) <= true * POLICY.until_ci_pct / 100
        ran.append(stop.ran)
        # the summary says the interval reached, and never claims more than it reached
        if stop.stable:
            assert stop.interval is not None
            assert stop.interval.reach_pct <= POLICY.until_ci_pct
        if select == "best":
            assert stop.words().endswith("the best of n grows with n")
    assert within / stops >= 0.95, (within / stops, np.mean(ran))


def test_a_two_mode_card_is_said_to_be_two_mode():
    rng = np.random.default_rng(7)
    said = fair = seen_both = 0
    for _ in range(300):
        stop, seen = run_until_stop(noise("two-mode", rng, POLICY.max), "median")
        lower = sum(v < 920e6 for v in seen)
        if stop.modes is not None:
            said += 1
            lo, hi = stop.modes
            assert lo == pytest.approx(900e6, rel=0.01) and hi == pytest.approx(TRUE, rel=0.01)
            assert "two modes (" in stop.words()
        # a stop that saw each mode at least twice among enough figures says so
        if len(seen) >= GAP_FEWEST and 2 <= lower <= len(seen) - 2:
            seen_both += 1
            fair += stop.modes is not None
    assert fair / seen_both >= 0.95, (fair, seen_both)
    assert said / 300 >= 0.7, said


@pytest.mark.parametrize("n", [8, 12, 20, 40])
def test_one_mode_is_rarely_called_two(n):
    rng = np.random.default_rng(n)
    normal = sum(two_modes(list(rng.normal(100, 1, n))) is not None for _ in range(500))
    skewed = sum(two_modes(list(100 - rng.lognormal(0, 0.8, n))) is not None
                 for _ in range(500))
    assert normal <= 5 and skewed <= 15, (normal, skewed)
    assert two_modes([100.0] * 5 + [90.0] * 2) is None         # too few to say
