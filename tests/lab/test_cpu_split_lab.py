"""The tools' own CPU and the rest of the machine's load, per trial, on the session lab:
a short iperf3 run on ``gbe`` through the real CLI, SSH and tools.

Each trial's record holds, in the window and units of the host's busy figure, the tool's
own share (its client on the sender, its server on the receiver: more than nothing, and
within what the host was busy with) and the other load (busy minus the tool minus irq and
softirq, a lower bound at least 0: the lab's kernel charges softirq to the tool it
interrupted as well). On the lab both hosts are namespaces of one machine, so each side's
"other" holds the peer's tool too.

And the sender's figures as values: within the range the machine's own accounting gives
for the same interval (/proc/stat of the whole machine and /proc/PID/stat of the client
in the sender's namespace, sampled beside the run; see the comment above the test).
"""

from __future__ import annotations

import json
import os
import textwrap
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from clihelp import nicbench

pytestmark = pytest.mark.lab

PROFILE = """\
    format_version: 1
    name: cpu-split
    source: "nicbench lab test: the tools' own CPU beside the host's"
    platform: linux
    repetitions: 3
    timeout_s: 10
    mtu: [1500]
    tests:
      - {name: iperf3-tcp, tool: iperf3, params: {duration_s: 1}}
    """
# /proc/stat is sampled per CPU at each tick, the tools' time exactly: over a 1 s window
# of a 2-CPU machine (about 200 ticks) a tick or two either way is a point or so.
ROUNDING = 2.0


def test_each_trial_records_the_tools_own_cpu_within_the_hosts(lab, tmp_path):
    prof = tmp_path / "profile.yaml"
    prof.write_text(textwrap.dedent(PROFILE))
    out = tmp_path / "run"
    proc = nicbench("run", str(prof), "-i", str(lab.inventory_file), "--pair", "gbe",
                    "--out", str(out), timeout=120)
    assert proc.returncode == 0, proc.stderr
    recs = [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines()]
    assert len(recs) == 3 and all(r["status"] == "ok" for r in recs), recs
    for r in recs:
        for side in ("sender", "receiver"):
            split = r["cpu"][side]            # the line's grouped CPU (format 3)
            busy, tool, other = split["busy"], split["tool"], split["other"]
            where = f"{r['trial_id']} {side}: busy {busy}, tool {tool}, other {other}"
            assert busy is not None and tool is not None and other is not None, where
            assert 0 < tool <= busy + ROUNDING, where
            # other is max(0, busy - tool - irq - softirq): a floor that cannot fall below 0
            # or above busy - tool by construction, so its bounds test nothing here.


# -- the sender's figures against the machine's own accounting ---------------------------
#
# In the lab both hosts are namespaces of this machine, so a trial's sender CPU is the
# machine's: /proc/stat's busy share over the client's run, from a reading just before
# the client starts to one just after it ends (client_run.sh). A sampler here reads
# /proc/stat every SAMPLE_S, with the time (CLOCK_BOOTTIME, the clock of a process's start
# time in /proc/PID/stat), and which iperf3 client and its client_run.sh shell are alive.
# The record's window lies between the shell's start and its end, and holds the client's
# whole life, so the machine's counters give a range the figure must fall in: busy over
# the client's life (as far as sampled) over all time from the shell's start to its end,
# up to busy over that span over the client's sampled life. Likewise the tool's share:
# at least the client's CPU time last seen, at most that plus all CPUs' time from then
# until it was seen gone.

SAMPLE_S = 0.05
HZ = os.sysconf("SC_CLK_TCK")
NCPU = os.cpu_count() or 1


@dataclass
class Sample:
    t: float                               # CLOCK_BOOTTIME, s
    busy: int                              # /proc/stat: all but idle and iowait, ticks
    total: int                             # the first eight columns, ticks
    procs: dict[int, tuple[int, int, int]]  # pid -> (ppid, start ticks, utime + stime)


def machine() -> tuple[int, int]:
    v = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    return sum(v) - v[3] - v[4], sum(v)


