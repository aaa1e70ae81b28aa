"""Mixed pairs: a Windows host against a Linux one plans and runs. The scripted Windows
host answers a Linux peer's pings as a real one would (by the MTU the peer's interface
has), NTttcp gets -ns on Windows and -N on Linux (the ntttcp-for-linux interop rule),
and a point a plan skips says why."""

from __future__ import annotations

import textwrap

import pytest

from nicbench.config.inventory import Inventory
from nicbench.config.loader import load_profile
from nicbench.errors import TuningError
from nicbench.execution.plan import make_plan, render
from nicbench.execution.runner import Runner
from nicbench.platforms.fake import Answer, FakeHosts, FakeInterface, ToolCall
from nicbench.platforms.fake_windows import (FakeAdapter, FakeWindowsHost, FakeWindowsPair,
                                             ToolRun)
from nicbench.results.records import Status
from nicbench.tools import iperf2
from nicbench.tools.registry import CATALOG

from test_windows_run import IPERF_CLIENT, IPERF_SERVER

PROFILE = """\
    platform: any
    repetitions: 2
    points:
      - {mtu: 1500}
      - {mtu: 9000}
    tests:
      - name: ntttcp
        tool: ntttcp
        params: {threads: 1, duration_s: 5}
      - name: iperf-tcp
        tool: iperf2
        params: {duration_s: 5}
    """


def inventory(windows_first: bool = True) -> Inventory:
    sides = [{"host": "wa", "interface": "Ethernet 2", "address": "198.18.0.1"},
             {"host": "lb", "interface": "eth1", "address": "198.18.0.2"}]
    if not windows_first:
        sides.reverse()
    return Inventory.model_validate({
        "hosts": [{"name": "wa", "address": "198.19.1.2", "os": "windows",
                   "ssh": {"user": "bench", "known_hosts": "k"}},
                  {"name": "lb", "address": "198.19.2.2", "os": "linux",
                   "ssh": {"user": "bench", "known_hosts": "k"}}],
        "adapters": [{"id": "i350", "vendor": "Intel", "model": "I350-T2",
                      "driver": {"name": "e1r"}}],
        "pairs": [{"name": "mixed", "adapter": "i350", "a": sides[0], "b": sides[1]}]})


def profile(tmp_path, text: str = PROFILE):
    path = tmp_path / "m.yaml"
    path.write_text("name: m\nsource: nicbench unit test\n" + textwrap.dedent(text))
    return load_profile(path, CATALOG)


# -- the plan ----------------------------------------------------------------------------------
@pytest.mark.parametrize("windows_first", [True, False])
def test_a_mixed_pairs_plan_lists_its_trial_commands(tmp_path, windows_first):
    plan = make_plan(profile(tmp_path), inventory(windows_first))
    assert plan.skipped == []
    assert plan.trials == 8 and len(plan.trials_planned) == 8
    windows_end = "server" if windows_first else "client"     # a is the receiver
    linux_end = "client" if windows_first else "server"
    for t in plan.trials_planned:
        if t.test == "ntttcp":     # no sync on both ends, or the two never meet
            assert " -ns" in getattr(t, windows_end) and " -N" in getattr(t, linux_end)
    # the Windows end's path-MTU proof crossed to the Linux peer at 9000, from its address
    wa = [s.command for s in plan.sent if s.host == "wa"]
    assert any("'-S' '198.18.0.1'" in c and "'-f' '-l' '8972' '198.18.0.2'" in c for c in wa)


def test_a_point_a_plan_skips_says_why(tmp_path):
    text = PROFILE.replace("      - {mtu: 9000}\n", "      - {mtu: 9000}\n      - {mtu: 16200}\n")
    plan = make_plan(profile(tmp_path, text), inventory())
    assert plan.skipped == [("mixed", "mtu16200", "wa: jumbo frame of Ethernet 2 16214: the "
                                                   "driver takes *JumboPacket from 1514 to 16128")]
    lines = render(plan)
    assert "skipped: mixed mtu16200: wa: jumbo frame of Ethernet 2 16214: the driver takes " \
           "*JumboPacket from 1514 to 16128" in lines[:5]


