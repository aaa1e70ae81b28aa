"""``nicbench report`` as a user runs it: the path printed at the end, and one clear error
line (exit 2, never a traceback) for a directory that is missing, not a run, or corrupt."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nicbench.cli import main

DATA = Path(__file__).parent / "data"
RUN_A, RUN_B = DATA / "run-a", DATA / "run-b"
REFERENCE = Path(__file__).resolve().parents[2] / "references" / "arnold-2002-netio.yaml"


@pytest.fixture
def small_run(copy_run):
    """run-a cut down to the gbe card's iperf3 trials: a report of two charts, quick to draw."""
    run = copy_run(RUN_A, "small")
    lines = [line for line in (run / "trials.jsonl").read_text().splitlines()
             if json.loads(line)["pair"] == "gbe" and json.loads(line)["test"] == "iperf3-tcp"]
    (run / "trials.jsonl").write_text("\n".join(lines) + "\n")
    return run


def one_error(capsys, argv, code=2) -> str:
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == code, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("nicbench: error: "), err
    assert "Traceback" not in err
    return lines[0]


def test_report_prints_the_path_of_the_page(small_run, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["report", str(small_run)]) == 0
    out = capsys.readouterr().out.strip()
    assert out.startswith("report: reports/report-") and out.endswith("/report.html")
    page = tmp_path / out.split(" ", 1)[1]
    assert page.is_file()
    assert sorted(p.name for p in (page.parent / "figures").iterdir()) == [
        "cost-iperf3-tcp.svg", "cpu-iperf3-tcp.svg", "heatmap-iperf3-tcp.svg",
        "speed-iperf3-tcp.svg"]
    assert (page.parent / "tables" / "verdict.csv").is_file()
    assert not (page.parent / "tables" / "comparison.csv").exists()     # one run
    assert (page.parent / "data" / "A-small" / "trials.jsonl").is_file()


