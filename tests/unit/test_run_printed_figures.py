"""The run's printed progress lines and summary give the report's figures (issue 30): a
netPIPE run's plateau, its burst maximum only marked as such (the summary's own figure is
the curve's highest point, 1878-1985 Mbit/s on the lab's Gigabit link), and round trips
pooled with their count, a percentile blank where too few lie beyond it. On the real run
tests/report/data/modern (the modern profile on a private lab)."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

from nicbench.cli.console import mbit
from nicbench.cli.run import _ended, _figure
from nicbench.report.load import load_runs
from nicbench.report.netpipe import plateau_of

RUN = Path(__file__).resolve().parents[1] / "report" / "data" / "modern"


def test_a_netpipe_progress_line_gives_the_plateau_and_marks_the_burst():
    (run,) = load_runs([RUN])
    rec = next(r for r in run.records if r.tool == "netpipe" and r.ok)
    line = _figure(rec)
    flat = plateau_of(rec)
    assert flat is not None and rec.throughput_bps is not None and flat < rec.throughput_bps
    assert line == f"plateau {mbit(flat)} Mbit/s (burst {mbit(rec.throughput_bps)})"


def test_the_printed_summary_gives_netpipes_plateau_as_the_report_does(capsys):
    (run,) = load_runs([RUN])
    runner = SimpleNamespace(summary=run.summary, unmeasured={}, lost={}, problems=[])
    _ended(SimpleNamespace(report=False), runner,
           SimpleNamespace(path=RUN, records=lambda: run.records))
    text = capsys.readouterr().out
    lines = [ln for ln in text.splitlines() if " netpipe " in ln]
    assert lines
    for ln in lines:
        pair, point = ln.split()[:2]
        row = next(r for r in run.summary if (r.pair, r.point, r.test) == (pair, point,
                                                                            "netpipe"))
        if row.n_ok == 0:
            continue
        assert " plateau " in ln
        burst = mbit(row.selected_bps)
        figures = re.findall(r"\d+\.\d", ln)
        assert burst not in figures       # the curve's top is not the printed figure
        flats = [plateau_of(r) for r in run.records if (r.pair, r.point, r.test) ==
                 (pair, point, "netpipe") and r.ok]
        assert mbit(max(v for v in flats if v is not None)) in figures   # select: best
    # round trips: the pooled count beside the percentiles
    for row in run.summary:
        if row.p50_us is not None:
            (ln,) = [x for x in text.splitlines()
                     if x.split()[:3] == [row.pair, row.point, row.test]]
            assert f"{row.latency_samples:,}" in ln.split()
