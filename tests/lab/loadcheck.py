"""How busy the machine is with something other than the lab, for lab tests that check
physics: a figure short of what the wire carries means something only if the machine had
CPU to spare.

The load is measured outside the tool under test, from the machine's own accounting:
/proc/stat of the whole machine, less the CPU time of every process in the lab's
namespaces (the tools, sshd and their shells: what ``ip netns pids NS`` lists, read from
/proc/PID/stat), less this test process and its children (pytest, the nicbench command
it runs), less the kernel's irq and softirq time (where the lab's own traffic is carried
across its links). What is left is "other" load; the hypervisor's steal is counted apart.
It is measured twice: over half a second before the run, and beside the run by a sampler
thread that reads every process each ``EVERY_S`` (a process that ends between two reads
is caught through its parent's cutime/cstime, which the kernel adds it to when reaped).
So a tool or a nicbench that burns more CPU never makes the machine count as busy: only
load from outside does.

A figure short of its floor on a quiet machine fails unless the same nicbench trial, run
again (:func:`judge_short`'s ``again``), reaches the floor; every skip says the figure,
the floor and the load.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

# Above either figure, a run short of the band says more about the machine than the link.
BUSY_PCT = 10.0           # of all CPUs, busy with something other than the lab and the test
BUSY_STEAL_PCT = 2.0
BEFORE_S = 0.5
EVERY_S = 0.2

_LAB, _ME = "lab", "me"


@dataclass(frozen=True)
class Load:
    """The machine over one window, % of all CPUs' time: busy in all, the lab's
    namespaces' processes, this test and its children, irq + softirq, what is left
    (``other``, at least 0), and the hypervisor's steal."""

    machine_pct: float
    lab_pct: float
    me_pct: float
    kernel_pct: float
    steal_pct: float
    seconds: float
    cpu_s: float = 0.0     # all CPUs' time over the window (busy or not), in seconds

    def seconds_of(self, pct: float) -> float:
        """A share of the window (% of all CPUs) as CPU seconds."""
        return pct * self.cpu_s / 100.0

    @property
    def other_pct(self) -> float:
        return max(0.0, self.machine_pct - self.lab_pct - self.me_pct - self.kernel_pct)

    @property
    def busy(self) -> bool:
        return self.other_pct > BUSY_PCT or self.steal_pct > BUSY_STEAL_PCT

    def __str__(self) -> str:
        return (f"other load {self.other_pct:.0f} % (limit {BUSY_PCT:g}), steal "
                f"{self.steal_pct:.1f} % (limit {BUSY_STEAL_PCT:g}) over {self.seconds:.1f} s: "
                f"machine {self.machine_pct:.0f} % less lab {self.lab_pct:.0f} %, "
                f"test {self.me_pct:.0f} %, irq+softirq {self.kernel_pct:.0f} %")


def _machine() -> list[int]:
    """The first line of /proc/stat: user nice system idle iowait irq softirq steal."""
    return [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]


@dataclass(frozen=True)
class _Proc:
    cls: str | None      # _LAB, _ME, or None (anything else)
    ppid: int
    ticks: int           # utime + stime + cutime + cstime


def _netns(pid: str) -> tuple[int, int] | None:
    try:
        st = os.stat(f"/proc/{pid}/ns/net")
    except OSError:
        return None
    return st.st_dev, st.st_ino


def namespace_ids(names: Iterable[str]) -> set[tuple[int, int]]:
    """The network namespaces by name, as ``ip netns pids`` tells them: the (device,
    inode) of /run/netns/NAME, which /proc/PID/ns/net of their processes shares."""
    ids = set()
    for name in names:
        st = os.stat(f"/run/netns/{name}")
        ids.add((st.st_dev, st.st_ino))
    return ids


