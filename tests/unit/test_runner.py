"""The run engine's rules against fake hosts (no root, no lab): repetitions and restore,
a refused point, giving up, resuming, a UDP search replayed, a failed path check.

The fake hosts (``nicbench.platforms.fake``) keep settings in memory and answer every
tool run with real captured output (``tests/golden/captures``), so the engine parses and
judges real text; ``tests/lab`` runs the same engine on real hosts.
"""

from __future__ import annotations

import statistics
import textwrap
from pathlib import Path

import pytest
from fakeinv import ONE_PAIR

from nicbench.config.inventory import Inventory
from nicbench.config.loader import load_profile
from nicbench.tools.registry import CATALOG
from nicbench.execution import events as ev
from nicbench.execution.runner import Runner
from nicbench.platforms.fake import Answer, FakeHosts, FakeInterface, ToolCall
from nicbench.results.records import Failure, Kind, Status
from nicbench.results.rundir import RunDir

CAPTURES = Path(__file__).resolve().parents[1] / "golden" / "captures"
IPERF3_TCP = (CAPTURES / "iperf3_lab_tcp_P2_client.json").read_text()
IPERF3_REFUSED = (CAPTURES / "iperf3_lab_text_connrefused.txt").read_text()
IPERF2_UDP_CLIENT = (CAPTURES / "iperf2_lab_udp_b100M_client_enhanced.txt").read_text()
IPERF2_UDP_SERVER = (CAPTURES / "iperf2_lab_udp_b100M_server_enhanced.txt").read_text()

INVENTORY = ONE_PAIR


class Stop(Exception):
    """Stands for Ctrl-C in a listener or a tool (KeyboardInterrupt would end pytest)."""


def profile(tmp_path, text: str):
    path = tmp_path / "p.yaml"
    path.write_text("name: t\nsource: nicbench unit test\n" + textwrap.dedent(text))
    return load_profile(path, CATALOG)


def fake(answer, *, max_mtu_b: int = 65535, sysctls=None) -> FakeHosts:
    hosts = FakeHosts(answer)
    hosts.add("ha", {"t0": FakeInterface(addresses=("198.18.0.1",))}, sysctls)
    hosts.add("hb", {"t0": FakeInterface(max_mtu=max_mtu_b, addresses=("198.18.0.2",))},
              sysctls)
    return hosts


def iperf3_ok(call: ToolCall) -> Answer:
    return Answer(client=IPERF3_TCP)


def mtus(hosts: FakeHosts) -> dict[str, int]:
    return {name: p.interfaces["t0"].mtu for name, p in hosts.platforms.items()}


TCP = """\
    repetitions: 3
    mtu: [1500, 9000]
    tests:
      - {name: tcp, tool: iperf3, params: {duration_s: 1}}
    """


def test_every_repetition_is_stored_and_every_mtu_restored(tmp_path):
    hosts = fake(iperf3_ok)
    seen: list[ev.Event] = []
    run = Runner(profile(tmp_path, TCP), INVENTORY, tmp_path / "out", hosts=hosts,
                 listener=seen.append)
    run_dir = run.run()
    recs = list(run_dir.records())
    assert [(r.point, r.repetition, r.status) for r in recs] == [
        (p, i, Status.OK) for p in ("mtu1500", "mtu9000") for i in (1, 2, 3)]
    # The run parsed the capture's own figure (iperf3 -J sum_received).
    assert {r.throughput_bps for r in recs} == {
        __import__("nicbench.tools.iperf3", fromlist=["parse"]).parse(IPERF3_TCP)
        .throughput_bps}
    assert mtus(hosts) == {"ha": 1500, "hb": 1500}
    # MTU 9000 set on the receiver, then the sender; put back in reverse order.
    mtu_log = [entry for entry in hosts.log if entry[1] == "mtu"]
    assert mtu_log == [("ha", "mtu", "t0", 9000), ("hb", "mtu", "t0", 9000),
                       ("hb", "mtu", "t0", 1500), ("ha", "mtu", "t0", 1500)]
    assert [type(e).__name__ for e in seen].count("TrialDone") == 6
    assert [e for e in seen if isinstance(e, ev.SettingRestored)] == [
        ev.SettingRestored("hb", "mtu", "t0", "1500"),
        ev.SettingRestored("ha", "mtu", "t0", "1500")]
    assert [(r.point, r.status, r.n_ok) for r in run.summary] == [
        ("mtu1500", "ok", 3), ("mtu9000", "ok", 3)]
    assert hosts.closed == 1


