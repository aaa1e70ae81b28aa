"""Reboot waits follow a Windows host down and up (windows.md §5, pitfall 14), through
the scripted host: every failing probe is waited out until the profile's
reboot_timeout_s, including what a booting host answers (``Get-CimInstance : The RPC
server is unavailable.``, exit 1); a boot time that wobbles by a tick is the same boot;
after the boot the adapter must be Up at its link and the peer must answer on the test
link before a point is measured; one host's slow boot never cuts short its peer's wait;
a host that never comes back ends its pair with the reason, its settings journaled for
`nicbench restore`."""

from __future__ import annotations

import pytest

from nicbench.errors import ConnectError, HostKeyError, TuningError
from nicbench.execution import events as ev
from nicbench.execution.runner import Runner
from nicbench.platforms.base import PlatformOptions
from nicbench.platforms.fake_windows import FakeAdapter, FakeWindowsHost, FakeWindowsPair
from nicbench.platforms.tuning import read_journal_entries
from nicbench.platforms.windows import reboot_together
from nicbench.results.records import Failure, Kind, Status

from test_windows_run import INVENTORY, PROFILE, hosts, profile


def two(options: PlatformOptions | None = None, **kw) -> FakeWindowsPair:
    pair = FakeWindowsPair(options=options or PlatformOptions())
    for name, address in (("wa", "198.18.0.1"), ("wb", "198.18.0.2")):
        pair.add(FakeWindowsHost(name, {"Ethernet 2": FakeAdapter((address,))}, **kw))
    return pair


def probes(plat) -> list[str]:
    return [c.label for c in plat.conn.calls if c.label == "last-boot"]


def test_a_probe_answering_an_rpc_error_while_the_host_boots_is_waited_out():
    pair = two(down_probes=2, rpc_errors_after_boot=3)
    plat = pair.platform("wa")
    plat.reboot()
    assert pair.hosts["wa"].boots == 2 and plat.reboots == 1
    # before, 2 refused, 3 RPC errors (exit 1), then the new boot time
    assert len(probes(plat)) == 1 + 2 + 3 + 1


def test_rpc_errors_past_the_timeout_end_the_wait_with_the_last_one():
    pair = two(PlatformOptions(reboot_timeout_s=5), down_probes=0, rpc_errors_after_boot=99)
    with pytest.raises(ConnectError, match="RPC server is unavailable"):
        pair.platform("wa").reboot()


def test_a_boot_time_that_wobbles_by_a_tick_is_not_a_reboot():
    # shutdown /t 5: the host answers for a while, its boot time a tick later each
    # time; only the real boot (an hour later here) ends the wait.
    pair = two(up_after_shutdown=4, boot_jitter=True, down_probes=1)
    host, plat = pair.hosts["wa"], pair.platform("wa")
    plat.reboot()
    assert host.boots == 2 and plat.reboots == 1
    assert len(probes(plat)) == 1 + 4 + 1 + 1   # before, 4 wobbling, 1 refused, back
    assert host._jitter > 1


def test_a_host_that_never_goes_down_is_not_taken_for_rebooted():
    pair = two(PlatformOptions(reboot_timeout_s=5), up_after_shutdown=10 ** 6,
               boot_jitter=True)
    with pytest.raises(ConnectError, match=r"still up since 2026-01-01T06:00:00\.0000"):
        pair.platform("wa").reboot()
    assert pair.platform("wa").reboots == 0


def test_a_changed_host_key_still_ends_the_wait_at_once():
    pair = two(down_probes=1, rpc_errors_after_boot=1, new_host_key=True)
    with pytest.raises(HostKeyError):
        pair.platform("wa").reboot()


def test_one_hosts_slow_boot_never_skips_its_peers_wait():
    pair = two(PlatformOptions(reboot_timeout_s=3))
    pair.hosts["wa"].never_back = True
    pair.hosts["wb"].down_probes = 2
    pair.hosts["wb"].rpc_errors_after_boot = 1
    plats = [pair.platform("wa"), pair.platform("wb")]
    with pytest.raises(ConnectError, match="wa: did not come back within 3 s"):
        reboot_together(plats)
    assert pair.hosts["wb"].boots == 2 and plats[1].reboots == 1    # wb was waited for


def test_both_hosts_lost_are_both_named():
    pair = two(PlatformOptions(reboot_timeout_s=2), never_back=True)
    with pytest.raises(ConnectError) as info:
        reboot_together([pair.platform("wa"), pair.platform("wb")])
    assert str(info.value).startswith("wa: did not come back") and \
        "also: wb: did not come back" in str(info.value)


