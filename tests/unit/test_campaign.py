"""Campaigns on fake hosts (no root): the file's validation, runs in order with their
pairs in parallel, campaign.json, a stop and a resume without duplicates, the morning
summary and index, on_finish, the split across controllers (--shard), and ``status``
read while the campaign runs and after."""

from __future__ import annotations

import json
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from nicbench.config.inventory import Inventory
from nicbench.config.loader import load_campaign
from nicbench.tools.registry import CATALOG
from nicbench.errors import ConfigError
from nicbench.execution import events as ev
from nicbench.execution.campaign import CampaignRunner, parse_shard, shard_pairs
from nicbench.execution.status import status
from nicbench.platforms.fake import Answer, FakeHosts, FakeInterface, ToolCall
from nicbench.results.campaign import CampaignState, run_dirs
from nicbench.results.rundir import RunDir
from nicbench.tools.registry import TOOLS

CAPTURES = Path(__file__).resolve().parents[1] / "golden" / "captures"
IPERF3_TCP = (CAPTURES / "iperf3_lab_tcp_P2_client.json").read_text()

PAIRS = {"p1": ("h1", "h2"), "p2": ("h3", "h4"), "p3": ("h1", "h2")}

PROFILE_A = """\
    name: pa
    source: nicbench unit test
    repetitions: 2
    mtu: [1500, 9000]
    tests:
      - {name: tcp, tool: iperf3, params: {duration_s: 1}}
    """
PROFILE_B = """\
    name: pb
    source: nicbench unit test
    repetitions: 1
    mtu: [1500]
    tests:
      - {name: tcp2, tool: iperf3, params: {duration_s: 1}}
    """


def inventory(pairs=PAIRS) -> Inventory:
    names = sorted({h for ab in pairs.values() for h in ab})
    return Inventory.model_validate({
        "hosts": [{"name": n, "address": f"198.19.{i}.2",
                   "ssh": {"known_hosts": "k", "reconnect_s": 0}}
                  for i, n in enumerate(names, start=1)],
        "adapters": [{"id": f"card-{p}", "vendor": "v", "model": f"Card {p}",
                      "driver": {"name": "d"}} for p in pairs],
        "pairs": [{"name": p, "adapter": f"card-{p}",
                   "a": {"host": a, "interface": f"t{k}", "address": f"198.18.{k}.1"},
                   "b": {"host": b, "interface": f"t{k}", "address": f"198.18.{k}.2"}}
                  for k, (p, (a, b)) in enumerate(pairs.items())]})


def fakes(inv: Inventory, answer, max_mtu: dict[str, int] | None = None):
    def make() -> FakeHosts:
        hosts = FakeHosts(answer)
        for k, pair in enumerate(inv.pairs):
            for side, host in (("a", pair.a.host), ("b", pair.b.host)):
                iface = FakeInterface(addresses=(f"198.18.{k}.{1 if side == 'a' else 2}",),
                                      max_mtu=(max_mtu or {}).get(pair.name, 65535))
                if host not in hosts.platforms:
                    hosts.add(host, {})
                hosts.platforms[host].interfaces[f"t{k}"] = iface
        made.append(hosts)
        return hosts
    made: list[FakeHosts] = []
    make.made = made          # type: ignore[attr-defined]
    return make


def ok(call: ToolCall) -> Answer:
    return Answer(client=IPERF3_TCP)


def write(tmp_path: Path, text: str, name: str = "night.yaml") -> Path:
    for fname, body in (("pa.yaml", PROFILE_A), ("pb.yaml", PROFILE_B)):
        (tmp_path / fname).write_text(textwrap.dedent(body))
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


NIGHT = """\
    format_version: 1
    name: night
    parallel: 2
    report: false
    runs:
      - profile: pa.yaml
      - profile: pb.yaml
        pairs: [p2, p1]
    """