def test_a_refused_mtu_is_a_skipped_point_with_the_kernels_words(tmp_path):
    hosts = fake(iperf3_ok, max_mtu_b=1500)
    run_dir = Runner(profile(tmp_path, TCP), INVENTORY, tmp_path / "out", hosts=hosts).run()
    skipped = [r for r in run_dir.records() if r.kind is Kind.SKIPPED]
    assert len(skipped) == 1
    (s,) = skipped
    assert (s.point, s.failure, s.kernel_message, s.not_run) == \
        ("mtu9000", Failure.REFUSED, "RTNETLINK answers: Invalid argument", 3)
    assert s.reason == "hb: MTU of t0 9000: RTNETLINK answers: Invalid argument"
    assert mtus(hosts) == {"ha": 1500, "hb": 1500}   # ha had taken 9000: put back


def test_a_path_that_does_not_carry_the_mtu_is_not_a_refusal(tmp_path):
    hosts = fake(iperf3_ok)
    real_set = hosts.platforms["hb"].set_mtu

    def sets_but_does_not_carry(iface, mtu):   # the device takes the MTU, the wire does not
        real_set(iface, mtu)
        if mtu > 1500:
            hosts.platforms["hb"].interfaces[iface].mtu = 1500
    hosts.platforms["hb"].set_mtu = sets_but_does_not_carry
    recs = list(Runner(profile(tmp_path, TCP), INVENTORY, tmp_path / "out",
                       hosts=hosts).run().records())
    (s,) = [r for r in recs if r.kind is Kind.SKIPPED]
    assert s.failure is Failure.PATH_CHECK and not s.failure.final
    assert "no reply to a 9000-byte packet with DF set" in s.reason


def test_consecutive_failures_give_up_the_rest(tmp_path):
    def stalls_at_jumbo(call: ToolCall) -> Answer:
        return Answer(timeout=True) if call.mtu["t0"] > 1500 else Answer(client=IPERF3_TCP)

    prof = profile(tmp_path, """\
        repetitions: 5
        give_up_after: 2
        mtu: [9000]
        tests:
          - {name: tcp, tool: iperf3, params: {duration_s: 1}}
        """)
    seen: list[ev.Event] = []
    run_dir = Runner(prof, INVENTORY, tmp_path / "out", hosts=fake(stalls_at_jumbo),
                     listener=seen.append).run()
    recs = list(run_dir.records())
    assert [(r.kind, r.status, r.failure) for r in recs] == [
        (Kind.REPETITION, Status.FAILED, Failure.TIMEOUT),
        (Kind.REPETITION, Status.FAILED, Failure.TIMEOUT),
        (Kind.GIVEN_UP, Status.SKIPPED, Failure.GIVEN_UP)]
    assert recs[2].not_run == 3
    assert recs[2].reason.startswith("3 repetitions not run after 2 consecutive failures")
    assert sum(isinstance(e, ev.GaveUp) for e in seen) == 1


def test_a_tools_own_error_is_a_tool_error(tmp_path):
    prof = profile(tmp_path, """\
        repetitions: 1
        mtu: [1500]
        tests:
          - {name: tcp, tool: iperf3, params: {duration_s: 1}}
        """)
    hosts = fake(lambda call: Answer(client=IPERF3_REFUSED, exit_status=1))
    (r,) = Runner(prof, INVENTORY, tmp_path / "out", hosts=hosts).run().records()
    assert r.status is Status.FAILED and r.failure in (Failure.TOOL_ERROR,
                                                       Failure.EXIT_STATUS)
    assert "Connection refused" in r.reason


