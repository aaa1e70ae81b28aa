"""Pairs measured at once (``Runner(parallel=N)``) on fake hosts: host-disjoint pairs run
together and never two that share a host, each point restores only its own hosts, one
pair failing or losing a host leaves the others alone, a stop lets every running pair end
its trial and restore, and a resume finishes the run without a duplicate.

Where pairs running together is the point, the first tool run of each of them waits at a
``threading.Barrier`` while it counts as running, so they do run at once whatever the
machine's load (``HANG_S`` only turns a runner that never runs them together into a
failure instead of a hang). Every call checks the state of its own hosts at that moment:
another pair's restore putting this pair's MTU back mid-point would show as a trial at
the wrong MTU; each call also takes a little time (``SLOW_S``), which only widens the
window in which two pairs wrongly on one host would be seen: no assertion needs it.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from nicbench.config.inventory import Inventory
from nicbench.config.loader import load_profile
from nicbench.tools.registry import CATALOG
from nicbench.errors import CommandFailed, ConnectError
from nicbench.execution import events as ev
from nicbench.execution.runner import Runner
from nicbench.platforms.fake import Answer, FakeHosts, FakeInterface, ToolCall
from nicbench.remote.result import make_result
from nicbench.results.records import Failure
from nicbench.results.rundir import RunDir

CAPTURES = Path(__file__).resolve().parents[1] / "golden" / "captures"
IPERF3_TCP = (CAPTURES / "iperf3_lab_tcp_P2_client.json").read_text()
SLOW_S = 0.02
HANG_S = 30.0

PROFILE = """\
    name: t
    source: nicbench unit test
    repetitions: 3
    mtu: [1500, 9000]
    tests:
      - {name: tcp, tool: iperf3, params: {duration_s: 1}}
    """


def inventory(pairs: dict[str, tuple[str, str]]) -> Inventory:
    """Pairs by name -> (receiver host, sender host); a test link 198.18.<k>.0/24 each."""
    names = sorted({h for ab in pairs.values() for h in ab})
    return Inventory.model_validate({
        "hosts": [{"name": n, "address": f"198.19.{i}.2",
                   "ssh": {"known_hosts": "k", "reconnect_s": 0}}
                  for i, n in enumerate(names, start=1)],
        "adapters": [{"id": f"card-{p}", "vendor": "v", "model": p, "driver": {"name": "d"}}
                     for p in pairs],
        "pairs": [{"name": p, "adapter": f"card-{p}",
                   "a": {"host": a, "interface": f"t{k}", "address": f"198.18.{k}.1"},
                   "b": {"host": b, "interface": f"t{k}", "address": f"198.18.{k}.2"}}
                  for k, (p, (a, b)) in enumerate(pairs.items())]})


FOUR = {"p1": ("h1", "h2"), "p2": ("h3", "h4"), "p3": ("h5", "h6"), "p4": ("h7", "h8")}


class Watch:
    """Answers every tool run after SLOW_S, noting which hosts were busy at once and the
    sending interface's MTU each client saw. The first run of each pair in ``meet``
    waits for the others' at a barrier, while it counts as running."""

    def __init__(self, inv: Inventory, answer=lambda call: Answer(client=IPERF3_TCP),
                 meet: tuple[str, ...] = ()):
        self.inv = inv
        self.answer = answer
        self.meet = set(meet)
        self.barrier = threading.Barrier(max(1, len(meet)))
        self.lock = threading.Lock()
        self.active: dict[str, str] = {}         # host -> pair running a client there
        self.most = 0
        self.clash: list[str] = []
        self.seen_mtus: list[tuple[str, int]] = []

    def pair_of(self, call: ToolCall) -> str:
        return next(p.name for p in self.inv.pairs
                    if p.b.host == call.host and p.a.address in call.argv)

    def __call__(self, call: ToolCall) -> Answer:
        pair = self.pair_of(call)
        with self.lock:
            if call.host in self.active:
                self.clash.append(f"{pair} and {self.active[call.host]} on {call.host}")
            self.active[call.host] = pair
            self.most = max(self.most, len(self.active))
            iface = self.inv.pair(pair).b.interface
            self.seen_mtus.append((pair, call.mtu[iface]))
            first = pair in self.meet
            self.meet.discard(pair)
        if first:
            self.barrier.wait(HANG_S)
        time.sleep(SLOW_S)
        try:
            return self.answer(call)
        finally:
            with self.lock:
                del self.active[call.host]


