"""Repetitions until the figure is stable, on real hosts: a steady link stops adding
repetitions once the 95 % interval of its figure is within the target, a noisy one goes on to the maximum, and
the summary says why each stopped.

The noisy link is made noisy by this test: after each of its trials the lab link's shaping
rate flips between 300 and 900 Mbit/s (a bounded number of flips, one per trial), and the
link is shaped back to its own rate afterwards, also on failure.
"""

from __future__ import annotations

import textwrap

import pytest

from loadcheck import Beside, lab_namespaces
from nicbench.tools.registry import CATALOG
from nicbench.config.loader import load_profile
from nicbench.execution import events as ev
from nicbench.execution.runner import Runner
from nicbench.results.policy import interval
from nicbench.results.records import Kind

pytestmark = pytest.mark.lab

MIN, MAX, TARGET = 5, 10, 2.0
PROFILE = f"""\
    format_version: 1
    name: until-stable
    source: "nicbench lab test: repetitions until the figure is stable"
    platform: linux
    repetitions: {{min: {MIN}, max: {MAX}, until_ci_pct: {TARGET}}}
    mtu: [1500]
    tests:
      - {{name: tcp, tool: iperf3, params: {{duration_s: 1}}}}
    """


def test_a_noisy_link_gets_more_repetitions_than_a_steady_one(lab, lab_inventory, tmp_path):
    path = tmp_path / "until-stable.yaml"
    path.write_text(textwrap.dedent(PROFILE))
    profile = load_profile(path, CATALOG)
    noisy = next(link for link in lab.spec.links() if link.adapter.key == "nojumbo")
    flips = iter(["300mbit", "900mbit"] * MAX)      # at most one flip per noisy trial
    stopped: list[ev.RepetitionsStopped] = []

    def listen(event: ev.Event) -> None:
        if isinstance(event, ev.TrialDone) and event.record.pair == noisy.pair_name:
            lab.reshape(noisy, next(flips))
        elif isinstance(event, ev.RepetitionsStopped):
            stopped.append(event)

    try:
        with Beside(lab_namespaces(lab)) as load:
            runner = Runner(profile, lab_inventory, tmp_path / "out",
                            pairs=["gbe", noisy.pair_name], listener=listen)
            run_dir = runner.run()
    finally:
        lab.reshape(noisy)
    recs = [r for r in run_dir.records() if r.kind is Kind.REPETITION]
    ran = {pair: sum(r.pair == pair for r in recs) for pair in ("gbe", noisy.pair_name)}
    rows = {row.pair: row for row in runner.summary}
    assert all(r.ok for r in recs), [r.reason for r in recs if not r.ok]

    # The noisy link never settles: every repetition up to the maximum, and it says so.
    assert ran[noisy.pair_name] == MAX
    assert rows[noisy.pair_name].stopped.startswith(f"max reached ({MAX}): the median's 95 % "
                                                    "interval ")
    # The progress counted what was planned, whatever stopped early.
    assert runner.progress.done == runner.progress.total == 2 * MAX
    # The steady link stops as soon as the interval of its figure is within the target
    # (select best: the median's interval, which takes 6).
    steady = rows["gbe"].stopped
    if ran["gbe"] == MAX and load.busy:
        pytest.skip(f"gbe took all {MAX} repetitions ({steady}) with other load on the "
                    f"machine ({load}): not judged")
    assert 6 <= ran["gbe"] < MAX, steady
    ci = interval([r.throughput_bps for r in recs if r.pair == "gbe"], "median")
    assert ci is not None and ci.reach_pct <= TARGET
    assert steady == f"stable after {ran['gbe']}: {ci.words()}; the best of n grows with n"
    assert [(e.pair, e.ran) for e in stopped] == [("gbe", ran["gbe"]),
                                                  (noisy.pair_name, MAX)]
