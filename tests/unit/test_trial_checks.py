"""A trial held to its own plan (execution/conformance.py) and a run refused or narrowed
when its pairs are not ready (execution/readiness.py), against fake hosts: the engine runs
for real, the tool output is a real capture, and the fakes' test link does what each
test says (carrier lost, bytes not carried, no counters at all; a tool not installed).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nicbench.errors import NotReadyError
from nicbench.execution.judge import DEAD_LINK_BPS, apply, dead_link_bps, judge
from nicbench.execution.runner import Runner
from nicbench.platforms.fake import Answer, FakeHosts, FakeInterface
from nicbench.remote.result import Result
from nicbench.results.records import Failure, Kind, Status, TrialRecord
from nicbench.results.rundir import RunDir
from nicbench.tools.iperf3 import parse as parse_iperf3
from nicbench.tools.registry import TOOLS

from test_runner import INVENTORY, IPERF3_TCP, TWO_PAIRS, four_hosts, profile

CAPTURES = Path(__file__).resolve().parents[1] / "golden" / "captures"
# The lab's own: iperf3 -t 2 whose test link was set down for 3 s (tests/faults).
IPERF3_LINK_DOWN = (CAPTURES / "iperf3_lab_tcp_t2_link_down_3s_client.json").read_text()

ONE = """\
    repetitions: 1
    mtu: [1500]
    tests:
      - {name: tcp, tool: iperf3, params: {duration_s: DURATION}}
    """


def fake(answer, *, counters: bool = True) -> FakeHosts:
    hosts = FakeHosts(answer)
    hosts.add("ha", {"t0": FakeInterface(addresses=("198.18.0.1",), counters=counters)})
    hosts.add("hb", {"t0": FakeInterface(addresses=("198.18.0.2",), counters=counters)})
    return hosts


def run(tmp_path, hosts: FakeHosts, duration_s: int = 1) -> list[TrialRecord]:
    prof = profile(tmp_path, ONE.replace("DURATION", str(duration_s)))
    out = tmp_path / "out"
    Runner(prof, INVENTORY, out, hosts=hosts, resume=out.exists()).run()
    return list(RunDir(out).records())


def test_a_trial_whose_link_went_down_fails_and_a_resume_measures_it_again(tmp_path):
    (rec,) = run(tmp_path, fake(lambda call: Answer(client=IPERF3_TCP, carrier_flaps=1)))
    assert (rec.status, rec.failure) == (Status.FAILED, Failure.LINK_DOWN)
    assert rec.reason == "link down during the trial (ha t0: carrier lost 1 time)"
    assert rec.throughput_bps == parse_iperf3(IPERF3_TCP).throughput_bps   # kept, not counted
    assert not rec.ok
    first, again = run(tmp_path, fake(lambda call: Answer(client=IPERF3_TCP)))
    assert first.trial_id == again.trial_id
    assert (again.status, again.failure) == (Status.OK, None)


def test_a_trial_that_moved_far_less_than_the_tool_says_fails(tmp_path):
    said = parse_iperf3(IPERF3_TCP)
    assert said.throughput_bps is not None and said.duration_s is not None
    claimed = said.throughput_bps * said.duration_s / 8
    moved = int(claimed * 0.2)         # each way: 0.4 of the claim sent and received
    (rec,) = run(tmp_path, fake(lambda call: Answer(client=IPERF3_TCP, moved_bytes=moved)))
    assert (rec.status, rec.failure) == (Status.FAILED, Failure.SHORT_TRANSFER)
    assert rec.reason == (f"moved {2 * moved:,} bytes where the tool says {claimed:,.0f} "
                          "(ha t0 sent and received)")


def test_headers_and_other_traffic_on_the_link_never_fail_a_trial(tmp_path):
    said = parse_iperf3(IPERF3_TCP)
    assert said.throughput_bps is not None and said.duration_s is not None
    claimed = said.throughput_bps * said.duration_s / 8
    # The data one way, the ACKs back: what a real transfer's counters show, and more.
    (rec,) = run(tmp_path, fake(lambda call: Answer(client=IPERF3_TCP,
                                                    moved_bytes=int(claimed * 0.52))))
    assert rec.status is Status.OK, rec.reason


def test_a_trial_that_ran_far_past_its_plan_fails(tmp_path):
    # A real capture: planned -t 2, the link down for 3 s in the middle. Here the fake
    # link stays up, so the only thing wrong is the time the tool says it took.
    ran = parse_iperf3(IPERF3_LINK_DOWN).duration_s
    assert ran is not None and ran > 4.0
    (rec,) = run(tmp_path, fake(lambda call: Answer(client=IPERF3_LINK_DOWN)), duration_s=2)
    assert (rec.status, rec.failure) == (Status.FAILED, Failure.OVERRAN)
    assert rec.reason is not None and rec.reason.startswith(f"ran {ran:.1f} s of a planned 2 s")


def test_a_trial_within_its_tolerance_is_not_an_overrun(tmp_path):
    ran = parse_iperf3(IPERF3_LINK_DOWN).duration_s
    assert ran is not None
    planned = int(ran) - 1            # ran at most 2 s (and 50 %) past this: still the plan
    (rec,) = run(tmp_path, fake(lambda call: Answer(client=IPERF3_LINK_DOWN)),
                 duration_s=planned)
    assert rec.status is Status.OK, rec.reason


def test_without_counters_the_link_checks_are_not_available_never_failed(tmp_path):
    hosts = fake(lambda call: Answer(client=IPERF3_TCP, carrier_flaps=2, moved_bytes=0),
                 counters=False)
    (rec,) = run(tmp_path, hosts)
    assert (rec.status, rec.failure) == (Status.OK, None)


# -- pairs not ready -------------------------------------------------------------------
def test_a_run_whose_only_pair_is_not_ready_is_refused_before_anything_changes(tmp_path):
    hosts = fake(lambda call: Answer(client=IPERF3_TCP))
    hosts.platforms["hb"].missing = {"iperf3"}
    out = tmp_path / "out"
    with pytest.raises(NotReadyError) as err:
        Runner(profile(tmp_path, ONE.replace("DURATION", "1")), INVENTORY, out,
               hosts=hosts).run()
    assert err.value.exit_code == 2
    assert err.value.lines()[0] == ("p: iperf3 is not installed on hb (install it, or set "
                                    "hosts[].tools.iperf3)")
    assert not out.exists()
    assert [e for e in hosts.log if e[1] in ("mtu", "sysctl", "start", "run")] == []
    assert hosts.closed == 1


def test_a_pair_not_ready_is_recorded_up_front_and_the_other_pair_runs(tmp_path):
    hosts = four_hosts(lambda call: Answer(client=IPERF3_TCP))
    hosts.platforms["hc"].missing = {"iperf3"}
    prof = profile(tmp_path, ONE.replace("DURATION", "1"))
    runner = Runner(prof, TWO_PAIRS, tmp_path / "out", hosts=hosts)
    recs = list(runner.run().records())
    by_pair = {r.pair: r for r in recs}
    assert (by_pair["p2"].kind, by_pair["p2"].failure) == (Kind.SKIPPED, Failure.NOT_READY)
    assert by_pair["p2"].reason == ("iperf3 is not installed on hc (install it, or set "
                                    "hosts[].tools.iperf3)")
    assert by_pair["p1"].status is Status.OK
    assert runner.unmeasured == {"p2": by_pair["p2"].reason}
    # Nothing was sent to p2's hosts but the readiness probes.
    assert [e for e in hosts.log if e[0] in ("hc", "hd") and e[1] != "reconnect"] == []


def test_a_pair_whose_every_trial_failed_makes_the_run_end_in_error(tmp_path):
    refused = (CAPTURES / "iperf3_lab_text_connrefused.txt").read_text()
    hosts = fake(lambda call: Answer(client=refused, exit_status=1))
    runner = Runner(profile(tmp_path, ONE.replace("DURATION", "1")), INVENTORY,
                    tmp_path / "out", hosts=hosts)
    runner.run()
    assert list(runner.unmeasured) == ["p"]
    assert runner.unmeasured["p"].startswith("no trial measured (first: ")


# -- the Linux trial scripts read the counters in the calls a trial makes anyway ----------
def test_the_linux_trial_calls_read_the_test_interface_s_counters(tmp_path):
    import socket
    import uuid
    from pathlib import Path as P

    from nicbench.platforms.base import ServerEnd
    from nicbench.platforms.linux import LinuxPlatform
    from nicbench.remote.local import LocalConnection

    names = sorted(p.name for p in P("/sys/class/net").iterdir() if p.name != "lo")
    if not names:
        pytest.skip("this machine has no network interface but lo")
    iface = names[0]
    tx0 = int(P(f"/sys/class/net/{iface}/statistics/tx_bytes").read_text())
    plat = LinuxPlatform(LocalConnection())
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    listener = ["python3", "-c", "import socket,time; s=socket.socket(); "
                f"s.bind(('127.0.0.1', {port})); s.listen(); time.sleep(30)"]
    started = plat.start_server(listener, f"/tmp/nicbench-test-{uuid.uuid4().hex}", port,
                                "tcp", 5.0, link=iface)
    ran = plat.run_client(["true"], 10, None, None, link=iface)
    done = plat.finish_server(started.server, ServerEnd(False, None, 1, 0.0, "KILL"),
                              link=iface)
    for counters in (started.link, ran.link0, ran.link1, done.link):
        assert counters is not None
        assert counters.tx_bytes is not None and counters.tx_bytes >= tx0
        assert counters.carrier_changes is not None
    assert ran.result.stderr == ""            # the readings are not the client's output
    assert plat.link_counters(iface) is not None
    assert plat.link_counters("nicbench-no-such-if") is None
    assert plat.run_client(["true"], 10, None, None).link0 is None   # not asked for


def test_a_dead_link_whose_carrier_went_down_says_the_link_went_down(tmp_path):
    """A link set down early in a trial leaves a transfer of almost nothing, which the
    judge fails as a dead link; the carrier counters say why, and the reason is theirs."""
    from nicbench.execution.conformance import LinkWindow, held_to_plan
    from nicbench.execution.judge import Judgement
    from nicbench.platforms.base import LinkCounters
    from nicbench.tools.base import ParsedRun

    parsed = ParsedRun(tool="iperf3", protocol="tcp", throughput_bps=438_982, duration_s=2.0)
    before = LinkCounters(carrier_changes=4, carrier_down=2, up=True, tx_bytes=0, rx_bytes=0)
    after = LinkCounters(carrier_changes=6, carrier_down=3, up=True, tx_bytes=9, rx_bytes=9)
    dead = Judgement(parsed, Status.OK).failing(
        Failure.DEAD_LINK, "transfer moved almost nothing (438982 bit/s)")
    j = held_to_plan(dead, 2.0, [LinkWindow("hb", "t0", before, before),
                                 LinkWindow("ha", "t0", before, after)])
    assert (j.failure, j.reason) == (
        Failure.LINK_DOWN, "link down during the trial (ha t0: carrier lost 1 time)")
    # without a carrier change the dead link stays a dead link; other failures are kept
    assert held_to_plan(dead, 2.0, [LinkWindow("ha", "t0", before, before)]) == dead
    timeout = dead.failing(Failure.TIMEOUT, "client did not finish")
    assert held_to_plan(timeout, 2.0, [LinkWindow("ha", "t0", before, after)]) == timeout
    # an ok trial whose carrier went down fails; the record takes it in one place
    (rec,) = run(tmp_path, fake(lambda call: Answer(client=IPERF3_TCP)))
    assert rec.status is Status.OK
    apply(rec, held_to_plan(Judgement(parsed, Status.OK), 2.0,
                            [LinkWindow("ha", "t0", before, after)]))
    assert rec.failure is Failure.LINK_DOWN and rec.throughput_bps == 438_982


# -- a slow UDP offer is no dead link ------------------------------------------------------
def udp_record(offered_bps: int | None) -> TrialRecord:
    return TrialRecord(run_id="r", trial_id="t", pair="fe", adapter="a", adapter_label="A",
                       tool="iperf2", test="smallpkt", protocol="udp", point="mtu1500",
                       mtu=1500, repetition=1, kind=Kind.UDP_SEARCH, status=Status.FAILED,
                       offered_bps=offered_bps)


@pytest.mark.parametrize("offered_bps, ok", [(214_416, True), (None, False)])
def test_a_udp_trial_offered_little_is_judged_against_its_offer(offered_bps, ok):
    """A small-packet search offers 1 % of Fast Ethernet's line rate at 64-byte frames
    (214 kbit/s): all of it arriving is a measurement, not a dead link (the lab's real
    output); the same rate with no offer known stays below the absolute floor."""
    client = (CAPTURES / "iperf2_lab_fe_udp_l18_b214k_client_enhanced.txt").read_text()
    server = (CAPTURES / "iperf2_lab_fe_udp_l18_b214k_server_enhanced.txt").read_text()
    rec = udp_record(offered_bps)
    apply(rec, judge(TOOLS["iperf2"].driver, Result("hb", "iperf -c", client, "", 0, 1.0),
                     client, server, None, rec.protocol, rec.offered_bps))
    assert rec.throughput_bps == 214_000
    assert (rec.status is Status.OK) is ok
    if not ok:
        assert rec.failure is Failure.DEAD_LINK
    # nothing arriving of such an offer is still a dead link
    assert dead_link_bps(214_416) > 0 and dead_link_bps(1e9) == DEAD_LINK_BPS