def fakes(inv: Inventory, answer) -> FakeHosts:
    hosts = FakeHosts(answer)
    for k, pair in enumerate(inv.pairs):
        for side, host in (("a", pair.a.host), ("b", pair.b.host)):
            iface = FakeInterface(addresses=(f"198.18.{k}.{1 if side == 'a' else 2}",))
            if host in hosts.platforms:
                hosts.platforms[host].interfaces[f"t{k}"] = iface
            else:
                hosts.add(host, {f"t{k}": iface})
    return hosts


def mtus(hosts: FakeHosts) -> set[int]:
    return {i.mtu for p in hosts.platforms.values() for i in p.interfaces.values()}


def profile(tmp_path, text: str = PROFILE):
    path = tmp_path / "p.yaml"
    import textwrap
    path.write_text(textwrap.dedent(text))
    return load_profile(path, CATALOG)


def test_four_host_disjoint_pairs_run_at_once_each_at_its_own_mtu(tmp_path):
    inv = inventory(FOUR)
    watch = Watch(inv, meet=tuple(FOUR))
    hosts = fakes(inv, watch)
    seen: list[ev.Event] = []
    run = Runner(profile(tmp_path), inv, tmp_path / "out", hosts=hosts, parallel=4,
                 listener=seen.append)
    run.run()
    assert watch.clash == []
    assert watch.most == 4
    # a trial of mtu9000 ran at 9000: no other pair's restore reached this pair's hosts
    recs = list(RunDir(tmp_path / "out").records())
    assert len(recs) == 4 * 2 * 3 and all(r.ok for r in recs)
    assert sorted(watch.seen_mtus) == sorted(
        (p, m) for p in FOUR for m in (1500, 9000) for _ in range(3))
    assert [(r.pair, r.point, r.status) for r in sorted(run.summary, key=lambda r: r.pair)] \
        == [(p, pt, "ok") for p in FOUR for pt in ("mtu1500", "mtu9000")]
    assert mtus(hosts) == {1500}
    # the listener saw one event at a time, every trial counted once
    dones = [e.done for e in seen if isinstance(e, ev.TrialDone)]
    assert sorted(dones) == list(range(1, 25))
    assert {e.pair for e in seen if isinstance(e, ev.PairStarted)} == set(FOUR)
    assert [e.state for e in seen if isinstance(e, ev.PairEnded)] == ["done"] * 4


def test_pairs_that_share_a_host_take_turns(tmp_path):
    inv = inventory({"p1": ("h1", "h2"), "p2": ("h1", "h2"), "p3": ("h3", "h2"),
                     "p4": ("h4", "h5")})
    watch = Watch(inv, meet=("p1", "p4"))     # p1 first of those sharing h1/h2, p4 beside
    hosts = fakes(inv, watch)
    Runner(profile(tmp_path), inv, tmp_path / "out", hosts=hosts, parallel=4).run()
    assert watch.clash == []
    assert watch.most == 2            # p4 beside one of the others, never more
    assert mtus(hosts) == {1500}


def test_a_lost_host_ends_its_pair_and_the_others_complete(tmp_path):
    inv = inventory(FOUR)

    def p2_dies_at_jumbo(call: ToolCall) -> Answer:
        if call.host == "h4" and 9000 in call.mtu.values():
            hosts.platforms["h4"].lost = True
            raise ConnectError("h4", "the connection was lost")
        return Answer(client=IPERF3_TCP)

    watch = Watch(inv, p2_dies_at_jumbo)
    hosts = fakes(inv, watch)
    run = Runner(profile(tmp_path), inv, tmp_path / "out", hosts=hosts, parallel=4)
    run.run()
    rows = {(r.pair, r.point): (r.status, r.failure) for r in run.summary}
    assert rows[("p2", "mtu1500")] == ("ok", None)
    assert rows[("p2", "mtu9000")][1] is Failure.HOST_LOST
    assert all(rows[(p, pt)] == ("ok", None) for p in ("p1", "p3", "p4")
               for pt in ("mtu1500", "mtu9000"))
    assert set(run.lost) == {"h4"} and {p.host for p in run.problems} == {"h4"}
    assert {i.mtu for n, p in hosts.platforms.items() if n != "h4"
            for i in p.interfaces.values()} == {1500}


