"""Tools beside a test's own (``tests[].beside``): the profile's checks, one line each at
the file's line; the record's round trip (a one-tool record's line unchanged); and the
plan, which shows every role's commands in the order the trial sends them."""

from __future__ import annotations

import json
import textwrap

import pytest

from nicbench.tools.registry import CATALOG
from nicbench.config.loader import load_profile
from nicbench.config.profile import Role
from nicbench.errors import ConfigError, ConfigErrors
from nicbench.execution.plan import make_plan
from nicbench.results.records import Failure, Kind, RoleResult, Status, TrialRecord

from test_plan import INVENTORY


def write(tmp_path, tests: str, extra: str = "mtu: [1500]\n"):
    path = tmp_path / "p.yaml"
    path.write_text("name: beside\nsource: nicbench unit test\n" + extra + "tests:\n"
                    + textwrap.indent(textwrap.dedent(tests), "  "))
    return path


def errors_of(path) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_profile(path, CATALOG)
    err = info.value
    return err.lines() if isinstance(err, ConfigErrors) else [str(err)]


GOOD = """\
    - name: bulk-probe
      tool: iperf3
      params: {duration_s: 3, streams: 4}
      beside:
        - {role: probe, tool: iperf2, params: {duration_s: 3}}
    """


def test_a_probe_beside_the_load_loads(tmp_path):
    profile = load_profile(write(tmp_path, GOOD), CATALOG)
    test = profile.tests[0]
    assert [(b.role, b.tool, b.protocol) for b in test.beside] == [(Role.PROBE, "iperf2", "tcp")]
    assert profile.tools() == ("iperf3", "iperf2")     # both checked on the hosts


@pytest.mark.parametrize(("beside", "line", "key", "words"), [
    ("{role: probe, tool: iperf9}", 9, "tests[0].beside[0].tool",
     "'iperf9' is not one of"),
    ("{role: watcher, tool: iperf2}", 9, "tests[0].beside[0].role",
     "'load' or 'probe'"),
    ("{role: load, tool: iperf2}", 9, "tests[0].beside[0].role",
     "the test's own tool (tool:) is its load"),
    ("{role: probe, tool: iperf3, params: {duration_s: 3}}", 9, "tests[0].beside[0].params",
     "iperf3 listens on port 5201 as iperf3 does in the same trial"),
    ("{role: probe, tool: iperf2, params: {lenght: 100}}", 9,
     "tests[0].beside[0].params.lenght", "iperf2 has no parameter 'lenght'"),
    ("{role: probe, tool: iperf2, params: {window: $win}}", 9,
     "tests[0].beside[0].params.window", "uses $win but points[0] (mtu1500) has no vars.win"),
])
def test_a_bad_beside_role_is_one_line_at_its_place(tmp_path, beside, line, key, words):
    path = write(tmp_path, f"""\
        - name: t
          tool: iperf3
          params: {{duration_s: 3}}
          beside:
            - {beside}
        """)
    lines = errors_of(path)
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"{path}:{line}: {key}: "), lines
    assert words in lines[0], lines


def test_two_tools_in_one_role_are_refused(tmp_path):
    lines = errors_of(write(tmp_path, """\
        - name: t
          tool: iperf3
          beside:
            - {role: probe, tool: iperf2}
            - {role: probe, tool: iperf2, params: {port: 5002}}
        """))
    assert len(lines) == 1 and ":9: tests[0].beside[1].role: duplicate role 'probe' " \
        "(also beside[0])" in lines[0], lines


def test_a_udp_search_runs_alone(tmp_path):
    lines = errors_of(write(tmp_path, """\
        - name: t
          tool: iperf3
          protocol: udp
          udp_search: {method: bisect}
          beside:
            - {role: probe, tool: iperf2}
        """))
    assert len(lines) == 1 and ":9: tests[0].beside: a UDP search runs its tool alone" \
        in lines[0], lines


def test_a_beside_port_moved_off_the_loads_passes(tmp_path):
    test = load_profile(write(tmp_path, """\
        - name: t
          tool: iperf3
          beside:
            - {role: probe, tool: iperf3, params: {port: 5202}}
        """), CATALOG).tests[0]
    assert test.beside[0].params == {"port": 5202}


