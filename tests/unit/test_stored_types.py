"""Typed all the way down, and the files the same: records, manifests and journals that
nicbench stored before its curves, UDP statistics, facts and kinds were typed are read as
the typed objects and written back byte for byte.

The stored files are real: tests/report/data (three runs, formats 1 and 2) and
tests/unit/data/stored (UDP trials and a journal with pending changes, written by the
commit before these types; see tests/unit/data/README.md).
"""

from __future__ import annotations

import csv
import json
import shutil
from dataclasses import asdict
from pathlib import Path

import pytest

from nicbench.errors import TuningError, TuningErrorKind, UsageError
from nicbench.execution.events import PairState
from nicbench.platforms.base import SettingKind
from nicbench.platforms.tuning import Change, TuningSession, read_journal_entries
from nicbench.results.facts import (HostFacts, InterfaceFacts, LinkState, WindowsHostFacts,
                                    WindowsInterfaceFacts)
from nicbench.report.model import BarStatus
from nicbench.results.campaign import CampaignStateName, RunStateName
from nicbench.results.manifest import Manifest
from nicbench.results.morning import CellStatus
from nicbench.results.columns import Col
from nicbench.results.dataframe import DirSource
from nicbench.results.records import OLD_KEYS, CpuPart, Failure, TrialRecord, current
from nicbench.results.rundir import RunDir
from nicbench.results.summary import RowStatus, summary_rows
from nicbench.tools import netpipe
from nicbench.tools.base import Point, UdpStats
from nicbench.tools.registry import TOOLS

TESTS = Path(__file__).resolve().parents[1]
REPORT_DATA = TESTS / "report" / "data"
STORED = TESTS / "unit" / "data" / "stored"
GOLDEN = TESTS / "golden"


def copy_run(tmp_path: Path, trials: Path) -> RunDir:
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(trials, src / "trials.jsonl")
    return RunDir(src)


def as_format_3(trials: Path) -> bytes:
    """A format-2 trials.jsonl as this format writes it, made from its JSON alone: each
    line's six CPU keys out, ``cpu`` (each host's busy, tool and other; a host without
    any null; no ``cpu`` if neither) where ``cpu_sender_pct`` was, format_version 3;
    every other key's bytes as they were."""
    out = []
    for line in trials.read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        assert data["format_version"] == 2
        sides = {side: {part: data.get(f"cpu_{side}{suffix}_pct")
                        for part, suffix in (("busy", ""), ("tool", "_tool"),
                                             ("other", "_other"))}
                 for side in ("sender", "receiver")}
        cpu = {side: split if any(v is not None for v in split.values()) else None
               for side, split in sides.items()}
        grouped: dict = {}
        for key, value in data.items():
            if key == "cpu_sender_pct" and any(cpu.values()):
                grouped["cpu"] = cpu
            if key not in OLD_KEYS:
                grouped[key] = value
        grouped["format_version"] = 3
        out.append(json.dumps(grouped, default=str) + "\n")
    return "".join(out).encode()


def rewritten(tmp_path: Path, trials: Path) -> tuple[list[TrialRecord], bytes]:
    """The records of a stored trials.jsonl, read strictly, and the file RunDir writes
    when it appends them again."""
    recs = list(copy_run(tmp_path, trials).records(strict=True))
    out = RunDir(tmp_path / "out").create()
    for rec in recs:
        out.append(rec)
    return recs, out.trials_file.read_bytes()


# -- (a) points and UDP statistics: typed in memory, the same line on disk ------------------
def test_udp_trials_are_typed_and_written_back_byte_for_byte(tmp_path):
    recs, again = rewritten(tmp_path, STORED / "udp_trials.jsonl")
    # format 2 written back as format 3: its CPU grouped, every other byte as it was
    assert again == as_format_3(STORED / "udp_trials.jsonl")
    (tmp_path / "v3.jsonl").write_bytes(again)
    (tmp_path / "again").mkdir()
    assert rewritten(tmp_path / "again", tmp_path / "v3.jsonl")[1] == again
    assert len(recs) == 5 and all(isinstance(r.udp, UdpStats) for r in recs)
    first = recs[0]
    assert (first.test, first.udp) == ("iperf3-udp", UdpStats(
        lost=0, total=8609, loss_pct=0.0, jitter_ms=0.0016230520051101686))
    sweep = [r for r in recs if r.test == "iperf2-udp-sweep"]
    assert [r.udp.lost for r in sweep if r.udp] == [11278, 9630, 11893]


