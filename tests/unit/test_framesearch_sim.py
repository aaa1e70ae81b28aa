"""The frame-rate search (``execution/udpsearch.frame_rate_search``) on a simulated link,
seeded: its capacity varies within +-3 % from one second to the next around a level
drawn per search (5,000 frames/s to 90 % of Gigabit's 1,488,095 at 64 bytes). A trial of
d seconds at rate r loses, each second, what is above that second's capacity; it passes
the NDR with no loss, the PDR with at most 0.5 %. Short trials last 1 s, full-length
ones 10 s.

Over 400 searches per bound at a resolution of 2 %, the figure is confirmed (a 10 s
trial passed at it) and lands within the resolution of the rate a 10 s trial passes at
half the time (the link's full-length median, found by Monte Carlo) in at least 95 % of
them; its bracket (the figure to the lowest rate failed above it) is never wider than
the resolution. The searches' mean trials are printed (the plan's estimate stands on
them: config/profile.py, PLANNED_SHORT_PER_FRAME).
"""

from __future__ import annotations

import random

import pytest

from nicbench.config.profile import FrameSearch
from nicbench.execution.udpsearch import Verdict, frame_rate_search

TOP = 1_488_095
VARIES = 0.03
FULL_S = 10
RESOLUTION_PCT = 2.0
SEARCHES = 400


class Link:
    def __init__(self, level: float, loss_pct: float, rng: random.Random):
        self.level, self.loss, self.rng = level, loss_pct / 100, rng
        self.short = self.full = 0

    def loss_at(self, rate: float, seconds: int) -> float:
        caps = [self.level * (1 + self.rng.uniform(-VARIES, VARIES)) for _ in range(seconds)]
        return sum(max(0.0, rate - c) for c in caps) / (rate * seconds)

    def __call__(self, rate: int, confirm: bool) -> Verdict:
        if confirm:
            self.full += 1
        else:
            self.short += 1
        lost = self.loss_at(rate, FULL_S if confirm else 1)
        return Verdict(lost <= self.loss, rate * (1 - lost))


def median_full_length(loss_pct: float, rng: random.Random) -> float:
    """The rate (as a share of the level) a 10 s trial passes at half the time."""
    lo, hi = 0.9, 1.05
    probe = Link(1.0, loss_pct, rng)
    for _ in range(18):
        mid = (lo + hi) / 2
        passed = sum(probe.loss_at(mid, FULL_S) <= loss_pct / 100 for _ in range(3000))
        lo, hi = (mid, hi) if passed >= 1500 else (lo, mid)
    return lo


@pytest.mark.parametrize("loss_pct", [0.0, 0.5], ids=["ndr", "pdr"])
def test_the_search_lands_within_its_resolution_and_is_confirmed(loss_pct):
    rng = random.Random(2544)
    median = median_full_length(loss_pct, rng)
    landed = short = full = 0
    r = RESOLUTION_PCT / 100
    for _ in range(SEARCHES):
        level = 5_000 * (0.9 * TOP / 5_000) ** rng.random()
        link = Link(level, loss_pct, rng)
        found = frame_rate_search(link, top=TOP, resolution_pct=RESOLUTION_PCT,
                                  confirm_tries=6, zero_loss=loss_pct == 0, floor=149)
        assert found.short_trials == link.short and found.confirmations == link.full <= 6
        short, full = short + link.short, full + link.full
        if found.rate is None:
            continue
        assert found.hi is not None and found.rate < found.hi
        assert found.hi - found.rate <= max(1, r * found.rate)      # the bracket
        truth = median * level
        landed += abs(found.rate - truth) <= r * truth
    print(f"\n{'PDR' if loss_pct else 'NDR'}: {landed}/{SEARCHES} within {RESOLUTION_PCT:g} % "
          f"of the 10 s median; per search {short / SEARCHES:.1f} short trials, "
          f"{full / SEARCHES:.1f} of {FULL_S} s")
    assert landed >= 0.95 * SEARCHES


