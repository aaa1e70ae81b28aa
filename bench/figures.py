"""Publication figures at the scale of an overnight batch: 50 adapters, 4,020 trials.

Builds the same 50-adapter run as ``bench/report_scale.py`` (its ``clone_run``: the main
job's real lab run in tests/report/data/roundup, each adapter cloned ten times, each clone
a little slower) and runs ``nicbench figures RUN --out DIR --format png,pdf`` on it in a
new process, as a user does: reading, the report's models, every chart drawn by
matplotlib in two worker processes and saved as PNG and PDF, figures.csv. Measures that
process's wall time, and the CPU time it and its workers used (the work itself: on a
machine shared with other work the wall time moves with the load average).

The target (issue #23): at most 15 s on the 2-core machine this runs on. The last line is
the figures, for machines: ``figures: seconds=... PASS|FAIL``.

    python bench/figures.py [--from DIR] [--adapters 50] [--formats png,pdf] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from report_scale import REPO, SOURCE, clone_run, fail

LIMIT_S = 15.0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--from", dest="source", default=str(SOURCE),
                   help="results directory of a real lab run to clone (default: the main "
                        "job's run in tests/report/data/roundup)")
    p.add_argument("--adapters", type=int, default=50, help="adapters in the run (default 50)")
    p.add_argument("--formats", default="png,pdf", help="formats (default png,pdf)")
    p.add_argument("--keep", help="write the run and its figures here and keep them")
    args = p.parse_args()
    if not 1 <= args.adapters <= 1000:
        fail("--adapters: give 1 to 1000")
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="nicbench-figs-"))
    try:
        run_dir, out = work / "run", work / "figures"
        if run_dir.exists() or out.exists():
            fail(f"{work}: holds a run or figures already; give a new --keep directory")
        run_dir.mkdir(parents=True)
        adapters, trials = clone_run(Path(args.source), run_dir, args.adapters)
        print(f"run: {adapters} adapters, {trials} trial records, cloned from "
              f"{Path(args.source).name}")
        env = {k: v for k, v in os.environ.items() if not k.startswith("NICBENCH_")}
        t0 = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "nicbench.cli", "figures", str(run_dir),
                               "--out", str(out), "--format", args.formats],
                              capture_output=True, text=True, timeout=600, env=env, cwd=REPO)
        seconds = time.monotonic() - t0
        # the CPU time of the command and its workers: the work itself, whatever else the
        # machine was doing (the wall time moves with the load average)
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_s = usage.ru_utime + usage.ru_stime
        if proc.returncode != 0:
            fail(f"nicbench figures failed: {proc.stderr.strip()[-500:]}")
        files = [f for f in out.iterdir() if f.suffix != ".csv"]
        charts = len({f.stem for f in files})
        mb = sum(f.stat().st_size for f in files) / 1e6
        load = os.getloadavg()[0]
        print(f"figures: {charts} charts, {len(files)} files ({mb:.1f} MB), figures.csv "
              f"{(out / 'figures.csv').stat().st_size // 1024} KB")
        verdict = "PASS" if seconds <= LIMIT_S else "FAIL"
        print(f"figures: seconds={seconds:.2f} cpu_s={cpu_s:.1f} adapters={adapters} "
              f"trials={trials} "
              f"charts={charts} files={len(files)} formats={args.formats} "
              f"load_avg={load:.1f} limit_s={LIMIT_S:g} {verdict}")
        return 0 if verdict == "PASS" else 1
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
