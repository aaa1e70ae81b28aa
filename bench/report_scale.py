"""Report at the scale of an overnight batch: 50 adapters x 4 MTUs x 15 repetitions.

Builds a results directory of ``--adapters`` adapters (default 50) from a real lab run --
the main job, ``nicbench run lab-roundup`` (5 emulated adapters, MTU 1500/6000/9000/16000,
iperf3 and iperf 2 TCP 15 times, netPIPE once): by default the copy committed in
tests/report/data/roundup, or ``--from DIR`` (a run's --out directory) -- by cloning its
adapters, their pairs and every trial record (refusals, stalls and timeouts included) ten
times over, each clone's throughputs scaled a little so that rankings differ; raw outputs
the source has are hard-linked for every clone. Then it runs ``nicbench report`` on it as
a user does (a new process: imports, reading, charts, page, CSV, the runs' files) and
measures that process's wall time and peak memory (its maximum resident set size).

The target (issue #12): at most 15 s on the 2-core machine this runs on. The last line is
the figures, for machines: ``report_scale: seconds=... PASS|FAIL``.

    python bench/report_scale.py [--from DIR] [--adapters 50] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
SOURCE = REPO / "tests" / "report" / "data" / "roundup"
LIMIT_S = 15.0


def fail(message: str) -> None:
    sys.exit(f"bench: error: {message}")


def clone_run(src: Path, dst: Path, adapters: int) -> tuple[int, int]:
    """Write a run of ``adapters`` adapters cloned from ``src`` into ``dst``:
    (adapters, trial records)."""
    from nicbench.errors import NicbenchError
    from nicbench.results.manifest import Manifest
    from nicbench.results.rundir import RunDir

    try:
        manifest = Manifest.read(src / "manifest.json")
        records = list(RunDir(src).records(strict=True))
    except NicbenchError as exc:
        fail(f"{exc.one_line()} (give --from a results directory of nicbench run)")
    inv = manifest.inventory
    pairs = [p for p in inv.pairs if p.name in manifest.pairs]
    if not pairs or not records:
        fail(f"{src}: no pairs or no trials to clone")
    copies = -(-adapters // len(pairs))                   # ceiling: every adapter made
    new_pairs, new_adapters, lines = [], [], []
    (dst / "raw").mkdir(parents=True, exist_ok=True)
    made = 0
    for k in range(copies):
        for pair in pairs:
            if made == adapters:
                break
            made += 1
            adapter = inv.adapter(pair.adapter)
            suffix = f"{k + 1:02d}"
            aid, pname = f"{adapter.id}-{suffix}", f"{pair.name}{suffix}"
            new_adapters.append(adapter.model_copy(update={
                "id": aid, "model": f"{adapter.model} #{suffix}"}))
            new_pairs.append(pair.model_copy(update={"name": pname, "adapter": aid}))
            scale = 1.0 - 0.004 * k                       # rankings differ between clones
            for r in records:
                if r.pair != pair.name:
                    continue
                d = r.to_dict()
                raw = {}
                for role, rel in r.raw.items():
                    new_rel = rel.replace(f"raw/{pair.name}.", f"raw/{pname}.", 1)
                    if (src / rel).is_file() and not (dst / new_rel).exists():
                        os.link(src / rel, dst / new_rel)
                    raw[role] = new_rel
                d.update(pair=pname, adapter=aid, trial_id=f"{pname}.{r.trial_id}",
                         adapter_label=f"{adapter.model} #{suffix} " +
                         r.adapter_label[len(adapter.model):].strip(), raw=raw)
                if r.throughput_bps is not None:
                    d["throughput_bps"] = r.throughput_bps * scale
                d["points"] = [{**p, "throughput_bps": p["throughput_bps"] * scale}
                               for p in d["points"]]
                lines.append(json.dumps(d))
    interfaces = {f"{p.name}/{h}": manifest.interfaces[f"{src_pair.name}/{h}"]
                  for p, src_pair in zip(new_pairs, pairs * copies, strict=False)
                  for h in (p.a.host, p.b.host)
                  if f"{src_pair.name}/{h}" in manifest.interfaces}
    manifest.model_copy(update={
        "inventory": inv.model_copy(update={"adapters": new_adapters, "pairs": new_pairs}),
        "pairs": [p.name for p in new_pairs], "interfaces": interfaces,
        "run_id": f"{manifest.run_id}-x{adapters}"}).write(dst / "manifest.json")
    (dst / "trials.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return made, len(lines)


def scale_options(p: argparse.ArgumentParser, keeps: str) -> None:
    """The options every bench over a cloned run takes (figures.py too)."""
    p.add_argument("--from", dest="source", default=str(SOURCE),
                   help="results directory of a real lab run to clone (default: the main "
                        "job's run in tests/report/data/roundup)")
    p.add_argument("--adapters", type=int, default=50, help="adapters in the run (default 50)")
    p.add_argument("--keep", help=f"write the run and its {keeps} here and keep them")


@contextmanager
def scaled_run(args: argparse.Namespace, out_name: str
               ) -> Iterator[tuple[Path, Path, int, int]]:
    """The run of ``args.adapters`` cloned from ``args.source`` in a work directory
    (``args.keep``, else a temporary one removed after): (run, out, adapters, trials)."""
    if not 1 <= args.adapters <= 1000:
        fail("--adapters: give 1 to 1000")
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="nicbench-scale-"))
    try:
        run_dir, out = work / "run", work / out_name
        if run_dir.exists() or out.exists():
            fail(f"{work}: holds a run or {out_name} already; give a new --keep directory")
        run_dir.mkdir(parents=True)
        adapters, trials = clone_run(Path(args.source), run_dir, args.adapters)
        print(f"run: {adapters} adapters, {trials} trial records, cloned from "
              f"{Path(args.source).name}")
        yield run_dir, out, adapters, trials
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def timed_cli(*argv: str) -> float:
    """``nicbench ARGV`` in a new process, as a user runs it: its wall time (it must
    succeed)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NICBENCH_")}
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "nicbench.cli", *argv], capture_output=True,
                          text=True, timeout=600, env=env, cwd=REPO)
    seconds = time.monotonic() - t0
    if proc.returncode != 0:
        fail(f"nicbench {argv[0]} failed: {proc.stderr.strip()[-500:]}")
    return seconds


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    scale_options(p, "report")
    args = p.parse_args()
    with scaled_run(args, "report") as (run_dir, out, adapters, trials):
        seconds = timed_cli("report", str(run_dir), "--out", str(out))
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        figures = len(list((out / "figures").glob("*.svg")))
        tables = len(list((out / "tables").glob("*.csv")))
        page_kb = (out / "report.html").stat().st_size / 1024
        print(f"report: {figures} charts, {tables} CSV files, report.html {page_kb:.0f} KB")
        verdict = "PASS" if seconds <= LIMIT_S else "FAIL"
        print(f"report_scale: seconds={seconds:.2f} peak_rss_mb={peak_mb:.0f} "
              f"adapters={adapters} trials={trials} figures={figures} limit_s={LIMIT_S:g} "
              f"{verdict}")
        return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
