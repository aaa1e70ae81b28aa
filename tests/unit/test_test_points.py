"""A test restricted to some of the profile's points (``tests[].points: [mtu1500]``,
issue 22 item 5): it runs only there, and every count agrees -- progress, ``--plan``,
``status``, the morning summary's configurations, a resume. A test not run at a point by
design is no configuration there: not skipped, not failed, not missing.
"""

from __future__ import annotations

import json

import pytest

from nicbench.config.profile import Profile
from nicbench.execution.plan import make_plan, render
from nicbench.execution.runner import Runner
from nicbench.execution.status import status
from nicbench.platforms.fake import Answer, ToolCall
from nicbench.results.records import Kind
from nicbench.results.rundir import RunDir
from test_runner import INVENTORY, Stop, fake, iperf3_ok, profile
from test_streams import errors_of, line_of, write

RESTRICTED = """\
    repetitions: 2
    mtu: [1500, 9000]
    tests:
      - {name: tcp, tool: iperf3, params: {duration_s: 1}}
      - {name: small, tool: iperf3, params: {duration_s: 1}, points: [mtu1500]}
    """


def where_run(out) -> list[tuple[str, str, int | None]]:
    return [(r.point, r.test, r.repetition) for r in RunDir(out).records()]


def test_a_restricted_test_runs_only_at_its_points(tmp_path):
    prof = profile(tmp_path, RESTRICTED)
    assert prof.tests[1].points == ["mtu1500"] and prof.tests[0].points is None
    assert [len(prof.tests_at(p)) for p in prof.points] == [2, 1]
    assert prof.trials_per_pair == 6 and prof.configurations_per_pair == 3
    hosts = fake(iperf3_ok)
    runner = Runner(prof, INVENTORY, tmp_path / "out", hosts=hosts)
    runner.run()
    assert where_run(tmp_path / "out") == [
        ("mtu1500", "tcp", 1), ("mtu1500", "tcp", 2), ("mtu1500", "small", 1),
        ("mtu1500", "small", 2), ("mtu9000", "tcp", 1), ("mtu9000", "tcp", 2)]
    assert runner.progress.total == runner.progress.done == 6
    assert {(r.point, r.test) for r in runner.summary} == {
        ("mtu1500", "tcp"), ("mtu1500", "small"), ("mtu9000", "tcp")}
    # status counts what is planned at each point: done, nothing missing
    [run] = status(tmp_path / "out").runs
    assert [(p.done, p.planned, p.state) for p in run.pairs] == [(6, 6, "done")]


def test_a_point_with_none_of_its_tests_is_not_tuned(tmp_path):
    prof = profile(tmp_path, """\
        repetitions: 1
        mtu: [1500, 9000]
        tests:
          - {name: small, tool: iperf3, params: {duration_s: 1}, points: [mtu1500]}
        """)
    hosts = fake(iperf3_ok)
    Runner(prof, INVENTORY, tmp_path / "out", hosts=hosts).run()
    assert where_run(tmp_path / "out") == [("mtu1500", "small", 1)]
    assert not [e for e in hosts.log if e[1] == "mtu" and 9000 in e]


def test_a_refused_point_marks_only_the_tests_planned_there(tmp_path):
    prof = profile(tmp_path, RESTRICTED)
    Runner(prof, INVENTORY, tmp_path / "out", hosts=fake(iperf3_ok, max_mtu_b=1500)).run()
    skipped = [(r.point, r.test, r.not_run) for r in RunDir(tmp_path / "out").records()
               if r.kind is Kind.SKIPPED]
    assert skipped == [("mtu9000", "tcp", 2)]