def campaign(tmp_path, text=NIGHT, inv=None, answer=ok, **kw):
    inv = inv or inventory()
    loaded = load_campaign(write(tmp_path, text), CATALOG)
    assert loaded.check_inventory(inv) == []
    hosts = fakes(inv, answer, kw.pop("max_mtu", None))
    seen: list = []
    runner = CampaignRunner(loaded, inv, tmp_path / "out", hosts=hosts,
                            listener=kw.pop("listener", seen.append), **kw)
    return runner, hosts, seen


# -- the file -------------------------------------------------------------------------------
def errors_of(tmp_path, text: str, inv: Inventory | None = None) -> list[str]:
    try:
        loaded = load_campaign(write(tmp_path, text), CATALOG)
    except ConfigError as exc:
        return exc.lines()
    return [e.render() for e in loaded.check_inventory(inv or inventory())]


def test_a_campaign_file_is_checked_strictly_with_file_and_line(tmp_path):
    errs = errors_of(tmp_path, """\
        name: night
        paralel: 2
        order: random
        on_finish: mail -s night root < summary
        runs:
          - profile: pa.yaml
        """)
    assert sorted(e.split("night.yaml", 1)[1] for e in errs) == [
        ":2: paralel: unknown key 'paralel' (allowed: format_version, name, description, inventory, "
        "parallel, order, seed, report, on_finish, on_finish_timeout_s, runs)",
        ":3: order: 'random' is not one of 'listed' or 'shuffle'",
        ":4: on_finish: write the command as a list of words, e.g. [mail, -s, nicbench, "
        "\"{summary}\"]: it is run without a shell, so nothing in it is ever read by one"]
    # once the keys are right, the runs: every problem at once
    errs = errors_of(tmp_path, """\
        name: night
        runs:
          - profile: nosuch
          - profile: pa.yaml
            pairs: [p1, p1]
          - profile: pa.yaml
        """)
    assert sorted(e.split("night.yaml", 1)[1][:59] for e in errs) == [
        ":3: runs[0].profile: profile 'nosuch' not found in profiles",
        ":5: runs[1].pairs: pair 'p1' listed twice",
        ":6: runs[2].profile: a second run named 'pa' (also runs[1])"]
    # a YAML boolean is no number: 'yes' was 1, and on_finish killed after one second
    errs = errors_of(tmp_path, """\
        name: night
        parallel: yes
        seed: on
        on_finish_timeout_s: yes
        runs:
          - profile: pa.yaml
            repeat: true
        """)
    boolean = "is a YAML boolean (yes/no/on/off/true/false), not a number"
    assert sorted(e.split("night.yaml", 1)[1] for e in errs) == [
        f":2: parallel: True {boolean}", f":3: seed: True {boolean}",
        f":4: on_finish_timeout_s: True {boolean}", f":7: runs[0].repeat: True {boolean}"]


def test_pairs_and_platform_are_checked_against_the_inventory(tmp_path):
    (tmp_path / "win.yaml").write_text(textwrap.dedent(PROFILE_B).replace(
        "name: pb", "name: win\nplatform: windows"))
    errs = errors_of(tmp_path, """\
        name: night
        runs:
          - profile: pa.yaml
            pairs: [p1, p9]
          - profile: win.yaml
        """)
    assert [e.split("night.yaml", 1)[1][:54] for e in errs] == [
        ":4: runs[0].pairs[1]: unknown pair 'p9' (pairs in the ",
        ":5: runs[1].profile: profile win is the windows method"]


def test_on_finish_placeholders_and_a_profiles_own_errors(tmp_path):
    errs = errors_of(tmp_path, """\
        name: night
        on_finish: [mail, "{sumary}"]
        runs:
          - profile: pa.yaml
        """)
    assert any("night.yaml:2: on_finish: {sumary} in '{sumary}' is not one of {summary}"
               in e for e in errs)
    (tmp_path / "bad.yaml").write_text("name: bad\nsource: x\nmtu: [1500]\ntests: []\n")
    errs = errors_of(tmp_path, """\
        name: night
        runs:
          - profile: bad.yaml
        """)
    assert len(errs) == 1 and "bad.yaml:4: tests:" in errs[0]    # points into the profile


