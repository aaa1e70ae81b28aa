"""The tools' own CPU and the rest of the host's load: the trial scripts' marked lines and
sections parsed from real captured output (data/scripts/, see data/README.md), the split
of a window into busy / tool / other, and the record fields that hold it (old lines read).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nicbench.platforms.base import CpuTimes, cpu_split
from nicbench.platforms.linux import parse_client_cpu, parse_finish_cpu
from nicbench.remote.shell import PosixShell, collected_ticks
from nicbench.results.records import OLD_KEYS, Cpu, CpuPart, CpuSplit, TrialRecord

DATA = Path(__file__).parent / "data"


def read(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


# /proc/stat: user nice system idle iowait irq softirq steal guest guest_nice
BEFORE = CpuTimes(busy=365864 + 3937 + 128438 + 108037 + 1099,
                  total=365864 + 3937 + 128438 + 369203 + 6592 + 108037 + 1099,
                  irq=0.0, softirq=108037.0)
AFTER = CpuTimes(busy=365874 + 3937 + 128469 + 108107 + 1099,
                 total=365874 + 3937 + 128469 + 369289 + 6592 + 108107 + 1099,
                 irq=0.0, softirq=108107.0)


def test_client_run_prints_the_hosts_cpu_around_the_client_and_the_clients_own():
    cpu0, cpu1, ticks, err = parse_client_cpu(read("scripts/client_run_iperf3.stderr"))
    assert (cpu0, cpu1, ticks) == (BEFORE, AFTER, 6.0)
    assert err == ""                       # the client's own error output: none


def test_a_client_run_without_the_tool_line_has_no_ticks():
    # a reply of the script before this version, or one cut short
    text = read("scripts/client_run_iperf3.stderr")
    old = "".join(ln for ln in text.splitlines(keepends=True) if "nicbench-tool" not in ln)
    cpu0, cpu1, ticks, _ = parse_client_cpu(old + "iperf3: warning\n")
    assert (cpu0, cpu1, ticks) == (BEFORE, AFTER, None)


def test_an_overlapped_finish_reads_from_the_transfers_start():
    cpu0, cpu1, collected = parse_finish_cpu(read("scripts/server_finish_overlapped_iperf3.stdout"))
    # printed as its sleep began, and as the server had ended (iperf3 -1 exits)
    assert cpu0 is not None and cpu1 is not None
    assert (cpu0.busy, cpu0.total) == (BEFORE.busy - 1, BEFORE.total - 1)
    assert cpu1 == AFTER
    out, err, rc = PosixShell().parse_collected(collected)
    assert "receiver" in out and err == "" and rc == 0     # the other sections unchanged
    assert collected_ticks(collected) == 2


def test_a_finish_after_the_client_has_only_the_end_reading():
    cpu0, cpu1, collected = parse_finish_cpu(read("scripts/server_finish_after_iperf2.stdout"))
    assert cpu0 is None and cpu1 is not None and cpu1.softirq == 108679.0
    out, _, rc = PosixShell().parse_collected(collected)
    assert "22.6 Gbits/sec" in out and rc == 0
    assert collected_ticks(collected) == 46


@pytest.mark.parametrize("tail, ticks, rc", [
    ("\n@@nicbench-rc@@\n\n@@nicbench-cpu@@\n\n", None, None),   # killed: neither written
    ("\n@@nicbench-rc@@\n0\n", None, 0),                           # no cpu section at all
    ("\n@@nicbench-rc@@\n137\n@@nicbench-cpu@@\n12\n", 12, 137)])
def test_collected_sections_without_or_with_a_cpu_time(tail, ticks, rc):
    text = "out\n@@nicbench-err@@\n" + tail
    assert collected_ticks(text) == ticks
    assert PosixShell().parse_collected(text) == ("out", "", rc)


def test_the_split_of_a_captured_window():
    # 197 ticks of both CPUs: 111 busy, 70 of them softirq (loopback's network work), the
    # client's own 6: the rest, 35, other processes of the machine
    split = cpu_split(BEFORE, AFTER, 6.0)
    assert split.busy == pytest.approx(100 * 111 / 197)
    assert split.tool == pytest.approx(100 * 6 / 197)
    assert split.other == pytest.approx(100 * 35 / 197)


def test_softirq_charged_to_the_tool_as_well_leaves_no_negative_other_load():
    # the lab's receiver (tick accounting, no IRQ time accounting): 198 ticks, 110 busy,
    # its server 53 (softirq in its context included), irq + softirq 85
    before = CpuTimes(busy=1000.0, total=5000.0, irq=0.0, softirq=300.0)
    after = CpuTimes(busy=1110.0, total=5198.0, irq=0.0, softirq=385.0)
    split = cpu_split(before, after, 53.0)
    assert split.tool == pytest.approx(100 * 53 / 198)
    assert split.other == 0.0


def test_no_ticks_or_no_interrupt_counters_leave_tool_or_other_unread():
    assert cpu_split(BEFORE, AFTER, None).tool is None
    windows = CpuTimes(busy=10.0, total=100.0), CpuTimes(busy=30.0, total=200.0)
    split = cpu_split(*windows, 5.0)
    assert (split.busy, split.tool, split.other) == (20.0, 5.0, None)
    assert cpu_split(None, AFTER, 6.0).busy is None


# -- records -----------------------------------------------------------------------------------
def test_an_old_line_reads_with_the_split_unread():
    line = (DATA.parent.parent / "report" / "data" / "run-a" / "trials.jsonl").read_text(
        encoding="utf-8").splitlines()[0]
    old = json.loads(line)
    rec = TrialRecord.from_dict(old)
    assert rec.cpu == Cpu(CpuSplit(old["cpu_sender_pct"]), CpuSplit(old["cpu_receiver_pct"]))
    assert [p.of(rec) for p in (CpuPart.SENDER_TOOL, CpuPart.RECEIVER_TOOL,
                                CpuPart.SENDER_OTHER, CpuPart.RECEIVER_OTHER)] == [None] * 4
    # written back grouped, none of the old keys
    data = rec.to_dict()
    assert not set(data) & set(OLD_KEYS)
    assert data["cpu"] == {"sender": {"busy": old["cpu_sender_pct"], "tool": None,
                                      "other": None},
                           "receiver": {"busy": old["cpu_receiver_pct"], "tool": None,
                                        "other": None}}


def test_the_split_round_trips_grouped():
    line = (DATA.parent.parent / "report" / "data" / "run-a" / "trials.jsonl").read_text(
        encoding="utf-8").splitlines()[0]
    rec = TrialRecord.from_dict(json.loads(line))
    rec.cpu = Cpu(CpuSplit(50.0, 3.0, 40.0), CpuSplit(10.0, 2.5, 0.0))
    text = json.dumps(rec.to_dict(), default=str)
    again = TrialRecord.from_dict(json.loads(text))
    assert again == rec
    assert (CpuPart.SENDER_OTHER.of(again), CpuPart.RECEIVER_TOOL.of(again)) == (40.0, 2.5)


def test_a_record_without_cpu_has_no_cpu_in_its_line():
    line = (DATA.parent.parent / "report" / "data" / "run-a" / "trials.jsonl").read_text(
        encoding="utf-8").splitlines()[0]
    rec = TrialRecord.from_dict(json.loads(line))
    rec.cpu = Cpu.of(CpuSplit(None), CpuSplit(None))      # neither host read
    assert rec.cpu is None and "cpu" not in rec.to_dict()
    assert Cpu.of(CpuSplit(None), CpuSplit(7.0)) == Cpu(None, CpuSplit(7.0))