def test_a_resume_measures_the_rest_and_nothing_twice(tmp_path):
    calls: list[ToolCall] = []

    def stop_at_fourth(call: ToolCall) -> Answer:
        calls.append(call)
        if len(calls) == 4:
            raise Stop()
        return iperf3_ok(call)

    prof = profile(tmp_path, RESTRICTED)
    out = tmp_path / "out"
    with pytest.raises(Stop):
        Runner(prof, INVENTORY, out, hosts=fake(stop_at_fourth)).run()
    assert len(where_run(out)) == 3
    hosts = fake(iperf3_ok)
    resumed = Runner(prof, INVENTORY, out, hosts=hosts, resume=True)
    resumed.run()
    assert sorted(where_run(out)) == sorted([
        ("mtu1500", "tcp", 1), ("mtu1500", "tcp", 2), ("mtu1500", "small", 1),
        ("mtu1500", "small", 2), ("mtu9000", "tcp", 1), ("mtu9000", "tcp", 2)])
    assert sum(1 for e in hosts.log if e[1] == "run") == 3
    assert resumed.progress.done == resumed.progress.total == 6
    again = fake(iperf3_ok)                 # all of it stands: nothing is run
    Runner(prof, INVENTORY, out, hosts=again, resume=True).run()
    assert not [e for e in again.log if e[1] == "run"]


def test_the_plan_counts_and_times_only_the_points_asked(tmp_path):
    prof = profile(tmp_path, RESTRICTED)
    plan = make_plan(prof, INVENTORY, ["p"])
    assert plan.trials == 6
    assert {(s.where.split()[1] if len(s.where.split()) > 1 else "") for s in plan.sent
            if "small" in s.where} <= {"mtu1500"}
    every = profile(tmp_path, RESTRICTED.replace(", points: [mtu1500]", ""))
    full = make_plan(every, INVENTORY, ["p"])
    assert full.trials == 8 and plan.tool_s == pytest.approx(full.tool_s * 6 / 8)
    lines = render(plan)
    assert "only at mtu1500: small" in lines
    assert not any(ln.startswith("only at") for ln in render(full))


def test_an_unknown_point_is_one_line_with_its_file_and_line(tmp_path):
    text = RESTRICTED.replace("points: [mtu1500]", "points: [mtu1500, jumbo]")
    [error] = errors_of(tmp_path, text)
    path = write(tmp_path, text)
    assert f"p.yaml:{line_of(path, 'jumbo')}" in error
    assert "no point named 'jumbo' in this profile (its points: mtu1500, mtu9000)" in error
    assert "\n" not in error


def test_a_swept_test_says_an_unknown_point_once(tmp_path):
    errors = errors_of(tmp_path, """\
        mtu: [1500]
        tests:
          - {name: tcp, tool: iperf3, params: {duration_s: 1}, points: [mtu9000],
             sweep: {streams: [1, 2]}}
        """)
    assert len(errors) == 1 and "no point named 'mtu9000'" in errors[0]


def test_an_empty_list_is_refused(tmp_path):
    [error] = errors_of(tmp_path, RESTRICTED.replace("points: [mtu1500]", "points: []"))
    assert "points" in error


def test_the_manifest_keeps_the_field_only_when_given(tmp_path):
    prof = profile(tmp_path, RESTRICTED)
    tests = json.loads(prof.model_dump_json())["tests"]
    assert "points" not in tests[0] and tests[1]["points"] == ["mtu1500"]
    again = Profile.model_validate(prof.model_dump())
    assert again.tests[1].points == ["mtu1500"] and again.trials_per_pair == 6


def test_the_morning_summary_counts_only_the_configurations_planned(tmp_path):
    """Three configurations (tcp at both MTUs, small at 1500): all measured is "ok", not
    "1 of 4 configurations not run"."""
    from nicbench.results.campaign import CampaignState, RunState, RunStateName
    from nicbench.results.morning import CellStatus, gather

    prof = profile(tmp_path, RESTRICTED)
    Runner(prof, INVENTORY, tmp_path / "c" / "r", hosts=fake(iperf3_ok)).run()
    state = CampaignState(name="c", file="c.yaml", text="", runs=[RunState(
        name="r", profile="t", pairs=["p"], planned=prof.trials_per_pair,
        state=RunStateName.DONE)])
    [cell] = gather(tmp_path / "c", state).cells
    assert (cell.configs, cell.measured, cell.status) == (3, 3, CellStatus.OK)
    assert cell.reasons == []
