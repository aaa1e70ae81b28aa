"""Whole Windows runs through the real Runner, WindowsPlatform and WindowsShell against
scripted Windows hosts (nicbench.platforms.fake_windows): every command is rendered to
base64, decoded back and answered; the tools answer with real captures (NTttcp.exe 5.40
console and 5.33 XML; iperf 2 text from the lab, the same text iperf.exe prints).

Covered: a jumbo size the driver does not list (skipped, the driver's values quoted),
registry values with reboots grouped per set, reboot-wait (refused probes, a changed
host key, a timeout), firewall rules for exactly the tools' ports, NTttcp.exe with a
fresh -xml per trial, Ctrl-C mid-point, and `nicbench restore` after a crash.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from nicbench.config.inventory import Inventory
from nicbench.config.loader import load_profile
from nicbench.tools.registry import CATALOG
from nicbench.errors import ConnectError, HostKeyError
from nicbench.execution import events as ev
from nicbench.execution.runner import Runner
from nicbench.platforms.base import PlatformOptions
from nicbench.platforms.fake_windows import (TEMP, FakeAdapter, FakeWindowsHost, FakeWindowsPair,
                                             ToolRun, windows_pair)
from nicbench.platforms.tuning import TuningSession, read_journal_entries
from nicbench.platforms.windows import WindowsPlatform
from nicbench.results.facts import WindowsHostFacts, WindowsInterfaceFacts
from nicbench.results.records import Failure, Kind, Status
from nicbench.tools import iperf2, ntttcp

from nicbench.remote.warm_powershell import read_frame

from windows_helpers import replay_hosts

TESTS = Path(__file__).resolve().parents[1]
NTTTCP_RECEIVER = (TESTS / "fixtures/windows/gh-ntttcp-24__ntttcp_win_v5.40_console.txt").read_text()
NTTTCP_SENDER_XML = (TESTS / "golden/samples/ntttcp_win_v5.33_pkb_ntttcp_tcp_sender.xml").read_bytes()
IPERF_CLIENT = (TESTS / "golden/captures/iperf2_lab_tcp_client_enhanced.txt").read_text()
IPERF_SERVER = (TESTS / "golden/captures/iperf2_lab_tcp_server_enhanced.txt").read_text()
B64 = re.compile(r"^[A-Za-z0-9+/=]+$")

INVENTORY = Inventory.model_validate({
    "hosts": [{"name": n, "address": f"198.19.{i}.2", "os": "windows",
               "ssh": {"user": "bench", "known_hosts": "k"}}
              for i, n in ((1, "wa"), (2, "wb"))],
    "adapters": [{"id": "i350", "vendor": "Intel", "model": "I350-T2",
                  "driver": {"name": "e1r", "version": "12.19"}}],
    "pairs": [{"name": "i350", "adapter": "i350",
               "a": {"host": "wa", "interface": "Ethernet 2", "address": "198.18.0.1"},
               "b": {"host": "wb", "interface": "Ethernet 2", "address": "198.18.0.2"}}]})

PROFILE = """\
    platform: windows
    repetitions: 2
    reboot_timeout_s: 60
    points:
      - frame_size: 1514
        registry: {TcpWindowSize: 0xffff}
        vars: {win: 64K, rb: null}
      - frame_size: 9014
        registry: {TcpWindowSize: 20971520, Tcp1323Opts: 3}
        vars: {win: 1M, rb: 20000000}
      - frame_size: 6014
        registry: {TcpWindowSize: 20971520, Tcp1323Opts: 3}
        vars: {win: 1M, rb: 20000000}
    tests:
      - name: ntttcp
        tool: ntttcp
        params: {threads: 1, cpu: 0, async_count: 4, length: 256K, count: 10000,
                 receive_buffer: $rb}
      - name: iperf-tcp
        tool: iperf2
        params: {duration_s: 10, mss: 100000, window: $win, length: 24K, print_mss: true}
    """


def tools(host: FakeWindowsHost, argv: list[str]) -> ToolRun:
    if argv[0] == "NTttcp.exe":
        return ToolRun(client="", server=NTTTCP_RECEIVER, outfile=NTTTCP_SENDER_XML)
    return ToolRun(client=IPERF_CLIENT, server=IPERF_SERVER)


def hosts(options: PlatformOptions | None = None) -> FakeWindowsPair:
    """The two scripted hosts, their platforms made with ``options`` (a profile's, as
    HostPool makes them)."""
    return windows_pair({"wa": ("Ethernet 2", "198.18.0.1"),
                         "wb": ("Ethernet 2", "198.18.0.2")}, tool_run=tools,
                        options=options)


def profile(tmp_path, text: str = PROFILE):
    path = tmp_path / "w.yaml"
    path.write_text("name: w\nsource: nicbench unit test\n" + textwrap.dedent(text))
    return load_profile(path, CATALOG)


class Stop(Exception):
    """Stands for Ctrl-C (KeyboardInterrupt would end pytest)."""


def test_a_whole_windows_run_restores_everything_with_few_reboots(tmp_path):
    pair = hosts()
    seen: list[ev.Event] = []
    run = Runner(profile(tmp_path), INVENTORY, tmp_path / "out", hosts=pair,
                 listener=seen.append)
    recs = list(run.run().records())

    # Points grouped by registry set: 1514, then 9014 and 6014 (one reboot for both).
    assert [r.point for r in recs if r.kind is Kind.REPETITION][:4] == ["frame1514"] * 4
    ok = [r for r in recs if r.status is Status.OK]
    assert {(r.point, r.test) for r in ok} == {(p, t) for p in ("frame1514", "frame9014")
                                               for t in ("ntttcp", "iperf-tcp")}
    # NTttcp: the receiver's totals (5.40 prints 0.000 per thread), the sender's XML rate.
    receiver = ntttcp.parse(NTTTCP_RECEIVER)
    sender = ntttcp.parse(NTTTCP_SENDER_XML.decode())
    nt = [r for r in ok if r.test == "ntttcp"]
    assert {r.throughput_bps for r in nt} == {receiver.throughput_bps}
    assert receiver.throughput_bps == pytest.approx(4558.548 * 2 ** 20 * 8)
    assert {r.sent_bps for r in nt} == {sender.throughput_bps}
    ip = [r for r in ok if r.test == "iperf-tcp"]
    assert {r.throughput_bps for r in ip} == {iperf2.parse(IPERF_SERVER).throughput_bps}

    # 6014: the driver lists 1514, 4088, 9014 only: a per-card result, its values quoted.
    skips = [r for r in recs if r.kind is Kind.SKIPPED]
    assert {(s.point, s.test, s.failure, s.not_run) for s in skips} == {
        ("frame6014", t, Failure.REFUSED, 2) for t in ("ntttcp", "iperf-tcp")}
    assert all("1514, 4088, 9014" in s.reason for s in skips)

    for name, h in pair.hosts.items():
        assert h.registry == {} and h.firewall == {} and h.files == {}
        assert h.adapters["Ethernet 2"].value == "1514"
        # reboots: the 1514 set, the jumbo set, and the restore at the end
        assert h.boots == 4, name
    rebooted = [e for e in seen if isinstance(e, ev.HostRebooted)]
    assert sorted(e.host for e in rebooted) == ["wa", "wa", "wb", "wb"]
    assert all(c.restored for c in read_journal_entries(run.run_dir.journal_file)[0])

    # Every command crossed the wire as base64 and decodes to what was meant: in the
    # host's warm session a frame (nonce, base64 of the script), else a powershell.exe
    # of its own (the session's own kill on a timeout; none here).
    for conn in pair.connections.values():
        assert conn.warm_all and not conn.warm_lost
        for call in conn.calls:
            assert B64.match(call.wire.split(" ")[-1])
            assert read_frame(call.wire.encode())[1] == call.script
            assert call.script.startswith("[Console]::Out.WriteLine($PID)\n")
    assert {h.sessions for h in pair.hosts.values()} == {4}   # one per boot


def test_the_order_of_operations_per_host(tmp_path):
    pair = hosts()
    Runner(profile(tmp_path), INVENTORY, tmp_path / "out", hosts=pair).run()
    wa = pair.hosts["wa"].log          # the receiver
    assert wa.index("set TcpWindowSize") < wa.index("shutdown.exe") < \
        wa.index("firewall-allow") < wa.index("server NTttcp.exe")
    # 1514 is the adapter's own value: not sent; 9014 comes after the second reboot.
    second = [i for i, x in enumerate(wa) if x == "shutdown.exe"][1]
    assert second < wa.index("set *JumboPacket") < wa.index("server NTttcp.exe", second)
    # The restore ends the run: registry values deleted, then the reboot they need.
    tail = wa[wa.index("delete TcpWindowSize"):]
    assert "delete Tcp1323Opts" in wa and tail.index("shutdown.exe") > 0
    assert "server NTttcp.exe" not in tail
    assert "server NTttcp.exe" not in pair.hosts["wb"].log     # wb only sends


def test_firewall_rules_cover_exactly_the_tools_ports(tmp_path):
    pair = hosts()
    allowed = []

    def spy(name):
        def seen(call):
            if call.label == "firewall-allow":
                allowed.append((name, call.params["Ports"]))
        return seen
    for name, h in pair.hosts.items():
        h.on_call = spy(name)
    Runner(profile(tmp_path), INVENTORY, tmp_path / "out", hosts=pair).run()
    # NTttcp: data port 5001 and its sync port 6001; iperf 2: 5001.
    assert set(allowed) == {("wa", "5001,6001"), ("wb", "5001,6001")}


def test_ntttcp_writes_a_fresh_xml_file_per_trial_and_removes_it(tmp_path):
    pair = hosts()
    Runner(profile(tmp_path), INVENTORY, tmp_path / "out", hosts=pair).run()
    sends = [c.argv for c in pair.connections["wb"].calls if c.argv[0] == "NTttcp.exe"]
    xmls = [a[a.index("-xml") + 1] for a in sends]
    assert len(xmls) == 4 and len(set(xmls)) == 4
    removed = [c.params["Path"] for c in pair.connections["wb"].calls
               if c.label == "read-and-remove"]
    assert removed == xmls and pair.hosts["wb"].files == {}
    assert all("-ns" not in a for a in sends)        # both ends Windows: with sync


def test_ctrl_c_mid_point_restores_everything(tmp_path):
    pair = hosts()

    def listener(e):
        if isinstance(e, ev.TrialDone):
            raise Stop
    with pytest.raises(Stop):
        Runner(profile(tmp_path), INVENTORY, tmp_path / "out", hosts=pair,
               listener=listener).run()
    for h in pair.hosts.values():
        assert h.registry == {} and h.firewall == {}
        assert h.boots == 3           # applied (1), rebooted for the set (2), restored (3)
        assert not any(p.alive for p in h.procs.values())


class Killed(BaseException):
    """The controller is killed (kill -9): nothing it would still send reaches a host."""


def killed_mid_trial(tmp_path, text: str = PROFILE,
                     registry: dict | None = None) -> tuple[FakeWindowsPair, Path]:
    """A run killed while the first NTttcp sender runs: its receiver listens on wa (a
    WMI process outside the SSH session, so it outlives the controller), the client's
    pid file is on wb, registry values and firewall rules are in force on both (the
    hosts' own ``registry`` values before the run, by host: none, unless given)."""
    dead = []

    def tool(host, argv):
        if argv[0] == "NTttcp.exe":
            dead.append(host.name)
            raise Killed
        return tools(host, argv)

    pair = windows_pair({"wa": ("Ethernet 2", "198.18.0.1"),
                         "wb": ("Ethernet 2", "198.18.0.2")}, tool_run=tool)
    for name, values in (registry or {}).items():
        pair.hosts[name].registry.update(values)

    def cut(call):
        if dead:
            raise Killed
    for h in pair.hosts.values():
        h.on_call = cut
    with pytest.raises(Killed):
        Runner(profile(tmp_path, text), INVENTORY, tmp_path / "out", hosts=pair).run()
    for h in pair.hosts.values():
        h.on_call = None
    return pair, tmp_path / "out"


def test_a_run_killed_mid_trial_then_restore_reaps_by_pid_tree_and_deletes_the_registry(
        tmp_path, monkeypatch, capsys):
    import json

    from nicbench.cli import main

    pair, out = killed_mid_trial(tmp_path)
    wa, wb = pair.hosts["wa"], pair.hosts["wb"]
    journal = json.loads((out / "tuning.json").read_text())
    left = {(x["host"], x["path"]) for x in journal["leftovers"]}
    (server_dir,) = [p for h, p in left if h == "wa"]
    client_pid = next(p for h, p in left if h == "wb" and p.endswith(".pid"))
    assert {h for h, _ in left} == {"wa", "wb"}
    assert all(p.startswith(TEMP) for _, p in left)     # under the SSH user's TEMP
    # What the killed run left: the receiver still runs in its directory, named by the
    # "<pid> <start time>" the background script wrote there; so does the client.
    server = next(p for p in wa.procs.values() if p.workdir == server_dir)
    client = next(p for p in wb.procs.values() if p.workdir is None)
    assert server.alive and client.alive and server.argv[0] == "NTttcp.exe"
    assert wa.files[server_dir + "\\pid"].decode() == f"{server.pid} {server.start}"
    assert wb.files[client_pid].decode() == f"{client.pid} {client.start}"
    assert wa.registry == {"TcpWindowSize": 0xffff} and wa.firewall and wb.firewall
    assert [c["kind"] for c in journal["changes"] if c["host"] == "wa"][:2] == \
        ["reboot", "registry"]                 # the marker first: restored (rebooted) last

    conns = replay_hosts(monkeypatch, pair)
    boots = {n: h.boots for n, h in pair.hosts.items()}
    capsys.readouterr()
    assert main(["restore", str(out)]) == 0
    said = capsys.readouterr().out
    assert "stopping wa server NTttcp.exe -r -m 1,0,198.18.0.1" in said and server_dir in said
    assert "restored wa registry TcpWindowSize = <absent>" in said
    assert "rebooted wa: the registry values put back take effect at boot" in said
    # Stopped by their trees (the pid and start time still matched), paths removed.
    assert (server.killed_by, client.killed_by) == ("reap", "reap")
    reaps = [c for c in conns["wa"].calls if c.label == "reap"]
    assert [c.params["Paths"].split("\n") for c in reaps] == [[server_dir]]
    assert "taskkill.exe /PID $id /T /F" in reaps[0].script
    for name, h in pair.hosts.items():
        assert h.dirs == set() and h.files == {}, name
        assert h.registry == {} and h.firewall == {}, name
        # the values were deleted, then the reboot they need
        log = [c.label for c in conns[name].calls]
        assert log.index("delete TcpWindowSize") < log.index("shutdown.exe"), name
        assert h.boots == boots[name] + 1, name
    assert json.loads((out / "tuning.json").read_text())["changes"] == []
    assert main(["restore", str(out)]) == 0
    assert "nothing to restore" in capsys.readouterr().out


def test_restore_waits_for_a_reboot_as_long_as_the_runs_profile_says(
        tmp_path, monkeypatch, capsys):
    from nicbench.cli import main

    pair, out = killed_mid_trial(tmp_path, PROFILE.replace("reboot_timeout_s: 60",
                                                           "reboot_timeout_s: 0.3"))
    for h in pair.hosts.values():
        h.never_back = True
    replay_hosts(monkeypatch, pair)
    assert main(["restore", str(out)]) == 1
    err = capsys.readouterr().err
    assert "wa: did not come back within 0.3 s of a reboot" in err
    assert "still changed: wa: reboot tcpip-parameters" in err
    for h in pair.hosts.values():    # what could be done was done: values, processes
        assert h.registry == {} and h.dirs == set() and h.files == {}
    pending = read_journal_entries(out / "tuning.json")[0]
    assert {(c.host, c.kind) for c in pending} == {("wa", "reboot"), ("wb", "reboot")}


def test_restore_gives_the_reboot_marker_the_run_s_profile_timeout_not_the_default(
        tmp_path, monkeypatch, capsys):
    """Counted, not timed: with no sleep between probes, a wait of 30 s makes at most
    31 probes (the default's 1800 s would make 1801)."""
    from nicbench.cli import main
    from nicbench.platforms.windows import RebootWait

    pair, out = killed_mid_trial(tmp_path, PROFILE.replace("reboot_timeout_s: 60",
                                                           "reboot_timeout_s: 30"))
    for h in pair.hosts.values():
        h.never_back = True
    conns = replay_hosts(monkeypatch, pair)
    assert main(["restore", str(out)]) == 1
    assert "wa: did not come back within 30 s of a reboot (31 probes" in capsys.readouterr().err
    labels = [c.label for c in conns["wa"].calls]
    after = labels[labels.index("shutdown.exe") + 1:]
    assert after == ["last-boot"] * RebootWait(30, 0.0).max_probes == ["last-boot"] * 31


def test_reap_leaves_a_process_that_reused_the_pid(tmp_path):
    from nicbench.platforms.fake_windows import Proc

    pair, _out = killed_mid_trial(tmp_path)
    wa = pair.hosts["wa"]
    (server,) = [p for p in wa.procs.values() if p.workdir]
    assert server.workdir is not None
    # The receiver ended and another program got its pid (another start time).
    other = Proc(pid=server.pid, start=str(int(server.start) + 1), argv=["explorer.exe"])
    wa.procs[server.pid] = other
    plat = FakeWindowsPair(hosts=pair.hosts).platform("wa")
    assert plat.reap([server.workdir]) == {server.workdir: "gone"}
    assert other.alive and other.killed_by is None and wa.dirs == set()
    assert plat.reap([server.workdir]) == {server.workdir: "none"}


def test_a_long_list_of_leftovers_is_reaped_in_calls_that_fit_cmd_exe(tmp_path):
    from nicbench.remote.powershell import MAX_COMMAND_LINE

    pair = hosts()
    pair.warm = False     # each a powershell.exe of its own, as after a lost session
    plat = pair.platform("wa")
    paths = [plat.scratch_file(f"nicbench-i350.frame9014.iperf-tcp.r{i}-0a1b2c3d.pid")
             for i in range(40)]
    assert plat.reap(paths) == dict.fromkeys(paths, "none")
    calls = [c for c in pair.connections["wa"].calls if c.label == "reap"]
    assert len(calls) > 1
    assert all(len(c.wire) <= MAX_COMMAND_LINE for c in calls)
    assert [p for c in calls for p in c.params["Paths"].split("\n")] == paths


def test_a_reboot_marker_journaled_before_a_crash_reboots_after_the_values_go(tmp_path):
    from nicbench.execution.ossettings import REBOOT_MARKER

    pair = hosts()
    wa = pair.hosts["wa"]
    journal = tmp_path / "tuning.json"
    running = TuningSession(journal)
    running.apply(pair.platform("wa"), "reboot", REBOOT_MARKER, "pending")
    running.apply(pair.platform("wa"), "registry", "TcpWindowSize", str(0xffff))
    running.apply(pair.platform("wa"), "registry", "Tcp1323Opts", "3")
    assert wa.registry == {"TcpWindowSize": 0xffff, "Tcp1323Opts": 3}
    del running                                      # the controller dies here

    later = FakeWindowsPair(hosts=pair.hosts)        # a new process, new connections
    session = TuningSession.load(journal)
    assert [(c.kind, c.key, c.original) for c in session.pending()] == [
        ("reboot", REBOOT_MARKER, None), ("registry", "TcpWindowSize", None),
        ("registry", "Tcp1323Opts", None)]
    session.bind({"wa": later.platform("wa")})
    boots = wa.boots
    assert session.restore() == []
    assert wa.registry == {} and wa.boots == boots + 1
    log = [c.label for c in later.connections["wa"].calls]
    assert log.index("delete Tcp1323Opts") < log.index("delete TcpWindowSize") < \
        log.index("shutdown.exe")
    assert log[-1] == "last-boot"                    # then waited until it was back
    assert read_journal_entries(journal)[0] == []


def test_a_dropped_connection_is_reconnected_and_the_trial_retried(tmp_path):
    drops = []

    def tool(host, argv):
        if argv[0] == "NTttcp.exe" and not drops:
            drops.append(argv[0])
            host.connection_down = True
            raise ConnectError("wb", "the connection was lost while the client ran",
                               "the host may have rebooted or dropped the connection")
        return tools(host, argv)

    pair = windows_pair({"wa": ("Ethernet 2", "198.18.0.1"),
                         "wb": ("Ethernet 2", "198.18.0.2")}, tool_run=tool)
    run = Runner(profile(tmp_path), INVENTORY, tmp_path / "out", hosts=pair)
    recs = list(run.run().records())
    lost = [r for r in recs if r.failure is Failure.HOST_LOST]
    assert run.lost == {} and len(lost) == 1 and drops == ["NTttcp.exe"]
    retried = [r for r in recs if r.extra.get("retry_of") == lost[0].trial_id]
    assert len(retried) == 1 and retried[0].status is Status.OK
    assert pair.connections["wb"].reconnects == 1 and run.lost == {}
    for h in pair.hosts.values():      # the lost attempt's pid file was reaped too
        assert h.dirs == set() and h.files == {} and h.registry == {}


# -- reboot-wait ---------------------------------------------------------------------------
def rebooting(options: PlatformOptions | None = None, **kw) -> tuple[FakeWindowsHost, object]:
    pair = FakeWindowsPair(options=options or PlatformOptions())
    host = pair.add(FakeWindowsHost("wa", {"Ethernet 2": FakeAdapter(("198.18.0.1",))}, **kw))
    return host, pair.platform("wa")


def test_reboot_waits_out_refused_connections_and_a_probe_each_with_its_timeout():
    host, plat = rebooting(down_probes=5)
    plat.reboot()
    assert host.boots == 2
    conn = plat.conn
    probes = [t for c, t in zip(conn.calls, conn.timeouts, strict=False) if c.label == "last-boot"]
    assert len(probes) == 1 + 5 + 1  # the boot time before, 5 refused, the changed one
    assert host._down == 5 and set(probes) == {10.0}
    assert "shutdown.exe" in [c.label for c in conn.calls]


def test_reboot_rejects_a_changed_host_key():
    _host, plat = rebooting(down_probes=1, new_host_key=True)
    with pytest.raises(HostKeyError, match="differs"):
        plat.reboot()


def test_reboot_times_out_with_one_clear_line():
    _host, plat = rebooting(PlatformOptions(reboot_timeout_s=0.05), never_back=True)
    with pytest.raises(ConnectError) as info:
        plat.reboot()
    assert str(info.value).startswith("wa: did not come back within 0.05 s of a reboot")
    assert "Connection refused" in str(info.value)


def test_a_reboot_wait_that_does_not_sleep_still_ends_after_its_probes():
    _host, plat = rebooting(PlatformOptions(reboot_timeout_s=600), never_back=True)
    assert plat.probe_interval_s == 0.0 and plat.reboot_wait.max_probes == 601
    with pytest.raises(ConnectError, match=r"within 600 s of a reboot \(601 probes"):
        plat.reboot()
    labels = [c.label for c in plat.conn.calls]
    assert labels.count("last-boot") == 1 + 601    # the boot time before, then the probes


def test_a_reboot_timeout_during_a_run_gives_the_pair_up_and_says_so(tmp_path):
    prof = profile(tmp_path, PROFILE.replace("reboot_timeout_s: 60", "reboot_timeout_s: 0.2"))
    pair = hosts(PlatformOptions.of(prof))
    for h in pair.hosts.values():
        h.never_back = True
    run = Runner(prof, INVENTORY, tmp_path / "out", hosts=pair)
    recs = list(run.run().records())
    assert list(run.lost) == ["wa"] and "did not come back within 0.2 s" in run.lost["wa"]
    assert {(r.point, r.test) for r in recs} == {(f"frame{f}", t) for f in (1514, 9014, 6014)
                                                 for t in ("ntttcp", "iperf-tcp")}
    assert all(r.status is Status.SKIPPED and r.failure is Failure.HOST_LOST for r in recs)
    # What could not be put back is said once each and stays journaled for later.
    assert {(p.host, p.what.split(" (")[0]) for p in run.problems} >= {
        ("wa", "registry TcpWindowSize"), ("wb", "registry TcpWindowSize")}
    assert len({str(p) for p in run.problems}) == len(run.problems)
    assert {c.host for c in read_journal_entries(run.run_dir.journal_file)[0]} == {"wa", "wb"}


def test_check_talks_to_windows_hosts_through_the_platform(monkeypatch):
    from nicbench.execution.readiness import check

    pair = hosts()
    replay_hosts(monkeypatch, pair)
    (rep,) = check(INVENTORY)
    assert rep.problems == [] and rep.ready
    a = rep.sides[0]
    assert (a.state, a.mtu, a.max_mtu, a.kernel) == ("up", 1500, 9014 - 14, "10.0.20348")
    assert a.tools["ntttcp"] == "5.40.0.0" and a.tools["netpipe"] is None


def test_manifest_facts_and_registry_policy(tmp_path):
    from nicbench.results.manifest import Manifest

    seen: list[ev.Event] = []
    text = PROFILE.replace("reboot_timeout_s: 60", "reboot_timeout_s: 60\n    "
                                                   "registry_policy: skip-if-ignored")
    prof = profile(tmp_path, text)
    pair = hosts(PlatformOptions.of(prof))
    run = Runner(prof, INVENTORY, tmp_path / "out", hosts=pair, listener=seen.append)
    run.run()
    m = Manifest.read(run.run_dir.manifest_file)
    wa = m.hosts["wa"]
    assert isinstance(wa, WindowsHostFacts)
    assert (wa.caption, wa.version, wa.build, wa.cpus) == (
        "Microsoft Windows Server 2022 Standard", "10.0.20348", "20348", 4)
    assert wa.last_boot and wa.defender_realtime is True and wa.autotuning == "Normal"
    assert any("TcpWindowSize: ignored by this Windows" in n and "not written" in n
               for n in wa.registry_notes or ())
    iface = m.interfaces["i350/wa"]
    assert isinstance(iface, WindowsInterfaceFacts)
    assert (iface.jumbo_keyword, iface.jumbo_valid, iface.driver_provider) == (
        "*JumboPacket", ("1514", "4088", "9014"), "Intel")
    # as written: the JSON objects of their fields, registry notes with the host's facts
    stored = json.loads(run.run_dir.manifest_file.read_text())
    assert stored["hosts"]["wa"]["registry_notes"] == list(wa.registry_notes or ())
    assert stored["interfaces"]["i350/wa"]["jumbo_valid"] == ["1514", "4088", "9014"]
    log = pair.hosts["wa"].log
    assert "set TcpWindowSize" not in log and "set Tcp1323Opts" in log   # skipped, not silent
    assert any(isinstance(e, ev.Warning) and "TcpWindowSize" in e.message for e in seen)


# -- jumbo frames: windows.md (d)7 -------------------------------------------------------
@pytest.mark.parametrize(("policy", "version", "written", "note"), [
    ("apply", "10.0.20348", True, "written anyway (registry_policy: apply)"),
    ("skip-if-ignored", "10.0.20348", False, "not written (registry_policy: skip-if-ignored)"),
    # Windows Server 2003 (5.2) still reads TcpWindowSize: written under either policy.
    ("skip-if-ignored", "5.2.3790", True, None),
])
def test_the_platform_s_registry_policy_decides_about_values_its_windows_ignores(
        tmp_path, policy, version, written, note):
    prof = profile(tmp_path, PROFILE.replace("reboot_timeout_s: 60", "reboot_timeout_s: 60\n"
                                             f"    registry_policy: {policy}"))
    pair = hosts(PlatformOptions.of(prof))
    for h in pair.hosts.values():
        h.version = version
    seen: list[ev.Event] = []
    Runner(prof, INVENTORY, tmp_path / "out", hosts=pair, listener=seen.append).run()
    plat = pair.platform("wa")
    assert plat.options.registry_policy == policy
    assert plat.registry_ignored("TcpWindowSize") is (version != "5.2.3790")
    assert not plat.registry_ignored("Tcp1323Opts")
    log = pair.hosts["wa"].log
    assert ("set TcpWindowSize" in log) is written and "set Tcp1323Opts" in log
    warned = [e.message for e in seen if isinstance(e, ev.Warning) and "TcpWindowSize" in e.message]
    assert (warned == []) if note is None else (len(warned) == 2 and note in warned[0])


def test_a_linux_platform_ignores_no_registry_value_and_takes_the_options_unused():
    from nicbench.platforms.linux import LinuxPlatform
    from nicbench.remote.fake import FakeConnection

    options = PlatformOptions(reboot_timeout_s=5, registry_policy="skip-if-ignored")
    plat = LinuxPlatform(FakeConnection("l"), options=options)
    assert plat.options is options and not plat.registry_ignored("TcpWindowSize")
    assert not plat.supports("registry") and not plat.supports("reboot")


def jumbo_host(**adapter) -> tuple[FakeWindowsHost, FakeAdapter, object]:
    pair = FakeWindowsPair()
    nic = FakeAdapter(("198.18.0.1",), **adapter)
    host = pair.add(FakeWindowsHost("wa", {"Ethernet 2": nic}))
    return host, nic, pair.platform("wa")


def test_after_a_jumbo_change_the_platform_waits_for_up_then_reads_the_ip_mtu():
    from nicbench.platforms.windows import ADAPTER_UP_TIMEOUT_S

    _host, nic, plat = jumbo_host(down_after_change=30)
    plat.set_mtu("Ethernet 2", 9000)
    calls = plat.conn.calls
    (change,) = [c for c in calls if c.label == "set *JumboPacket"]
    assert change.params["Value"] == "9014"                       # frame = IP MTU + 14
    # The script itself waits for Up, bounded by the platform's timeout in 250 ms polls,
    # and the call's own timeout leaves it that long.
    assert "(Get-NetAdapter -InterfaceIndex $a.ifIndex).Status -ne 'Up'" in change.script
    # by the GUID the first read of the adapter gave
    assert (change.params["By"], change.params["Adapter"]) == ("guid", nic.guid)
    assert int(change.params["UpPolls"]) == round(ADAPTER_UP_TIMEOUT_S / 0.25)
    assert plat.conn.timeouts[calls.index(change)] > ADAPTER_UP_TIMEOUT_S
    # Then the adapter is read again: the keyword's value and NlMtu, frame - 14.
    after = calls[calls.index(change) + 1:]
    assert [c.label for c in after] == ["adapter"]
    assert plat.get_mtu("Ethernet 2") == int(nic.value) - 14 == nic.nl_mtu


def test_an_adapter_that_is_not_up_again_in_time_is_a_tuning_error():
    from nicbench.errors import TuningError
    from nicbench.platforms.windows import ADAPTER_UP_TIMEOUT_S

    _host, _nic, plat = jumbo_host(down_after_change=round(ADAPTER_UP_TIMEOUT_S / 0.25) + 1)
    with pytest.raises(TuningError) as info:
        plat.set_mtu("Ethernet 2", 9000)
    assert info.value.kind == "interface"
    assert "adapter Ethernet 2 not Up after the change" in str(info.value)


def test_an_ip_mtu_that_does_not_follow_the_frame_is_a_mismatch_naming_both_numbers():
    from nicbench.errors import TuningError

    # Broadcom NetXtreme keeps an MTU-valued *JumboPacket: the driver takes 9014, the IP
    # layer stays where it was (windows.md, pitfall 8).
    _host, nic, plat = jumbo_host(mtu_style=True)
    with pytest.raises(TuningError) as info:
        plat.set_mtu("Ethernet 2", 9000)
    got, want = nic.nl_mtu, int(nic.value) - 14
    assert got != want
    assert info.value.kind == "mismatch"
    assert f"the IP MTU reads back as {got}, not {want}" in str(info.value)


def test_a_run_records_the_mismatch_as_a_tuning_failure_and_puts_the_frame_back(tmp_path):
    pair = windows_pair({"wa": ("Ethernet 2", "198.18.0.1"),
                         "wb": ("Ethernet 2", "198.18.0.2")}, tool_run=tools, mtu_style=True)
    recs = list(Runner(profile(tmp_path), INVENTORY, tmp_path / "out",
                       hosts=pair).run().records())
    at9014 = [r for r in recs if r.point == "frame9014"]
    assert {(r.kind, r.failure) for r in at9014} == {(Kind.SKIPPED, Failure.TUNING)}
    nic = pair.hosts["wa"].adapters["Ethernet 2"]
    assert all(f"reads back as {nic.nl_mtu}, not {9014 - 14}" in r.reason for r in at9014)
    assert {r.status for r in recs if r.point == "frame1514"} == {Status.OK}
    assert {h.adapters["Ethernet 2"].value for h in pair.hosts.values()} == {"1514"}


def test_a_value_moved_to_the_next_group_keeps_its_original_and_says_what_is_in_force(
        tmp_path):
    pair = hosts()
    plat = pair.platform("wa")
    session = TuningSession(tmp_path / "tuning.json")
    session.apply(plat, "registry", "TcpWindowSize", str(0xffff))
    session.apply(plat, "registry", "TcpWindowSize", "20971520")    # the next group's
    (change,) = read_journal_entries(tmp_path / "tuning.json")[0]
    assert (change.original, change.applied) == (None, "20971520")
    assert pair.hosts["wa"].registry == {"TcpWindowSize": 20971520}
    assert session.restore() == [] and pair.hosts["wa"].registry == {}


def test_an_os_windows_host_gets_a_windows_platform_over_ssh_with_the_windows_shell(
        monkeypatch):
    import nicbench.platforms.hosts as hosts_mod
    from nicbench.platforms.windows import WindowsPlatform
    from nicbench.remote.powershell import WindowsShell
    from nicbench.remote.ssh import SshConnection

    monkeypatch.setattr(hosts_mod, "preflight", lambda target: None)   # no local key here
    with hosts_mod.HostPool(INVENTORY) as pool:
        plat = pool.platform("wa")          # made, not connected: SSH dials on first use
        assert isinstance(plat, WindowsPlatform) and isinstance(plat.conn, SshConnection)
        assert isinstance(plat.conn.shell, WindowsShell)
        assert plat.conn.target.address == "198.19.1.2"


def test_a_host_pool_made_from_a_profile_gives_every_platform_its_options(
        tmp_path, monkeypatch):
    import nicbench.platforms.hosts as hosts_mod
    from nicbench.platforms.linux import LinuxPlatform

    monkeypatch.setattr(hosts_mod, "preflight", lambda target: None)   # no local key here
    prof = profile(tmp_path, PROFILE.replace("reboot_timeout_s: 60", "reboot_timeout_s: 90\n"
                                             "    registry_policy: skip-if-ignored"))
    mixed = INVENTORY.model_copy(update={"hosts": [
        INVENTORY.hosts[0], INVENTORY.hosts[1].model_copy(update={"os": "linux"})]})
    with hosts_mod.HostPool(mixed, options=PlatformOptions.of(prof)) as pool:
        wa, wb = pool.platform("wa"), pool.platform("wb")
        assert isinstance(wa, WindowsPlatform) and isinstance(wb, LinuxPlatform)
        for plat in (wa, wb):
            assert plat.options == PlatformOptions(90.0, "skip-if-ignored")
        assert wa.reboot_wait.timeout_s == 90.0
    with hosts_mod.HostPool(INVENTORY) as pool:          # no profile: the defaults
        assert pool.platform("wa").options == PlatformOptions(1800.0, "apply")


def test_a_runner_s_own_host_pool_waits_for_reboots_as_long_as_its_profile_says(
        tmp_path, monkeypatch):
    """No hosts= given: the Runner makes its HostPool, which must carry the profile."""
    pair = hosts()
    for h in pair.hosts.values():
        h.never_back = True
    replay_hosts(monkeypatch, pair)
    prof = profile(tmp_path, PROFILE.replace("reboot_timeout_s: 60", "reboot_timeout_s: 20"))
    run = Runner(prof, INVENTORY, tmp_path / "out")
    run.run()
    assert "did not come back within 20 s of a reboot (21 probes" in run.lost["wa"]