def test_a_one_tool_profile_dumps_as_before(tmp_path):
    profile = load_profile(write(tmp_path, "- {name: t, tool: iperf3}\n"), CATALOG)
    assert "beside" not in profile.model_dump(mode="json")["tests"][0]
    two = load_profile(write(tmp_path, GOOD), CATALOG)
    assert two.model_dump(mode="json")["tests"][0]["beside"][0]["role"] == "probe"


def record(**kw) -> TrialRecord:
    return TrialRecord(run_id="r", trial_id="p.mtu1500.t.r1", pair="p", adapter="a",
                       adapter_label="A", tool="iperf3", test="t", protocol="tcp",
                       point="mtu1500", mtu=1500, repetition=1, kind=Kind.REPETITION,
                       status=Status.OK, throughput_bps=9e8, **kw)


def test_a_one_tool_record_is_written_as_before():
    rec = record()
    data = rec.to_dict()
    assert "beside" not in data
    assert list(data)[-1] == "format_version"
    again = TrialRecord.from_dict(json.loads(json.dumps(data, default=str)))
    assert again == rec and again.beside == []


def test_a_record_with_a_probe_reads_back_typed():
    probe = RoleResult(Role.PROBE, "iperf2", "tcp", Status.FAILED, Failure.TIMEOUT,
                       "timeout: the sender ran past 18 s and was killed",
                       commands={"server": "iperf -s", "client": "iperf -c x"},
                       raw={"client": "raw/p.mtu1500.t.r1.probe-client.txt"},
                       exit_status={"client": None})
    rec = record(beside=[probe])
    line = json.dumps(rec.to_dict(), default=str)
    assert json.loads(line)["beside"][0]["role"] == "probe"
    again = TrialRecord.from_dict(json.loads(line))
    assert again == rec
    assert again.beside[0].role is Role.PROBE and again.beside[0].failure is Failure.TIMEOUT
    assert again.beside[0].status is Status.FAILED


def test_the_plan_shows_both_tools_in_the_order_sent(tmp_path):
    plan = make_plan(load_profile(write(tmp_path, GOOD, "repetitions: 2\nmtu: [1500]\n"), CATALOG),
                     INVENTORY, ["p1"])
    ha = [s.command for s in plan.sent if s.host == "ha" and "bulk-probe" in s.where]
    hb = [s.command for s in plan.sent if s.host == "hb" and "bulk-probe" in s.where]
    assert plan.trials == 2 and len(ha) == 2 * 4 and len(hb) == 2 * 2
    # receiver: the load's server, the probe's, then both finishes (overlapped: sent as
    # the clients start)
    assert "iperf3 -s -1 -J -B 198.18.0.1 -p 5201" in ha[0]
    assert "iperf -s -B 198.18.0.1 -p 5001" in ha[1] and ".probe.d" in ha[1]
    assert ha[2].startswith("[server_finish.sh]") and ha[3].startswith("[server_finish.sh]")
    # sender: the probe's client (on its thread) first, then the load's
    assert hb[0].endswith("iperf -c 198.18.0.1 -B 198.18.0.2 -p 5001 -e -t 3")
    assert hb[1].endswith("iperf3 -c 198.18.0.1 -B 198.18.0.2 -p 5201 -J -t 3 -P 4")
    assert [t.client.split()[-1] for t in plan.trials_planned] == ["4", "4"]


def test_beside_params_take_the_points_vars(tmp_path):
    from types import SimpleNamespace

    from nicbench.errors import TrialError
    from nicbench.execution.trial import beside_params

    profile = load_profile(write(tmp_path, """\
        - name: t
          tool: iperf3
          beside:
            - {role: probe, tool: iperf2, params: {window: $win, length: $len, duration_s: 3}}
        """, "points:\n  - {mtu: 1500, vars: {win: 64K, len: null}}\n"), CATALOG)
    spec = profile.tests[0].beside[0]
    ctx = SimpleNamespace(point="mtu1500", point_vars=dict(profile.points[0].vars))
    # a variable set to null leaves its parameter out, as for the test's own params
    assert beside_params(ctx, spec) == {"window": "64K", "duration_s": 3}
    # a runner that passes no vars: the trial fails in one line, naming what is missing
    with pytest.raises(TrialError, match=r"probe iperf2: params use \$win, which point "
                                         "mtu1500 does not set"):
        beside_params(SimpleNamespace(point="mtu1500", point_vars={}), spec)
