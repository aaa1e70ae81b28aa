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
import sys

from report_scale import scale_options, scaled_run, timed_cli

LIMIT_S = 15.0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    scale_options(p, "figures")
    p.add_argument("--formats", default="png,pdf", help="formats (default png,pdf)")
    args = p.parse_args()
    with scaled_run(args, "figures") as (run_dir, out, adapters, trials):
        seconds = timed_cli("figures", str(run_dir), "--out", str(out),
                            "--format", args.formats)
        # the CPU time of the command and its workers: the work itself, whatever else the
        # machine was doing (the wall time moves with the load average)
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_s = usage.ru_utime + usage.ru_stime
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


if __name__ == "__main__":
    sys.exit(main())
