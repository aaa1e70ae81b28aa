"""Latency under load on the session lab, through the real CLI (``profiles/lab-loaded.yaml``,
at 2 of its 4 repetitions: REPETITIONS):
iperf 2's bounce-back probe alone (``rtt-idle``), then the same probe beside iperf3 -P 4
bulk streams in one trial (``rtt-loaded``), on the test lab's gbe card. (It ran on nojumbo
too: the same tbf-shaped Gigabit link at MTU 1500, whose queue is what is judged, through a
macvlan instead of a veth; that doubled the module's 40 s of trials for no other check,
issue 32.)

The physics judged: the load fills the link (its figure, the trial's throughput, near the
wire's goodput), and a full link's queue (tbf's, latency 5ms: about 5 ms of frames) makes
every probe message wait: the loaded p99 is above the idle p99 by at least a millisecond
(measured here: idle p99 0.15-0.2 ms, loaded p99 12-20 ms), and where a repetition's load
made the link the bottleneck (95 % of its goodput) the median round trip of at least one
such repetition waited behind that queue too (p50 at least 1 ms; measured 4.6-6.2 ms; a
sender short of CPU now and then lets the queue drain, as one repetition at 97 % with a
p50 of 0.09 ms on the busy machine showed). A loaded figure short of that, or a load that did not fill the
link, fails only on a quiet machine (``loadcheck.Beside``); with other load on the
machine it is skipped with the figures and the load. Every round-trip figure is read again from the raw files by the
tool's own parser, the report shows idle and loaded side by side with the score, and
``--plan`` shows both roles' commands and the time.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from clihelp import nicbench
from loadcheck import Beside, lab_namespaces
from leftovers import assert_left_nothing

from nicbench.config.profile import Role
from nicbench.results.records import Status, TrialRecord
from nicbench.tools.registry import TOOLS

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parents[2]
PROFILE = REPO / "profiles" / "lab-loaded.yaml"
PAIRS = {"gbe": 1e9}     # the test lab's Gigabit card (veth), the pair measured
FILLED = 0.90            # the load carries at least this share of the wire's goodput
# At this share the link, not the sender, is the bottleneck and its queue stands: measured
# p50 4.6-6.2 ms at 95-97 %, but 0.08-0.1 ms at 91-94 % (the sender short of CPU).
BOTTLENECK = 0.95
QUEUE_US = 1000.0        # loaded p99 above idle p99 by at least this: the tbf queue
# The profile's 4 repetitions of each test, 2 here: each loaded repetition filled the link
# to 95-97 % on a quiet machine and each showed the queue, so two judge the same physics
# in half the module's 40 s of trials, all of which the machine gives this test alone.
REPETITIONS = 2


def goodput(rate_bps: float) -> float:
    return rate_bps * (1500 - 52) / (1500 + 38)


def records(out: Path) -> list[TrialRecord]:
    return [TrialRecord.from_dict(json.loads(line))
            for line in (out / "trials.jsonl").read_text().splitlines()]


def reparsed_latency(out: Path, raw: dict[str, str]):
    text = {end: (out / rel).read_text() for end, rel in raw.items()}
    return TOOLS["iperf2"].driver.interpret(text.get("client", ""), text.get("server", ""),
                                            None, "tcp").latency


@pytest.fixture(scope="module")
def loaded_run(lab, tmp_path_factory) -> tuple[Path, Beside]:
    """One run of the profile on the pairs of PAIRS, with the machine's load beside it."""
    here = tmp_path_factory.mktemp("loaded")
    out = here / "run"
    text = PROFILE.read_text()
    assert "\nrepetitions: 4\n" in text
    profile = here / "lab-loaded.yaml"
    profile.write_text(text.replace("\nrepetitions: 4\n", f"\nrepetitions: {REPETITIONS}\n"))
    pairs = [w for p in PAIRS for w in ("--pair", p)]
    with Beside(lab_namespaces(lab)) as load:
        proc = nicbench("run", str(profile), "-i", str(lab.inventory_file), *pairs,
                        "--out", str(out), timeout=300)
    assert proc.returncode == 0, proc.stderr
    return out, load


