"""What a trial costs a Windows host in process starts, counted through the scripted
host: every command is a powershell.exe of its own (and a background tool one more, its
runner), a few hundred ms each on Windows by the design's expectation. The figures are
pinned, and --plan's estimate charges exactly the starts a run makes: with one warm
PowerShell per host (remote/warm_powershell.py), a trial starts none."""

from __future__ import annotations

import pytest

from nicbench.execution.plan import POWERSHELL_START_S, make_plan, render
from nicbench.execution.runner import Runner
from startcounter import StartCounter

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
    # Every command runs in the host's warm PowerShell, which starts the receiver itself:
    # no process but the tools' own after setup.
    assert dict(per_trial) == {"ntttcp": {"wa": 0, "wb": 0}, "iperf-tcp": {"wa": 0, "wb": 0}}
    # one session per host, started by its first command (no reboot here); nothing
    # else started a powershell.exe in the whole run
    assert {n: (h.sessions, h.powershell_starts) for n, h in pair.hosts.items()} == {
        "wa": (1, 1), "wb": (1, 1)}
    assert all(c.warm_all and not c.warm_lost for c in pair.connections.values())


def test_the_same_trials_without_the_warm_session_start_a_process_per_command(tmp_path):
    # The fallback once a session is lost, counted as before it was built: every command
    # a powershell.exe of its own, a background tool one more (its WMI-created runner).
    pair = hosts()
    pair.warm = False
    counter = StartCounter(pair)
    Runner(profile(tmp_path, PROFILE), INVENTORY, tmp_path / "out", hosts=pair,
           listener=counter).run()
    # receiver wa: start + its runner, wait-listening, ended, 2 CPU readings, ended
    # (or stop-after-output), collect, cleanup; sender wb: 2 CPU readings, the client,
    # and NTttcp's -xml file read back
    assert dict(counter.per_trial()) == {
        "ntttcp": {"wa": 9, "wb": 4}, "iperf-tcp": {"wa": 9, "wb": 3}}
    assert {h.sessions for h in pair.hosts.values()} == {0}


def test_the_plans_estimate_charges_the_sessions_only(tmp_path):
    prof = profile(tmp_path, PROFILE)
    plan = make_plan(prof, INVENTORY)
    assert plan.windows_trials == plan.trials == 6
    # one session per host, as the scripted host counts them in the run above; none
    # per trial
    assert (plan.windows_starts, plan.windows_trial_starts) == (2, 0)
    header = render(plan)[1]
    assert ("plus on Windows 2 powershell.exe starts (one PowerShell per host, again after "
            f"each reboot; 0 per trial) at ~{POWERSHELL_START_S:g} s each") in header \
        and "not yet measured on a real host" in header
    no_starts = plan.estimate_s - plan.windows_starts * POWERSHELL_START_S
    assert no_starts > 0 and plan.windows_starts * POWERSHELL_START_S == pytest.approx(0.6)


REBOOTING = PROFILE.replace("      - frame_size: 1514\n",
                            "      - frame_size: 1514\n        registry: {TcpWindowSize: 0xffff}\n")


def test_a_reboot_ends_the_session_and_the_plan_counts_the_new_one(tmp_path):
    assert REBOOTING != PROFILE
    pair = hosts()
    Runner(profile(tmp_path, REBOOTING), INVENTORY, tmp_path / "out", hosts=pair).run()
    # the first command's, one after the reboot for the registry value, one after the
    # reboot for its restore: the session ends with the host
    assert {n: (h.boots, h.sessions, h.powershell_starts) for n, h in pair.hosts.items()} \
        == {"wa": (3, 3, 3), "wb": (3, 3, 3)}
    assert make_plan(profile(tmp_path, REBOOTING), INVENTORY).windows_starts == 2 * 3