def test_a_failed_confirmation_steps_down_and_confirms_again():
    """The short trials pass at a rate the link carries only for a second: the 10 s
    confirmation there loses frames, the search steps down a resolution's step (or to
    what arrived, if less) and confirms there; the bracket's top is the failed rate."""
    asked: list[tuple[int, bool]] = []

    def trial(rate: int, confirm: bool) -> Verdict:
        asked.append((rate, confirm))
        carries = 50_000 if confirm else 52_000
        return Verdict(rate <= carries, float(min(rate, carries)))

    found = frame_rate_search(trial, top=TOP, resolution_pct=1.0, confirm_tries=4,
                              zero_loss=True)
    fulls = [rate for rate, confirm in asked if confirm]
    assert fulls[0] > 50_000 and len(fulls) >= 2          # failed, then stepped down
    assert found.rate is not None and found.rate <= 50_000 < found.hi
    assert found.hi - found.rate <= 0.01 * found.rate
    assert found.confirmations == len(fulls) <= 4


def test_confirmations_are_bounded_and_none_passing_is_no_rate():
    asked: list[tuple[int, bool]] = []

    def trial(rate: int, confirm: bool) -> Verdict:
        asked.append((rate, confirm))
        return Verdict(not confirm, float(rate))      # every full-length trial loses

    found = frame_rate_search(trial, top=10_000, resolution_pct=1.0, confirm_tries=3,
                              zero_loss=True)
    assert found.rate is None and found.confirmations == 3
    assert sum(1 for _, c in asked if c) == 3 and asked[0] == (10_000, False)


def test_a_short_trial_that_only_delivered_short_is_not_the_ndr_s_top():
    """As iperf 2 on the lab's fe link: its sender starts slowly, so 1 s trials deliver
    at most 60,000 frames/s (nothing lost, the rate not offered) while 10 s trials carry
    80,000. The NDR is not stopped under the short trials' failure: full-length trials
    step up from there and bracket it, at full length, within the resolution of 80,000."""
    asked: list[tuple[int, bool]] = []

    def trial(rate: int, confirm: bool) -> Verdict:
        asked.append((rate, confirm))
        if confirm:
            return Verdict(rate <= 80_000, float(min(rate, 80_000)), lost=rate > 80_000)
        return Verdict(rate <= 60_000, float(min(rate, 60_000)), lost=False)

    found = frame_rate_search(trial, top=148_809, resolution_pct=2.0, confirm_tries=6,
                              zero_loss=True)
    assert found.rate is not None and 80_000 / 1.02 <= found.rate <= 80_000
    assert found.hi is not None and found.hi - found.rate <= 0.02 * found.rate
    assert any(confirm and rate == found.hi for rate, confirm in asked)   # a full failure
    assert found.confirmations <= 6


def test_a_confirmation_far_below_the_short_trials_rate_is_bracketed_within_3_pct():
    """As the lab's tbf-shaped Gigabit link at 1518 bytes in CI: 1 s trials passed up to
    77,778 frames/s, while 5 s trials lost a few frames (bursts over the shaper's queue)
    at every rate down to 67,887 and none at 65,000 or below; what arrived at a failure
    was nearly all that was offered. The external search down doubles its step (2, 4, 8,
    16 %) before the first pass and then bisects: with the profile's default number of
    full-length trials the NDR's bracket closes within 3 % (6 left it at 7.4 %)."""
    asked: list[tuple[int, bool]] = []

    def trial(rate: int, confirm: bool) -> Verdict:
        asked.append((rate, confirm))
        carries = 65_000 if confirm else 77_778
        return Verdict(rate <= carries, rate * (1 if rate <= carries else 0.9999),
                       lost=rate > carries)

    tries = FrameSearch(frames=[1518]).confirm_tries
    found = frame_rate_search(trial, top=81_274, resolution_pct=2.0, confirm_tries=tries,
                              zero_loss=True)
    assert found.rate is not None and found.rate <= 65_000 < (found.hi or 0)
    assert found.hi is not None and found.hi - found.rate <= 0.03 * found.rate, asked
    assert found.confirmations == sum(1 for _, c in asked if c) <= tries
