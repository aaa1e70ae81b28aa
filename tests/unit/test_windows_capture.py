"""`nicbench windows capture HOST --out DIR` through the CLI, against a scripted Windows
host (nicbench.platforms.fake_windows) reached the way `nicbench restore` reaches it in
these tests: every command is rendered, encoded, decoded back and answered.

What is checked: every command's answer is saved byte for byte as the host sent it
(CRLF and all), beside the decoded script that was sent and a manifest; the readers'
verdicts are recorded, and an answer a reader does not understand is data, not a
failure; nothing on the host changes; a lost connection ends the capture with exit 1
and the manifest still written.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pytest
import yaml

from nicbench.cli import main
from nicbench.platforms import fake_windows
from nicbench.platforms.fake_windows import REG_ABSENT, windows_pair
from nicbench.remote.powershell import WindowsShell, decode_command
from nicbench.tools import typeperf

from windows_helpers import replay_hosts

TESTS = Path(__file__).resolve().parents[1]
NETSH_DE = (TESTS / "fixtures/windows/gh-mysticfoxde-15__netsh_int_tcp_show_global_de-DE.txt")
TYPEPERF = TESTS / "golden/samples/typeperf_public_winrs_sample.txt"
INVENTORY = {
    "hosts": [{"name": "wa", "address": "192.0.2.10", "os": "windows",
               "ssh": {"user": "bench", "known_hosts": "k"}},
              {"name": "wb", "address": "192.0.2.11", "os": "windows",
               "ssh": {"user": "bench", "known_hosts": "k"}},
              {"name": "lx", "address": "192.0.2.12", "os": "linux",
               "ssh": {"user": "bench", "known_hosts": "k"}}],
    "adapters": [{"id": "i350", "vendor": "Intel", "model": "I350-T2",
                  "driver": {"name": "e1r", "version": "12.19"}}],
    "pairs": [{"name": "i350", "adapter": "i350",
               "a": {"host": "wa", "interface": "Ethernet 2", "address": "198.18.0.1"},
               "b": {"host": "wb", "interface": "Ethernet 2", "address": "198.18.0.2"}}]}
# Labels of every command that changes a Windows host.
WRITES = ("set ", "delete ", "firewall-allow", "firewall-remove", "start ", "kill-tree",
          "cleanup", "shutdown.exe")


def banner_or_tool(host, argv):
    """What the native tools a capture runs print: netsh (a real de-DE capture),
    typeperf (a real PDH-CSV sample); iperf's banner is not a capture, so it says so."""
    if argv[0] == "netsh.exe":
        return fake_windows.ToolRun(client=NETSH_DE.read_text(encoding="utf-8"))
    if argv[0] == "typeperf":
        return fake_windows.ToolRun(client=TYPEPERF.read_text(encoding="utf-8"))
    return fake_windows.ToolRun(client="", exit_status=1)


@pytest.fixture
def setup(tmp_path, monkeypatch):
    pair = windows_pair({"wa": ("Ethernet 2", "198.18.0.1"),
                         "wb": ("Ethernet 2", "198.18.0.2")}, tool_run=banner_or_tool)
    inv = tmp_path / "inventory.yaml"
    inv.write_text(yaml.safe_dump(INVENTORY))
    answers: list[tuple[str, object, tuple]] = []
    conns = replay_hosts(monkeypatch, pair,
                         record=lambda host, call, reply: answers.append((host, call, reply)))
    return pair, inv, conns, answers


def state(host) -> dict:
    """Everything the scripted host holds that a command could change."""
    return {"registry": dict(host.registry), "firewall": dict(host.firewall),
            "files": dict(host.files), "dirs": set(host.dirs), "boots": host.boots,
            "procs": {pid: asdict(p) for pid, p in host.procs.items()},
            "adapters": {n: asdict(a) for n, a in host.adapters.items()}}


