"""The report of a real run of ``profiles/modern.yaml`` on the lab's five adapters
(``data/modern``, see data/README.md): the reviews' throughput tests at MTU 1500 and 9000
and issue 22's latency, under-load, streams and small-packet tests at 1500 only.

Each section is there with a row per adapter; the verdict ranks throughput once per
method (a swept test is the streams section's, a load with a probe beside it latency
under load's); a test not run at MTU 9000 by design is no failed or missing
configuration; the small-packet rates are within the line rate and name their trials.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nicbench.report.build import build
from nicbench.report import svg
from nicbench.report.load import load_runs

MODERN = Path(__file__).parent / "data" / "modern"
ADAPTERS = 5
ONLY_AT_1500 = {"rtt-udp-64", "rtt-tcp-64", "rtt-idle", "rtt-loaded", "rtt-loaded-bidir",
                "tcp-streams1", "tcp-streams2", "tcp-streams4", "tcp-streams8",
                "bidir-streams1", "bidir-streams4", "smallpkt"}


@pytest.fixture(scope="module")
def report():
    return build(load_runs([MODERN]))


def table(report, table_id: str):
    return next(t for t in report.tables if t.id == table_id)


def test_every_new_section_has_a_row_per_adapter(report):
    for table_id in ("verdict-latency-sockperf-udp", "verdict-latency-sockperf-tcp",
                     "verdict-loaded-rtt-loaded", "verdict-loaded-rtt-loaded-bidir",
                     "verdict-smallpkt", "latency-sockperf-udp", "loaded-rtt-loaded"):
        assert len(table(report, table_id).rows) == ADAPTERS, table_id
    streams = table(report, "streams-tcp-iperf3-tcp")
    assert {(r[0], r[2]) for r in streams.rows} == {
        (a, n) for a in {r[1] for r in table(report, "verdict-smallpkt").rows}
        for n in (1, 2, 4, 8)}
    families = {f.family for f in report.figures}
    assert {"latency", "latency-cdf", "loaded", "streams", "smallpkt"} <= families


def test_the_verdict_ranks_each_throughput_once(report):
    methods = [s.method for s in report.verdict]
    assert methods[:3] == ["iperf 2 TCP: test iperf2-tcp", "iperf3 TCP: test iperf3-tcp",
                           "netPIPE TCP"]
    assert [m for m in methods if m.startswith("iperf3 TCP")] == ["iperf3 TCP: test iperf3-tcp"]
    assert "Latency under load: test rtt-loaded-bidir" in methods
    # the load beside a probe is latency under load's, not a streams family
    assert not [f for f in report.figures_of("streams") if "rtt-loaded" in f.id]
    assert {f.id.split("-")[1] for f in report.figures_of("streams")} == {"tcp", "bidir"}


def test_a_test_not_run_at_9000_is_no_failure(report):
    fails = table(report, "failures").rows
    assert fails and {r[2] for r in fails} == {"iperf3-tcp", "iperf2-tcp", "netpipe"}
    summary = table(report, "summary").rows
    assert not [r for r in summary if r[3] == "MTU 9000" and r[1] in ONLY_AT_1500]


def test_packet_rates_are_within_the_line_rate_and_traceable(report):
    trials = {json.loads(line)["trial_id"]: json.loads(line)
              for line in (MODERN / "trials.jsonl").read_text().splitlines()}
    tab = table(report, "smallpkt")
    rows, cpu = tab.rows, tab.columns.index("sender CPU % at NDR")
    line = {("LX-100 Fast Ethernet (macvlan fe-100m)", 64): 148_809,
            ("LX-1000 Gigabit (veth tbf-1g)", 64): 1_488_095}
    for (adapter, frame), pps in line.items():
        [row] = [r for r in rows if r[0] == adapter and r[2] == frame]
        assert row[3] == pps
        ndr = int(str(row[4]).replace(",", ""))
        assert 0 < ndr <= pps
        rec = trials[row[-1]]           # the NDR's own trial, with its raw output named
        assert rec["udp"]["lost"] == 0 and rec["raw"]["server"].startswith("raw/")
        assert rec["pair"] in ("fe", "gbe")
    assert all(isinstance(r[cpu], float) and r[cpu] == round(r[cpu], 1)
               for r in rows if r[cpu] != "")
    # a run stored before confirmations (issue 30): its figures say so, none ranked
    ndr_conf = tab.columns.index("NDR confirmation")
    assert {r[ndr_conf] for r in rows if r[4] != "none passed"} == {
        "not confirmed (an older run's short trial)"}


def test_one_repetition_is_said_so(report):
    [tcp] = [s for s in report.verdict if s.method == "sockperf TCP"]
    assert "of 1 repetitions" not in tcp.text and "one repetition" in tcp.text


def test_the_under_load_bars_say_their_whole_label(report):
    """p99, RPM and the load beside each loaded bar, none cut short with an ellipsis."""
    for fig in report.figures_of("loaded"):
        text = svg.render(fig)
        assert "RPM, load " in text and "\u2026" not in text, fig.id