def test_netpipe_curves_are_points_and_written_back_byte_for_byte(tmp_path):
    trials = REPORT_DATA / "roundup" / "trials.jsonl"       # format 2, as the engine wrote it
    recs, again = rewritten(tmp_path, trials)
    assert again == as_format_3(trials)
    (tmp_path / "v3.jsonl").write_bytes(again)
    (tmp_path / "again").mkdir()
    assert rewritten(tmp_path / "again", tmp_path / "v3.jsonl")[1] == again
    curves = [r for r in recs if r.points]
    assert len(curves) == 12 and {r.tool for r in curves} == {"netpipe"}
    assert all(isinstance(p, Point) for r in curves for p in r.points)
    first = json.loads(next(line for line in trials.read_text().splitlines()
                            if '"points": [{' in line))
    rec = TrialRecord.from_dict(first)
    assert rec.points[0] == Point(**first["points"][0])
    assert rec.points[-1].size_bytes == first["points"][-1]["size_bytes"]


def test_a_parsed_run_is_stored_as_the_dicts_it_was_stored_as(tmp_path):
    # What the trial stored before: ParsedRun.to_json()'s udp, and each point as a dict of
    # size_bytes, throughput_bps, tx_bps, rx_bps (in that order).
    iperf3 = TOOLS["iperf3"].driver.interpret(
        (GOLDEN / "captures" / "iperf3_lab_udp_b100M_client.json").read_text(),
        (GOLDEN / "captures" / "iperf3_lab_udp_b100M_server.json").read_text(), None, "udp")
    curve = netpipe.parse((GOLDEN / "captures" / "nptcp_lab_lo_u65536_outfile.txt").read_text())
    rec = TrialRecord.from_dict(json.loads(
        (STORED / "udp_trials.jsonl").read_text().splitlines()[0]))
    rec.udp = iperf3.udp
    assert iperf3.udp is not None
    assert json.dumps(rec.to_dict()["udp"]) == json.dumps(iperf3.to_json()["udp"])
    rec.points = list(curve.points)
    assert len(curve.points) > 10
    assert json.dumps(rec.to_dict()["points"]) == json.dumps(
        [{"size_bytes": p.size_bytes, "throughput_bps": p.throughput_bps,
          "tx_bps": p.tx_bps, "rx_bps": p.rx_bps} for p in curve.points])


# -- (b) older formats still read --------------------------------------------------------
# Every run the project keeps (the report's, the store benchmark's corpus, the stored UDP
# trials), not the bad input made to be refused.
COMMITTED = sorted({*TESTS.glob("**/trials.jsonl"), *STORED.glob("*.jsonl"),
                    *(TESTS.parent / "bench" / "data").glob("**/trials.jsonl")} - {
    p for p in TESTS.glob("**/trials.jsonl") if "badinput" in p.parts})


