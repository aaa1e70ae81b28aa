"""The load measure the physics checks stand on (tests/lab/loadcheck.py), against CPU
time known independently: a busy loop's own ``time.process_time()``.

A loop in a lab namespace is the lab's load, never "other" (a tool that burns more CPU
must not make the machine count as busy); the same loop outside the lab and outside this
test is "other" load. The loops are orphaned (their parent shell exits at once, so they
are reparented to init, as a daemonized server is): the case where nothing reaps them
into a parent's cutime and only the sampler sees their time; or, in the lab, reaped by a
shell that lives on (as client_run.sh reaps its client), whose cutime then takes in the
loop's whole time: counted once, not twice.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from loadcheck import EVERY_S, Beside, judge_short, lab_namespaces

pytestmark = pytest.mark.lab

SPIN_S = 1.0        # CPU seconds the loop burns, then it sleeps (seen alive, then gone)
LOOP = ("import sys, time\n"
        f"while time.process_time() < {SPIN_S}: pass\n"
        "open(sys.argv[1], 'w').write(str(time.process_time()))\n"
        "time.sleep(0.5)\n")


def orphan_loop(prefix: list[str], done_file, reaped: bool = False) -> None:
    """The loop, started by a shell that exits at once (``reaped``: by a subshell that
    waits for it, then lives on a second); back once it wrote its CPU time (bounded: 60 s,
    whatever the machine's load)."""
    loop = '"$0" -c "$1" "$2"'
    script = f"({loop}; sleep 1) >/dev/null 2>&1 &" if reaped else f"{loop} >/dev/null 2>&1 &"
    subprocess.run([*prefix, "sh", "-c", script, sys.executable, LOOP, str(done_file)],
                   check=True, timeout=30)
    deadline = time.monotonic() + 60
    while not done_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)                    # its sleep, and the sampler's look after it ended
    assert done_file.exists(), "the busy loop did not finish within 60 s"


@pytest.mark.parametrize("where", ["lab", "lab-reaped", "elsewhere"])
def test_a_busy_loop_counts_as_the_labs_load_or_other_load_by_where_it_runs(lab, tmp_path,
                                                                           where):
    ns = lab_namespaces(lab)
    prefix = ["ip", "netns", "exec", ns[0]] if where != "elsewhere" else []
    done = tmp_path / "cpu"
    with Beside(ns) as load:
        orphan_loop(prefix, done, reaped=where == "lab-reaped")
    spent = float(done.read_text())
    assert load.during is not None
    during = load.during
    lab_s, other_s = during.seconds_of(during.lab_pct), during.seconds_of(during.other_pct)
    # the sampler misses at most its own period of the loop's time, plus clock ticks
    slack = EVERY_S + 0.05
    where_s, not_s = (other_s, lab_s) if where == "elsewhere" else (lab_s, other_s)
    assert where_s >= spent - slack, f"{where}: loop {spent:.2f} CPU s; {during}"
    if where != "elsewhere":
        # in the lab, never other load (other load of the machine may come on top)
        assert lab_s <= spent + slack + 0.3, f"loop {spent:.2f} CPU s; {during}"
    else:
        assert not_s < spent / 2, f"loop {spent:.2f} CPU s counted as the lab's; {during}"


# -- judge_short: what a short figure becomes (no lab needed) -----------------------------
class Quiet:
    busy = False

    def __str__(self) -> str:
        return "quiet"


class Busy(Quiet):
    busy = True

    def __str__(self) -> str:
        return "busy"


def never() -> tuple[float, Quiet]:
    raise AssertionError("run again when it need not be")


@pytest.mark.shares_machine     # made-up loads and figures: nothing of this machine judged
@pytest.mark.parametrize("load, again, outcome, words", [
    # short with other load: skipped, not run again, the figures in the reason
    (Busy(), never, pytest.skip.Exception, "700.0 Mbit/s is under the floor 900.0 with "
                                           "other load on the machine (busy)"),
    # short on a quiet machine, right when run again: skipped with both figures
    (Quiet(), lambda: (950e6, Quiet()), pytest.skip.Exception, "run again gave 950.0"),
    # short again, and that run had other load: skipped, saying so
    (Quiet(), lambda: (650e6, Busy()), pytest.skip.Exception, "650.0 Mbit/s with other load"),
    # short again on a quiet machine: fails with both figures
    (Quiet(), lambda: (650e6, Quiet()), AssertionError, "run again gave 650.0 Mbit/s on a "
                                                        "quiet machine"),
])
def test_a_short_figure_is_skipped_only_with_its_figures_and_fails_when_it_stays_short(
        load, again, outcome, words):
    with pytest.raises(outcome, match=words.replace("(", r"\(").replace(")", r"\)")):
        judge_short("the bar", 700e6, 900e6, load, again)
    judge_short("the bar", 900e6, 900e6, Busy(), never)     # at the floor: judged, passes
