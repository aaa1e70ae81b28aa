"""How busy the machine is, for lab tests that check physics: a figure short of what the
wire carries means something only if the machine had CPU to spare.

The machine is sampled while the test runs nothing (half a second of /proc/stat): the
busy share of all CPUs and the share the hypervisor stole. Measuring during a run cannot
tell the lab's own tools from anything else: their processes are gone, with their CPU
time, before the run ends.
"""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

# Above either figure, a run short of the band says more about the machine than the link.
BUSY_PCT = 10.0           # of all CPUs, busy with something else before the run
BUSY_STEAL_PCT = 2.0
SAMPLE_S = 0.5


@dataclass
class Load:
    """How busy the machine was while the test was not running anything."""

    busy_pct: float      # % of all CPUs' time
    steal_pct: float     # % of all CPUs' time the hypervisor took

    @property
    def busy(self) -> bool:
        return self.busy_pct > BUSY_PCT or self.steal_pct > BUSY_STEAL_PCT

    def __str__(self) -> str:
        return f"machine {self.busy_pct:.0f} % busy, steal {self.steal_pct:.1f} %"


def _cpu() -> list[float]:
    return [float(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]


def machine_load() -> Load:
    a = _cpu()
    time.sleep(SAMPLE_S)
    b = _cpu()
    total = sum(b) - sum(a)
    if total <= 0:
        return Load(0.0, 0.0)
    idle = (b[3] + b[4]) - (a[3] + a[4])
    steal = b[7] - a[7]
    return Load(100.0 * (total - idle - steal) / total, 100.0 * steal / total)


# In the lab both hosts are namespaces of this machine, so a trial's host CPU figure is the
# whole machine's: iperf3 at 1 Gbit/s keeps it 40-75 % busy; above this, something else
# was running too.
BUSY_DURING_PCT = 85.0


def busy_during(cpu_pcts: list[float | None]) -> bool:
    """Was the machine saturated while the trials ran (their recorded host CPU)?"""
    vals = [c for c in cpu_pcts if c is not None]
    return bool(vals) and max(vals) >= BUSY_DURING_PCT


def assert_at_least_unless_busy(value: float, floor: float, what: str,
                                cpu_pcts: list[float | None] = (), link=None) -> None:
    """A figure below ``floor`` fails only on a quiet machine: a busy one only makes the
    tools slower, so there it says nothing about the link. Busy: the trials' own CPU
    figures say the machine was saturated while they ran, or it is busy now. With the
    lab ``link`` it ran on, a quiet machine gets the link measured again (``shortfall``)."""
    if value >= floor or busy_during(list(cpu_pcts)):
        return
    if link is not None:
        shortfall(f"{what}: {value:.4g} is under {floor:.4g}", link)
        return
    load = machine_load()
    assert load.busy, f"{what}: {value:.4g} is under {floor:.4g} on a quiet machine ({load})"


# -- a shortfall on a quiet machine: measure the link again before calling it broken ------
#
# The load is sampled after a run, so a disturbance that came and went during it (another
# guest on the host: this machine is a VM) leaves the machine "quiet" and a run short of
# the wire. Seen in full suite runs here: iperf3 at 0.80 and 0.84 Gbit/s for a few seconds
# on the gbe link, then back at the wire. A broken link stays short; a disturbance passes.

# What the gbe link carries at MTU 1500 (TCP with timestamps: 1 Gbit/s x 1448/1538), less
# 10 %: enough to tell a gigabit link that works from one shaped wrong or stalled (the
# shaping's exact rate is tests/lab/test_calibration.py's to check), with room for the
# same machine still being disturbed (seen: 911 Mbit/s best of three, then 938).
GBE_1500_FLOOR_BPS = 0.90 * 1e9 * 1448 / 1538
RECHECK_PORT = 5319
RECHECK_RUNS = 3


def link_now_bps(link) -> float:
    """The best of three 1-second iperf3 runs over a lab link (a ``LabLink``) as it is now,
    run directly in its two namespaces. Bounded: three runs, each with at most 50 connect
    attempts 20 ms apart and a 15 s timeout."""
    addr = link.address("a")
    best = 0.0
    for _ in range(RECHECK_RUNS):
        server = subprocess.Popen(["ip", "netns", "exec", link.host_a.name, "iperf3", "-s", "-1",
                                   "-p", str(RECHECK_PORT), "-B", addr],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _attempt in range(50):
                res = subprocess.run(["ip", "netns", "exec", link.host_b.name, "iperf3", "-c", addr,
                                      "-p", str(RECHECK_PORT), "-t", "1", "-J"],
                                     capture_output=True, text=True, timeout=15)
                report = json.loads(res.stdout or "{}")
                if "end" in report and "error" not in report:
                    best = max(best, float(report["end"]["sum_received"]["bits_per_second"]))
                    break
                time.sleep(0.02)     # not listening yet
        finally:
            server.kill()
            server.wait(timeout=10)
    return best


def shortfall(message: str, link, floor_now_bps: float = GBE_1500_FLOOR_BPS) -> None:
    """A run fell short of the wire: skip on a busy machine; on a quiet one, measure the
    link again and skip if it carries ``floor_now_bps`` now (a passing disturbance, the
    figures in the reason), else fail: the link is broken."""
    load = machine_load()
    if load.busy:
        pytest.skip(f"{message}: the machine is busy ({load}), physics not judged")
    now = link_now_bps(link)
    if now >= floor_now_bps:
        pytest.skip(f"{message} on a quiet machine ({load}), but the link carries "
                    f"{now / 1e6:.1f} Mbit/s again now: a passing disturbance of this shared "
                    "machine, not the link")
    raise AssertionError(f"{message}, and {now / 1e6:.1f} Mbit/s now (under "
                         f"{floor_now_bps / 1e6:.1f}) on a quiet machine ({load})")
