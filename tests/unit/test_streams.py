"""Streams and directions as test parameters (issue 22, item 3): iperf3's ``-P`` and
``--bidir``, a test swept over a parameter (``sweep: {streams: [1, 2, 4, 8]}``), the
version a host needs for ``--bidir``, and a bidirectional trial's two directions kept
typed in its record.

The runs below go through the engine with fake hosts whose iperf3 prints the lab's real
captures (tests/golden/captures/iperf3_lab_gbe_*).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from nicbench.config.loader import load_profile
from nicbench.config.profile import Profile
from nicbench.errors import ConfigErrors, NotReadyError
from nicbench.execution.runner import Runner
from nicbench.platforms.fake import Answer, FakeHosts, FakeInterface, ToolCall
from nicbench.results.plausible import impossible
from nicbench.results.records import Status, TrialRecord
from nicbench.tools import iperf3
from nicbench.tools.base import Bidir
from nicbench.tools.driver import Endpoints, version_numbers
from nicbench.tools.registry import CATALOG, TOOLS, version_needs
from test_runner import INVENTORY

CAPTURES = Path(__file__).resolve().parents[1] / "golden" / "captures"
BIDIR_CLIENT = (CAPTURES / "iperf3_lab_gbe_tcp_bidir_client.json").read_text()
P4_CLIENT = (CAPTURES / "iperf3_lab_gbe_tcp_P4_client.json").read_text()


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text("name: t\nsource: nicbench unit test\n" + textwrap.dedent(text))
    return path


def profile(tmp_path: Path, text: str) -> Profile:
    return load_profile(write(tmp_path, text), CATALOG)


def errors_of(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(ConfigErrors) as info:
        profile(tmp_path, text)
    return [str(e) for e in info.value.errors]


def line_of(path: Path, needle: str, nth: int = 0) -> int:
    lines = [i for i, ln in enumerate(path.read_text().splitlines(), 1) if needle in ln]
    return lines[nth]


# -- the drivers ------------------------------------------------------------------------
ENDS_TCP = Endpoints("198.18.0.1", "198.18.0.2", "tcp")


def test_bidir_and_streams_reach_the_iperf3_client_only():
    plan = TOOLS["iperf3"].driver.plan("iperf3", "iperf3", {"streams": 4, "bidir": True},
                                       ENDS_TCP, "t")
    assert plan.client[-3:] == ["-P", "4", "--bidir"]
    assert "--bidir" not in plan.server and "-P" not in plan.server
    plain = TOOLS["iperf3"].driver.plan("iperf3", "iperf3", {}, ENDS_TCP, "t")
    assert "--bidir" not in plain.client and "-P" not in plain.client


@pytest.mark.parametrize("tool", ["iperf3", "iperf2"])
def test_a_udp_rate_is_the_total_over_the_streams(tool):
    # both iperfs take -b per stream (-P 4 -b 200M sent 800 Mbit/s on the lab)
    ends = Endpoints("198.18.0.1", "198.18.0.2", "udp", offered_bps=800_000_000)
    client = TOOLS[tool].driver.plan(tool, tool, {"streams": 4}, ends, "t").client
    assert client[client.index("-b") + 1] == "200000000"
    three = TOOLS[tool].driver.plan(tool, tool, {"streams": 3},
                                    Endpoints("a", "b", "udp", offered_bps=100), "t").client
    assert three[three.index("-b") + 1] == "34"        # rounded up: never under the total
    one = TOOLS[tool].driver.plan(tool, tool, {}, ends, "t").client
    assert one[one.index("-b") + 1] == "800000000"


def test_the_iperf2_capture_of_per_stream_rates_is_what_the_driver_assumes():
    # the lab's -P 4 -b 200M capture sent four times the -b: the total nicbench offers
    run = iperf3.parse((CAPTURES / "iperf3_lab_gbe_udp_P4_b200M_client.json").read_text())
    assert run.extra["target_bps"] == 200_000_000 and run.streams == 4
    assert run.sent_bps == pytest.approx(4 * 200_000_000, rel=0.01)


def test_version_numbers():
    assert version_numbers("3.12") == (3, 12) and version_numbers("3.1.3-1") == (3, 1, 3)
    assert version_numbers("fake") is None and version_numbers(None) is None
    assert (3, 6) < iperf3.BIDIR_NEED.since <= (3, 12)


# -- the profile: a sweep, and what is refused --------------------------------------------
SWEEP = """\
    repetitions: 2
    mtu: [1500]
    tests:
      - name: one
        tool: iperf2
      - name: tcp
        tool: iperf3
        params: {duration_s: 2}
        sweep: {streams: [1, 2, 4, 8]}
    """


def test_a_sweep_is_one_test_per_value(tmp_path):
    prof = profile(tmp_path, SWEEP)
    assert [t.name for t in prof.tests] == ["one", "tcp-streams1", "tcp-streams2",
                                            "tcp-streams4", "tcp-streams8"]
    swept = prof.tests[1:]
    assert [t.params for t in swept] == [{"duration_s": 2, "streams": n} for n in (1, 2, 4, 8)]
    assert {(t.swept.of, t.swept.param) for t in swept if t.swept} == {("tcp", "streams")}
    assert [t.swept.value for t in swept if t.swept] == [1, 2, 4, 8]
    assert prof.tests[0].swept is None and prof.trials_per_pair == 10
    # as a manifest keeps it: read back, nothing expands twice
    again = Profile.model_validate(prof.model_dump())
    assert again.tests == prof.tests
    # a test not swept is saved as before sweeps existed
    assert set(prof.model_dump()["tests"][0]) == set(Profile.model_validate(
        {"name": "x", "source": "s", "mtu": [1500], "tests": [{"name": "a", "tool": "iperf3"}]}
    ).model_dump()["tests"][0])
    assert "sweep" not in prof.model_dump()["tests"][0]
    assert "swept" not in prof.model_dump()["tests"][0]


def test_a_swept_value_the_tool_refuses_is_named_on_its_own_line(tmp_path):
    text = SWEEP.replace("[1, 2, 4, 8]", "[1, 2,\n                   200, 8]")
    path = write(tmp_path, text)
    with pytest.raises(ConfigErrors) as info:
        load_profile(path, CATALOG)
    assert [str(e) for e in info.value.errors] == [
        f"{path}:{line_of(path, '200, 8]')}: tests[1].sweep.streams[2]: Input should be "
        "less than or equal to 128"]


@pytest.mark.parametrize("sweep, message", [
    ("{streams: [1, 1]}", "streams: 1 is given twice"),
    ("{streams: [2]}", "streams: give a list of 2 to 16 values, e.g. sweep: "
                       "{streams: [1, 2, 4, 8]}"),
    ("{streams: [1, 2], bidir: [false, true]}",
     "give one parameter and the list of its values, e.g. sweep: {streams: [1, 2, 4, 8]}"),
    ("{duration_s: [1, 2]}", "duration_s is in params: and in sweep: give it in one of them"),
    ("{streams: [1, {a: 1}]}", "streams[1]: {'a': 1} is not a number or a word"),
])
def test_a_sweep_not_well_formed_is_one_line(tmp_path, sweep, message):
    path = write(tmp_path, SWEEP.replace("{streams: [1, 2, 4, 8]}", sweep))
    with pytest.raises(ConfigErrors) as info:
        load_profile(path, CATALOG)
    assert [str(e) for e in info.value.errors] == [
        f"{path}:{line_of(path, 'sweep:')}: tests[1].sweep: {message}"]


def test_a_parameter_of_a_test_after_a_sweep_keeps_its_line(tmp_path):
    path = write(tmp_path, SWEEP.rstrip(" ") + "      - {name: last, tool: iperf3, params: {streams: 0}}\n")
    with pytest.raises(ConfigErrors) as info:
        load_profile(path, CATALOG)
    assert [str(e) for e in info.value.errors] == [
        f"{path}:{line_of(path, 'name: last')}: tests[2].params.streams: Input should be "
        "greater than or equal to 1"]


def test_bidir_in_a_udp_rate_search_is_refused(tmp_path):
    path = write(tmp_path, """\
        mtu: [1500]
        tests:
          - name: u
            tool: iperf3
            protocol: udp
            udp_search: {method: bisect}
            params: {bidir: true}
        """)
    with pytest.raises(ConfigErrors) as info:
        load_profile(path, CATALOG)
    assert [str(e) for e in info.value.errors] == [
        f"{path}:{line_of(path, 'bidir: true')}: tests[0].params.bidir: a UDP rate search "
        "judges the loss of one direction: drop bidir or udp_search"]


# -- the host's version -------------------------------------------------------------------
BIDIR = """\
    repetitions: 1
    mtu: [1500]
    tests:
      - {name: both, tool: iperf3, params: {duration_s: 3, bidir: true}}
    """


def hosts_with(answer, version: str) -> FakeHosts:
    hosts = FakeHosts(answer)
    for name, addr in (("ha", "198.18.0.1"), ("hb", "198.18.0.2")):
        hosts.add(name, {"t0": FakeInterface(addresses=(addr,))}).versions["iperf3"] = version
    return hosts


def bidir_answer(call: ToolCall) -> Answer:
    return Answer(client=BIDIR_CLIENT if "--bidir" in call.argv else P4_CLIENT)


def test_bidir_on_an_iperf3_without_it_is_refused_before_anything_changes(tmp_path):
    prof = profile(tmp_path, BIDIR)
    assert [(n.test, n.tool, n.need.option) for n in version_needs(prof)] == [
        ("both", "iperf3", "--bidir")]
    hosts = hosts_with(bidir_answer, "3.1.3")
    with pytest.raises(NotReadyError) as info:
        Runner(prof, INVENTORY, tmp_path / "out", hosts=hosts).run()
    text = str(info.value)
    assert ("iperf3 3.1.3 on ha has no --bidir (test both: params.bidir; iperf3 3.7 and "
            "later have it): install a newer iperf3 there, or drop bidir") in text
    assert not any(entry[1] == "mtu" for entry in hosts.log)
    assert not (tmp_path / "out").exists()


def test_a_bidirectional_trial_keeps_both_directions_typed(tmp_path):
    prof = profile(tmp_path, BIDIR)
    hosts = hosts_with(bidir_answer, "3.12")
    run_dir = Runner(prof, INVENTORY, tmp_path / "out", hosts=hosts).run()
    [rec] = list(run_dir.records())
    assert rec.status is Status.OK, rec.reason
    assert "--bidir" in rec.commands["client"]
    # the forward direction is the trial's figure; both are in bidir (the capture's sums)
    assert rec.throughput_bps == pytest.approx(835528530.1018804)
    assert rec.bidir == Bidir(forward_bps=835528530.1018804, reverse_bps=851881160.277641,
                              forward_sent_bps=853759532.6363033,
                              reverse_sent_bps=865986039.8549082)
    assert rec.bidir.total_bps == pytest.approx(835528530.1018804 + 851881160.277641)
    line = json.loads((tmp_path / "out" / "trials.jsonl").read_text().splitlines()[-1])
    assert list(line)[-1] == "bidir"          # appended at the end of the line


# -- the stored record --------------------------------------------------------------------
def one_way_record(**changes) -> TrialRecord:
    base = {"run_id": "r", "trial_id": "t", "pair": "p", "adapter": "card",
            "adapter_label": "Card", "tool": "iperf3", "test": "tcp", "protocol": "tcp",
            "point": "mtu1500", "mtu": 1500, "repetition": 1, "kind": "repetition",
            "status": "ok", "throughput_bps": 9e8}
    return TrialRecord.from_dict({**base, **changes})


def test_a_one_way_line_keeps_its_bytes_and_a_bidir_line_reads_back():
    rec = one_way_record()
    assert "bidir" not in rec.to_dict()
    line = json.dumps(rec.to_dict())
    assert json.dumps(TrialRecord.from_dict(json.loads(line)).to_dict()) == line
    both = one_way_record(bidir={"forward_bps": 9e8, "reverse_bps": 8e8,
                                 "forward_sent_bps": None, "reverse_sent_bps": 8.1e8})
    assert both.bidir == Bidir(9e8, 8e8, None, 8.1e8)
    assert TrialRecord.from_dict(json.loads(json.dumps(both.to_dict()))) == both


@pytest.mark.parametrize("bad", [{"reverse_bps": 1.0}, {"forward_bps": "fast"},
                                 {"forward_bps": 1.0, "reverse_bps": -2.0},
                                 {"forward_bps": 1.0, "sideways_bps": 2.0}, [1, 2]])
def test_a_stored_bidir_that_is_not_two_rates_is_refused(bad):
    with pytest.raises(ValueError, match="is not two directions' rates"):
        one_way_record(bidir=bad)


def test_a_direction_above_any_link_is_impossible():
    rec = one_way_record(bidir={"forward_bps": 9e8, "reverse_bps": 2e13})
    assert impossible(rec) == ("bidir.reverse_bps 2e+13 bit/s is above 1e+13 bit/s "
                               "(10 Tbit/s), more than any link carries")
