"""Two tools in one trial on the session lab, through the real CLI: iperf3 bulk streams
(the load, ``-P 4``) with an iperf 2 probe beside them (``profiles/lab-load-probe.yaml``:
one point, 2 repetitions of 3 s).

Both tools run at once over the same link (lane b's, shaped to 100 Mbit/s), so each gets
some of it and together no more than the wire carries in the trial's time; each output is stored as raw files, parsed by its own
tool's parser, and parsing those files again gives the record's figures. The hosts are
left with no process and no file of the trials, and ``--plan`` shows both tools'
commands. A probe whose server cannot start (its port taken) fails the trial with its
own words, and the load's server, already up, is stopped and kept; Ctrl-C in the middle
of a trial stops both tools at once and leaves nothing behind.
"""

from __future__ import annotations

import json
import signal
import time
import re
import subprocess
import textwrap
from pathlib import Path

import pytest
from portheld import port_held
from clihelp import argv, env, nicbench, read_until
from leftovers import assert_left_nothing, left_since, running_in

from nicbench.config.loader import load_profile
from nicbench.config.profile import Role
from nicbench.lab.lab import rate_bps
from nicbench.physics.link import goodput_bps
from nicbench.results.records import Failure, Status, TrialRecord
from nicbench.tools.registry import CATALOG, TOOLS

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parents[2]
PROFILE = REPO / "profiles" / "lab-load-probe.yaml"
WITHIN = 0.02


def goodput_1500_bps(lab) -> float:
    """TCP goodput at MTU 1500 on the gbe link as the lab shapes it."""
    link = next(x for x in lab.spec.links() if x.adapter.key == "gbe")
    return goodput_bps(rate_bps(link.adapter.shaped_rate), 1500)


def reparsed(out: Path, tool: str, protocol: str, raw: dict[str, str]) -> float | None:
    """A tool's figure read again from its raw files, by its own driver."""
    text = {end: (out / rel).read_text() for end, rel in raw.items()}
    parsed = TOOLS[tool].driver.interpret(text.get("client", ""), text.get("server", ""),
                                          text.get("outfile"), protocol)
    return parsed.throughput_bps


def test_a_probe_measures_beside_bulk_streams(lab, tmp_path):
    out = tmp_path / "two"
    proc = nicbench("run", str(PROFILE), "-i", str(lab.inventory_file), "--pair", "gbe",
                    "--out", str(out), timeout=180)
    assert proc.returncode == 0, proc.stderr
    lines = (out / "trials.jsonl").read_text().splitlines()
    recs = [TrialRecord.from_dict(json.loads(line)) for line in lines]
    assert [r.repetition for r in recs] == [1, 2]
    (test,) = load_profile(PROFILE, CATALOG).tests       # the durations the profile asks for
    load_s, beside_s = test.params["duration_s"], test.beside[0].params["duration_s"]
    for rec in recs:
        assert rec.status is Status.OK, rec.reason
        assert rec.tool == "iperf3" and "-P 4" in rec.commands["client"]
        [probe] = rec.beside
        assert (probe.role, probe.tool, probe.status) == (Role.PROBE, "iperf2", Status.OK)
        assert probe.commands["client"].startswith("iperf -c ") and probe.version
        # stored apart: the load's files as always, the probe's named by its role
        assert set(rec.raw) >= {"client", "server"} and set(probe.raw) >= {"client", "server"}
        assert all(".probe-" in rel for rel in probe.raw.values())
        assert not set(rec.raw.values()) & set(probe.raw.values())
        # each parsed by its own parser, and so again from its files
        assert rec.throughput_bps > 0 and probe.throughput_bps > 0
        assert reparsed(out, "iperf3", "tcp", rec.raw) == rec.throughput_bps
        assert reparsed(out, "iperf2", "tcp", probe.raw) == probe.throughput_bps
        assert probe.duration_s and abs(probe.duration_s - beside_s) < 0.5
        assert rec.duration_s and abs(rec.duration_s - load_s) < 0.5
        # at once over one link: together no more than it carries in the time either ran.
        # Not the sum of the two rates: each is over its own window, and a busy machine
        # starts one a little after the other (seen: 1,004.8 Mbit/s "together" on a
        # 941.5 Mbit/s link), while both ran within the trial's wall time.
        bits = rec.throughput_bps * rec.duration_s + probe.throughput_bps * probe.duration_s
        goodput = goodput_1500_bps(lab)
        assert rec.wall_s and bits <= goodput * rec.wall_s * (1 + WITHIN), (
            f"{bits / 1e6:,.0f} Mbit together in a {rec.wall_s:.2f} s trial: "
            f"{bits / rec.wall_s / 1e6:.1f} Mbit/s on a {goodput / 1e6:.1f} link")
    assert_left_nothing(recs, out)


