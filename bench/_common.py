"""What the benchmarks share: a lab, a profile written for the occasion, and one call of
the real engine (``run_profile``) over it.

The benchmarks measure nicbench itself, so they run exactly what ``nicbench run`` runs:
a profile loaded and validated like a user's, trials through ``run_trial`` over SSH to
the lab's hosts, records in a results directory (kept, so every figure can be checked).

By default each benchmark builds its own lab (prefix ``nbb``, slot 7: management networks
198.19.113.0/24 and 198.19.114.0/24, only the adapters it needs) and takes it down
afterwards: on the default lab other people's runs share the very links being measured
(a roundup on ``pci32`` halves the UDP rate this benchmark sees). ``-i INVENTORY`` runs
on an existing lab instead, e.g. the default one (``-i inventory.yaml``). Needs root, as
the lab does. Two benchmarks on one machine take turns (a lock in /run).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import shutil
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
BENCH_PREFIX, BENCH_SLOT = "nbb", 7
LOCK = Path("/run/nicbench-bench.lock")


def arguments(doc: str, pair: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=doc.strip().splitlines()[0])
    p.add_argument("-i", "--inventory",
                   help="run on this lab's inventory (default: build a lab of our own)")
    p.add_argument("--pair", default=pair, help="pair to measure on (default %(default)s)")
    p.add_argument("--out", help="results directory to keep (default: a new temp dir)")
    return p


def fail(message: str) -> None:
    sys.exit(f"bench: error: {message}")


@contextlib.contextmanager
def lab_in_temp_dir(spec, label: str):
    """A lab of ``spec`` (a ``LabSpec``) in a new temp directory, up for the duration and
    down and removed afterwards, also on error; yields its inventory file."""
    from nicbench.lab.lab import Lab

    if os.geteuid() != 0:
        fail("building a lab needs root (or give -i INVENTORY of a lab that is up)")
    lab_dir = tempfile.mkdtemp(prefix=f"nicbench-bench-{label}-")
    lab = Lab(spec, lab_dir)
    try:
        lab.up()
        yield lab.inventory_file
    finally:
        try:
            lab.down()
        finally:
            shutil.rmtree(lab_dir, ignore_errors=True)


@contextlib.contextmanager
def own_lab(adapter: str):
    """A lab with just ``adapter``, up for the duration; yields its inventory file."""
    from nicbench.lab.lab import LabSpec

    with open(LOCK, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        with lab_in_temp_dir(LabSpec(prefix=BENCH_PREFIX, slot=BENCH_SLOT, adapters=(adapter,)),
                             "lab") as inventory:
            yield inventory


def run(profile_text: str, inventory: str | None, pair: str, out: str | None):
    """Run the profile on ``pair``: (RunDir, wall seconds of the run, records)."""
    from nicbench.config.loader import load_inventory, load_profile
    from nicbench.tools.registry import CATALOG
    from nicbench.errors import NicbenchError
    from nicbench.execution.runner import run_profile

    out_dir = Path(out) if out else Path(tempfile.mkdtemp(prefix="nicbench-bench-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    prof_file = out_dir / "profile.yaml"      # kept with the results it produced
    prof_file.write_text(textwrap.dedent(profile_text))
    try:
        profile = load_profile(prof_file, CATALOG)
        with (contextlib.nullcontext(inventory) if inventory else own_lab(pair)) as inv_file:
            inv = load_inventory(inv_file, CATALOG)
            t0 = time.monotonic()
            run_dir = run_profile(profile, inv, out_dir, pairs=[pair])
            wall = time.monotonic() - t0
    except NicbenchError as exc:
        fail(f"{exc.one_line()}" + (f" (is that lab up? `nicbench check -i {inventory}`)"
                                    if inventory else ""))
    where = f"lab of {inventory}" if inventory else f"own lab {BENCH_PREFIX}-a/{BENCH_PREFIX}-b"
    print(f"{len(profile.tests)} tests on pair {pair} ({where})")
    return run_dir, wall, list(run_dir.records())


def pctl(values: list[float], q: float) -> float:
    """The q-quantile (0..1), linear between order statistics."""
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]