def test_an_interrupted_run_restores_and_resumes_without_duplicates(tmp_path):
    calls = []

    def stop_at_fourth(call: ToolCall) -> Answer:
        calls.append(call)
        if len(calls) == 4:
            raise Stop()
        return Answer(client=IPERF3_TCP)

    prof = profile(tmp_path, TCP)
    out = tmp_path / "out"
    hosts = fake(stop_at_fourth)
    with pytest.raises(Stop):
        Runner(prof, INVENTORY, out, hosts=hosts).run()
    assert mtus(hosts) == {"ha": 1500, "hb": 1500}      # restored on the way out
    first = [(r.point, r.repetition) for r in RunDir(out).records()]
    assert first == [("mtu1500", 1), ("mtu1500", 2), ("mtu1500", 3)]
    # the interrupted trial (mtu9000 #1) is measured by the resume, nothing twice
    hosts2 = fake(iperf3_ok)
    Runner(prof, INVENTORY, out, hosts=hosts2, resume=True).run()
    keys = [(r.point, r.repetition) for r in RunDir(out).records()]
    assert keys == [*first, ("mtu9000", 1), ("mtu9000", 2), ("mtu9000", 3)]
    assert mtus(hosts2) == {"ha": 1500, "hb": 1500}
    assert sum(1 for e in hosts2.log if e[1] == "run") == 3


def udp_sweep(tmp_path, extra: str = ""):
    return profile(tmp_path, f"""\
        mtu: [1500]
        tests:
          - name: udp
            tool: iperf2
            protocol: udp
            params: {{duration_s: 0.5}}
            udp_search: {{method: sweep, start_bps: 100M, stop_bps: 160M, step_bps: 10M{extra}}}
        """)


def iperf2_udp(call: ToolCall) -> Answer:
    return Answer(client=IPERF2_UDP_CLIENT, server=IPERF2_UDP_SERVER)


def offered(call: ToolCall) -> int:
    return int(call.argv[call.argv.index("-b") + 1])


def test_an_interrupted_udp_search_replays_what_it_measured(tmp_path):
    out = tmp_path / "out"
    prof = udp_sweep(tmp_path)

    def stop_after_three(event: ev.Event) -> None:
        if isinstance(event, ev.TrialDone) and event.i == 3:
            raise Stop()

    with pytest.raises(Stop):
        Runner(prof, INVENTORY, out, hosts=fake(iperf2_udp), listener=stop_after_three).run()
    assert [r.offered_bps for r in RunDir(out).records()] == [100e6, 110e6, 120e6]

    asked: list[int] = []

    def measuring(call: ToolCall) -> Answer:
        asked.append(offered(call))
        return iperf2_udp(call)

    Runner(prof, INVENTORY, out, hosts=fake(measuring), resume=True).run()
    recs = list(RunDir(out).records())
    assert asked == [130_000_000, 140_000_000, 150_000_000, 160_000_000]
    assert [r.offered_bps for r in recs] == [100e6 + i * 10e6 for i in range(7)]
    assert [r.repetition for r in recs] == list(range(1, 8))
    assert all(r.ok and r.search_method == "sweep" for r in recs)