def test_names_repeat_and_shuffle_seed(tmp_path):
    loaded = load_campaign(write(tmp_path, """\
        name: night
        runs:
          - {profile: pa.yaml, repeat: 2}
          - {profile: pa.yaml, name: again}
        """), CATALOG)
    assert [r.name for r in loaded.runs] == ["pa.1", "pa.2", "again"]
    assert "a seed is for order: shuffle" in " ".join(errors_of(tmp_path, """\
        name: night
        seed: 3
        runs: [{profile: pa.yaml}]
        """))


# -- running --------------------------------------------------------------------------------
def test_runs_in_order_each_in_its_own_directory_pairs_in_parallel(tmp_path):
    runner, hosts, seen = campaign(tmp_path)
    assert runner.run() == 0
    out = tmp_path / "out"
    state = CampaignState.read(out)
    assert [(r.name, r.state, r.pairs) for r in state.runs] == [
        ("pa", "done", ["p1", "p2", "p3"]), ("pb", "done", ["p2", "p1"])]
    assert state.state == "finished" and state.exit_status == 0
    assert state.text == textwrap.dedent(NIGHT)
    assert len(list(RunDir(out / "pa").records())) == 3 * 2 * 2
    assert len(list(RunDir(out / "pb").records())) == 2
    # campaign-wide counts on every trial line, the last one complete
    dones = [e for e in seen if isinstance(e, ev.TrialDone)]
    assert [e.done for e in dones] == list(range(1, 15)) and {e.total for e in dones} == {14}
    assert all(i.mtu == 1500 for h in hosts.made for p in h.platforms.values()
               for i in p.interfaces.values())
    assert run_dirs(out) == [out / "pa", out / "pb"]
    beat = json.loads((out / "heartbeat.json").read_text())
    assert beat["state"] == "finished" and beat["total"] == 14


def test_the_summary_says_what_was_not_measured_and_why(tmp_path):
    def stalls(call: ToolCall) -> Answer:
        return Answer(timeout=True) if "198.18.1.1" in call.argv and \
            9000 in call.mtu.values() else ok(call)

    runner, _, _ = campaign(tmp_path, answer=stalls, max_mtu={"p3": 1500})
    assert runner.run() == 1          # p2 stalled at 9000: not everything measured
    out = tmp_path / "out"
    cells = {(c.pair, c.run): c for c in runner.morning.cells}
    assert cells[("p1", "pa")].status == "ok"
    assert (cells[("p3", "pa")].status, cells[("p3", "pa")].refused) == ("ok", 1)
    assert cells[("p2", "pa")].status == "incomplete"
    assert any(r.startswith(("given up at mtu9000 (tcp)", "timed out at mtu9000"))
               for r in cells[("p2", "pa")].reasons), cells[("p2", "pa")].reasons
    md = (out / "summary.md").read_text()
    # the selected value as the capture's own figure, in Mbit/s as the summary writes it
    mbit = TOOLS["iperf3"].driver.interpret(IPERF3_TCP, "", None, "tcp").throughput_bps / 1e6
    assert f"| Card p3 (d) | p3 | {mbit:.1f} mtu1500 |  |" in md
    assert "p3 pa: refused at mtu9000 (tcp)" in md
    assert len(md.splitlines()) < 40
    page = (out / "index.html").read_text()
    assert str(tmp_path) not in page and str(tmp_path) not in md   # relative paths only
    assert 'href="pa/summary.csv"' in page