def test_the_plan_shows_both_tools(lab):
    proc = nicbench("run", str(PROFILE), "-i", str(lab.inventory_file), "--pair", "gbe",
                    "--plan", timeout=60)
    assert proc.returncode == 0, proc.stderr
    trial = [ln for ln in proc.stdout.splitlines() if "bulk-probe #1]" in ln]
    assert any("iperf3 -s " in ln for ln in trial) and any("iperf -s " in ln for ln in trial)
    assert any("iperf3 -c " in ln and "-P 4" in ln for ln in trial)
    assert any(re.search(r"iperf -c \S+ -B \S+ -p 5001 .*-t 3$", ln) for ln in trial)
    assert "... and 1 more repetitions of the same" in proc.stdout


TAKEN_PORT = 5394
TAKEN_PROFILE = f"""\
    format_version: 1
    name: probe-port-taken
    source: "nicbench lab test: a probe whose port another program holds"
    repetitions: 1
    give_up_after: 0
    timeout_s: 30
    mtu: [1500]
    tests:
      - name: bulk-probe
        tool: iperf3
        params: {{duration_s: 1}}
        beside:
          - {{role: probe, tool: iperf2, params: {{duration_s: 1, port: {TAKEN_PORT}}}}}
    """


def test_a_probe_that_cannot_start_fails_the_trial(lab, tmp_path):
    receiver = next(x for x in lab.spec.links() if x.adapter.key == "gbe").host_a.name
    prof = tmp_path / "taken.yaml"
    prof.write_text(textwrap.dedent(TAKEN_PROFILE))
    out = tmp_path / "out"
    with port_held(receiver, TAKEN_PORT):
        proc = nicbench("run", str(prof), "-i", str(lab.inventory_file), "--pair", "gbe",
                        "--out", str(out), timeout=120)
    # its one trial failed, so the pair measured nothing: the run ends in error (exit 1)
    assert proc.returncode == 1, proc.stderr
    assert "pair gbe could not be measured: no trial measured" in proc.stderr, proc.stderr
    [rec] = [TrialRecord.from_dict(json.loads(line))
             for line in (out / "trials.jsonl").read_text().splitlines()]
    [probe] = rec.beside
    assert probe.failure is Failure.SERVER_ENDED and probe.reason
    assert "Address already in use" in probe.reason or "bind" in probe.reason, probe.reason
    assert (rec.status, rec.failure) == (Status.FAILED, Failure.SERVER_ENDED)
    assert rec.reason == f"probe iperf2: {probe.reason}"
    # no client ran; the load's server was up and was stopped, its output kept
    assert "client" not in rec.exit_status and "client" not in probe.exit_status
    assert "server" in rec.raw and "server" in probe.raw
    assert_left_nothing([rec], out)


INTERRUPTED_PROFILE = """\
    format_version: 1
    name: load-probe-interrupted
    source: "nicbench lab test: Ctrl-C in a two-tool trial"
    repetitions: 1
    timeout_s: 60
    mtu: [1500]
    tests:
      - name: bulk-probe
        tool: iperf3
        params: {duration_s: 15, streams: 2}
        beside:
          - {role: probe, tool: iperf2, protocol: udp, params: {duration_s: 15, rate: 10M}}
    """


def test_ctrl_c_in_a_two_tool_trial_stops_both(lab, tmp_path):
    prof = tmp_path / "interrupted.yaml"
    prof.write_text(textwrap.dedent(INTERRUPTED_PROFILE))
    out = tmp_path / "out"
    started = time.time()
    proc = subprocess.Popen(argv("run", str(prof), "-i", str(lab.inventory_file), "--pair",
                                 "gbe", "--out", str(out)),
                            cwd=REPO, env=env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        read_until(proc, lambda line, _: line.startswith("== gbe mtu1500"), timeout_s=60)
        time.sleep(3.0)       # inside the trial's 15 s transfer
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _rest, err = proc.communicate(timeout=60)
        stopped_s = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    # Both clients were killed, the probe's on its thread too: the run did not wait out
    # the 10 s or more its transfer had left (an iperf 2 UDP client sends on whether or
    # not its server is still there).
    assert stopped_s < 8, f"{stopped_s:.1f} s to stop"
    assert_left_nothing([], out)
    assert left_since("gbe.mtu1500.bulk-probe.r1", started) == []
    for host in (h.name for h in lab.spec.hosts()):
        for port in (5001, 5201):
            listening = subprocess.run(["ip", "netns", "exec", host, "ss", "-Hlntu",
                                        f"sport = :{port}"], capture_output=True, text=True,
                                       timeout=10).stdout
            assert listening.strip() == "", (host, port, listening)
    running = running_in((h.name for h in lab.spec.hosts()), r"^iperf3? -[sc] .*198\.18\.0\.")
    assert running == [], running
