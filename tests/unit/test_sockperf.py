"""sockperf as a test kind: its parameters and both ends' argv, its captured outputs judged
into a trial (round trips, no throughput), and the summary's selection of round trips,
where best is the lowest."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from nicbench.execution.judge import apply, judge
from nicbench.remote.result import Result
from nicbench.results.plausible import _ok_without_figure
from nicbench.results.policy import Better, better_of, first_stop, summarize
from nicbench.results.records import Failure, Kind, Status, TrialRecord
from nicbench.results.summary import summary_rows
from nicbench.config.profile import UntilStable
from nicbench.tools.base import Latency
from nicbench.tools.driver import Endpoints
from nicbench.tools.sockperf import SockperfParams, TOOL

CAPTURES = Path(__file__).resolve().parents[1] / "golden" / "captures"
ENDS = Endpoints("198.18.0.1", "198.18.0.2", "udp", client_file="/tmp/x.out")


def capture(name: str) -> str:
    return (CAPTURES / name).read_text()


def record(**kw: object) -> TrialRecord:
    base: dict[str, object] = {
        "run_id": "r", "trial_id": "t", "pair": "p", "adapter": "a", "adapter_label": "a",
        "tool": "sockperf", "test": "lat", "protocol": "udp", "point": "mtu1500",
        "mtu": 1500, "repetition": 1, "kind": Kind.REPETITION, "status": Status.FAILED}
    base.update(kw)
    return TrialRecord(**base)  # type: ignore[arg-type]


def client(text: str, exit_status: int = 0) -> Result:
    return Result(host="b", command="sockperf", stdout=text, stderr="",
                  exit_status=exit_status, duration_s=2.4)


# -- parameters and argv -----------------------------------------------------------
def test_both_ends_argv_udp_and_tcp() -> None:
    plan = TOOL.driver.plan("sockperf", "sockperf", {"duration_s": 3, "message": 256}, ENDS, "t")
    assert plan.server == ["sockperf", "server", "-i", "198.18.0.1", "-p", "11111"]
    assert plan.client == ["sockperf", "ping-pong", "-i", "198.18.0.1", "-p", "11111",
                           "--client_ip", "198.18.0.2", "-m", "256", "-t", "3", "--full-rtt",
                           "-d"]
    assert plan.client_outfile is None and not plan.server_exits
    assert plan.expected_s == pytest.approx(5.3) and plan.stop_signal == "INT"
    tcp = Endpoints("198.18.0.1", "198.18.0.2", "tcp", client_file="/tmp/x.out")
    plan = TOOL.driver.plan("sockperf", "sockperf", {"mps": 1000, "per_sample": True}, tcp, "t")
    assert plan.server[:3] == ["sockperf", "server", "--tcp"] and plan.listen_protocol == "tcp"
    assert plan.client[-4:] == ["--mps", "1000", "--full-log", "/tmp/x.out"]
    assert plan.client_outfile == "/tmp/x.out"


@pytest.mark.parametrize("params, words", [
    ({"message": 13}, "14 ... 65507"),
    ({"message": 65508}, "14 ... 65507"),
    ({"per_sample": True}, "give mps"),
    ({"per_sample": True, "mps": 100_000, "duration_s": 2}, "at most 150,000"),
    ({"mps": 0}, "greater than or equal to 1"),
    ({"latency": 1}, "Extra inputs"),
])
def test_parameters_a_run_could_not_keep_are_refused(params: dict, words: str) -> None:
    with pytest.raises(ValidationError, match=words):
        SockperfParams.model_validate(params)


def test_a_latency_tool_is_better_lower() -> None:
    assert better_of("sockperf") is Better.LOWER
    assert better_of("iperf3") is Better.HIGHER and better_of("nosuchtool") is Better.HIGHER
    assert summarize([30.0, 10.0, 20.0], Better.LOWER).best == 10.0
    assert summarize([30.0, 10.0, 20.0]).best == 30.0


# -- judged into a trial -----------------------------------------------------------
def test_a_captured_run_is_an_ok_trial_with_round_trips_and_no_throughput() -> None:
    rec = record()
    text = capture("sockperf_lab_udp_m64_t2_client.txt")
    apply(rec, judge(TOOL.driver, client(text), text, capture("sockperf_lab_udp_server.txt"), None, rec.protocol))
    assert rec.status is Status.OK and rec.ok and rec.throughput_bps is None
    assert rec.latency is not None and rec.latency.p50_us == 51.466
    assert rec.latency.samples == 30842 and rec.duration_s == 2.0
    assert _ok_without_figure(rec) is None


def test_a_full_log_beside_its_console_is_checked_against_it() -> None:
    rec = record()
    text = capture("sockperf_lab_udp_m64_t1_mps5000_client.txt")
    log = capture("sockperf_lab_udp_m64_t1_mps5000_fulllog.csv")
    apply(rec, judge(TOOL.driver, client(text), text, "", log, rec.protocol))
    assert rec.status is Status.OK and rec.latency is not None
    # another run's log beside this console is not this run's figures
    rec = record()
    other = capture("sockperf_lab_udp_m64_t2_client.txt")
    apply(rec, judge(TOOL.driver, client(other), other, "", log, rec.protocol))
    assert rec.failure is Failure.UNPARSED and "full log" in (rec.reason or "")


@pytest.mark.parametrize("name, words", [
    ("sockperf_lab_udp_noserver_client.txt", "Is the server down?"),
    ("sockperf_lab_tcp_noserver_client.txt", "Connection refused"),
])
def test_no_server_is_a_tool_error_though_sockperf_exits_0(name: str, words: str) -> None:
    rec = record()
    text = capture(name)
    apply(rec, judge(TOOL.driver, client(text), text, "", None, rec.protocol))
    assert rec.failure is Failure.TOOL_ERROR and words in (rec.reason or "")
    assert rec.latency is None and not rec.ok


def test_percentiles_out_of_order_are_not_plausible() -> None:
    rec = record(status=Status.OK, latency=Latency(
        samples=10, message_bytes=64, p50_us=20.0, p90_us=10.0, p99_us=30.0, p999_us=40.0,
        max_us=50.0))
    assert "out of order" in (_ok_without_figure(rec) or "")


# -- the summary: best is the lowest -----------------------------------------------
def lat(p50: float, p99: float, samples: int = 1000) -> Latency:
    return Latency(samples=samples, message_bytes=64, p50_us=p50, p90_us=p50 + 1,
                   p99_us=p99, p999_us=p99 + 10, max_us=p99 + 100)


def reps() -> list[TrialRecord]:
    return [record(repetition=i, status=Status.OK, latency=lat(p50, p99))
            for i, (p50, p99) in enumerate([(20.0, 40.0), (15.0, 60.0), (18.0, 35.0)], 1)]


def test_the_summary_never_takes_each_percentiles_lowest_repetition() -> None:
    # issue 30: select: best took p50 15 from repetition 2 and p99 35 from repetition 3.
    # Without their round trips kept, each percentile is the repetitions' median.
    (row,) = summary_rows(reps())
    assert row.select == "best" and row.selected_bps is None and row.n_ok == 3
    assert row.latency_source == "summaries"
    assert (row.p50_us, row.p99_us) == (18.0, 40.0)
    assert (row.p50_min_us, row.p50_max_us) == (15.0, 20.0)
    assert (row.p99_min_us, row.p99_max_us) == (35.0, 60.0)
    assert row.p50_stdev_us == pytest.approx(2.5166114784)
    assert row.latency_samples == 3000 and row.latency_repetition == 3


def test_a_median_rule_selects_the_repetition_at_the_median() -> None:
    from nicbench.config.profile import Profile

    profile = Profile.model_validate({
        "name": "p", "source": "unit test", "select": "median", "mtu": [1500],
        "tests": [{"name": "lat", "tool": "sockperf"}]})
    (row,) = summary_rows(reps(), profile)
    assert row.select == "median" and row.p50_us == 18.0 and row.latency_repetition == 3
    assert row.p999_us is None       # 1000 round trips a repetition: p99.9 needs 10,000


def test_until_stable_judges_round_trips_by_their_median() -> None:
    recs = [record(repetition=i, status=Status.OK, latency=lat(p50, 2 * p50))
            for i, p50 in enumerate([20.0, 15.0, 18.0, 16.0, 19.0, 17.0], 1)]
    stop = first_stop(recs, UntilStable(min=5, max=10, until_ci_pct=20.0))
    # the median round trip 17.5 us, its interval [15, 20] (every one of 6): 14.3 %
    assert stop is not None and stop.stable and stop.ran == 6
    assert stop.interval.figure == 17.5 and (stop.interval.low, stop.interval.high) == (15, 20)