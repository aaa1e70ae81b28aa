"""`nicbench run PROFILE --plan` of a profile of 10,000 tuning points, against
`nicbench validate` of the same file.

Writes a profile of ``--points`` points (default 10,000: MTU 1500, each with its own
net.core.rmem_max, one iperf3 test of 3 repetitions), then runs, each in a new process
as a user does, `nicbench validate` of it and `nicbench run PROFILE --plan --pair gbe`
on the repository's inventory (the default lab's; --plan connects to nothing), and
measures each one's wall time and peak memory (maximum resident set size, from wait4).

Both read and check the same file; the plan then walks the whole run over planning
hosts and prints every command. The target (issue 19, where the plan took 39 s and
250 MB against validate's 3 s): the plan within ``--ratio`` (default 3) times validate's
wall time and within 100 MB of its memory. The last line is the figures, for machines:
``plan_scale: ... PASS|FAIL``.

    python bench/plan_scale.py [--points 10000] [--ratio 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXTRA_MB = 100


def write_profile(path: Path, points: int) -> None:
    lines = ["name: plan-scale", "source: bench/plan_scale.py", "repetitions: 3",
             "points:"]
    lines += [f"  - {{label: p{i}, mtu: 1500, sysctl: {{net.core.rmem_max: "
              f"'{212992 + i}'}}}}" for i in range(points)]
    lines += ["tests:", "  - {name: tcp, tool: iperf3, params: {duration_s: 1}}"]
    path.write_text("\n".join(lines) + "\n")


def measure(*args: str) -> tuple[float, float, int, int]:
    """(wall seconds, peak RSS in MB, exit status, lines printed) of one nicbench."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NICBENCH_")}
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "nicbench.cli", *args], cwd=REPO,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    lines = sum(1 for _ in proc.stdout)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.monotonic() - t0, usage.ru_maxrss / 1024, proc.returncode, lines


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--points", type=int, default=10_000)
    p.add_argument("--ratio", type=float, default=3.0,
                   help="the plan's wall time at most this many times validate's")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="nicbench-plan-scale-") as tmp:
        profile = Path(tmp) / "plan-scale.yaml"
        write_profile(profile, args.points)
        v_s, v_mb, v_rc, _ = measure("validate", str(profile))
        p_s, p_mb, p_rc, lines = measure("run", str(profile), "--plan", "--pair", "gbe",
                                         "-i", str(REPO / "inventory.yaml"))
    ratio = p_s / v_s
    ok = v_rc == 0 and p_rc == 0 and ratio <= args.ratio and p_mb <= v_mb + EXTRA_MB
    print(f"validate: {v_s:.1f} s, {v_mb:.0f} MB, exit {v_rc}")
    print(f"plan:     {p_s:.1f} s, {p_mb:.0f} MB, exit {p_rc}, {lines} lines")
    print(f"plan_scale: points={args.points} validate_s={v_s:.2f} plan_s={p_s:.2f} "
          f"ratio={ratio:.2f} limit_ratio={args.ratio:g} validate_mb={v_mb:.0f} "
          f"plan_mb={p_mb:.0f} limit_extra_mb={EXTRA_MB} lines={lines} "
          f"{'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