def test_trials_per_rate_offers_each_rate_that_many_times(tmp_path):
    asked: list[int] = []

    def measuring(call: ToolCall) -> Answer:
        asked.append(offered(call))
        return iperf2_udp(call)

    prof = profile(tmp_path, """\
        mtu: [1500]
        tests:
          - name: udp
            tool: iperf2
            protocol: udp
            params: {duration_s: 0.5}
            udp_search: {method: sweep, start_bps: 100M, stop_bps: 110M, step_bps: 10M,
                         trials_per_rate: 2}
        """)
    run = Runner(prof, INVENTORY, tmp_path / "out", hosts=fake(measuring))
    run_dir = run.run()
    assert asked == [100_000_000, 100_000_000, 110_000_000, 110_000_000]
    assert [r.repetition for r in run_dir.records()] == [1, 2, 3, 4]
    (row,) = run.summary
    assert (row.status, row.n_ok, row.select) == ("ok", 4, "udp-sweep")


def test_a_profile_sysctl_is_applied_on_both_hosts_and_restored(tmp_path):
    before = {"net.core.rmem_max": "212992"}
    hosts = fake(iperf3_ok, sysctls=before)
    prof = profile(tmp_path, """\
        repetitions: 1
        sysctl: {net.core.rmem_max: 4194304}
        mtu: [1500]
        tests:
          - {name: tcp, tool: iperf3, params: {duration_s: 1}}
        """)
    during = {}

    def look(event: ev.Event) -> None:
        if isinstance(event, ev.TrialDone):
            during.update({n: dict(p.sysctls) for n, p in hosts.platforms.items()})

    Runner(prof, INVENTORY, tmp_path / "out", hosts=hosts, listener=look).run()
    assert during == {n: {"net.core.rmem_max": "4194304"} for n in ("ha", "hb")}
    assert {n: p.sysctls for n, p in hosts.platforms.items()} == {"ha": before, "hb": before}


# -- resume: what stands and what is measured again (issue #9) ----------------------------
def stalls_at_jumbo(call: ToolCall) -> Answer:
    return Answer(timeout=True) if call.mtu["t0"] > 1500 else Answer(client=IPERF3_TCP)


GIVE_UP = """\
    repetitions: 3
    give_up_after: 2
    mtu: [1500, 9000]
    tests:
      - {name: tcp, tool: iperf3, params: {duration_s: 1}}
    """


def test_a_resume_measures_failed_and_given_up_configurations_again(tmp_path):
    prof = profile(tmp_path, GIVE_UP)
    out = tmp_path / "out"
    Runner(prof, INVENTORY, out, hosts=fake(stalls_at_jumbo)).run()
    asked: list[int] = []

    def healthy(call: ToolCall) -> Answer:
        asked.append(call.mtu["t0"])
        return Answer(client=IPERF3_TCP)

    run = Runner(prof, INVENTORY, out, hosts=fake(healthy), resume=True)
    run.run()
    assert asked == [9000, 9000, 9000]        # both failures and the one not run; 1500 stands
    rows = {r.point: (r.status, r.n_ok, r.n_failed) for r in run.summary}
    assert rows == {"mtu1500": ("ok", 3, 0), "mtu9000": ("ok", 3, 0)}
    # nothing was lost: the failed attempts are still in the file, superseded
    assert sum(r.failure is Failure.TIMEOUT for r in RunDir(out).records()) == 2


def test_keep_failed_leaves_them_and_a_refusal_is_never_measured_again(tmp_path):
    prof = profile(tmp_path, GIVE_UP)
    out = tmp_path / "out"
    Runner(prof, INVENTORY, out, hosts=fake(stalls_at_jumbo)).run()
    hosts = fake(iperf3_ok)
    Runner(prof, INVENTORY, out, hosts=hosts, resume=True, keep_failed=True).run()
    assert not [e for e in hosts.log if e[1] == "run"]

    refused = tmp_path / "refused"
    Runner(prof, INVENTORY, refused, hosts=fake(iperf3_ok, max_mtu_b=1500)).run()
    hosts = fake(iperf3_ok)      # the card would take 9000 now: still not measured
    Runner(prof, INVENTORY, refused, hosts=hosts, resume=True).run()
    assert not [e for e in hosts.log if e[1] == "run"]


