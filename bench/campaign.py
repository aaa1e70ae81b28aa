"""Campaign wall time and controller cost: 4 host-disjoint pairs at once against one pair.

Runs the same campaign three times through the real CLI (``nicbench campaign``, each a
process of its own, its wall time and resource usage measured by this script):

1. one pair alone (``--pair P1``);
2. the four pairs with ``--parallel 4``: should take at most 1.3x the wall time of 1;
3. the four pairs with ``--parallel 1``: one after another, about 4x.

During run 2 the controller process is sampled every 0.2 s (/proc: threads, open
sockets, resident memory); its CPU time comes from wait4(). The controller's cost per
active pair is its CPU time over the wall time, divided by the 4 pairs (percent of one
core), and the growth of threads, sockets and memory from run 1 to run 2 divided by the
3 extra pairs. The last line holds the figures for machines:
``campaign: one_s=... parallel4_s=... ratio=... serial4_s=... serial_ratio=...
cpu_per_pair_pct=... PASS|FAIL``.

By default it builds its own lab (prefix ``nbc``, slot 9: management networks
198.19.145.0/24 to 198.19.152.0/24; 4 pairs of hosts, one ``gbe`` link each, shaped to
100 Mbit/s so that four links at once stay within what two shared cores can shape) and
takes it down afterwards; ``-i INVENTORY`` runs on a lab that is up (``nicbench lab up
--pairs 4 --rate 100mbit``: pairs p1-gbe ... p4-gbe). Needs root for its own lab.

    python bench/campaign.py [-i INVENTORY] [--pairs p1-gbe,p2-gbe,p3-gbe,p4-gbe]
                             [--repetitions 5] [--duration 2] [--out DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from _common import fail, lab_in_temp_dir

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
LOCK = Path("/run/nicbench-bench.lock")        # benchmarks take turns (bench/_common.py)
PREFIX, SLOT = "nbc", 9
PARALLEL_LIMIT = 1.3
SERIAL_BAND = (3.4, 4.6)                       # "about 4x"

PROFILE = """\
    format_version: 1
    name: bench-campaign
    source: "nicbench bench/campaign.py: the same work on every pair"
    platform: linux
    repetitions: {reps}
    give_up_after: 0
    timeout_s: 30
    mtu: [1500, 9000]
    tests:
      - {{name: iperf3-tcp, tool: iperf3, params: {{duration_s: {dur:g}}}}}
    """
CAMPAIGN = """\
    format_version: 1
    name: bench-{tag}
    report: false
    runs:
      - profile: profile.yaml
        pairs: [{pairs}]
    """


def own_lab():
    """A lab of 4 host pairs with one 100 Mbit/s gbe link each, up for the duration."""
    from nicbench.lab.lab import LabSpec

    return lab_in_temp_dir(LabSpec(prefix=PREFIX, slot=SLOT, pairs=4, adapters=("gbe",),
                                   rate="100mbit"), "campaign-lab")


@dataclass
class Sample:
    threads: int = 0
    sockets: int = 0
    rss_mb: float = 0.0


@dataclass
class Measured:
    label: str
    wall_s: float
    cpu_s: float
    maxrss_mb: float
    exit_status: int
    peak: Sample = field(default_factory=Sample)
    trials: int = 0

    @property
    def cpu_pct(self) -> float:
        return 100.0 * self.cpu_s / self.wall_s


def _sample(pid: int) -> Sample | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return None
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    sockets = 0
    for fd in fds:
        with contextlib.suppress(OSError):
            sockets += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
    return Sample(threads=int(fields["Threads"]), sockets=sockets,
                  rss_mb=int(fields["VmRSS"].split()[0]) / 1024)


def campaign(label: str, directory: Path, inventory: str, pairs: list[str],
             parallel: int) -> Measured:
    """Run ``nicbench campaign`` once; its wall time, CPU time and peak usage."""
    camp = directory / f"{label}.yaml"
    camp.write_text(textwrap.dedent(CAMPAIGN.format(tag=label, pairs=", ".join(pairs))))
    out = directory / label
    argv = [sys.executable, "-m", "nicbench.cli", "campaign", str(camp), "-i", inventory,
            "--out", str(out), "--parallel", str(parallel)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("NICBENCH_")}
    log = open(directory / f"{label}.log", "w")  # noqa: SIM115 (the child writes it until it ends; closed after wait)
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    peak = Sample()
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.2):
            s = _sample(proc.pid)
            if s is not None:
                peak.threads = max(peak.threads, s.threads)
                peak.sockets = max(peak.sockets, s.sockets)
                peak.rss_mb = max(peak.rss_mb, s.rss_mb)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    done.set()
    watcher.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    log.close()
    trials = sum(1 for _ in (out / "bench-campaign" / "trials.jsonl").open()) \
        if (out / "bench-campaign" / "trials.jsonl").exists() else 0
    m = Measured(label, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024,
                 proc.returncode, peak, trials)
    print(f"{label:10} pairs={len(pairs)} parallel={parallel} wall={wall:6.1f}s "
          f"cpu={m.cpu_s:5.1f}s ({m.cpu_pct:4.1f}% of a core) trials={trials} "
          f"threads<={peak.threads} sockets<={peak.sockets} rss<={peak.rss_mb:.0f}MB "
          f"exit={proc.returncode}", flush=True)
    return m


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("-i", "--inventory", help="run on this lab (default: build our own)")
    p.add_argument("--pairs", default="p1-gbe,p2-gbe,p3-gbe,p4-gbe",
                   help="the four host-disjoint pairs (default %(default)s)")
    p.add_argument("--repetitions", type=int, default=5)
    p.add_argument("--duration", type=float, default=2.0, help="seconds per trial")
    p.add_argument("--out", help="directory to keep (default: a new temp dir)")
    args = p.parse_args()
    pairs = args.pairs.split(",")
    if len(pairs) != 4:
        fail("--pairs: four pairs, comma-separated")
    directory = Path(args.out or tempfile.mkdtemp(prefix="nicbench-bench-campaign-"))
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "profile.yaml").write_text(textwrap.dedent(
        PROFILE.format(reps=args.repetitions, dur=args.duration)))
    with open(LOCK, "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with (contextlib.nullcontext(args.inventory) if args.inventory else own_lab()) as inv:
            inv = str(inv)
            check = subprocess.run([sys.executable, "-m", "nicbench.cli", "check", "-i", inv,
                                    *pairs], cwd=REPO, capture_output=True, text=True)
            if check.returncode != 0:
                fail(f"the pairs are not ready: {check.stderr.strip() or check.stdout}")
            one = campaign("one", directory, inv, pairs[:1], 1)
            par = campaign("parallel4", directory, inv, pairs, 4)
            ser = campaign("serial4", directory, inv, pairs, 1)
    print(f"results in {directory}")
    runs = (one, par, ser)
    want = args.repetitions * 2
    bad = [m.label for m in runs if m.exit_status != 0 or
           m.trials != want * (1 if m is one else 4)]
    ratio = par.wall_s / one.wall_s
    serial_ratio = ser.wall_s / one.wall_s
    cpu_per_pair = par.cpu_pct / 4
    extra = 3
    threads_per_pair = (par.peak.threads - one.peak.threads) / extra
    sockets_per_pair = (par.peak.sockets - one.peak.sockets) / extra
    mb_per_pair = (par.maxrss_mb - one.maxrss_mb) / extra
    verdict = "PASS" if not bad and ratio <= PARALLEL_LIMIT and \
        SERIAL_BAND[0] <= serial_ratio <= SERIAL_BAND[1] else "FAIL"
    summary = {"one_s": one.wall_s, "parallel4_s": par.wall_s, "serial4_s": ser.wall_s,
               "ratio": ratio, "serial_ratio": serial_ratio,
               "cpu_per_pair_pct": cpu_per_pair, "threads_per_pair": threads_per_pair,
               "sockets_per_pair": sockets_per_pair, "mb_per_pair": mb_per_pair,
               "controller_cpu_pct_parallel4": par.cpu_pct,
               "controller_maxrss_mb_parallel4": par.maxrss_mb, "failed_runs": bad}
    (directory / "bench.json").write_text(json.dumps(summary, indent=1))
    for label in bad:
        print(f"failed: {label} (see {directory / (label + '.log')})")
    print(f"campaign: one_s={one.wall_s:.1f} parallel4_s={par.wall_s:.1f} ratio={ratio:.2f} "
          f"limit={PARALLEL_LIMIT} serial4_s={ser.wall_s:.1f} serial_ratio={serial_ratio:.2f} "
          f"cpu_per_pair_pct={cpu_per_pair:.1f} threads_per_pair={threads_per_pair:.1f} "
          f"sockets_per_pair={sockets_per_pair:.1f} mb_per_pair={mb_per_pair:.1f} {verdict}")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