def test_a_stop_restores_writes_the_summary_and_resume_finishes_without_duplicates(tmp_path):
    stop = threading.Event()

    def stop_at_seventh(event) -> None:
        if isinstance(event, ev.TrialDone) and event.done == 7:
            stop.set()

    runner, hosts, _ = campaign(tmp_path, listener=stop_at_seventh, stop=stop)
    with pytest.raises(KeyboardInterrupt):
        runner.run()
    out = tmp_path / "out"
    state = CampaignState.read(out)
    assert state.state == "interrupted" and state.exit_status == 130
    assert [r.state for r in state.runs] == ["interrupted", "pending"]
    assert (out / "summary.md").exists() and "interrupted" in (out / "summary.md").read_text()
    assert all(i.mtu == 1500 for p in hosts.made[0].platforms.values()
               for i in p.interfaces.values())
    first = [r.key for r in RunDir(out / "pa").records()]

    loaded = load_campaign(tmp_path / "night.yaml", CATALOG)
    inv = inventory()
    again = CampaignRunner(loaded, inv, out, resume=True, hosts=fakes(inv, ok))
    assert again.run() == 0
    keys = [r.key for r in RunDir(out / "pa").records()]
    assert keys[:len(first)] == first and len(keys) == len(set(keys)) == 12
    state = CampaignState.read(out)
    assert [r.state for r in state.runs] == ["done", "done"] and len(state.resumed_at) == 1


def test_shuffle_records_its_seed_and_a_resume_keeps_the_order(tmp_path):
    runner, _, _ = campaign(tmp_path, NIGHT.replace("parallel: 2", "order: shuffle"),
                            stop=threading.Event())
    runner.stop.set()                       # stopped before the first run
    with pytest.raises(KeyboardInterrupt):
        runner.run()
    state = CampaignState.read(tmp_path / "out")
    assert state.seed is not None
    order = [(r.name, r.pairs) for r in state.runs]
    loaded = load_campaign(tmp_path / "night.yaml", CATALOG)
    inv = inventory()
    CampaignRunner(loaded, inv, tmp_path / "out", resume=True, hosts=fakes(inv, ok)).run()
    assert [(r.name, r.pairs) for r in CampaignState.read(tmp_path / "out").runs] == order


def test_on_finish_runs_without_a_shell_and_its_outcome_is_kept(tmp_path):
    copy = tmp_path / "mailed.md"
    text = NIGHT.rstrip(" ") + textwrap.indent(textwrap.dedent(f"""\
        on_finish: [{sys.executable}, -c, "import shutil, sys; shutil.copy(sys.argv[1], sys.argv[2]); print('sent;', sys.argv[3])", "{{summary}}", {copy}, "{{status}}"]
        """), "    ")
    runner, _, _seen = campaign(tmp_path, text)
    assert runner.run() == 0
    state = CampaignState.read(tmp_path / "out")
    assert copy.read_text() == (tmp_path / "out" / "summary.md").read_text()
    assert state.on_finish.exit_status == 0 and state.on_finish.output_tail == "sent; 0\n"
    assert state.on_finish.argv[3] == "{summary}"        # as written, not expanded
    # the page, rewritten after on_finish, says how it went (summary.md was sent before)
    exe = Path(sys.executable).name
    assert f"<p>on_finish <code>{exe}</code>: exit 0</p>" in \
        (tmp_path / "out" / "index.html").read_text()
    assert "on_finish" not in (tmp_path / "out" / "summary.md").read_text()


def test_a_failing_or_hanging_on_finish_is_recorded_not_the_campaigns_status(tmp_path):
    text = NIGHT.rstrip(" ") + "    on_finish: [sh, -c, 'echo no mail server >&2; exit 3']\n"
    runner, _, seen = campaign(tmp_path, text)
    assert runner.run() == 0
    o = CampaignState.read(tmp_path / "out").on_finish
    assert (o.exit_status, o.error, o.output_tail) == (3, "exited 3", "no mail server\n")
    assert any(type(e).__name__ == "OnFinishRan" and e.error for e in seen)

    text = NIGHT.rstrip(" ") + "    on_finish: [sleep, '30']\n    on_finish_timeout_s: 0.5\n"
    (tmp_path / "x").mkdir()
    runner, _, _ = campaign(tmp_path / "x", text)
    assert runner.run() == 0
    o = CampaignState.read(tmp_path / "x" / "out").on_finish
    assert o.exit_status is None and "ran past 0.5 s" in o.error


