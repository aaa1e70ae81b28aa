"""How busy the machine is, for lab tests that check physics: a figure short of what the
wire carries means something only if the machine had CPU to spare.

The machine is sampled while the test runs nothing (half a second of /proc/stat): the
busy share of all CPUs and the share the hypervisor stole. Measuring during a run cannot
tell the lab's own tools from anything else: their processes are gone, with their CPU
time, before the run ends.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

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
                                cpu_pcts: list[float | None] = ()) -> None:
    """A figure below ``floor`` fails only on a quiet machine: a busy one only makes the
    tools slower, so there it says nothing about the link. Busy: the trials' own CPU
    figures say the machine was saturated while they ran, or it is busy now."""
    if value >= floor or busy_during(list(cpu_pcts)):
        return
    load = machine_load()
    assert load.busy, f"{what}: {value:.4g} is under {floor:.4g} on a quiet machine ({load})"
