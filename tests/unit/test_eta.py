"""The live ETA starts from --plan's estimate and corrects from the measured trial times.

Replayed on the times of the modern profile's real run as it ships (issue 30's
confirmed 64-byte searches; tests/unit/data/modern-run-times.jsonl: each trial's pair,
test, repetition and times from a run on the five-adapter lab on 2026-11-28 at load
average 7-11, 13 min 42 s with its report; its --plan said 12 min 54 s). The replay
moves the clock by setting when the run started. (The report's stored run,
tests/report/data/modern, searched 512 and 1518-byte frames before confirmations.)"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from nicbench.config.loader import load_inventory, load_profile, resolve_profile_path
from nicbench.execution.plan import eta_prior, make_plan
from nicbench.execution.recorder import Progress
from nicbench.tools.registry import CATALOG

REPO = Path(__file__).resolve().parents[2]
MODERN = REPO / "tests" / "unit" / "data" / "modern-run-times.jsonl"


def _replay(seconds: float, plan: tuple[float, dict[str, float]] | None, total: int,
            recs: list[dict], t0: float) -> float | None:
    p = Progress(total=total)
    if plan is not None:
        p.plan_s, p.per_test_s = plan
    for r in recs:
        if r["ended_at"] > t0 + seconds:
            break
        if r.get("repetition") is not None:
            p.done += 1
            p.measured += 1
            p.plan_done_s += p.planned(r["test"])
        else:
            p.done += r.get("not_run") or 0
            p.plan_gone_s += (r.get("not_run") or 0) * p.planned(None)
    p.started = time.monotonic() - seconds
    return p.eta_s()


@pytest.fixture(scope="module")
def modern():
    profile = load_profile(resolve_profile_path("modern"), CATALOG)
    inventory = load_inventory(str(REPO / "inventory.yaml"), CATALOG)
    recs = sorted((json.loads(line) for line in MODERN.open()), key=lambda r: r["ended_at"])
    pairs = [p.name for p in inventory.pairs if p.name in {r["pair"] for r in recs}]
    return profile, inventory, recs, pairs


def test_the_eta_starts_from_the_plans_estimate(modern):
    profile, inventory, _, pairs = modern
    estimate, per_test = eta_prior(profile, inventory, pairs)
    assert estimate == pytest.approx(make_plan(profile, inventory, pairs).estimate_s)
    total = profile.trials_per_pair * len(pairs)
    p = Progress(total=total, plan_s=estimate, per_test_s=per_test)
    assert p.eta_s() == pytest.approx(estimate, rel=1e-3)       # before any trial
    # the planned trials add up to the estimate; a netPIPE curve weighs more than 1 s
    planned = sum(profile.planned_trials(t) * per_test[t.name] for pt in profile.points
                  for t in profile.tests_at(pt)) * len(pairs)
    assert planned == pytest.approx(estimate)
    assert per_test["netpipe"] > 5 * per_test["iperf3-tcp"]


def test_one_minute_in_the_eta_is_near_what_was_left(modern):
    profile, inventory, recs, pairs = modern
    t0 = min(r["started_at"] for r in recs)
    t1 = max(r["ended_at"] for r in recs)
    total = profile.trials_per_pair * len(pairs)
    plan = eta_prior(profile, inventory, pairs)
    for seconds in (60, 180, 360, 600):
        left = t1 - (t0 + seconds)
        ours = _replay(seconds, plan, total, recs, t0)
        naive = _replay(seconds, None, total, recs, t0)
        assert ours is not None and naive is not None
        assert abs(ours - left) <= 0.15 * left, (seconds, ours / 60, left / 60)
        if seconds == 60:
            # closer than what the run used to say (the first trials' pace alone)
            assert abs(ours - left) < abs(naive - left)
            assert abs(ours - left) < abs(naive - left)
