"""The load measure the physics checks stand on (tests/lab/loadcheck.py), against CPU
time known independently: a busy loop's own ``time.process_time()``.

A loop in a lab namespace is the lab's load, never "other" (a tool that burns more CPU
must not make the machine count as busy); the same loop outside the lab and outside this
test is "other" load. Both loops are orphaned (their parent shell exits at once, so they
are reparented to init, as a daemonized server is): the case where nothing reaps them
into a parent's cutime and only the sampler sees their time.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from loadcheck import EVERY_S, Beside, lab_namespaces

pytestmark = pytest.mark.lab

SPIN_S = 0.6        # CPU seconds the loop burns, then it sleeps (seen alive, then gone)
LOOP = ("import sys, time\n"
        f"while time.process_time() < {SPIN_S}: pass\n"
        "open(sys.argv[1], 'w').write(str(time.process_time()))\n"
        "time.sleep(0.5)\n")


def orphan_loop(prefix: list[str], done_file) -> None:
    """The loop, started by a shell that exits at once; back once it wrote its CPU time
    (bounded: 60 s, whatever the machine's load)."""
    subprocess.run([*prefix, "sh", "-c", '"$0" -c "$1" "$2" >/dev/null 2>&1 &',
                    sys.executable, LOOP, str(done_file)], check=True, timeout=30)
    deadline = time.monotonic() + 60
    while not done_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)                    # its sleep, and the sampler's look after it ended
    assert done_file.exists(), "the busy loop did not finish within 60 s"


@pytest.mark.parametrize("where", ["lab", "elsewhere"])
def test_a_busy_loop_counts_as_the_labs_load_or_other_load_by_where_it_runs(lab, tmp_path,
                                                                           where):
    ns = lab_namespaces(lab)
    prefix = ["ip", "netns", "exec", ns[0]] if where == "lab" else []
    done = tmp_path / "cpu"
    with Beside(ns) as load:
        orphan_loop(prefix, done)
    spent = float(done.read_text())
    assert load.during is not None
    during = load.during
    lab_s, other_s = during.seconds_of(during.lab_pct), during.seconds_of(during.other_pct)
    # the sampler misses at most its own period of the loop's time, plus clock ticks
    slack = EVERY_S + 0.05
    where_s, not_s = (lab_s, other_s) if where == "lab" else (other_s, lab_s)
    assert where_s >= spent - slack, f"{where}: loop {spent:.2f} CPU s; {during}"
    if where == "lab":
        # in the lab, never other load (other load of the machine may come on top)
        assert lab_s <= spent + slack + 0.3, f"loop {spent:.2f} CPU s; {during}"
    else:
        assert not_s < spent / 2, f"loop {spent:.2f} CPU s counted as the lab's; {during}"
