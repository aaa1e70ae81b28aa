"""The UDP rate searches as algorithms, over a model link: what they find and what they cost.

The model is arithmetic, not a stand-in for the lab: below its capacity a link delivers
what is offered; above it, the capacity, with the rest lost (or, for a sender held back by
its own queue, delivered short with nothing lost). bench/udp_search.py measures the same
searches on a real lab link.
"""

from __future__ import annotations

import pytest

from nicbench.execution.udpsearch import bisect, passes, sweep
from nicbench.results.rundir import TrialRecord
from nicbench.tools.base import UdpStats

M = 1_000_000


class Link:
    def __init__(self, capacity_bps: float, *, backpressure: bool = False,
                 bursts: dict[int, int] | None = None):
        self.capacity = capacity_bps
        self.backpressure = backpressure
        self.bursts = dict(bursts or {})    # offered rate -> how many trials lose 1 %
        self.offered: list[int] = []

    def __call__(self, rate: int) -> TrialRecord:
        self.offered.append(rate)
        got = min(rate, self.capacity)
        loss = 0.0 if self.backpressure else 100.0 * (rate - got) / rate
        if self.bursts.get(rate):
            self.bursts[rate] -= 1
            loss, got = 1.0, rate * 0.99
        total = 10_000
        return TrialRecord(run_id="r", trial_id=f"t{len(self.offered)}", pair="p",
                           adapter="a", adapter_label="a", tool="iperf2", test="udp",
                           protocol="udp", point="mtu1500", mtu=1500,
                           repetition=len(self.offered), kind="udp-search", status="ok",
                           throughput_bps=got, offered_bps=rate,
                           udp=UdpStats(lost=round(total * loss / 100), total=total,
                                        loss_pct=loss, jitter_ms=0.0))


def both(capacity: float, **kw):
    s_link, b_link = Link(capacity, **kw), Link(capacity, **kw)
    return (sweep(s_link, 200 * M, 800 * M, 10 * M),
            bisect(b_link, 200 * M, 800 * M, 10 * M, 0.1))


@pytest.mark.parametrize("capacity", [575 * M, 200 * M, 205 * M, 799 * M, 941 * M, 150 * M,
                                      333 * M, 600 * M])
def test_bisect_lands_within_a_step_of_the_sweep_in_a_fifth_of_its_trials(capacity):
    s, b = both(capacity)
    assert len(s.trials) == 61
    if capacity < 200 * M:            # nothing in the range passes; the sweep still
        assert b.best_bps is None     # reports what arrived, the bisection nothing
        assert len(b.trials) <= 8
        return
    assert abs(s.best_bps - b.best_bps) <= 10 * M, (s.best_bps, b.best_bps)
    assert b.best_bps <= capacity
    assert len(b.trials) <= len(s.trials) / 5


def test_a_loss_burst_below_the_limit_does_not_halve_the_answer():
    # One probe at 570 loses 1 % once (a busy CPU): it is offered again and passes.
    _s, b = both(575 * M, bursts={570 * M: 1})
    assert b.best_offered_bps == 570 * M
    assert [t.offered_bps for t in b.trials].count(570 * M) == 2
    assert len(b.trials) <= 61 / 5


def test_a_persistent_loss_is_believed_after_the_retry():
    b = bisect(Link(575 * M, bursts={570 * M: 5}), 200 * M, 800 * M, 10 * M, 0.1)
    assert b.best_offered_bps < 570 * M
    assert all(t.offered_bps != 570 * M or not passes(t, 0.1) for t in b.trials)


def test_a_sender_held_back_without_loss_does_not_pass():
    # The socket blocks instead of dropping: 0 % loss but only 575 of 800 Mbit/s arrived.
    link = Link(575 * M, backpressure=True)
    top = link(800 * M)
    assert top.udp is not None and top.udp.loss_pct == 0 and not passes(top, 0.1)
    b = bisect(Link(575 * M, backpressure=True), 200 * M, 800 * M, 10 * M, 0.1)
    assert b.best_offered_bps == 570 * M


def test_a_link_that_carries_everything_costs_one_trial():
    b = bisect(Link(2000 * M), 200 * M, 800 * M, 10 * M, 0.1)
    assert [t.offered_bps for t in b.trials] == [800 * M]
    assert b.best_bps == 800 * M


def test_a_failed_top_trial_falls_back_to_plain_bisection():
    link = Link(575 * M)
    calls = []

    def dead_top(rate):
        rec = link(rate)
        if not calls:
            rec.status, rec.throughput_bps, rec.udp = "failed", None, None
        calls.append(rate)
        return rec

    b = bisect(dead_top, 200 * M, 800 * M, 10 * M, 0.1)
    assert b.best_offered_bps == 570 * M
    assert len(b.trials) <= 10