@pytest.mark.parametrize("pair", list(PAIRS))
def test_a_full_link_delays_the_probe(loaded_run, pair):
    out, load = loaded_run
    recs = [r for r in records(out) if r.pair == pair]
    idle = [r for r in recs if r.test == "rtt-idle"]
    loaded = [r for r in recs if r.test == "rtt-loaded"]
    reps = list(range(1, REPETITIONS + 1))
    assert [r.repetition for r in idle] == reps == [r.repetition for r in loaded]
    for rec in idle:
        assert rec.status is Status.OK, rec.reason
        assert rec.tool == "iperf2" and "--bounceback" in rec.commands["client"]
        assert rec.latency is not None and rec.latency.samples >= 50
        assert rec.latency.message_bytes == 64 and rec.throughput_bps is None
        assert reparsed_latency(out, rec.raw) == rec.latency
    for rec in loaded:
        assert rec.status is Status.OK, rec.reason
        [probe] = rec.beside
        assert (probe.role, probe.tool, probe.status) == (Role.PROBE, "iperf2", Status.OK)
        assert probe.latency is not None and probe.latency.samples >= 20
        assert "--bounceback" in probe.commands["client"]
        assert reparsed_latency(out, probe.raw) == probe.latency
        assert rec.latency is None and rec.throughput_bps is not None
    best_load = max(r.throughput_bps or 0.0 for r in loaded)
    idle_p99 = min(r.latency.p99_us for r in idle if r.latency)
    loaded_p99 = min(p.latency.p99_us for r in loaded for p in r.beside if p.latency)
    figures = (f"{pair}: load {best_load / 1e6:.1f} Mbit/s (goodput "
               f"{goodput(PAIRS[pair]) / 1e6:.1f}), idle p99 {idle_p99:.0f} us, loaded p99 "
               f"{loaded_p99:.0f} us")
    print(figures)
    assert_left_nothing(recs)
    # a queue under load: judged first, as it holds on a busy machine too
    if loaded_p99 < idle_p99 + QUEUE_US:
        if load.busy:
            pytest.skip(f"no queue under load, {figures}, with other load on the machine "
                        f"({load}): not judged")
        raise AssertionError(f"no queue under load on a quiet machine ({load}): {figures}")
    if best_load < goodput(PAIRS[pair]) * FILLED:
        if load.busy:
            pytest.skip(f"the queue was there ({figures}), but the load did not fill the "
                        f"link with other load on the machine ({load}): not judged")
        raise AssertionError(f"the load did not fill the link on a quiet machine ({load}): "
                             f"{figures}")
    # Where the link was the bottleneck, its queue stood: the median round trip waited
    # behind it (measured 4.6-6.2 ms behind tbf's 5 ms).
    full = [(rec.repetition, rec.throughput_bps or 0.0, lat.p50_us) for rec in loaded
            if (lat := rec.beside[0].latency) is not None
            and (rec.throughput_bps or 0.0) >= goodput(PAIRS[pair]) * BOTTLENECK]
    if full and max(p50 for _, _, p50 in full) < QUEUE_US:
        seen = "; ".join(f"repetition {rep}: {bps / 1e6:.1f} Mbit/s, p50 {p50:.0f} us"
                         for rep, bps, p50 in full)
        if load.busy:
            pytest.skip(f"the link the bottleneck but no queue at p50 ({seen}) with other "
                        f"load on the machine ({load}): not judged")
        raise AssertionError(f"the link the bottleneck but no queue at p50 on a quiet "
                             f"machine: {seen}")


@pytest.mark.shares_machine     # the report of the module's run: no figure of this machine
def test_the_report_shows_idle_and_loaded_side_by_side(loaded_run, tmp_path):
    out, _ = loaded_run
    proc = nicbench("report", str(out), "--out", str(tmp_path / "rep"), timeout=120)
    assert proc.returncode == 0, proc.stderr
    with (tmp_path / "rep" / "tables" / "loaded-rtt-loaded.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(PAIRS)
    for row in rows:
        assert row["notes"].startswith("idle: test rtt-idle")
        increase = float(row["p99 increase ms"])
        assert increase == pytest.approx(float(row["loaded p99 ms"]) - float(row["idle p99 ms"]),
                                         abs=0.011)
        assert float(row["loaded RPM"]) < float(row["idle RPM"])
        assert float(row["load Mbit/s"]) > 0
    page = (tmp_path / "rep" / "report.html").read_text()
    assert 'id="under-load"' in page and "Smallest increase under load: test rtt-loaded" in page


@pytest.mark.shares_machine      # a plan: nothing measured
def test_the_plan_shows_the_load_and_the_probe(lab):
    proc = nicbench("run", str(PROFILE), "-i", str(lab.inventory_file), "--pair", "gbe",
                    "--plan", timeout=60)
    assert proc.returncode == 0, proc.stderr
    trial = [ln for ln in proc.stdout.splitlines() if "rtt-loaded #1]" in ln]
    assert any("iperf3 -c " in ln and "-P 4" in ln for ln in trial), trial
    assert any(re.search(r"iperf -c \S+ -B \S+ -p 5001 -e -l 64 --bounceback -t 5 "
                         r"--bounceback-period 0\.05$", ln) for ln in trial), trial
    assert any("iperf -s " in ln for ln in trial) and any("iperf3 -s " in ln for ln in trial)
    idle = [ln for ln in proc.stdout.splitlines() if "rtt-idle #1]" in ln]
    assert any("--bounceback" in ln for ln in idle) and not any("iperf3" in ln for ln in idle)
    assert re.search(r"estimated time: \d", proc.stdout)
