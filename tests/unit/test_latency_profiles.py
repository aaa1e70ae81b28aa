"""The shipped latency profiles keep what the pooled percentiles and the comparisons need
(issue 30): sockperf's every round trip (per_sample), a bounce-back probe alone with the
same params as the probe beside the load (the report pairs them by params: a probe of
another duration has no idle figures), and 4 repetitions where runs of histograms are
compared over repetitions."""

from __future__ import annotations

from pathlib import Path

import pytest

from nicbench.config.loader import load_profile
from nicbench.config.profile import Role
from nicbench.judging import stats
from nicbench.tools.registry import CATALOG

PROFILES = Path(__file__).resolve().parents[2] / "profiles"


@pytest.mark.parametrize("name", ["modern", "lab-latency", "lab-loaded"])
def test_latency_profiles_keep_their_round_trips_and_pair_their_probes(name):
    prof = load_profile(PROFILES / f"{name}.yaml", CATALOG)
    idle = [t for t in prof.tests if t.params.get("bounceback") and not t.beside]
    for t in prof.tests:
        if t.tool == "sockperf":
            assert t.params.get("per_sample") is True, t.name
        probes = [b for b in t.beside if b.role is Role.PROBE]
        for probe in probes:
            assert any(dict(probe.params) == dict(i.params) for i in idle), t.name
    # the idle probe and the one-way loaded test: enough repetitions for a rank test
    for t in prof.tests:
        if (t in idle or (t.beside and not t.params.get("bidir"))):
            reps = prof.repetition_policy(t)
            assert isinstance(reps, int) and stats.testable(reps, reps), (t.name, reps)