def test_a_resume_first_puts_back_what_a_crashed_run_left(tmp_path):
    from nicbench.platforms.tuning import TuningSession

    prof = profile(tmp_path, TCP)
    out = tmp_path / "out"
    with pytest.raises(Stop):
        Runner(prof, INVENTORY, out, hosts=fake(lambda call: (_ for _ in ()).throw(Stop())),
               ).run()
    # a controller killed inside a point: MTU 9000 and a server journaled, never put back
    crashed = fake(iperf3_ok)
    journal = TuningSession(RunDir(out).journal_file)
    journal.set_mtu(crashed.platforms["ha"], "t0", 9000)
    journal.set_mtu(crashed.platforms["hb"], "t0", 9000)
    journal.expect(crashed.platforms["ha"], "/fake/nicbench-x.d", "server iperf3 -s", 5201)
    assert mtus(crashed) == {"ha": 9000, "hb": 9000}

    seen: list[ev.Event] = []
    Runner(prof, INVENTORY, out, hosts=crashed, resume=True, listener=seen.append).run()
    first = crashed.log.index(("hb", "mtu", "t0", 1500))
    assert crashed.log.index(("ha", "reap", ("/fake/nicbench-x.d",))) < first
    assert first < next(i for i, e in enumerate(crashed.log) if e[1] == "run")
    assert mtus(crashed) == {"ha": 1500, "hb": 1500}
    assert any(isinstance(e, ev.Warning) and "put back what the interrupted run left: "
               "2 settings, 1 processes" in e.message for e in seen)
    assert TuningSession.load(RunDir(out).journal_file).hosts() == set()


def test_a_resume_with_another_profile_is_refused(tmp_path):
    from nicbench.errors import UsageError

    out = tmp_path / "out"
    Runner(profile(tmp_path, TCP), INVENTORY, out, hosts=fake(iperf3_ok)).run()
    other = profile(tmp_path, TCP.replace("repetitions: 3", "repetitions: 5"))
    with pytest.raises(UsageError, match=r"another method: the profile differs "
                                         r"\(repetitions\)"):
        Runner(other, INVENTORY, out, hosts=fake(iperf3_ok), resume=True).run()


def test_a_torn_last_line_is_cut_off_and_kept_before_the_resume_appends(tmp_path):
    prof = profile(tmp_path, TCP)
    out = tmp_path / "out"
    Runner(prof, INVENTORY, out, hosts=fake(iperf3_ok)).run()
    lines = (out / "trials.jsonl").read_text().splitlines(keepends=True)
    fragment = lines[-1][:57]
    (out / "trials.jsonl").write_text("".join(lines[:-1]) + fragment)   # died mid-write
    run = Runner(prof, INVENTORY, out, hosts=fake(iperf3_ok), resume=True)
    run.run()
    assert [(r.point, r.n_ok) for r in run.summary] == [("mtu1500", 3), ("mtu9000", 3)]
    (kept,) = out.glob("trials.jsonl.torn-*")
    assert kept.read_text() == fragment
    assert len((out / "trials.jsonl").read_text().splitlines()) == 6


# -- a pair that cannot be measured, a host that is lost (issue #9) -----------------------
TWO_PAIRS = Inventory.model_validate({
    "hosts": [{"name": n, "address": f"198.19.{i}.2", "ssh": {"known_hosts": "k",
                                                              "reconnect_s": 1}}
              for i, n in enumerate(("ha", "hb", "hc", "hd"), start=1)],
    "adapters": [{"id": c, "vendor": "v", "model": c, "driver": {"name": "d"}}
                 for c in ("card1", "card2")],
    "pairs": [{"name": "p1", "adapter": "card1",
               "a": {"host": "ha", "interface": "t0", "address": "198.18.0.1"},
               "b": {"host": "hb", "interface": "t0", "address": "198.18.0.2"}},
              {"name": "p2", "adapter": "card2",
               "a": {"host": "hc", "interface": "t1", "address": "198.18.1.1"},
               "b": {"host": "hd", "interface": "t1", "address": "198.18.1.2"}}]})