def test_after_the_boot_the_adapter_must_be_up_and_the_peer_answer_before_measuring(
        tmp_path):
    pair = hosts()
    for h in pair.hosts.values():
        h.rpc_errors_after_boot = 2
        h.adapter_down_after_boot = 3
        h.peer_silent_after_boot = 2
    seen: list[ev.Event] = []
    run = Runner(profile(tmp_path), INVENTORY, tmp_path / "out", hosts=pair,
                 listener=seen.append)
    recs = list(run.run().records())
    assert {r.point for r in recs if r.status is Status.OK} == {"frame1514", "frame9014"}
    for name, h in pair.hosts.items():
        log = h.log
        boot = log.index("shutdown.exe")
        # the adapter asked until Up (3 Disconnected), then pinged until the peer answered
        # (2 timed out), then the point's firewall rule and its trials
        after = log[boot:log.index("firewall-allow")]
        assert after.count("adapter") >= 4 and after.count("ping.exe") >= 3, (name, after)
        assert after.index("adapter") < after.index("ping.exe")
        assert h.registry == {} and h.boots == 4, name     # 2 sets, the restore
    assert len([e for e in seen if isinstance(e, ev.HostRebooted)]) == 4


def test_an_adapter_that_stays_down_after_the_boot_skips_the_point_with_the_reason(
        tmp_path):
    prof = profile(tmp_path, PROFILE)
    pair = hosts(PlatformOptions.of(prof))
    pair.hosts["wb"].adapter_down_after_boot = 10 ** 6
    run = Runner(prof, INVENTORY, tmp_path / "out", hosts=pair)
    recs = list(run.run().records())
    skipped = [r for r in recs if r.kind is Kind.SKIPPED and r.point == "frame1514"]
    assert skipped and all(r.failure is Failure.INTERFACE for r in skipped)
    assert all("wb: interface Ethernet 2 after a reboot" in r.reason
               and "it is Disconnected" in r.reason for r in skipped)


def test_a_host_that_never_comes_back_ends_the_pair_with_its_settings_journaled(tmp_path):
    prof = profile(tmp_path, PROFILE.replace("reboot_timeout_s: 60", "reboot_timeout_s: 10"))
    pair = hosts(PlatformOptions.of(prof))
    pair.hosts["wa"].never_back = True
    pair.hosts["wb"].rpc_errors_after_boot = 2
    run = Runner(prof, INVENTORY, tmp_path / "out", hosts=pair)
    recs = list(run.run().records())
    assert list(run.lost) == ["wa"] and "did not come back within 10 s" in run.lost["wa"]
    assert recs and all(r.status is Status.SKIPPED and r.failure is Failure.HOST_LOST
                        and "wa: did not come back" in r.reason for r in recs)
    # wb was waited for (it came back) and put back at the end of the run; wa's values
    # and its reboot marker wait in the journal for `nicbench restore`.
    assert pair.hosts["wb"].registry == {} and pair.hosts["wb"].boots == 3
    pending = read_journal_entries(tmp_path / "out" / "tuning.json")[0] \
        if (tmp_path / "out" / "tuning.json").exists() else []
    assert {(c.host, c.kind) for c in pending} >= {("wa", "reboot"), ("wa", "registry")}


def test_a_tuning_error_names_the_adapter_state_after_a_boot():
    pair = two(adapter_down_after_boot=10 ** 6)
    plat = pair.platform("wa")
    plat.adapter("Ethernet 2")
    with pytest.raises(TuningError, match=r"60 s after the boot it is Disconnected at 1 Gbps"):
        plat.reboot()


def test_every_ping_goes_from_the_test_address(tmp_path):
    pair = hosts()
    Runner(profile(tmp_path), INVENTORY, tmp_path / "out", hosts=pair).run()
    own = {"wa": "198.18.0.1", "wb": "198.18.0.2"}
    for name, conn in pair.connections.items():
        pings = [c.argv for c in conn.calls if c.label == "ping.exe"]
        assert pings and all(p[p.index("-S") + 1] == own[name] for p in pings), name
        # the path-MTU proof among them: Don't Fragment, full size, from the test address
        assert any("-f" in p and p[p.index("-l") + 1] == str(9000 - 28) for p in pings)


def test_a_ping_from_an_address_the_host_lacks_fails_as_ping_exe_says():
    pair = two()
    plat = pair.platform("wa")
    res = plat.conn.run(["ping.exe", "-n", "1", "-S", "10.9.9.9", "198.18.0.2"])
    assert "General failure" in res.stdout
    assert plat.reaches("Ethernet 2", "198.18.0.2")


def test_a_host_back_with_another_key_is_fatal_but_its_peer_is_still_waited_for():
    pair = two(down_probes=1)
    pair.hosts["wa"].new_host_key = True
    plats = [pair.platform("wa"), pair.platform("wb")]
    with pytest.raises(HostKeyError, match="wa: host key of wa differs"):
        reboot_together(plats)
    assert pair.hosts["wb"].boots == 2 and plats[1].reboots == 1


def test_a_run_whose_hosts_linger_after_shutdown_with_a_wobbling_boot_time(tmp_path):
    pair = hosts()
    for h in pair.hosts.values():
        h.up_after_shutdown = 3
        h.boot_jitter = True
    run = Runner(profile(tmp_path), INVENTORY, tmp_path / "out", hosts=pair)
    recs = list(run.run().records())
    assert {r.point for r in recs if r.status is Status.OK} == {"frame1514", "frame9014"}
    for name, h in pair.hosts.items():
        # two sets and the restore, each a real boot; none taken from a wobble
        assert h.boots == 4 and pair.platforms[name].reboots == 3, name
        assert h.registry == {} and h.adapters["Ethernet 2"].value == "1514", name
