"""A trial's round-trip times survive the JSONL line, and lines without them keep their bytes."""

from __future__ import annotations

import json

import pytest

from nicbench.config.profile import Role
from nicbench.errors import ParseError
from nicbench.results.records import Kind, RoleResult, Status, TrialRecord, latency_of
from nicbench.tools.base import Latency, ParsedRun


def _latency() -> Latency:
    return Latency(samples=1000, message_bytes=64, p50_us=21.5, p90_us=24.0, p99_us=30.25,
                   p999_us=55.0, max_us=80.0, min_us=18.0, mean_us=22.1)


def _record(**kw: object) -> TrialRecord:
    base: dict[str, object] = {
        "run_id": "r", "trial_id": "t", "pair": "p", "adapter": "a", "adapter_label": "a",
        "tool": "sockperf", "test": "lat", "protocol": "udp", "point": "mtu=1500", "mtu": 1500,
        "repetition": 1, "kind": Kind.REPETITION, "status": Status.OK}
    base.update(kw)
    return TrialRecord(**base)  # type: ignore[arg-type]


def test_latency_round_trips_through_the_line() -> None:
    rec = _record(latency=_latency(),
                  beside=[RoleResult(role=Role.PROBE, tool="sockperf", protocol="udp",
                                     status=Status.OK, latency=_latency())])
    back = TrialRecord.from_dict(json.loads(json.dumps(rec.to_dict())))
    assert back.latency == _latency()
    assert back.beside[0].latency == _latency()


def test_a_line_without_latency_has_no_latency_key() -> None:
    data = _record(beside=[RoleResult(role=Role.PROBE, tool="iperf3", protocol="tcp",
                                      status=Status.OK)]).to_dict()
    assert "latency" not in data
    assert "latency" not in data["beside"][0]


@pytest.mark.parametrize("bad", [
    {"samples": 10, "message_bytes": 64},                                     # no percentiles
    {"samples": -1, "message_bytes": 64, "p50_us": 1.0, "p90_us": 1.0, "p99_us": 1.0,
     "p999_us": 1.0, "max_us": 1.0},                                          # negative count
    {"samples": 10, "message_bytes": 64, "p50_us": "x", "p90_us": 1.0, "p99_us": 1.0,
     "p999_us": 1.0, "max_us": 1.0},                                          # not a number
    {"samples": 10, "message_bytes": 64, "p50_us": 1.0, "p90_us": 1.0, "p99_us": 1.0,
     "p999_us": 1.0, "max_us": 1.0, "p42": 3.0},                              # unknown key
    [1, 2, 3],
])
def test_stored_latency_that_is_not_round_trip_times_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="not round-trip times"):
        latency_of(bad)


def test_a_parsed_run_refuses_a_non_finite_percentile() -> None:
    with pytest.raises(ParseError, match=r"latency\.p99_us"):
        ParsedRun(tool="sockperf", protocol="udp", throughput_bps=None,
                  latency=Latency(samples=1, message_bytes=64, p50_us=1.0, p90_us=1.0,
                                  p99_us=float("nan"), p999_us=1.0, max_us=1.0))