def test_shards_keep_pairs_that_share_a_host_together():
    inv = inventory({"a1": ("h1", "h2"), "a2": ("h1", "h2"), "b": ("h3", "h4"),
                     "c": ("h5", "h6"), "d": ("h6", "h7")})
    names = [p.name for p in inv.pairs]
    shares = [shard_pairs(inv, names, k, 2) for k in (1, 2)]
    assert shares[0] | shares[1] == set(names) and not shares[0] & shares[1]
    assert {"a1", "a2"} <= shares[0] or {"a1", "a2"} <= shares[1]
    assert {"c", "d"} <= shares[0] or {"c", "d"} <= shares[1]
    assert shard_pairs(inv, names, 1, 2) == shares[0]            # the same on every controller
    assert parse_shard("2/3") == (2, 3)


def test_status_during_and_after_the_campaign(tmp_path):
    during = []
    told: dict[str, int] = {}      # pair -> its trials the listener has been told of

    def look(event) -> None:
        # Events come one at a time under the runner's lock, but a pair running beside
        # may have stored a trial it has not told yet (store, then tell): each pair's
        # count is exact for the pair telling, and at most one ahead for the others.
        if isinstance(event, ev.TrialDone):
            told[event.record.pair] = told.get(event.record.pair, 0) + 1
            if event.done == 5:
                during.append((status(tmp_path / "out"), event.record.pair, dict(told)))

    runner, _, _ = campaign(tmp_path, listener=look)
    runner.run()
    ((st, telling, counts),) = during
    assert st.kind == "campaign" and st.state == "running" and st.alive and st.planned == 14
    assert st.controller.startswith("alive (pid ")
    pa = {p.pair: p for p in st.runs[0].pairs}
    assert st.runs[0].state == "running" and pa[telling].done == counts[telling]
    for pair, p in pa.items():
        assert counts.get(pair, 0) <= p.done <= counts.get(pair, 0) + (pair != telling), \
            (pair, p.done, counts)
    assert sum(counts.values()) == 5
    assert {p.planned for p in pa.values()} == {4}
    assert any(p.state == "running" and p.current for p in pa.values())
    after = status(tmp_path / "out")
    assert after.state == "finished" and after.ok and after.done == after.planned == 14
    assert after.controller.startswith("finished at ")
    one = status(tmp_path / "out" / "pb")        # a run of the campaign: its own pairs
    assert [r.name for r in one.runs] == ["pb"] and one.done == 2


def test_a_link_in_a_run_is_not_read_by_status_or_the_morning_summary(tmp_path):
    """trials.jsonl of one run replaced by a link to a file outside (issue 19): status
    and the morning summary count nothing from it and say so, naming the file."""
    from nicbench.results.campaign import CampaignState
    from nicbench.results.morning import gather

    runner, _, _ = campaign(tmp_path)
    runner.run()
    out = tmp_path / "out"
    moved = tmp_path / "elsewhere.jsonl"
    (out / "pb" / "trials.jsonl").rename(moved)
    (out / "pb" / "trials.jsonl").symlink_to(moved)
    said = (f"{out}/pb/trials.jsonl: cannot read: a symbolic link, not followed: nicbench "
            "reads only the files a results directory holds itself")
    st = status(out)
    pb = next(r for r in st.runs if r.name == "pb")
    assert pb.unread == [said] and pb.done == 0
    assert next(r for r in st.runs if r.name == "pa").unread == []
    m = gather(out, CampaignState.read(out))
    assert f"run pb: not read: {said}" in m.problems
    assert not any(c.run == "pb" and c.status == "ok" for c in m.cells)


