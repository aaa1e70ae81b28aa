"""The results store at the scale of a lab's year: import rate, a store of a million
trials, a history query of one adapter, test and point against it, and a report of 50
adapters with its History section read from it.

No lab, no root. The corpus (``bench/_store_corpus.py``) is one real lab run
(tests/report/data/roundup: 5 adapters, 402 trial records) copied as many nights of
``--groups`` copies of its adapters (10 groups: 50 adapters), each run a results directory
written to a temp directory, imported by the code ``nicbench store import`` runs, and
removed again batch by batch (a million trials are 1.3 GB of trials.jsonl):

1. ``import``: the first ``--import-runs`` (100) runs into a new store: trials/s
   (target >= 20,000);
2. ``build``: more runs imported the same way until the store holds ``--trials``
   (1,000,000): its time and file size;
3. ``history``: one adapter's test at one point over every night (what ``nicbench
   history`` asks: ``Store.trial_frame(adapter=, test=, point=)`` and the manifests of its
   runs), the median of 5, each in a new read-only open of the store (limit 0.5 s);
4. ``report``: the next night's runs (all 50 adapters) imported as a nightly run stores
   them, then ``nicbench report`` of them with the store as its history (``--store``), in
   a new process as a user runs it, end to end: its wall time (limit 5 s) and the
   History section's charts (one per adapter, each series' last 30 runs).

``--store postgresql://...`` measures a PostgreSQL database instead (it is emptied
first); ``--keep DIR`` keeps the DuckDB store there, and ``--keep DIR --history-only``
measures the history query again on it. Ends in one line of figures (with the machine's
load: the figures move with it).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import _store_corpus as corpus  # noqa: E402

from nicbench.store import import_dirs, open_store, resolve  # noqa: E402

SOURCE = REPO / "tests" / "report" / "data" / "roundup"
IMPORT_TARGET = 20_000       # trials/s
HISTORY_LIMIT_S = 0.5
REPORT_LIMIT_S = 5.0
BATCH = 100                  # runs written, imported and removed at a time


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--from", dest="source", default=str(SOURCE),
                   help="the real run the corpus is made of (default: %(default)s)")
    p.add_argument("--trials", type=int, default=1_000_000)
    p.add_argument("--import-runs", type=int, default=100)
    p.add_argument("--groups", type=int, default=10,
                   help="copies of the run's adapters (default 10: 50 adapters)")
    p.add_argument("--store", help="a postgresql:// URL to measure (default: a DuckDB file)")
    p.add_argument("--keep", help="directory to keep the DuckDB store in")
    p.add_argument("--history-only", action="store_true",
                   help="measure only the history query, on the store --keep kept")
    args = p.parse_args()
    if args.history_only:
        if not args.keep and not args.store:
            sys.exit("bench: error: --history-only needs --keep DIR (or --store URL)")
        return _history_only(resolve(args.store or str(Path(args.keep) / "bench.duckdb")))
    source = corpus.Source(args.source)
    work = Path(tempfile.mkdtemp(prefix="nicbench-storebench-"))
    try:
        at = args.store or str(Path(args.keep or work) / "bench.duckdb")
        location = resolve(at)
        with open_store(location) as s:
            s.clear()
        opened = lambda: open_store(location)      # noqa: E731
        # every night the bench makes (the build's and the report's) lies in the past
        runs_in_all = max(args.import_runs, -(-args.trials // source.trials)) + args.groups
        night0 = corpus.nights_back(-(-runs_in_all // args.groups) + 1)
        import_s, first, cpu_s = _import(source, work, opened, 0, args.import_runs,
                                         args.groups, night0)
        rate = first * source.trials / import_s
        cpu_us = cpu_s / (first * source.trials) * 1e6
        print(f"import: {first} runs, {first * source.trials} trials in {import_s:.1f} s: "
              f"{rate:,.0f} trials/s; CPU {cpu_us:.0f} µs a trial (the importer and its "
              f"workers: at most {2e6 / cpu_us:,.0f} trials/s on two free cores)")
        runs, build_s = first, import_s
        while runs * source.trials < args.trials:
            n = min(BATCH, -(-(args.trials - runs * source.trials) // source.trials))
            seconds, _, _ = _import(source, work, opened, runs, n, args.groups, night0)
            runs, build_s = runs + n, build_s + seconds
        with open_store(location, write=False) as s:
            info = s.info()
        size_mb = Path(at).stat().st_size / 1e6 if location.kind == "duckdb" else 0.0
        print(f"build: {info.runs} runs, {info.trials} trials in {build_s:.1f} s "
              f"({info.trials / build_s:,.0f} trials/s), {size_mb:.0f} MB")
        q_s, trials_s, rows = _histories(location)
        report_s, charts, report_cpu_s = _report(source, work, at, runs, args.groups, night0)
        ok = rate >= IMPORT_TARGET and q_s <= HISTORY_LIMIT_S and \
            report_s <= REPORT_LIMIT_S and info.trials >= args.trials
        print(f"store: backend={location.kind.value} import_trials_per_s={rate:.0f} "
              f"import_cpu_us={cpu_us:.0f} import_target={IMPORT_TARGET} "
              f"trials={info.trials} runs={info.runs} "
              f"build_s={build_s:.1f} store_mb={size_mb:.0f} history_s={q_s:.3f} "
              f"history_trials_s={trials_s:.3f} history_rows={rows} "
              f"history_limit_s={HISTORY_LIMIT_S} report_s={report_s:.2f} "
              f"report_cpu_s={report_cpu_s:.2f} "
              f"history_charts={charts} report_limit_s={REPORT_LIMIT_S:g} "
              f"load1={os.getloadavg()[0]:.1f} {'PASS' if ok else 'FAIL'}")
        return 0 if ok else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _cpu() -> float:
    """CPU seconds of this process (its DuckDB threads included) and of its children
    waited for (import workers, the report's process): on shared cores the wall time
    moves with the load, the work does not."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _import(source, work: Path, opened, first: int, count: int, groups: int,
            night0: date) -> tuple[float, int, float]:
    """Write runs first.. of the corpus, import them (timed), remove them: the import's
    seconds, runs and CPU seconds."""
    batch = work / "runs"
    dirs = corpus.write_runs(source, batch, first=first, count=count, groups=groups,
                             first_night=night0)
    c0, t0 = _cpu(), time.perf_counter()
    counts = import_dirs(opened, [str(d) for d in dirs])
    seconds, cpu_s = time.perf_counter() - t0, _cpu() - c0
    shutil.rmtree(batch)
    if counts.trials_added != count * source.trials:
        sys.exit(f"bench: error: imported {counts.trials_added} trials of "
                 f"{count * source.trials}")
    return seconds, count, cpu_s


