"""The report as a list of families (issue 28): a made-up family, a tool module and a
family module registered for the test's duration, is in the page, the CSV tables and
``nicbench figures``, with build.py, page.py, the template and figures/plan.py untouched."""

from __future__ import annotations

import csv
import dataclasses
import json
import shutil
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
from conftest import REPO, RUN_A, write_report
from madeup import pingpong_family, pingpong_tool

from nicbench.report.families import FAMILIES, registered
from nicbench.tools import registry

# what the made-up tool printed for each trial: pair -> the round trips of 3 repetitions
PRINTED = {"gbe": [52.125, 50.5, 51.0], "nojumbo": [75.25, 77.0, 74.5]}
UNTOUCHED = ["nicbench/report/build.py", "nicbench/report/page.py",
             "nicbench/report/templates/report.html.j2", "nicbench/report/figures/plan.py",
             "nicbench/report/figures/draw.py"]


def with_pingpong(tmp_path: Path) -> Path:
    """A copy of run A with PingPong trials, each record as a trial stores it, its figure
    read by the made-up tool's own parser from what it printed."""
    run = tmp_path / "run-a"
    shutil.copytree(RUN_A, run)
    first = json.loads((run / "trials.jsonl").read_text().splitlines()[0])
    lines = []
    for pair, rtts in PRINTED.items():
        adapter = next(json.loads(line) for line in (run / "trials.jsonl").read_text()
                       .splitlines() if json.loads(line)["pair"] == pair)
        for k, rtt in enumerate(rtts, 1):
            parsed = pingpong_tool.parse(f"pingpong 1.0: 1000 exchanges, median round trip "
                                         f"{rtt} us\n")
            rec = dict(first, pair=pair, adapter=adapter["adapter"],
                       adapter_label=adapter["adapter_label"], tool=parsed.tool,
                       test="pingpong-rtt", trial_id=f"{pair}.mtu1500.pingpong-rtt.r{k}",
                       repetition=k, throughput_bps=None, sent_bps=None,
                       cpu_sender_pct=None, cpu_receiver_pct=None, cpu_tool_pct=None,
                       version=parsed.version, raw={}, extra={},
                       latency=dataclasses.asdict(parsed.latency),
                       commands={"server": "pingpong -s -p 7100",
                                 "client": "pingpong -c 198.18.0.1 -p 7100 -n 1000"})
            lines.append(json.dumps(rec))
    with (run / "trials.jsonl").open("a") as fh:
        fh.write("\n".join(lines) + "\n")
    return run


@contextmanager
def pingpong():
    with ExitStack() as stack:
        stack.enter_context(registry.registered(pingpong_tool.TOOL))
        yield stack.enter_context(registered(pingpong_family.FAMILY))


def test_the_made_up_family_touches_none_of_the_report_s_common_files():
    for name in UNTOUCHED:
        text = (REPO / name).read_text().lower()
        assert "pingpong" not in text, name