def test_a_pair_whose_host_answers_oddly_fails_alone(tmp_path):
    inv = inventory(FOUR)
    hosts = fakes(inv, Watch(inv))
    real = hosts.platforms["h5"].get_mtu

    def broken(iface: str) -> int:
        if hosts.platforms["h5"].interfaces[iface].mtu == 1500 and broken.calls > 0:
            raise CommandFailed(make_result("h5", ["ip", "link"], stderr="ip: oops",
                                            exit_status=1))
        broken.calls += 1
        return real(iface)
    broken.calls = 0
    hosts.platforms["h5"].get_mtu = broken
    run = Runner(profile(tmp_path), inv, tmp_path / "out", hosts=hosts, parallel=4)
    run.run()
    assert set(run.unmeasured) == {"p3"} and "ip: oops" in run.unmeasured["p3"]
    rows = {(r.pair, r.point): r.status for r in run.summary}
    assert {rows[(p, pt)] for p in ("p1", "p2", "p4") for pt in ("mtu1500", "mtu9000")} \
        == {"ok"}
    assert rows[("p3", "mtu9000")] == "skipped"


def test_a_stop_lets_running_pairs_end_their_trial_restore_and_resume_finishes(tmp_path):
    inv = inventory(FOUR)
    out = tmp_path / "out"
    hosts = fakes(inv, Watch(inv))
    run: Runner

    def stop_after_five(event: ev.Event) -> None:
        if isinstance(event, ev.TrialDone) and event.done == 5:
            run.stop.set()

    run = Runner(profile(tmp_path), inv, out, hosts=hosts, parallel=4,
                 listener=stop_after_five)
    with pytest.raises(KeyboardInterrupt):
        run.run()
    assert mtus(hosts) == {1500}
    first = [r.key for r in RunDir(out).records()]
    assert 5 <= len(first) < 24
    assert (out / "summary.csv").exists()

    hosts2 = fakes(inv, Watch(inv))
    Runner(profile(tmp_path), inv, out, hosts=hosts2, parallel=4, resume=True).run()
    keys = [r.key for r in RunDir(out).records()]
    assert len(keys) == len(set(keys)) == 24
    assert keys[:len(first)] == first
    assert sum(1 for e in hosts2.log if e[1] == "run") == 24 - len(first)
    assert mtus(hosts2) == {1500}


def test_a_restore_of_some_hosts_leaves_the_others_settings_and_tools_alone(tmp_path):
    from nicbench.platforms.tuning import TuningSession

    inv = inventory({"p1": ("h1", "h2"), "p2": ("h3", "h4")})
    hosts = fakes(inv, Watch(inv))
    journal = TuningSession(tmp_path / "tuning.json")
    for name, iface in (("h1", "t0"), ("h3", "t1")):
        journal.set_mtu(hosts.platforms[name], iface, 9000)
        journal.expect(hosts.platforms[name], f"/fake/{name}.d", "server")
    journal.restore(hosts={"h1"}, only=lambda change: True)
    assert hosts.platforms["h1"].interfaces["t0"].mtu == 1500
    assert hosts.platforms["h3"].interfaces["t1"].mtu == 9000       # another pair's point
    assert [x.host for x in journal.leftovers] == ["h3"]            # its server still runs
    assert not [e for e in hosts.log if e[:2] == ("h3", "reap")]
    journal.restore()
    assert hosts.platforms["h3"].interfaces["t1"].mtu == 1500 and journal.leftovers == []