def four_hosts(answer, missing: str | None = None) -> FakeHosts:
    hosts = FakeHosts(answer)
    for name, iface, addr in (("ha", "t0", "198.18.0.1"), ("hb", "t0", "198.18.0.2"),
                              ("hc", "t1", "198.18.1.1"), ("hd", "t1", "198.18.1.2")):
        ifaces = {} if name == missing else {iface: FakeInterface(addresses=(addr,))}
        hosts.add(name, ifaces)
    return hosts


def test_a_missing_interface_fails_its_pair_and_the_others_run(tmp_path):
    run = Runner(profile(tmp_path, TCP), TWO_PAIRS, tmp_path / "out",
                 hosts=four_hosts(lambda call: Answer(client=IPERF3_TCP), missing="hb"))
    run.run()
    rows = {(r.pair, r.point): (r.status, r.failure) for r in run.summary}
    assert rows[("p1", "mtu1500")] == ("skipped", Failure.INTERFACE)
    assert rows[("p1", "mtu9000")] == ("skipped", Failure.INTERFACE)
    assert rows[("p2", "mtu1500")] == ("ok", None) and rows[("p2", "mtu9000")] == ("ok", None)
    assert 'Device "t0" does not exist' in run.summary[0].reason


def test_a_host_that_comes_back_gets_its_trial_retried(tmp_path):
    calls = []

    def drops_once(call: ToolCall) -> Answer:
        calls.append(call)
        if len(calls) == 2:
            hosts.platforms["hb"].lost = True     # the sender's connection drops mid-trial
            hosts.platforms["hb"].lost_for = 1    # ... and it comes back when asked
            raise __import__("nicbench.errors", fromlist=["ConnectError"]).ConnectError(
                "hb", "the connection was lost while `iperf3 ...` ran")
        return Answer(client=IPERF3_TCP)

    hosts = four_hosts(drops_once)
    run = Runner(profile(tmp_path, TCP), TWO_PAIRS, tmp_path / "out", pairs=["p1"],
                 hosts=hosts)
    run.run()
    recs = list(RunDir(tmp_path / "out").records())
    lost = [r for r in recs if r.failure is Failure.HOST_LOST]
    assert len(lost) == 1 and lost[0].repetition == 2
    assert [(r.point, r.n_ok, r.n_failed) for r in run.summary] == [("mtu1500", 3, 0),
                                                                     ("mtu9000", 3, 0)]
    assert ("hb", "reconnect", 1.0) in hosts.log and run.lost == {}


def test_a_host_that_does_not_come_back_is_lost_and_the_other_pair_goes_on(tmp_path):
    def dies_at_p1_jumbo(call: ToolCall) -> Answer:
        if call.host == "hb" and call.mtu["t0"] == 9000:
            hosts.platforms["hb"].lost = True
            raise __import__("nicbench.errors", fromlist=["ConnectError"]).ConnectError(
                "hb", "the connection was lost")
        return Answer(client=IPERF3_TCP)

    hosts = four_hosts(dies_at_p1_jumbo)
    run = Runner(profile(tmp_path, TCP), TWO_PAIRS, tmp_path / "out", hosts=hosts)
    run.run()
    rows = {(r.pair, r.point): (r.status, r.failure) for r in run.summary}
    assert rows[("p1", "mtu1500")] == ("ok", None)
    assert rows[("p1", "mtu9000")][1] is Failure.HOST_LOST
    assert rows[("p2", "mtu1500")] == ("ok", None) and rows[("p2", "mtu9000")] == ("ok", None)
    assert set(run.lost) == {"hb"}
    # hb's MTU and its client's pid file could not be put back: reported; ha's MTU was
    assert {p.host for p in run.problems} == {"hb"}
    assert any(p.what.startswith("mtu t0 (to put back: 1500, now: 9000)")
               for p in run.problems)
    assert any(p.what.startswith("client iperf3") for p in run.problems)
    assert hosts.platforms["ha"].interfaces["t0"].mtu == 1500