def _report(source, work: Path, at: str, runs: int, groups: int,
            night0: date) -> tuple[float, int, float]:
    """The next night's runs (every group: all the adapters) written and imported as a
    nightly run stores them, then ``nicbench report`` of them with the store as its
    history, in a new process as a user runs it: its wall time and the History
    section's charts (one per adapter), and its CPU seconds."""
    night = -(-runs // groups)
    dirs = corpus.write_runs(source, work / "night", first=night * groups, count=groups,
                             groups=groups, first_night=night0)
    import_dirs(lambda: open_store(resolve(at)), [str(d) for d in dirs])
    out = work / "report"
    env = {k: v for k, v in os.environ.items() if not k.startswith("NICBENCH_")}
    c0, t0 = _cpu(), time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "nicbench.cli", "report",
                           *[str(d) for d in dirs], "--store", at, "--out", str(out)],
                          capture_output=True, text=True, timeout=600, env=env, cwd=REPO)
    seconds, cpu_s = time.perf_counter() - t0, _cpu() - c0
    if proc.returncode != 0:
        sys.exit(f"bench: error: nicbench report failed: {proc.stderr.strip()[-500:]}")
    charts = len(list((out / "figures").glob("history-*.svg")))
    print(f"report: {len(dirs)} runs of night {night}, "
          f"{len(list((out / 'figures').glob('*.svg')))} charts of which {charts} of "
          f"history, in {seconds:.2f} s ({cpu_s:.2f} s of CPU)")
    if not charts:
        sys.exit("bench: error: the report has no History section")
    return seconds, charts, cpu_s


def _history(location) -> tuple[float, float, int, int]:
    """(seconds in all, of which the trials' query, trials, nights)."""
    t0 = time.perf_counter()
    with open_store(location, write=False) as s:
        frame = s.trial_frame(adapter="lab-gbe-g3", test="iperf3-tcp", point="mtu9000")
        t1 = time.perf_counter()
        s.manifests(frame["run_id"].unique().tolist())
    return time.perf_counter() - t0, t1 - t0, len(frame), frame["run_id"].nunique()


def _histories(location) -> tuple[float, float, int]:
    """The history query 5 times, each in a new open of the store: the medians."""
    history = [_history(location) for _ in range(5)]
    q_s = statistics.median(h[0] for h in history)
    trials_s = statistics.median(h[1] for h in history)
    rows, nights = history[0][2], history[0][3]
    print(f"history: {rows} trials of {nights} nights in {q_s:.3f} s, of which the trials "
          f"{trials_s:.3f} s and their runs' manifests the rest (median of 5)")
    return q_s, trials_s, rows


def _history_only(location) -> int:
    with open_store(location, write=False) as s:
        info = s.info()
    q_s, trials_s, rows = _histories(location)
    ok = q_s <= HISTORY_LIMIT_S
    print(f"store: backend={location.kind.value} trials={info.trials} runs={info.runs} "
          f"history_s={q_s:.3f} history_trials_s={trials_s:.3f} history_rows={rows} "
          f"history_limit_s={HISTORY_LIMIT_S} load1={os.getloadavg()[0]:.1f} "
          f"{'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
