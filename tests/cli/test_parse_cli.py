"""``nicbench parse`` as a user runs it, over every golden case and every shared sample.

The expected values are the golden cases' own (``tests/golden/cases/*.yaml``, compared with
the same comparator as ``tests/golden/test_golden.py``), so the command line and the library
cannot drift apart. Each case runs through ``nicbench.cli.main`` in this process (stdout is
exactly what the console script prints), and a few run through the installed ``nicbench``
script in a subprocess, to prove the entry point itself.

Behaviour checked, as the code documents it:

* ``--json`` prints one JSON object with the keys tool, version, protocol, throughput_bps,
  duration_s, streams, cpu_pct, udp {lost, total, loss_pct, jitter_ms} (or null), points [];
* a tool that reported its own error in readable output (iperf 2/3 "connection refused") is
  a parsed run: exit 0, ``throughput_bps`` null and the tool's words under ``error``
  (``ParsedRun.error``: "iperf3 exits 0 with an error key");
* output that cannot be read (wrong tool, garbage, empty, netPIPE's own error stop) is
  ``ParseError``: exit 3 and exactly one line on stderr naming the file;
* an unknown tool is a command-line error: exit 2 (argparse);
* a missing or unreadable file (a directory, a FIFO, a device, over 64 MB): exit 3, one
  line naming the file.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from clihelp import in_process


TESTS = Path(__file__).resolve().parents[1]
GOLDEN = TESTS / "golden"
CASES = sorted((GOLDEN / "cases").glob("*.yaml"))
SHARED_SAMPLES = TESTS.parents[1] / "shared" / "samples"   # ../shared beside the clone
FIXTURES = TESTS / "fixtures"
LOCAL_SAMPLES = GOLDEN / "samples"
# Samples that are not the output of a tool `nicbench parse` reads (platform facts, counters).
NOT_TOOL_OUTPUT = {"SOURCES.md", "linux_cpu_sysctl.txt", "linux_ethtool_eth0_virtio.txt",
                   "linux_ethtool_json_k_eth0.json", "linux_mtu_errors.txt",
                   "typeperf_public_winrs_sample.txt"}
JSON_KEYS = {"tool", "version", "protocol", "throughput_bps", "duration_s", "streams",
             "cpu_pct", "udp", "points"}
UDP_KEYS = {"lost", "total", "loss_pct", "jitter_ms"}
POINT_KEYS = {"size_bytes", "throughput_bps", "tx_bps", "rx_bps"}
ERROR_LINE = re.compile(r"^nicbench: error: \S.*\n$")


def _load_golden():
    """tests/golden/test_golden.py by path (tests/ is not a package)."""
    spec = importlib.util.spec_from_file_location("_golden_for_cli",
                                                  GOLDEN / "test_golden.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


golden = _load_golden()


@pytest.fixture(autouse=True)
def _keep_sigterm():
    """cli.main() turns SIGTERM into KeyboardInterrupt for its process; put it back."""
    old = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, old)


def nicbench_proc(*argv: str) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("nicbench")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "nicbench.cli"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("NICBENCH_")}
    return subprocess.run([*cmd, *argv], capture_output=True, text=True, timeout=60, env=env)


def assert_json_shape(got: dict) -> None:
    assert set(got) >= JSON_KEYS, f"missing keys {sorted(JSON_KEYS - set(got))}"
    assert got["protocol"] in ("tcp", "udp")
    assert got["udp"] is None or set(got["udp"]) == UDP_KEYS
    assert isinstance(got["points"], list)
    for p in got["points"]:
        assert set(p) == POINT_KEYS


def _case(path: Path) -> dict:
    return golden._load_case(path)


def _readable(case: dict) -> bool:
    return "raises" not in case["expected"]


@pytest.mark.parametrize("case_path", CASES, ids=[p.stem for p in CASES])
def test_parse_json_matches_the_golden_case(case_path, capsys):
    case = _case(case_path)
    expected = dict(case["expected"])
    path = str(GOLDEN / case["input"])
    rc, out, err = in_process(capsys, "parse", case["tool"], path, "--json")
    if "raises" in expected:
        assert expected.pop("raises") == "ParseError"
        assert (rc, out) == (3, ""), err
        assert ERROR_LINE.match(err), err
        assert path in err, "the error line must name the file"
        if expected.get("match"):
            # the library's message, as the CLI prints it with the file put in front of
            # "where": "(line 3)" -> "(FILE: line 3)"
            library_words = err.replace(f"{path}: ", "").replace(f" ({path})", "")
            assert re.search(expected["match"], library_words), err
        return
    assert (rc, err) == (0, ""), err
    got = json.loads(out)
    assert_json_shape(got)
    assert got["tool"] == case["tool"]
    golden.assert_points(got["points"],
                         {k: expected.pop(k) for k in golden._POINT_KEYS & set(expected)})
    golden.assert_matches(got, expected)


@pytest.mark.parametrize("case_path", [p for p in CASES if _readable(_case(p))],
                         ids=[p.stem for p in CASES if _readable(_case(p))])
def test_auto_detects_the_tool_and_agrees(case_path, capsys):
    case = _case(case_path)
    path = str(GOLDEN / case["input"])
    rc, auto_out, err = in_process(capsys, "parse", "auto", path, "--json")
    assert (rc, err) == (0, ""), err
    rc, named_out, err = in_process(capsys, "parse", case["tool"], path, "--json")
    assert rc == 0, err
    assert json.loads(auto_out) == json.loads(named_out)


def test_every_shared_sample_is_covered():
    """A new file in ../shared/samples needs a golden case (or is declared not tool output)."""
    inputs = {_case(p)["input"] for p in CASES}
    for name in sorted(p.name for p in LOCAL_SAMPLES.iterdir()):
        assert f"samples/{name}" in inputs or name in NOT_TOOL_OUTPUT, (
            f"samples/{name} has no golden case")
    for name in sorted(p.name for p in (GOLDEN / "captures").iterdir()):
        assert f"captures/{name}" in inputs or name == "README.md", (
            f"captures/{name} has no golden case")
    if not SHARED_SAMPLES.is_dir():
        pytest.skip(f"{SHARED_SAMPLES} not beside this clone")
    for f in sorted(SHARED_SAMPLES.iterdir()):
        if f.name in NOT_TOOL_OUTPUT:
            continue
        if f.is_dir():   # samples/windows/*: OS outputs, kept whole in tests/fixtures/
            for g in sorted(f.iterdir()):
                mine = FIXTURES / f.name / g.name
                assert mine.is_file() and mine.read_bytes() == g.read_bytes(), (
                    f"shared sample {f.name}/{g.name} is not (the same) in tests/fixtures")
            continue
        local = LOCAL_SAMPLES / f.name
        assert local.is_file(), f"shared sample {f.name} is not in tests/golden/samples"
        assert local.read_bytes() == f.read_bytes(), f"tests/golden/samples/{f.name} differs"


def _shared_or_local(name: str) -> Path:
    return SHARED_SAMPLES / name if (SHARED_SAMPLES / name).is_file() else LOCAL_SAMPLES / name


@pytest.mark.parametrize("name", sorted(NOT_TOOL_OUTPUT - {"SOURCES.md"}))
def test_auto_refuses_what_no_tool_printed(name, capsys):
    path = _shared_or_local(name)
    if not path.is_file():
        pytest.skip(f"{name} not found")
    rc, out, err = in_process(capsys, "parse", "auto", str(path), "--json")
    assert (rc, out) == (3, "")
    assert ERROR_LINE.match(err), err
    assert "no tool's output format recognised" in err and name in err


@pytest.mark.parametrize("tool, sample", [
    ("iperf3", "iperf3_error_connrefused.json"),
    ("iperf2", "iperf2_error_connrefused.txt"),
    ("iperf2", "iperf2_error_connrefused_csv.txt"),
])
def test_a_tool_error_is_read_not_refused(tool, sample, capsys):
    rc, out, err = in_process(capsys, "parse", tool, str(LOCAL_SAMPLES / sample), "--json")
    assert (rc, err) == (0, "")
    got = json.loads(out)
    assert got["throughput_bps"] is None
    assert "refused" in got["error"].lower()
    # and the plain rendering says so too
    rc, out, err = in_process(capsys, "parse", tool, str(LOCAL_SAMPLES / sample))
    assert rc == 0 and re.search(r"^error +.*refused", out, re.M | re.I), out


@pytest.mark.parametrize("tool", ["iperf2", "iperf3", "netpipe", "ntttcp", "netio", "sockperf", "auto"])
@pytest.mark.parametrize("content", [b"", b"\x00\xff garbage \x81\n" * 20,
                                     b"hello\nthis is not a benchmark\n"],
                         ids=["empty", "binary", "text"])
def test_unreadable_output_is_exit_3_and_one_line(tool, content, tmp_path, capsys):
    path = tmp_path / "out.txt"
    path.write_bytes(content)
    rc, out, err = in_process(capsys, "parse", tool, str(path), "--json")
    assert (rc, out) == (3, "")
    assert ERROR_LINE.match(err), err
    assert str(path) in err


def test_unknown_tool_is_exit_2(capsys):
    rc, out, err = in_process(capsys, "parse", "iperf4",
                            str(LOCAL_SAMPLES / "iperf3_tcp_client.json"))
    assert rc == 2 and out == ""
    assert "invalid choice: 'iperf4'" in err


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-8-sig"])
@pytest.mark.parametrize("case_path", [p for p in CASES if _readable(_case(p))],
                         ids=[p.stem for p in CASES if _readable(_case(p))])
def test_a_re_encoded_capture_reads_the_same(case_path, encoding, tmp_path, capsys):
    """Windows PowerShell's ``>`` writes UTF-16 with a byte-order mark (``utf-16``), some
    editors without one (``utf-16-le``) or UTF-8 with one: the same figures come out."""
    case = _case(case_path)
    original = GOLDEN / case["input"]
    copy = tmp_path / original.name
    copy.write_bytes(original.read_bytes().decode(case.get("encoding", "utf-8"))
                     .encode(encoding))
    rc, want, err = in_process(capsys, "parse", "auto", str(original), "--json")
    assert (rc, err) == (0, "")
    rc, got, err = in_process(capsys, "parse", "auto", str(copy), "--json")
    assert (rc, err) == (0, ""), err
    assert json.loads(got) == json.loads(want)


def test_missing_file_or_directory_is_exit_3_and_one_line(tmp_path, capsys):
    # README: output it cannot read exits 3; a file that is not there is the first case.
    missing = tmp_path / "nope.txt"
    rc, out, err = in_process(capsys, "parse", "iperf3", str(missing))
    assert (rc, out) == (3, "")
    assert err == (f"nicbench: error: iperf3: expected a file holding a tool's output "
                   f"({missing}: cannot read: No such file or directory)\n")
    rc, out, err = in_process(capsys, "parse", "auto", str(tmp_path))
    assert (rc, out) == (3, "")
    assert err == (f"nicbench: error: auto: expected a tool's text output "
                   f"({tmp_path}: a directory, not a regular file)\n")


def test_standard_input(capsys, monkeypatch):
    import io

    text = (LOCAL_SAMPLES / "iperf2_udp_server_text.txt").read_text()
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    rc, out, err = in_process(capsys, "parse", "auto", "-", "--json")
    assert (rc, err) == (0, "")
    got = json.loads(out)
    # "[  1] 0.0000-3.0003 sec  37.5 MBytes   105 Mbits/sec   0.000 ms 0/26753 (0%)"
    assert (got["tool"], got["protocol"], got["throughput_bps"]) == ("iperf2", "udp", 105e6)
    assert got["udp"]["lost"] == 0 and got["udp"]["total"] == 26753


@pytest.mark.parametrize("sample, reverse", [
    # end.sum_received_bidir_reverse.bits_per_second of the client's file
    ("iperf3_lab_gbe_tcp_bidir_client.json", "reverse     851.9 Mbit/s (server to client)"),
    # a server's: its sum_received_bidir_reverse is zeros
    ("iperf3_lab_gbe_tcp_bidir_server.json",
     "reverse     not known here (a server does not learn what the client received)"),
])
def test_a_bidirectional_run_prints_both_directions(sample, reverse, capsys):
    rc, out, err = in_process(capsys, "parse", "iperf3", str(GOLDEN / "captures" / sample))
    assert (rc, err) == (0, "")
    lines = out.splitlines()
    assert lines[2:5] == ["throughput  835.5 Mbit/s", "forward     835.5 Mbit/s (client to "
                          "server)", reverse]


# -- the installed console script, in a subprocess --------------------------------------
@pytest.mark.parametrize("tool, sample, bps", [
    # end.sum_received.bits_per_second of the file
    ("iperf3", "iperf3_tcp_client.json", None),
    # "[  1] 0.0000-3.0021 sec  5.29 GBytes  15.1 Gbits/sec"
    ("iperf2", "iperf2_tcp_server_text.txt", 15.1e9),
])
def test_console_script(tool, sample, bps):
    proc = nicbench_proc("parse", tool, str(_shared_or_local(sample)), "--json")
    assert (proc.returncode, proc.stderr) == (0, "")
    got = json.loads(proc.stdout)
    assert_json_shape(got)
    if bps is None:
        report = json.loads(_shared_or_local(sample).read_text())
        bps = report["end"]["sum_received"]["bits_per_second"]
    assert got["throughput_bps"] == pytest.approx(bps, rel=1e-6)
    proc = nicbench_proc("parse", "auto", str(_shared_or_local(sample)))
    assert proc.returncode == 0 and proc.stdout.startswith(f"tool        {tool}")


def test_console_script_errors(tmp_path):
    garbage = tmp_path / "garbage.txt"
    garbage.write_text("not a tool's output\n")
    proc = nicbench_proc("parse", "iperf3", str(garbage))
    assert (proc.returncode, proc.stdout) == (3, "")
    assert ERROR_LINE.match(proc.stderr) and str(garbage) in proc.stderr
    proc = nicbench_proc("parse", "iperf9", str(garbage))
    assert proc.returncode == 2 and "invalid choice" in proc.stderr
    proc = nicbench_proc("parse", "netio", str(tmp_path / "missing"))
    assert proc.returncode == 3
    assert proc.stderr.count("\n") == 1 and "cannot read" in proc.stderr


def test_a_latency_output_prints_its_round_trips_not_a_throughput(capsys):
    path = str(GOLDEN / "captures" / "sockperf_lab_tcp_m1024_t2_client.txt")
    rc, out, err = in_process(capsys, "parse", "auto", path)
    assert (rc, err) == (0, "")
    assert "throughput" not in out
    assert ("round trip  p50 14.942  p90 15.753  p99 17.936  p99.9 51.656  max 1330.84 us "
            "(99691 round trips of 1024 bytes)") in out