def test_status_tells_a_dead_controller_from_a_slow_one_and_a_finished_one():
    import os
    import socket
    import subprocess
    import time

    from nicbench.execution.heartbeat import STALE_S, judge

    gone = subprocess.Popen(["true"])
    gone.wait()
    base = {"host": socket.gethostname(), "state": "running", "beat_at": time.time()}
    assert judge({**base, "pid": gone.pid}).text.startswith("DEAD: the controller (pid ")
    me = {**base, "pid": os.getpid(),
          "pid_start": int(Path(f"/proc/{os.getpid()}/stat").read_text().rsplit(")", 1)[1]
                           .split()[19])}
    assert judge(me).alive and judge(me).text.startswith("alive (pid")
    assert "silent" in judge({**me, "beat_at": time.time() - STALE_S - 5}).text
    reused = {**me, "pid_start": me["pid_start"] - 1}   # same pid, another process
    assert judge(reused).alive is False
    far = {**base, "host": "elsewhere.example", "pid": 1}
    assert judge(far).alive
    assert judge({**far, "beat_at": time.time() - 60}).text.startswith("silent for 1m00s")
    done = judge({**me, "state": "finished", "ended_at": time.time()})
    assert done.ended and done.text.startswith("finished at ")


def test_status_of_a_plain_run_with_its_heartbeat(tmp_path):
    from nicbench.execution.heartbeat import Heartbeat
    from nicbench.execution.runner import Runner

    inv = inventory({"p1": ("h1", "h2")})
    (tmp_path / "pa.yaml").write_text(textwrap.dedent(PROFILE_A))
    from nicbench.config.loader import load_profile

    out = tmp_path / "run"
    out.mkdir()
    beat = Heartbeat(out / "heartbeat.json", kind="run", name="pa").start()
    seen = []

    def both(event) -> None:
        beat(event)
        if isinstance(event, ev.TrialDone) and event.done == 2:
            seen.append(status(out))

    Runner(load_profile(tmp_path / "pa.yaml", CATALOG), inv, out, hosts=fakes(inv, ok)(),
           listener=both).run()
    beat.close("finished")
    (st,) = seen
    assert (st.kind, st.state, st.alive, st.done, st.planned) == ("run", "running", True, 2, 4)
    assert st.runs[0].pairs[0].current.startswith("mtu1500")
    after = status(out)
    assert (after.state, after.done, after.ok) == ("finished", 4, True)


def test_the_readme_campaign_example_and_lab_overnight_load(monkeypatch, tmp_path):
    import re

    repo = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(repo)
    from nicbench.config.loader import load_inventory

    inv = load_inventory(repo / "inventory.yaml", CATALOG)
    blocks = re.findall(r"```yaml\n(.*?)```", (repo / "README.md").read_text(), re.S)
    (example,) = [b for b in blocks if "\nruns:" in b]
    (tmp_path / "overnight.yaml").write_text(example)
    loaded = load_campaign(tmp_path / "overnight.yaml", CATALOG)
    assert [r.name for r in loaded.runs] == ["lab-roundup", "netio"]
    assert "{summary}" in \
        loaded.campaign.on_finish
    assert loaded.check_inventory(inv) == []
    shipped = load_campaign(repo / "profiles" / "lab-overnight.yaml", CATALOG)
    assert [r.name for r in shipped.runs] == ["lab-roundup", "quick"]
    assert shipped.check_inventory(inv) == []


def test_validate_takes_a_campaign_file(tmp_path, capsys, monkeypatch):
    from clihelp import in_process

    repo = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(repo)
    rc, out, err = in_process(capsys, "validate", "profiles/lab-overnight.yaml")
    assert (rc, err) == (0, "")
    assert out == ("profiles/lab-overnight.yaml: ok (campaign lab-overnight: 2 runs "
                   "(lab-roundup, quick), up to 4 pairs at once)\n")
    bad = write(tmp_path, "name: night\nruns: [{profile: nosuch}]\n", "bad.yaml")
    rc, out, err = in_process(capsys, "validate", str(bad))
    assert rc == 2 and "runs[0].profile: profile 'nosuch' not found" in err
