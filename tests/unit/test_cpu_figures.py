"""Host CPU figures checked as values, end to end on fake hosts: the CPU each host spent
over each trial (the fakes' counters move by exactly what the test gives per repetition,
``nicbench.platforms.fake.FakeCpu``) must come out in that trial's record, in the
summary's means and in the verdict's medians, IQRs and cost, as computed here from the
given figures.

The figures differ at every repetition and point, and their mean differs from their
median, so a figure put on the wrong repetition or point, a mean for a median, or the
tool's share swapped with the rest of the load would show. (On the lab, a trial's CPU
against the machine's own accounting: tests/lab/test_cpu_split_lab.py.)
"""

from __future__ import annotations

import csv
import statistics
import textwrap

import pytest

from nicbench.config.loader import load_profile
from nicbench.execution.runner import Runner
from nicbench.platforms.fake import Answer, FakeCpu, FakeHosts, FakeInterface, ToolCall
from nicbench.report.build import build
from nicbench.report.load import load_runs
from nicbench.tools.registry import CATALOG

from test_runner import INVENTORY, IPERF3_TCP


PROFILE = """\
    name: cpu
    source: nicbench unit test
    repetitions: 5
    mtu: [1500, 9000]
    tests:
      - {name: tcp, tool: iperf3, params: {duration_s: 1}}
    """

# (busy %, the tool's own %) per repetition 1..5: sender (client host), receiver (server
# host). Means differ from medians; every figure differs from every other.
FIGURES = {
    1500: {"sender": [(31.0, 11.0), (47.0, 23.0), (38.0, 17.0), (60.0, 29.0), (42.0, 19.0)],
           "receiver": [(22.0, 9.0), (35.0, 14.0), (27.0, 12.0), (50.0, 21.0), (33.0, 13.0)]},
    9000: {"sender": [(21.0, 6.0), (26.0, 10.0), (24.0, 8.0), (39.0, 15.0), (25.0, 7.0)],
           "receiver": [(18.0, 5.0), (23.0, 8.5), (20.0, 7.5), (36.0, 12.0), (19.0, 6.5)]},
}


class Figures:
    """Answers each client run with the capture and the next repetition's CPU figures of
    the MTU it runs at (the engine runs a point's repetitions in order)."""

    def __init__(self) -> None:
        self.runs = dict.fromkeys(FIGURES, 0)

    def __call__(self, call: ToolCall) -> Answer:
        mtu = call.mtu["t0"]
        k = self.runs[mtu]
        self.runs[mtu] += 1
        return Answer(client=IPERF3_TCP, sender=FakeCpu(*FIGURES[mtu]["sender"][k]),
                      receiver=FakeCpu(*FIGURES[mtu]["receiver"][k]))


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cpu")
    (tmp / "p.yaml").write_text(textwrap.dedent(PROFILE))
    hosts = FakeHosts(Figures())
    hosts.add("ha", {"t0": FakeInterface(addresses=("198.18.0.1",))})
    hosts.add("hb", {"t0": FakeInterface(addresses=("198.18.0.2",))})
    runner = Runner(load_profile(tmp / "p.yaml", CATALOG), INVENTORY, tmp / "out", hosts=hosts)
    run_dir = runner.run()
    return runner, run_dir


def test_each_record_holds_its_own_repetitions_cpu_split_into_tool_and_other(ran):
    _runner, run_dir = ran
    recs = list(run_dir.records())
    assert len(recs) == 10 and all(r.ok for r in recs)
    for r in recs:
        assert r.repetition is not None
        for side in ("sender", "receiver"):
            busy, tool = FIGURES[r.mtu][side][r.repetition - 1]
            split = getattr(r.cpu, side)
            got = (split.busy, split.tool, split.other)
            # the fakes have no irq or softirq time: other is busy less the tool
            assert got == pytest.approx((busy, tool, busy - tool), abs=1e-9), \
                (r.trial_id, side, got)


def test_the_summary_gives_the_mean_of_each_points_repetitions(ran):
    runner, run_dir = ran
    rows = {row.mtu: row for row in runner.summary}
    for mtu, sides in FIGURES.items():
        snd = statistics.fmean(b for b, _ in sides["sender"])
        rcv = statistics.fmean(b for b, _ in sides["receiver"])
        assert snd != statistics.median(b for b, _ in sides["sender"])
        assert rows[mtu].cpu_local_pct == pytest.approx(snd)
        assert rows[mtu].cpu_remote_pct == pytest.approx(rcv)
    # and summary.csv, as written
    with open(run_dir.path / "summary.csv", newline="") as fh:
        written = {int(r["mtu"]): r for r in csv.DictReader(fh)}
    for mtu, sides in FIGURES.items():
        assert float(written[mtu]["cpu_local_pct"]) == pytest.approx(
            statistics.fmean(b for b, _ in sides["sender"]), abs=0.01)


def quartiles(values: list[float]) -> float:
    """The interquartile range, inclusive method (the report's): computed by hand."""
    v = sorted(values)
    def at(q: float) -> float:
        pos = q * (len(v) - 1)
        lo = int(pos)
        return v[lo] + (v[min(lo + 1, len(v) - 1)] - v[lo]) * (pos - lo)
    return at(0.75) - at(0.25)


def test_the_verdict_gives_medians_iqrs_other_load_and_cost_of_the_point_it_names(ran):
    _runner, run_dir = ran
    report = build(load_runs([run_dir.path]))
    (table,) = [t for t in report.tables if t.id == "verdict"]
    (row,) = [dict(zip(table.columns, r, strict=True)) for r in table.rows]
    mtu = {"mtu1500": 1500, "mtu9000": 9000}[row["point"]]
    snd = [b for b, _ in FIGURES[mtu]["sender"]]
    rcv = [b for b, _ in FIGURES[mtu]["receiver"]]
    # every repetition measured the same figure, so all five are used
    assert row["cpu_repetitions"] == "1,2,3,4,5"
    assert row["cpu_sender_pct"] == round(statistics.median(snd), 2)
    assert row["cpu_receiver_pct"] == round(statistics.median(rcv), 2)
    assert row["cpu_sender_iqr"] == round(quartiles(snd), 2)
    assert row["cpu_receiver_iqr"] == round(quartiles(rcv), 2)
    other = max(statistics.median(b - t for b, t in FIGURES[mtu][side])
                for side in ("sender", "receiver"))
    assert row["cpu_other_pct"] == round(other, 2)
    busier = max(statistics.median(snd), statistics.median(rcv))
    mbit = row["selected_bps"] / 1e6          # the figure, in bit/s in verdict.csv
    assert row["mbit_per_cpu_pct"] == pytest.approx(mbit / busier, abs=1e-3)