def iperf3_clients(ns_id: tuple[int, int]) -> dict[int, tuple[int, int, int]]:
    """The iperf3 clients in the namespace and their parents: pid -> (ppid, start, cpu)."""
    found: dict[int, tuple[int, int, int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            st = os.stat(f"/proc/{entry.name}/ns/net")
            if (st.st_dev, st.st_ino) != ns_id:
                continue
            argv = Path(f"/proc/{entry.name}/cmdline").read_bytes().split(b"\0")
            if not (argv and os.path.basename(argv[0]) == b"iperf3" and b"-c" in argv):
                continue
            pid = int(entry.name)
            for p in (pid, stat_of(pid)[0]):
                found[p] = stat_of(p)
        except (OSError, IndexError, ValueError):
            continue
    return found


def stat_of(pid: int) -> tuple[int, int, int]:
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(f[1]), int(f[19]), int(f[11]) + int(f[12])


class Sampler(threading.Thread):
    def __init__(self, namespace: str):
        super().__init__(daemon=True, name="cpu sampler")
        st = os.stat(f"/run/netns/{namespace}")
        self.ns_id = (st.st_dev, st.st_ino)
        self.samples: list[Sample] = []
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            t = time.clock_gettime(time.CLOCK_BOOTTIME)
            busy, total = machine()
            self.samples.append(Sample(t, busy, total, iperf3_clients(self.ns_id)))
            self.stop.wait(SAMPLE_S)


def lives(samples: list[Sample], pid: int, start: int) -> tuple[int, int] | None:
    """Indexes of the first and last sample that saw the process (pid and start time)."""
    seen = [i for i, s in enumerate(samples) if s.procs.get(pid, (0, -1))[1] == start]
    return (seen[0], seen[-1]) if seen else None


def test_the_senders_cpu_is_the_machines_over_the_clients_run(lab, tmp_path):
    prof = tmp_path / "profile.yaml"
    prof.write_text(textwrap.dedent(PROFILE))
    out = tmp_path / "run"
    link = next(x for x in lab.spec.links() if x.adapter.key == "gbe")
    sampler = Sampler(link.host_b.name)          # the sender: side b
    sampler.start()
    try:
        proc = nicbench("run", str(prof), "-i", str(lab.inventory_file), "--pair", "gbe",
                        "--out", str(out), timeout=120)
    finally:
        sampler.stop.set()
        sampler.join(timeout=30)
    assert proc.returncode == 0, proc.stderr
    recs = [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines()]
    s = sampler.samples
    clients = sorted({(start, pid, ppid) for x in s for pid, (ppid, start, _) in x.procs.items()
                      if ppid in x.procs})        # an iperf3 client: its parent was seen too
    assert len(clients) == len(recs) == 3, clients
    for rec, (start, pid, ppid) in zip(recs, clients, strict=True):
        shell_start = s[next(i for i, x in enumerate(s) if pid in x.procs)].procs[ppid][1]
        client, shell = lives(s, pid, start), lives(s, ppid, shell_start)
        assert client is not None and shell is not None
        first, last = client
        i = max((k for k, x in enumerate(s) if x.t <= shell_start / HZ - 1 / HZ), default=None)
        j = shell[1] + 1                              # the first sample without the shell
        k = next((k for k in range(first, last + 1) if s[k].t >= start / HZ + 1 / HZ), None)
        if i is None or j >= len(s) or k is None or k >= last:
            pytest.fail(f"{rec['trial_id']}: the sampler missed the client's run (samples "
                        f"{len(s)}, client seen {client}, shell {shell})")
        outer_t, inner_t = s[j].total - s[i].total, s[last].total - s[k].total
        # /proc/stat is sampled per CPU at each tick: a tick either way per CPU at each of
        # the record's two readings
        slack = 100.0 * 2 * NCPU / inner_t
        low = 100.0 * (s[last].busy - s[k].busy) / outer_t - slack
        high = 100.0 * (s[j].busy - s[i].busy) / inner_t + slack
        sender = rec["cpu"]["sender"]
        where = (f"{rec['trial_id']}: sender {sender['busy']:.1f} %, the machine "
                 f"{low:.1f}-{high:.1f} % over {inner_t / HZ / NCPU:.2f}-"
                 f"{outer_t / HZ / NCPU:.2f} s")
        assert low <= sender["busy"] <= high, where
        # the tool's share: the client's CPU time as last seen, and at most all CPUs'
        # time more until it was seen gone (its shell's own is a tick or two)
        seen = s[last].procs[pid][2]
        gone_t = s[min(last + 1, len(s) - 1)].total - s[last].total
        tool_low = 100.0 * seen / outer_t - slack
        tool_high = 100.0 * (seen + gone_t + 2) / inner_t + slack
        assert tool_low <= sender["tool"] <= tool_high, (
            f"{where}; tool {sender['tool']:.1f} %, the client's own "
            f"{tool_low:.1f}-{tool_high:.1f} %")