def test_the_committed_runs_are_format_1_and_2_with_cpu():
    versions = {json.loads(line).get("format_version", 1) for path in COMMITTED
                for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}
    assert versions == {1, 2}
    assert len(COMMITTED) >= 10


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: str(p.relative_to(TESTS.parent)))
def test_every_committed_trials_file_reads_to_the_same_cpu_figures(path, tmp_path):
    """Format 1 and 2 kept each CPU figure as a key of its own: read into the record's
    one ``cpu`` (and the trial frame's columns), every figure is the one the line holds,
    by the plain reading and by the full one alike, and nothing else of the record
    changes (the line without its CPU keys, as format 3 writes it)."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
             if line.strip()]
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(path, run / "trials.jsonl")
    read = list(RunDir(run).records(strict=True))                  # the plain way first
    assert len(read) == len(lines)
    parts = {"cpu_sender_pct": CpuPart.SENDER_BUSY, "cpu_receiver_pct": CpuPart.RECEIVER_BUSY,
             "cpu_sender_tool_pct": CpuPart.SENDER_TOOL,
             "cpu_receiver_tool_pct": CpuPart.RECEIVER_TOOL,
             "cpu_sender_other_pct": CpuPart.SENDER_OTHER,
             "cpu_receiver_other_pct": CpuPart.RECEIVER_OTHER}
    assert set(parts) == set(OLD_KEYS)
    seen = 0
    for data, rec in zip(lines, read, strict=True):
        full = TrialRecord.from_dict(data)
        assert full == rec
        for key, part in parts.items():
            assert part.of(rec) == data.get(key), (rec.trial_id, key)
            seen += data.get(key) is not None
        assert rec.cpu_tool_pct == data.get("cpu_tool_pct")
        written = rec.to_dict()
        assert {k: v for k, v in written.items() if k not in ("cpu", "format_version")} == \
            {k: v for k, v in TrialRecord.from_dict(
                {k: v for k, v in data.items() if k not in OLD_KEYS}).to_dict().items()
             if k not in ("cpu", "format_version")}
    assert seen > 0                     # each committed file holds CPU figures
    frame = DirSource([run]).trial_frame()
    for column, key in ((Col.CPU_SENDER_PCT, "cpu_sender_pct"),
                        (Col.CPU_RECEIVER_PCT, "cpu_receiver_pct")):
        got = [None if v != v else v for v in frame[column].tolist()]
        assert got == [d.get(key) for d in _standing(lines, read)], column


def _standing(lines: list[dict], read: list[TrialRecord]) -> list[dict]:
    """The lines of the records that stand (what a trial frame holds), in file order."""
    keep = {id(r) for r in current(read)}
    return [d for d, r in zip(lines, read, strict=True) if id(r) in keep]
def test_summary_statuses_are_written_as_the_words_they_were(tmp_path):
    run = REPORT_DATA / "roundup"
    rows = summary_rows(RunDir(run).records(strict=True), Manifest.read(
        run / "manifest.json").profile)
    with open(run / "summary.csv", newline="", encoding="utf-8") as fh:
        stored = [row["status"] for row in csv.DictReader(fh)]
    assert [r.status for r in rows] == stored
    assert {type(r.status) for r in rows} == {RowStatus}
    assert set(stored) == {"ok", "failed", "skipped"}


def test_format_1_records_read_with_their_curves_typed(tmp_path):
    trials = REPORT_DATA / "run-a" / "trials.jsonl"
    stored = [json.loads(line) for line in trials.read_text().splitlines()]
    assert {d.get("format_version", 1) for d in stored} == {1}
    recs = list(copy_run(tmp_path, trials).records(strict=True))
    assert len(recs) == len(stored)
    for rec, d in zip(recs, stored, strict=True):
        assert [asdict(p) for p in rec.points] == d["points"]
        assert rec.udp is None and d["udp"] is None
        assert rec.to_dict()["points"] == d["points"]


@pytest.mark.parametrize("field, value, says", [
    ("points", [{"size_bytes": "16K", "throughput_bps": 1.0}],
     "points[0] {'size_bytes': '16K', 'throughput_bps... is not a block size"),
    ("points", [{"size_bytes": 1024}], "points[0] {'size_bytes': 1024} is not a block size"),
    ("points", [[1024, 1.0]], "points[0] [1024, 1.0] is not a block size"),
    ("udp", {"lost": 1, "total": 10, "color": "red"},
     "udp {'lost': 1, 'total': 10, 'color': 'red'} is not UDP statistics"),
    ("udp", {"lost": "1", "total": 10}, "udp {'lost': '1', 'total': 10} is not UDP statistics"),
    ("udp", [0, 10], "udp [0, 10] is not UDP statistics"),
])
def test_a_stored_curve_or_udp_that_is_not_one_is_one_line(tmp_path, field, value, says):
    line = json.loads((STORED / "udp_trials.jsonl").read_text().splitlines()[0])
    line[field] = value
    run = RunDir(tmp_path).create()
    run.trials_file.write_text(json.dumps(line) + "\n")
    with pytest.raises(UsageError) as err:
        list(run.records(strict=True))
    assert f"trials.jsonl:1: not a nicbench trial record ({says}" in str(err.value)
    assert list(run.records()) == []        # not strict: skipped, never half-read


@pytest.mark.parametrize("run", ["run-a", "run-b", "roundup"])
def test_stored_host_and_interface_facts_read_typed_and_write_the_same(run):
    path = REPORT_DATA / run / "manifest.json"
    stored = json.loads(path.read_text())
    m = Manifest.read(path)
    assert m.hosts and all(type(f) is HostFacts for f in m.hosts.values())
    assert m.interfaces and all(type(f) is InterfaceFacts for f in m.interfaces.values())
    gbe = m.interfaces["gbe/nbr-a"]
    assert (gbe.kind, gbe.driver, gbe.link, gbe.addresses[0][:7]) == (
        "veth", "veth", LinkState.UP, "198.18.")
    written = m.model_dump(mode="json")
    # The same facts in the same order; a fact added since (memory_bytes) is written as
    # not read (null) and nothing else changes.
    added = {"memory_bytes", "os_build"}
    for key in ("hosts", "interfaces"):
        for name, facts in written[key].items():
            assert {k for k in facts if k not in stored[key][name]} <= added
            assert all(facts.get(k) is None for k in added if k not in stored[key][name])
            kept = {k: v for k, v in facts.items() if k in stored[key][name]}
            assert json.dumps(kept) == json.dumps(stored[key][name])


def test_windows_facts_keep_their_own_fields_through_the_file(tmp_path):
    m = Manifest.read(REPORT_DATA / "roundup" / "manifest.json")
    m.hosts["wa"] = WindowsHostFacts(
        os="windows", kernel="10.0.20348", cpu_model="Xeon", cpus=4, hostname="WA",
        caption="Microsoft Windows Server 2022 Standard", version="10.0.20348",
        build="20348", defender_realtime=True, autotuning="Normal", cpu_counters=4)
    m.interfaces["i350/wa"] = WindowsInterfaceFacts(
        name="Ethernet 2", mtu=1500, max_mtu=9000, state="up", carrier=True,
        addresses=("198.18.0.1",), jumbo_keyword="*JumboPacket", jumbo_valid=("1514", "9014"),
        jumbo_range=(1514, 9014, None))
    m.write(tmp_path / "manifest.json")
    stored = json.loads((tmp_path / "manifest.json").read_text())
    assert "registry_notes" not in stored["hosts"]["wa"]        # none yet: as before
    assert stored["interfaces"]["i350/wa"]["jumbo_range"] == [1514, 9014, None]
    back = Manifest.read(tmp_path / "manifest.json")
    assert back.hosts["wa"] == m.hosts["wa"]
    assert back.interfaces["i350/wa"] == m.interfaces["i350/wa"]
    assert type(back.hosts["nbr-a"]) is HostFacts
    back.note_registry("wa", ["TcpWindowSize: ignored by this Windows, not written"])
    back.note_registry("nbr-a", ["a Linux host has no registry"])          # nothing to note
    back.write(tmp_path / "manifest.json")
    stored = json.loads((tmp_path / "manifest.json").read_text())
    assert stored["hosts"]["wa"]["registry_notes"] == [
        "TcpWindowSize: ignored by this Windows, not written"]
    assert list(stored["hosts"]["wa"])[-1] == "registry_notes"
    assert "registry_notes" not in stored["hosts"]["nbr-a"]


def test_a_stored_fact_of_the_wrong_type_names_where(tmp_path):
    stored = json.loads((REPORT_DATA / "roundup" / "manifest.json").read_text())
    stored["interfaces"]["gbe/nbr-a"]["mtu"] = "jumbo"
    (tmp_path / "manifest.json").write_text(json.dumps(stored))
    with pytest.raises(UsageError, match=r"manifest.json: interfaces\.gbe/nbr-a\.interface\.mtu: "):
        Manifest.read(tmp_path / "manifest.json")


def test_a_journal_with_pending_changes_reads_as_kinds_and_writes_the_same(tmp_path):
    path = STORED / "tuning_pending.json"
    changes = read_journal_entries(path)[0]
    assert [(c.kind, c.key, c.original, c.applied) for c in changes] == [
        (SettingKind.MTU, "gbe", "1500", "9000"),
        (SettingKind.SYSCTL, "net.ipv4.tcp_rmem", "4096\t131072\t33554432",
         "4096 262144 33554432")]
    assert all(type(c.kind) is SettingKind for c in changes)
    session = TuningSession.load(path)
    session.journal = tmp_path / "tuning.json"
    session._write_journal()
    assert json.loads(session.journal.read_text())["changes"] == \
        json.loads(path.read_text())["changes"]


def test_a_format_1_journal_reads():
    assert read_journal_entries(REPORT_DATA / "run-a" / "tuning.json")[0] == []


def test_a_journal_with_a_kind_nicbench_does_not_have_is_one_line(tmp_path):
    data = json.loads((STORED / "tuning_pending.json").read_text())
    data["changes"][0]["kind"] = "bios"
    (tmp_path / "tuning.json").write_text(json.dumps(data))
    with pytest.raises(UsageError, match=r"tuning.json: not a nicbench tuning journal "
                                         r"\('bios' is not a valid SettingKind\): put"):
        read_journal_entries(tmp_path / "tuning.json")[0]


# -- (c) the enums say what the strings said ----------------------------------------------
def test_the_enums_are_the_words_the_files_and_events_always_had():
    assert [k.value for k in SettingKind] == [
        "mtu", "sysctl", "jumbo", "registry", "firewall", "reboot"]
    assert [k.value for k in TuningErrorKind] == [
        "refused", "path", "mismatch", "interface", "other"]
    assert [s.value for s in PairState] == ["done", "stopped", "failed"]
    assert [s.value for s in LinkState] == ["up", "unknown", "down"]
    assert [s.value for s in RowStatus] == ["ok", "partial", "failed", "skipped"]
    assert [s.value for s in BarStatus] == ["ok", "partial", "failed", "skipped", "published"]
    assert {BarStatus.of(s) for s in RowStatus} == set(BarStatus) - {BarStatus.PUBLISHED}
    assert [s.value for s in CellStatus] == ["ok", "incomplete", "not measured", "not run"]
    assert [s.value for s in RunStateName] == [
        "pending", "running", "done", "interrupted", "failed"]
    assert [s.value for s in CampaignStateName] == [
        "running", "finished", "interrupted", "failed"]
    assert json.dumps(asdict(Change("h", SettingKind.REBOOT, "k", None, "pending"))) == \
        '{"host": "h", "kind": "reboot", "key": "k", "original": null, ' \
        '"applied": "pending", "restored": false}'


def test_a_change_read_as_words_is_typed():
    assert Change("h", "sysctl", "k", "1", "2").kind is SettingKind.SYSCTL
    with pytest.raises(ValueError):
        Change("h", "bios", "k", "1", "2")


def test_tuning_failures_map_as_the_runner_mapped_their_words():
    before = {"refused": Failure.REFUSED, "path": Failure.PATH_CHECK,
              "mismatch": Failure.TUNING, "interface": Failure.INTERFACE,
              "other": Failure.TUNING}
    assert {k.value: Failure.of_tuning(k) for k in TuningErrorKind} == before
    err = TuningError("h", "mtu", 9000, "Invalid argument", kind="path")
    assert err.kind is TuningErrorKind.PATH
    with pytest.raises(ValueError):
        TuningError("h", "mtu", 9000, "?", kind="broken")


def test_failure_words_are_the_words_the_charts_always_said():
    assert {f.value: f.word for f in Failure} == {
        "refused": "refused", "path-check": "path check failed", "tuning": "not tuned",
        "interface": "no link", "not-ready": "not ready", "timeout": "timed out", "tool-error": "tool error",
        "exit-status": "failed", "unparsed": "unreadable", "no-result": "no result",
        "dead-link": "stalled", "no-receiver-report": "stalled",
        "link-down": "link down", "overran": "ran long", "short-transfer": "short transfer",
        "output-cap": "too much output",
        "server-ended": "receiver failed", "not-listening": "receiver failed",
        "host-lost": "host lost", "remote": "host error", "given-up": "given up",
        "not-run": "not run"}


@pytest.mark.parametrize("word, link", [
    ("up", LinkState.UP), ("unknown", LinkState.UNKNOWN), ("down", LinkState.DOWN),
    ("lowerlayerdown", LinkState.DOWN), ("notpresent", LinkState.DOWN),
    ("disconnected", LinkState.DOWN), ("UP", LinkState.UP)])
def test_an_interface_can_carry_a_test_when_it_is_up_or_unknown(word, link):
    assert LinkState.of(word) is link
    assert InterfaceFacts("t0", 1500, None, word, True).link is link
