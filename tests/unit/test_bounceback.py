"""iperf 2's bounce-back mode: its params (one clear line for what it cannot take), its
command lines, its percentiles read off iperf's histogram, and a latency run judged by
its round trips (the record's ``latency`` as the test's own tool and beside a load)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from nicbench.config.loader import load_profile
from nicbench.config.profile import Role
from nicbench.errors import ConfigError
from nicbench.execution.judge import apply, judge
from nicbench.remote.result import Result
from nicbench.results.records import Failure, Kind, RoleResult, Status, TrialRecord
from nicbench.tools.bounceback import Histogram, percentile_bin, trimmed_mean_bounds
from nicbench.tools.driver import Endpoints
from nicbench.tools.iperf2 import Iperf2Params
from nicbench.tools.registry import CATALOG, TOOLS

CAPTURES = Path(__file__).resolve().parents[1] / "golden" / "captures"
ENDS = Endpoints("198.18.0.1", "198.18.0.2", "tcp")


def plan(**params: object):
    return TOOLS["iperf2"].driver.plan("iperf", "iperf", dict(params), ENDS, "t")


def test_the_client_asks_for_bounce_back_and_the_server_only_listens():
    p = plan(bounceback=True, length=64, bounceback_period_s=0.05, duration_s=5)
    assert p.client == ["iperf", "-c", "198.18.0.1", "-B", "198.18.0.2", "-p", "5001", "-e",
                        "-l", "64", "--bounceback", "-t", "5", "--bounceback-period", "0.05"]
    assert p.server == ["iperf", "-s", "-B", "198.18.0.1", "-p", "5001", "-e", "-l", "64"]
    assert p.expected_s == 5.0 and p.listen_protocol == "tcp" and p.report_count == 1


def test_a_period_longer_than_the_run_is_waited_for():
    # iperf sends its first burst and waits the period out, whatever -t says
    assert plan(bounceback=True, duration_s=2, bounceback_period_s=10).expected_s == 10.0


@pytest.mark.parametrize(("params", "words"), [
    ({"bounceback": True, "streams": 2}, "one connection"),
    ({"bounceback": True, "rate": "10M"}, "not rate, mss, window or receive_buffer"),
    ({"bounceback_period_s": 1}, "add bounceback: true"),
])
def test_what_a_bounce_back_test_cannot_take(params, words):
    with pytest.raises(ValueError, match=words):
        Iperf2Params.model_validate(params)


def test_a_bounce_back_test_over_udp_is_one_line_at_load(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("name: bb\nsource: nicbench unit test\nmtu: [1500]\ntests:\n"
                    "  - name: rtt\n    tool: iperf2\n    protocol: udp\n"
                    "    params: {bounceback: true}\n")
    with pytest.raises(ConfigError) as info:
        load_profile(path, CATALOG)
    assert "tests[0].protocol: iperf 2's bounce-back test is TCP only" in str(info.value)


# -- the histogram ------------------------------------------------------------------------
H = Histogram(100.0, ((1, 3), (3, 1)))          # 3 in [0, 100), 1 in [200, 300)


def test_a_percentile_is_its_bin_clipped_to_min_and_max_never_a_point_inside():
    assert percentile_bin(H, 0.50, 40.0, 250.0) == (40.0, 100.0)
    assert percentile_bin(H, 0.75, 40.0, 250.0) == (40.0, 100.0)   # the 3rd of bin 1
    assert percentile_bin(H, 0.99, 40.0, 250.0) == (200.0, 250.0)  # bin 3 clipped to the max
    for q in (0.01, 0.5, 0.9, 0.99, 0.999):
        low, high = percentile_bin(H, q, 40.0, 250.0)
        assert 40.0 <= low <= high <= 250.0


def test_samples_beyond_the_histogram_count_at_the_max():
    h = Histogram(100.0, ((1, 9),), above=1)
    assert h.count == 10
    assert percentile_bin(h, 0.999, 10.0, 5000.0) == (5000.0, 5000.0)
    assert percentile_bin(h, 0.9, 10.0, 5000.0) == (10.0, 100.0)


def test_the_trimmed_mean_leaves_out_the_top_five_percent_and_is_bounded_by_the_bins():
    h = Histogram(100.0, ((1, 19), (50, 1)))       # 20 samples, one far out
    low, high = trimmed_mean_bounds(h, 95.0, 0.0, 5000.0)
    assert (low, high) == (0.0, 100.0)             # the 19 kept all lie in [0, 100]
    assert high < (19 * 50 + 4950) / 20            # the outlier is what is trimmed


def test_the_gbe_capture_no_longer_claims_a_median_above_the_exact_mean():
    # issue 30: p50 58.5-64 us and a trimmed mean of 56.9 us were interpolations inside
    # the [19, 100] us bin, while iperf's exact mean was 42 us
    rec = _judged(_rec(), "iperf2_bounceback_lab_gbe_idle_client.txt")
    lat = rec.latency
    assert lat is not None and lat.mean_us == 42.0
    assert (rec.extra["p50_low_us"], lat.p50_us) == (19.0, 100.0)
    assert lat.trimmed_mean_us is not None and lat.trimmed_mean_us <= lat.mean_us
    assert rec.extra["trimmed_mean_low_us"] <= lat.trimmed_mean_us


# -- judged -------------------------------------------------------------------------------
def _rec() -> TrialRecord:
    return TrialRecord(run_id="r", trial_id="t", pair="gbe", adapter="gbe", adapter_label="g",
                       tool="iperf2", test="rtt", protocol="tcp", point="mtu1500", mtu=1500,
                       repetition=1, kind=Kind.REPETITION, status=Status.FAILED)


def _judged(out, name: str):
    text = (CAPTURES / name).read_text()
    apply(out, judge(TOOLS["iperf2"].driver, Result("h", "iperf", text, "", 0, 5.0), text, "",
                     None, out.protocol))
    return out


def test_a_latency_run_is_ok_by_its_round_trips_not_its_rate():
    rec = _judged(_rec(), "iperf2_bounceback_lab_gbe_idle_client.txt")
    assert rec.status is Status.OK and rec.throughput_bps is None
    assert rec.latency is not None and rec.latency.samples == 1000
    assert rec.extra["mode"] == "bounceback"


def test_a_probe_beside_the_load_keeps_its_round_trips():
    out = _judged(RoleResult(Role.PROBE, "iperf2", "tcp", Status.FAILED),
                  "iperf2_bounceback_lab_gbe_loaded_client.txt")
    assert out.status is Status.OK and out.latency is not None
    assert math.isclose(out.latency.p50_us, 6200.0)   # bin [6100, 6200]


def test_a_probe_that_could_not_connect_fails_with_the_tools_words():
    rec = _judged(_rec(), "iperf2_bounceback_lo_connrefused_client.txt")
    assert (rec.status, rec.failure) == (Status.FAILED, Failure.TOOL_ERROR)
    assert "Connection refused" in (rec.reason or "") and rec.latency is None


def test_nicbench_parse_prints_the_round_trips(capsys):
    from nicbench.cli import main

    assert main(["parse", "iperf2",
                 str(CAPTURES / "iperf2_bounceback_lab_gbe_loaded_client.txt")]) == 0
    printed = capsys.readouterr().out
    assert "latency     556 round trips of 64 bytes: p50 6200.0, p90 " in printed
    assert "max 27304.0 us" in printed
