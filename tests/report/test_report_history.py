"""The report's History section: present with three runs or more of an adapter (a trend
per test and point, its change marked and explained with the named statistic, n, the
detector's score and the setup difference), absent with fewer; a results store's history
is drawn for the runs given."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import RUN_A, RUN_B, write_report
from nights import night

from nicbench.history import history
from nicbench.report.model import LinePanel

GBE = 930e6


@pytest.fixture(scope="module")
def nights(tmp_path_factory):
    root = tmp_path_factory.mktemp("nights")
    rng = np.random.default_rng(8)
    out = []
    for i in range(5):
        level = GBE * (0.95 if i >= 3 else 1.0)
        out.append(night(root / f"n{i + 1}", f"2026-11-2{i}",
                         {"gbe": list(level * (1 + rng.normal(0, 0.003, 4)))},
                         driver_version="1.1" if i >= 3 else "1.0"))
    return out


@pytest.fixture(scope="module")
def rendered_history(tmp_path_factory, nights):
    return write_report(tmp_path_factory.mktemp("report"), nights)


def test_three_runs_of_an_adapter_make_a_history_section(rendered_history):
    report, page = rendered_history
    [fig] = report.figures_of("history")
    [panel] = fig.panels
    assert isinstance(panel, LinePanel) and not panel.xlog
    assert panel.title == "tcp, MTU 1500"
    runs, levels, marks = panel.curves
    assert [x for x, _ in runs.points] == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert runs.points[3][1] < 0.96 * runs.points[2][1]
    assert [x for x, _ in marks.points] == [4.0] and not marks.line
    assert levels.dash and levels.marker == "none"
    assert panel.references[0].y == pytest.approx(941.5, abs=0.1)   # the goodput limit
    assert 0 < panel.ymin < min(y for _, y in runs.points)
    assert "median of its successful repetitions (n = 4)" in fig.caption
    [note] = fig.notes
    assert note.startswith("tcp, MTU 1500: change at run 4 (20261123-030000, 2026-11-23): -")
    assert "nb-a gbe driver_version 1.0 -> 1.1" in note and " % [-" in note
    [table] = report.tables_of("history")
    assert [r[3] for r in table.rows] == ["20261123-030000"]
    html = page.read_text()
    assert '<section id="history">' in html and '<a href="#history">History</a>' in html
    assert "figures/history-gbe.svg" in html
    svg = (page.parent / "figures" / "history-gbe.svg").read_text()
    assert "change point" in svg and "run 4 (20261123-030000" in svg
    csv = (page.parent / "tables" / "figure-history-gbe.csv").read_text().splitlines()
    assert csv[0] == "panel,curve,run,mbit_s,what"


def test_fewer_runs_make_no_history_section(rendered):
    report, page = rendered                 # runs A and B: two runs of gbe
    assert report.figures_of("history") == [] and report.tables_of("history") == []
    html = page.read_text()
    assert 'id="history"' not in html and "#history" not in html


def test_a_history_source_draws_the_earlier_runs_for_the_runs_given(tmp_path, nights):
    """The store's seam: build_report(history=source) draws the runs the source holds for
    the adapters of the runs given (here directories stand for the store)."""
    from nicbench.report import build_report
    from nicbench.results.dataframe import DirSource

    page = build_report([str(nights[-1])], str(tmp_path / "r"),
                        history=DirSource(nights))
    html = page.read_text()
    assert '<section id="history">' in html and "20261123-030000" in html
    page = build_report([str(RUN_A), str(RUN_B)], str(tmp_path / "r2"),
                        history=DirSource(nights))
    assert 'id="history"' not in page.read_text()         # not these runs' adapters
    assert len(history(DirSource(nights), adapter="gbe")) == 1


def test_the_report_of_a_campaigns_run_draws_the_campaigns_earlier_nights(tmp_path):
    """A campaign builds a report of each run: its history is the campaign's nights beside
    it (not another campaign's)."""
    from nights import campaign_night

    from nicbench.report import build_report
    from nicbench.results.campaign import run_dirs

    root = tmp_path / "reports"
    root.mkdir()
    campaign_night(root / "x-other", "20261030-030000", {"gbe": [GBE, GBE]}, name="other")
    for i, level in enumerate((GBE, GBE, GBE * 0.9)):
        campaign_night(root / f"night-{i + 1}", f"2026110{i + 1}-030000",
                       {"gbe": [level, level * 1.001]})
    [run] = run_dirs(root / "night-3")
    page = build_report([str(run)], str(tmp_path / "r"))
    html = page.read_text()
    assert '<section id="history">' in html
    assert "history over 3 runs" in html and "20261103-030000" in html
    assert "20261030-030000" not in html
    # the first night has no earlier one: no section
    [first] = run_dirs(root / "night-1")
    assert 'id="history"' not in build_report([str(first)], str(tmp_path / "r1")).read_text()