def scan(namespaces: set[tuple[int, int]], me: int) -> dict[int, _Proc]:
    """Every process now: its class (in a lab namespace; this test or its descendant),
    parent and CPU time in clock ticks (the units of /proc/stat)."""
    raw: dict[int, tuple[bool, int, int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            text = Path(f"/proc/{entry.name}/stat").read_text()
        except OSError:
            continue
        fields = text.rsplit(")", 1)[1].split()
        # after the name: state ppid ... utime(14) stime(15) cutime(16) cstime(17)
        ticks = sum(int(fields[i]) for i in (11, 12, 13, 14))
        raw[int(entry.name)] = (_netns(entry.name) in namespaces, int(fields[1]), ticks)
    out = {}
    for pid, (in_lab, ppid, ticks) in raw.items():
        cls = _LAB if in_lab else (_ME if _descends(pid, me, raw) else None)
        out[pid] = _Proc(cls, ppid, ticks)
    return out


def _descends(pid: int, me: int, raw: dict[int, tuple[bool, int, int]]) -> bool:
    for _ in range(64):
        if pid == me:
            return True
        if pid not in raw or pid <= 1:
            return False
        pid = raw[pid][1]
    return False


def step(prev: dict[int, _Proc], cur: dict[int, _Proc], acc: dict[str | None, int]) -> None:
    """Add the CPU time spent between two scans to each class: a process's growth; a
    new one's whole time; and a process gone whose parent still lives has its last
    time taken back from the parent's class, since the parent's cutime/cstime took in
    its whole time when it reaped it (an orphan, reparented to init, loses only the time
    since the last scan)."""
    for pid, p in cur.items():
        q = prev.get(pid)
        acc[p.cls] = acc.get(p.cls, 0) + (p.ticks - q.ticks if q is not None else p.ticks)
    for pid, q in prev.items():
        if pid in cur:
            continue
        parent = cur.get(q.ppid)
        if parent is not None and q.ppid > 1:
            acc[parent.cls] = acc.get(parent.cls, 0) - q.ticks


class Window:
    """The machine's load over a window: ``start``, ``sample`` as often as wanted,
    ``end`` -> :class:`Load`."""

    def __init__(self, namespaces: set[tuple[int, int]]):
        self.namespaces = namespaces
        self.me = os.getpid()
        self.acc: dict[str | None, int] = {}

    def start(self) -> None:
        self.t0 = time.monotonic()
        self.cpu0 = _machine()
        self.procs = scan(self.namespaces, self.me)

    def sample(self) -> None:
        cur = scan(self.namespaces, self.me)
        step(self.procs, cur, self.acc)
        self.procs = cur

    def end(self) -> Load:
        self.sample()
        cpu1 = _machine()
        d = [b - a for a, b in zip(self.cpu0, cpu1, strict=True)]
        total = sum(d)
        if total <= 0:
            return Load(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        busy = d[0] + d[1] + d[2] + d[5] + d[6]

        def pct(ticks: float) -> float:
            return 100.0 * ticks / total
        return Load(machine_pct=pct(busy), lab_pct=pct(max(0, self.acc.get(_LAB, 0))),
                    me_pct=pct(max(0, self.acc.get(_ME, 0))), kernel_pct=pct(d[5] + d[6]),
                    steal_pct=pct(d[7]), seconds=time.monotonic() - self.t0,
                    cpu_s=total / os.sysconf("SC_CLK_TCK"))


class Beside:
    """The load other than the lab's and this test's own: over ``BEFORE_S`` on entry
    (``before``), then beside whatever runs in the ``with`` block (``during``, sampled
    by a thread each ``EVERY_S``). Busy if either was."""

    def __init__(self, namespaces: Sequence[str]):
        self.ids = namespace_ids(namespaces)
        self.before: Load | None = None
        self.during: Load | None = None
        self._stop = threading.Event()

    def __enter__(self) -> Beside:
        window = Window(self.ids)
        window.start()
        time.sleep(BEFORE_S)
        self.before = window.end()
        self._window = Window(self.ids)
        self._window.start()
        self._thread = threading.Thread(target=self._sample, daemon=True,
                                        name="loadcheck sampler")
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(EVERY_S):
            self._window.sample()

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self.during = self._window.end()

    @property
    def busy(self) -> bool:
        return any(x is not None and x.busy for x in (self.before, self.during))

    def __str__(self) -> str:
        return f"before the run: {self.before}; beside it: {self.during}"

    def short(self) -> str:
        """The figures that decide, for a list of runs."""
        b, d = self.before, self.during
        if b is None or d is None:
            return str(self)
        return (f"other load {b.other_pct:.0f} % before, {d.other_pct:.0f} % beside "
                f"(limit {BUSY_PCT:g}); steal {b.steal_pct:.1f} %, {d.steal_pct:.1f} % "
                f"(limit {BUSY_STEAL_PCT:g})")


def lab_namespaces(lab) -> list[str]:
    """The namespaces of the session lab's hosts."""
    return [h.name for h in lab.spec.hosts()]


def judge_short(what: str, value: float, floor: float, load: Beside,
                again: Callable[[], tuple[float, Beside]], unit: float = 1e6,
                unit_name: str = "Mbit/s") -> None:
    """A figure (``value``) at or above ``floor`` passes. Below it: skipped, with the
    figures and the load, when other load was on the machine before or beside the run;
    on a quiet machine the same nicbench trial is run again (``again``: its figure and
    load), and the shortfall fails unless that one reaches the floor (then it is skipped
    as a passing disturbance, the figures of both runs in the reason) or ran on a busy
    machine itself."""
    if value >= floor:
        return
    # the summary lists a skip at the line that raised it, here: name the test
    test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]
    head = (f"{test + ': ' if test else ''}{what}: {value / unit:.1f} {unit_name} is under "
            f"the floor {floor / unit:.1f}")
    if load.busy:
        pytest.skip(f"{head} with other load on the machine ({load}): physics not judged")
    now, load_now = again()
    if now >= floor:
        pytest.skip(f"{head} on a quiet machine ({load}), but the same nicbench trial run "
                    f"again gave {now / unit:.1f} {unit_name} ({load_now}): a passing "
                    "disturbance of this shared machine, not judged")
    if load_now.busy:
        pytest.skip(f"{head} on a quiet machine ({load}); run again, "
                    f"{now / unit:.1f} {unit_name} with other load on the machine "
                    f"({load_now}): physics not judged")
    raise AssertionError(f"{head} on a quiet machine ({load}), and the same nicbench trial "
                         f"run again gave {now / unit:.1f} {unit_name} on a quiet machine "
                         f"({load_now})")