def test_capture_saves_each_answer_as_sent_with_its_script_and_changes_nothing(
        setup, tmp_path, capsys):
    pair, inv, conns, answers = setup
    wa = pair.hosts["wa"]
    before = state(wa)
    out = tmp_path / "capture"
    assert main(["windows", "capture", "wa", "-i", str(inv), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    manifest = json.loads((out / "manifest.json").read_text())
    commands = manifest["commands"]

    # One command per entry, in order, and each saved as it came.
    calls = conns["wa"].calls
    assert len({c["name"] for c in commands}) == len(commands)
    assert [c["script"] for c in commands] == [f"{n:02d}-{c['name']}.ps1"
                                               for n, c in enumerate(commands, 1)]
    assert len(calls) == len(commands) == len(answers)
    for cmd, call, (host, answered, (stdout, stderr, rc)) in zip(commands, calls, answers, strict=False):
        assert host == "wa" and answered is call
        script = (out / cmd["script"]).read_text(encoding="utf-8")
        assert script == decode_command(call.wire) == WindowsShell().script_with_pid(call.argv)
        assert (out / cmd["stdout"]).read_bytes() == stdout.encode()
        assert (out / cmd["stderr"]).read_bytes() == stderr.encode()
        assert cmd["exit_status"] == rc and cmd["raw"] is True, cmd["name"]
        assert cmd["name"] in said
        assert not call.label.startswith(WRITES), call.label
    assert state(wa) == before

    by = {c["name"]: c for c in commands}
    # The raw bytes keep Windows' line ends; the readers read them tidied.
    assert b"\r\n" in (out / by["host-facts"]["stdout"]).read_bytes()
    # Every reader understood what the scripted host printed (a real host may not:
    # that is what a capture is for); a failed command is not read, ping always is.
    read = [c for c in commands if c["reads"] and (c["exit_status"] == 0 or
                                                   c["name"].startswith("ping"))]
    assert {c["read"] for c in read} == {"ok"} and len(read) >= 12
    assert manifest["host"] == "wa" and manifest["interfaces"] == ["Ethernet 2"]
    assert manifest["peers"] == ["198.18.0.2"]
    assert (manifest["facts"]["caption"], manifest["facts"]["build"]) == (
        wa.caption, wa.version.rsplit(".", 1)[-1])
    # Absent registry values: reg.exe's own error and exit 1, kept as they came.
    absent = by["reg-query-TcpWindowSize"]
    assert absent["exit_status"] == 1 and absent["read"] is None
    assert (out / absent["stderr"]).read_bytes() == REG_ABSENT.encode()
    # Too big for the path: the refusal's words kept (the DF probe at 9000).
    refused = (out / by["ping-1-df-9000"]["stdout"]).read_bytes()
    assert b"Packet needs to be fragmented but DF set." in refused
    # The shell's scripts aimed at paths that cannot exist.
    reaped = (out / by["reap-none"]["stdout"]).read_bytes().decode().splitlines()
    assert [ln.split(" ")[0] for ln in reaped] == ["none", "none"]
    assert typeperf.parse_cpu((out / by["typeperf"]["stdout"]).read_bytes().decode()) == \
        typeperf.parse_cpu(TYPEPERF.read_text(encoding="utf-8"))

    # A second capture into the same directory would mix two: refused.
    assert main(["windows", "capture", "wa", "-i", str(inv), "--out", str(out)]) == 2
    assert "not an empty directory" in capsys.readouterr().err


def test_an_answer_no_reader_understands_is_recorded_not_fatal(setup, tmp_path, monkeypatch,
                                                               capsys):
    _pair, inv, _conns, _answers = setup
    # A Windows that prints its facts some other way than the script expects.
    monkeypatch.setitem(fake_windows._HANDLERS, "host-facts",
                        lambda h, call: ("WARNING: something else\n", "", 0))
    out = tmp_path / "capture"
    assert main(["windows", "capture", "wa", "-i", str(inv), "--out", str(out)]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    facts = next(c for c in manifest["commands"] if c["name"] == "host-facts")
    assert facts["read"].startswith("ParseError") and manifest["facts"] == {}
    assert (out / facts["stdout"]).read_bytes() == b"WARNING: something else\r\n"
    assert "1 answers were not understood by their readers (host-facts)" in \
        capsys.readouterr().out


def test_a_lost_connection_ends_the_capture_with_exit_1_and_a_manifest(setup, tmp_path,
                                                                       capsys):
    pair, inv, _conns, _answers = setup
    wa = pair.hosts["wa"]
    seen = []

    def drop_after_three(call):
        seen.append(call.label)
        if len(seen) == 4:
            wa.connection_down = True
    wa.on_call = drop_after_three
    out = tmp_path / "capture"
    assert main(["windows", "capture", "wa", "-i", str(inv), "--out", str(out)]) == 1
    commands = json.loads((out / "manifest.json").read_text())["commands"]
    assert [c["error"] is None for c in commands[:3]] == [True] * 3
    assert commands[3]["error"].startswith("connection lost: wa: the connection was lost")
    assert all(c["error"].startswith("not run: connection lost") for c in commands[4:])
    assert len(seen) == 4                       # nothing more was sent
    assert "wa: cpu-raw-2: connection lost" in capsys.readouterr().err


def test_only_windows_hosts_of_the_inventory(setup, tmp_path, capsys):
    _pair, inv, _conns, _answers = setup
    assert main(["windows", "capture", "lx", "-i", str(inv), "--out",
                 str(tmp_path / "c")]) == 2
    assert "lx is an os: linux host" in capsys.readouterr().err
    assert main(["windows", "capture", "nope", "-i", str(inv), "--out",
                 str(tmp_path / "c")]) == 2
    assert not (tmp_path / "c").exists()
