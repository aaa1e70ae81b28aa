"""What a trial costs a Windows host in process starts, counted through the scripted
host: every command is a powershell.exe of its own (and a background tool one more, its
runner), a few hundred ms each on Windows by the design's expectation. The figures are
pinned, and --plan's estimate charges exactly the starts its planned trials make.
One warm PowerShell per host (issue 20, deliver 4) is not built yet: when it is, these
figures are what it must bring down (to 0 per trial after setup)."""

from __future__ import annotations

from nicbench.execution.plan import POWERSHELL_START_S, make_plan, render
from nicbench.execution.runner import Runner
from nicbench.platforms.fake_windows import StartCounter

from test_windows_run import INVENTORY, hosts, profile

PROFILE = """\
    platform: windows
    repetitions: 3
    points:
      - frame_size: 1514
    tests:
      - name: ntttcp
        tool: ntttcp
        params: {threads: 1, cpu: 0, async_count: 4, length: 256K, count: 10000}
      - name: iperf-tcp
        tool: iperf2
        params: {duration_s: 10, window: 64K}
    """


def test_each_trial_starts_this_many_powershell_processes(tmp_path):
    pair = hosts()
    counter = StartCounter(pair)
    Runner(profile(tmp_path, PROFILE), INVENTORY, tmp_path / "out", hosts=pair,
           listener=counter).run()
    per_trial = counter.per_trial()
    assert [t for t, _ in per_trial] == ["ntttcp"] * 3 + ["iperf-tcp"] * 2
    # receiver wa: start + its runner, wait-listening, ended, 2 CPU readings, ended
    # (or stop-after-output), collect, cleanup; sender wb: 2 CPU readings, the client,
    # and NTttcp's -xml file read back
    assert dict(per_trial) == {
        "ntttcp": {"wa": 9, "wb": 4}, "iperf-tcp": {"wa": 9, "wb": 3}}


def test_the_plans_estimate_charges_the_starts_its_trials_make(tmp_path):
    prof = profile(tmp_path, PROFILE)
    plan = make_plan(prof, INVENTORY)
    assert plan.windows_trials == plan.trials == 6
    # 3 NTttcp trials at 9 + 4, 3 iperf trials at 9 + 3, as the scripted host counts
    assert plan.windows_starts == 3 * 13 + 3 * 12
    header = render(plan)[1]
    assert f"plus on Windows 12.5 powershell.exe starts per trial at ~{POWERSHELL_START_S:g} " \
           "s each" in header and "not yet measured on a real host" in header
    no_starts = plan.estimate_s - plan.windows_starts * POWERSHELL_START_S
    assert no_starts > 0 and plan.windows_starts * POWERSHELL_START_S > 20