def test_a_sink_is_told_every_stored_record_in_file_order(tmp_path):
    # The store phase's one writer: whatever subscribes (a results store) sees exactly what
    # trials.jsonl holds, markers and superseded attempts included, in the same order.
    told: list[str] = []
    prof = profile(tmp_path, TCP)
    run_dir = Runner(prof, INVENTORY, tmp_path / "out", hosts=fake(iperf3_ok, max_mtu_b=1500),
                     sinks=[lambda rec: told.append(rec.trial_id)]).run()
    stored = [r.trial_id for r in run_dir.records()]
    assert told == stored
    assert "p.mtu9000.tcp.skipped" in told and len(told) == 4


def test_measure_strategies_plan_what_they_run(tmp_path):
    # Progress, the ETA and --plan count trials through the same Measure that runs them.
    from nicbench.execution.measure import Repetitions, UdpRateSearch, measure_for

    prof = profile(tmp_path, """\
        repetitions: 4
        mtu: [1500]
        tests:
          - {name: tcp, tool: iperf3, params: {duration_s: 1}}
          - name: udp
            tool: iperf2
            protocol: udp
            params: {duration_s: 0.5}
            udp_search: {method: sweep, start_bps: 100M, stop_bps: 200M, step_bps: 50M}
        """)
    tcp, udp = (measure_for(prof, t) for t in prof.tests)
    assert isinstance(tcp, Repetitions) and tcp.planned() == 4
    assert isinstance(udp, UdpRateSearch) and udp.planned() == 3
    seen: list[ev.Event] = []
    Runner(prof, INVENTORY, tmp_path / "out", hosts=fake(lambda call: iperf2_udp(call) if "iperf3" not in call.argv[0]
                                                        else iperf3_ok(call)),
           listener=seen.append).run()
    started = next(e for e in seen if isinstance(e, ev.RunStarted))
    done = [e for e in seen if isinstance(e, ev.TrialDone)]
    assert started.total == 7 == len(done) == done[-1].done


SAMPLES = Path(__file__).resolve().parents[1] / "golden" / "samples"
UNTIL_STABLE = """\
    repetitions: {min: 5, max: 8, until_ci_pct: 1.0}
    mtu: [1500]
    tests:
      - {name: tcp, tool: iperf3, params: {duration_s: 1}}
    """


def alternating(*outputs: str):
    """A tool that prints each of ``outputs`` in turn: a figure that never settles."""
    calls = iter(range(1000))
    return lambda call: Answer(client=outputs[next(calls) % len(outputs)])


def test_until_stable_stops_at_min_when_steady_and_at_max_when_not(tmp_path):
    from nicbench.tools import iperf3

    # select best: judged by the median's order-statistic interval, which 6 repetitions
    # give first ([min, max] covers 1 - 2/64 = 96.9 %)
    seen: list[ev.Event] = []
    steady = Runner(profile(tmp_path, UNTIL_STABLE), INVENTORY, tmp_path / "steady",
                    hosts=fake(iperf3_ok), listener=seen.append)
    assert [r.repetition for r in steady.run().records()] == [1, 2, 3, 4, 5, 6]
    words = ("stable after 6: the median's 95 % interval -0.00/+0.00 %; "
             "the best of n grows with n")
    assert steady.summary[0].stopped == words
    assert [e for e in seen if isinstance(e, ev.RepetitionsStopped)] == [
        ev.RepetitionsStopped("p", "mtu1500", "tcp", 6, words)]
    assert steady.progress.done == steady.progress.total == 8

    other = (SAMPLES / "iperf3_tcp_client.json").read_text()
    noisy = Runner(profile(tmp_path, UNTIL_STABLE), INVENTORY, tmp_path / "noisy",
                   hosts=fake(alternating(IPERF3_TCP, other)))
    recs = list(noisy.run().records())
    assert [r.repetition for r in recs] == [1, 2, 3, 4, 5, 6, 7, 8]
    values = [iperf3.parse(text).throughput_bps for text in (IPERF3_TCP, other)] * 4
    assert [r.throughput_bps for r in recs] == values
    assert abs(values[1] / values[0] - 1) > 0.02      # the two figures are far apart
    # the interval at 8 is [x_(2), x_(7)]: both figures; reported as reached
    med = statistics.median(values)
    lo, hi = 100 * (min(values) - med) / med, 100 * (max(values) - med) / med
    assert noisy.summary[0].stopped == (
        f"max reached (8): the median's 95 % interval -{abs(lo):.2f}/+{hi:.2f} %; "
        f"two modes ({min(values) / 1e6:.1f} Mbit/s and {max(values) / 1e6:.1f} Mbit/s, "
        f"{100 * (max(values) / min(values) - 1):.1f} % apart); the best of n grows with n")