def test_the_made_up_family_is_in_the_page_and_the_csv_tables(tmp_path):
    run = with_pingpong(tmp_path)
    with pingpong():
        report, page = write_report(tmp_path / "out", [run])
    html = page.read_text()
    # its section, in the contents, with its figure, its table and its How to read
    assert '<a href="#pingpong">PingPong</a>' in html
    section = html[html.index('<section id="pingpong">'):]
    section = section[:section.index("</section>")]
    assert "<h2>PingPong round trips</h2>" in section
    assert '<figure id="fig-pingpong" data-family="pingpong">' in section
    assert '<a href="#read-pingpong">How to read</a>' in section
    assert '<table id="table-pingpong" data-family="pingpong">' in section
    assert '<li id="read-pingpong">PingPong: the median round trip' in html
    # placed in the body, after the families before it and before the frame's end
    assert html.index('<section id="size-tables">') < html.index('<section id="pingpong">') \
        < html.index('<section id="summary">')
    # its verdict: the sentence, the ranking table, the first screen's row
    lowest = report.entries[0].label
    assert f"Lowest PingPong round trip: {lowest}." in [s.text for s in report.verdict]
    assert '<h3 id="t-verdict-pingpong">PingPong: lowest round trip</h3>' in html
    assert '<a href="#t-verdict-pingpong">PingPong: lowest round trip</a>' in html
    # the CSV files: its table, its figure's data, its rows of verdict.csv
    tables = tmp_path / "out" / "tables"
    with (tables / "pingpong.csv").open() as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["adapter", "median round trip, us", "repetitions"]
    assert [(r[1], r[2]) for r in rows[1:]] == [("51.0", "3"), ("75.25", "3")]
    with (tables / "figure-pingpong.csv").open() as fh:
        bars = list(csv.DictReader(fh))
    assert [float(b["value"]) for b in bars] == [51.0, 75.25]
    with (tables / "verdict.csv").open() as fh:
        # (its trials are a latency tool's: the latency family ranks them too, as test
        # pingpong-rtt; the family's own rows name it as test pingpong)
        verdict = [r for r in csv.DictReader(fh) if r["test"] == "pingpong"]
    assert [(r["rank"], r["figure"]) for r in verdict] == [
        ("1", "median round trip 51.000 us"), ("2", "median round trip 75.250 us")]
    # out of the list again: the same runs' page has no PingPong section
    assert all(f.name != "pingpong" for f in FAMILIES)
    _, again = write_report(tmp_path / "again", [run])
    assert 'id="pingpong"' not in again.read_text()


def test_runs_without_it_name_the_family_once_at_the_top(tmp_path):
    with pingpong():
        _, page = write_report(tmp_path / "out", [RUN_A])
    html = page.read_text()
    assert "PingPong round trips" in html[:html.index('<section id="verdict">')]
    assert '<section id="pingpong">' not in html


def test_the_made_up_family_is_in_nicbench_figures(tmp_path):
    from nicbench.cli import main

    run = with_pingpong(tmp_path)
    out = tmp_path / "figures"
    with pingpong():
        assert main(["figures", str(run), "--out", str(out), "--format", "svg"]) == 0
    assert (out / "pingpong.svg").read_text().lstrip().startswith("<?xml")
    with (out / "figures.csv").open() as fh:
        rows = [r for r in csv.DictReader(fh) if r["family"] == "pingpong"]
    assert [(r["file"], r["value"], r["unit"], r["text"]) for r in rows] == [
        ("pingpong", "51.0", "us", "51.0 us"), ("pingpong", "75.25", "us", "75.2 us")]


def test_a_family_or_tool_is_registered_once():
    with pingpong():
        with pytest.raises(ValueError, match="registered already"), \
                registered(pingpong_family.FAMILY):
            pass
        with pytest.raises(ValueError, match="registered already"), \
                registry.registered(pingpong_tool.TOOL):
            pass
    assert pingpong_tool.NAME not in registry.TOOLS


def test_nicbench_figures_asks_the_families_for_figures_alone(tmp_path, monkeypatch):
    """No verdict, no first screen, no history is built to draw the figures: each of them
    raising does not stop ``nicbench figures``, and its files are the report's."""
    from nicbench.report import glance, history, verdict
    from nicbench.report.build import build, publication_figures
    from nicbench.report.load import load_runs

    runs = load_runs([RUN_A])
    expected = [f.id for f in build(runs).publication]

    def refused(*args, **kwargs):
        raise AssertionError("built for nicbench figures")

    for module, name in ((verdict, "verdicts"), (verdict, "sentence"), (glance, "glance"),
                         (history, "of_runs")):
        monkeypatch.setattr(module, name, refused)
    with pytest.raises(AssertionError, match="built for nicbench figures"):
        build(runs)                     # the whole report does build them
    entries, figures = publication_figures(runs)
    assert [f.id for f in figures] == expected and len(expected) > 10
    assert {e.key for e in entries} == {k for f in figures for k in f.entries}