def test_report_again_into_the_same_out_replaces_it(small_run, tmp_path, capsys):
    out = tmp_path / "rep"
    stale = out / "figures" / "old-chart.svg"
    assert main(["report", str(small_run), "--out", str(out)]) == 0
    stale.write_text("<svg/>")
    assert main(["report", str(small_run), "--out", str(out), "--link-rate", "gbe=1gbit"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"report: {out / 'report.html'}"
    assert not stale.exists()
    assert "--link-rate gbe" in (out / "report.html").read_text()


def test_missing_directory(capsys, tmp_path):
    line = one_error(capsys, ["report", str(tmp_path / "nope")])
    assert line == f"nicbench: error: {tmp_path / 'nope'}: no such results directory"


def test_directory_without_trials(capsys, tmp_path):
    line = one_error(capsys, ["report", str(tmp_path)])
    assert line == (f"nicbench: error: {tmp_path}: not a results directory: no trials.jsonl "
                    "(give the --out directory of a nicbench run)")


def test_corrupt_trial_line(capsys, copy_run):
    run = copy_run(RUN_A, "corrupt")
    lines = (run / "trials.jsonl").read_text().splitlines(keepends=True)
    lines[3] = lines[3][:40] + "\n"
    (run / "trials.jsonl").write_text("".join(lines))
    line = one_error(capsys, ["report", str(run), "--out", str(run.parent / "o")])
    assert line.startswith(f"nicbench: error: {run / 'trials.jsonl'}:4: not a JSON trial record")
    assert line.endswith("the file is corrupt")


def test_record_of_another_kind(capsys, copy_run):
    run = copy_run(RUN_A, "foreign")
    n = len((run / "trials.jsonl").read_text().splitlines())
    with open(run / "trials.jsonl", "a") as fh:
        fh.write('{"hello": "world"}\n')
    line = one_error(capsys, ["report", str(run)])
    assert f"{run / 'trials.jsonl'}:{n + 1}: not a nicbench trial record (pair None is not " \
        "a string)" in line


def test_torn_last_line_is_skipped_with_a_warning(small_run, tmp_path, capsys):
    with open(small_run / "trials.jsonl", "a") as fh:
        fh.write('{"run_id": "20261122-030547", "trial_id": "gbe.mt')
    assert main(["report", str(small_run), "--out", str(tmp_path / "o")]) == 0
    err = capsys.readouterr().err
    assert err == (f"nicbench: warning: {small_run / 'trials.jsonl'}:5: torn last line skipped "
                   "(the run stopped mid-write)\n")


def test_bad_link_rate_and_out(capsys, tmp_path):
    line = one_error(capsys, ["report", str(RUN_A), "--link-rate", "gbe"])
    assert "--link-rate 'gbe': give NAME=RATE" in line
    line = one_error(capsys, ["report", str(RUN_A), "--link-rate", "nosuch=1G"])
    assert "no pair or adapter named 'nosuch'" in line
    line = one_error(capsys, ["report", str(RUN_A), "--out", str(RUN_A)])
    assert "that is a results directory" in line
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    line = one_error(capsys, ["report", str(RUN_A), "--out", str(tmp_path / "other")])
    assert "holds more than a report" in line
    line = one_error(capsys, ["report", str(RUN_A), str(RUN_A)])
    assert "given twice" in line
    line = one_error(capsys, ["report", str(RUN_A), "--label", "B=x"])
    assert line.endswith("--label 'B=x': no run 'B' (runs: A=run-a)")


def test_two_runs_labelled_and_single_file(tmp_path, capsys):
    out = tmp_path / "cmp"
    assert main(["report", str(RUN_A), str(RUN_B), "--label", "A=driver-7.1", "--label",
                 "B=night-2", "--single-file", "--out", str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"report: {out / 'report.html'}"
    text = (out / "report.html").read_text()
    assert "LX-1000 Gigabit (veth tbf-1g) [driver-7.1]" in text
    assert "LX-1000 Gigabit (veth tbf-1g) [night-2]" in text
    assert "<img" not in text and text.count("<svg ") > 10
    with open(out / "tables" / "comparison.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert {(r["a_run"], r["b_run"]) for r in rows} == {("driver-7.1", "night-2")}


def test_min_change_sets_the_comparisons_threshold(tmp_path, capsys):
    out = tmp_path / "cmp"
    assert main(["report", str(RUN_A), str(RUN_B), "--min-change", "2.5", "--out",
                 str(out)]) == 0
    with open(out / "tables" / "comparison.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["threshold_pct"]]
    assert rows and {float(r["threshold_pct"]) for r in rows} == {2.5}
    capsys.readouterr()
    for bad in ("much", "-1", "100", "nan"):
        line = one_error(capsys, ["report", str(RUN_A), str(RUN_B), "--min-change", bad])
        assert line == (f"nicbench: error: --min-change {bad!r}: give a % of run A's median "
                        "from 0 to below 100, e.g. --min-change 1.5")


def test_reference_file(tmp_path, capsys):
    out = tmp_path / "ref"
    assert main(["report", str(RUN_A), "--reference", str(REFERENCE), "--out", str(out)]) == 0
    assert (out / "tables" / "published.csv").is_file()
    assert "(published)" in (out / "report.html").read_text()


def test_bad_reference_file_is_one_line(capsys, tmp_path):
    line = one_error(capsys, ["report", str(RUN_A), "--reference", str(tmp_path / "no.yaml")])
    assert "no.yaml: file not found" in line
    bad = tmp_path / "bad.yaml"
    bad.write_text("title: t\nsource: s\nfigures:\n  - {adapter: x, method: netio, point: 1K,"
                   " value: -3, section: s}\n")
    line = one_error(capsys, ["report", str(RUN_A), "--reference", str(bad)])
    assert "bad.yaml:4: figures[0].value: Input should be greater than 0" in line
    assert not (tmp_path / "reports").exists()


def test_as_a_subprocess_one_line_and_exit_2(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("NICBENCH_")}
    proc = subprocess.run([sys.executable, "-m", "nicbench.cli", "report", str(tmp_path)],
                          capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "no trials.jsonl" in proc.stderr