# -- a run ------------------------------------------------------------------------------------
class MixedHosts:
    """The scripted Windows host wa and an in-memory Linux host lb, for a Runner: each
    answers the other's pings by the MTU its interface has, and each end's server prints
    what the other end's client run says it printed."""

    def __init__(self, options=None):
        self.linux = FakeHosts(self.linux_answer)
        self.lb = self.linux.add("lb", {"eth1": FakeInterface(mtu=1500, max_mtu=9000,
                                                             addresses=("198.18.0.2",))})
        self.windows = FakeWindowsPair(outside=self.linux.peer_mtu)
        self.wa = self.windows.add(FakeWindowsHost(
            "wa", {"Ethernet 2": FakeAdapter(("198.18.0.1",))}, tool_run=self.windows_run))
        self.closed = 0

    def platform(self, name: str):
        return self.windows.platform(name) if name == "wa" else self.linux.platform(name)

    def close(self) -> None:
        self.closed += 1

    def linux_answer(self, call: ToolCall) -> Answer:
        # lb's iperf client talks to wa's iperf.exe server: it prints the server report
        server = next(p for p in reversed(self.wa.procs.values()) if p.alive and p.rc is None)
        server.out = IPERF_SERVER.encode()
        return Answer(client=IPERF_CLIENT)

    def windows_run(self, host: FakeWindowsHost, argv: list[str]) -> ToolRun:
        if argv[1:] == ["-v"]:                          # the version banner
            return ToolRun(client="iperf version 2.0.13 (21 Jan 2019) pthreads")
        self.lb.servers[-1].output = IPERF_SERVER       # lb's iperf server reports
        for iface in self.lb.interfaces.values():       # what it received crossed eth1
            iface.carried(Answer(client=IPERF_CLIENT))
        return ToolRun(client=IPERF_CLIENT)


@pytest.mark.parametrize("windows_first", [True, False])
def test_a_mixed_pair_runs_and_puts_both_hosts_back(tmp_path, windows_first):
    text = PROFILE.replace("""      - name: ntttcp
        tool: ntttcp
        params: {threads: 1, duration_s: 5}
""", "")
    hosts = MixedHosts()
    run = Runner(profile(tmp_path, text), inventory(windows_first), tmp_path / "out",
                 hosts=hosts)
    recs = list(run.run().records())
    ok = [r for r in recs if r.status is Status.OK]
    assert {r.point for r in ok} == {"mtu1500", "mtu9000"} and len(ok) == 4
    assert {r.throughput_bps for r in ok} == {iperf2.parse(IPERF_SERVER).throughput_bps}
    assert run.problems == [] and run.lost == {}
    # at 9000: Windows' jumbo frame 9014, Linux's MTU 9000, then both put back
    sets = [c.params["Value"] for c in hosts.windows.connections["wa"].calls
            if c.label == "set *JumboPacket"]
    assert sets == ["9014", "1514"]
    assert ("lb", "mtu", "eth1", 9000) in hosts.linux.log
    assert hosts.wa.adapters["Ethernet 2"].value == "1514"
    assert hosts.lb.interfaces["eth1"].mtu == 1500
    assert hosts.wa.firewall == {} and not any(p.alive for p in hosts.wa.procs.values())


def test_a_linux_peer_that_does_not_carry_the_mtu_fails_the_windows_path_check(tmp_path):
    hosts = MixedHosts()
    plat = hosts.platform("wa")
    plat.adapter("Ethernet 2")
    plat.verify_path_mtu("Ethernet 2", "198.18.0.2", 1500)      # both at 1500
    hosts.wa.adapters["Ethernet 2"].value = "9014"
    with pytest.raises(TuningError, match="no reply to a 9000-byte packet with DF set "
                                        r"\(Packet needs to be fragmented but DF set\.\)"):
        plat.verify_path_mtu("Ethernet 2", "198.18.0.2", 9000)   # lb still at 1500