def test_a_resumed_until_stable_test_goes_on_from_its_stored_figures(tmp_path):
    # Stopped after two repetitions of a noisy figure: the resume reads the two stored
    # figures back and goes on from the third, by the same rule, to the same end.
    other = (SAMPLES / "iperf3_tcp_client.json").read_text()
    out = tmp_path / "out"
    prof = profile(tmp_path, UNTIL_STABLE)

    def stop_after_two(event: ev.Event) -> None:
        if isinstance(event, ev.TrialDone) and event.i == 2:
            raise Stop()

    with pytest.raises(Stop):
        Runner(prof, INVENTORY, out, hosts=fake(alternating(IPERF3_TCP, other)),
               listener=stop_after_two).run()
    assert len(list(RunDir(out).records())) == 2
    again = Runner(prof, INVENTORY, out, hosts=fake(alternating(IPERF3_TCP, other)),
                   resume=True)
    recs = list(again.run().records())
    assert [r.repetition for r in recs] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert again.summary[0].stopped.startswith("max reached (8): ")
    # A resume of a test that stands (stable at its min) measures nothing more.
    Runner(prof, INVENTORY, tmp_path / "s", hosts=fake(iperf3_ok)).run()
    calls: list[ToolCall] = []
    Runner(prof, INVENTORY, tmp_path / "s", resume=True,
           hosts=fake(lambda call: calls.append(call) or iperf3_ok(call))).run()
    assert calls == []


def test_the_stopping_rule_at_its_edges():
    from nicbench.config.profile import UntilStable
    from nicbench.results.policy import interval, stopped

    policy = UntilStable(min=5, max=8, until_ci_pct=1.0)
    assert stopped([100.0] * 4, 4, policy) is None                  # under min
    # the median has no 95 % interval from 5 values: on to 6
    assert stopped([100.0] * 5, 5, policy) is None
    assert stopped([100.0] * 6, 6, policy).words() == (
        "stable after 6: the median's 95 % interval -0.00/+0.00 %")
    # exactly at the target counts as stable: [min, max] of 6 reaches 1 % below
    at = [99.0, 100.0, 100.0, 100.0, 100.0, 100.5]
    assert interval(at, "median").reach_pct == pytest.approx(1.0)
    assert stopped(at, 6, policy).stable
    assert stopped([90.0, 100.0, 100.0, 100.0, 100.0, 110.0], 6, policy) is None
    # the mean: a t-interval (99 %), from 5 values
    mean = stopped([100.0, 100.1, 99.9, 100.0, 100.0], 5, policy, "mean")
    assert mean.stable and mean.interval.statistic == "mean"
    assert mean.interval.confidence == 0.99
    # failed repetitions count toward max, not toward min
    assert stopped([100.0] * 4, 6, policy) is None
    stop = stopped([100.0], 8, policy)
    assert not stop.stable and stop.words() == (
        "max reached (8): no interval yet (too few succeeded)")