"""The summary ``nicbench run`` prints, on the roundup's real records (tests/report/data):
one line per configuration with the tool named, the figure, its spread and n; 80 columns
keep them whole, a wider terminal gets more columns. The width is a real terminal's: a
tmux pane of 80 and of 140 columns (``terminal_width`` reads it as the run does)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nicbench.cli.summary import summary_lines
from nicbench.results.rundir import RunDir
from nicbench.results.summary import summary_rows

DATA = Path(__file__).resolve().parents[1] / "report" / "data"
TMUX = shutil.which("tmux")


def _rows(name: str):
    return summary_rows(RunDir(DATA / name).records())


def test_80_columns_keep_the_tool_the_figure_its_spread_and_n():
    rows = _rows("roundup")
    lines = summary_lines(rows, 80)
    assert max(len(line) for line in lines) <= 80
    head = lines[0].split()
    assert head[:6] == ["configuration", "tool", "Mbit/s", "of", "spread", "n"]
    body = lines[1:1 + len(rows)]
    assert len(body) == len(rows) == 60
    for r, line in zip(rows, body, strict=True):
        assert line.startswith(f"{r.pair} {r.point} {r.test}")
        assert ("iperf3" if r.tool == "iperf3" else "iperf 2" if r.tool == "iperf2"
                else "netPIPE") in line
        assert f"{r.n_ok}/{r.n_ok + r.n_failed}" in line
        if r.selected_bps is not None:
            assert f"{r.selected_bps / 1e6:.1f}" in line
        if r.n_ok > 1:
            assert f"{(r.max_bps - r.min_bps) / 1e6:.1f}" in line
    # iperf3 and iperf 2 at the same place are told apart
    assert any("iperf 2" in line for line in body) and any(" iperf3 " in line for line in body)


def test_a_wider_terminal_gets_more_columns_and_a_log_all_of_them():
    rows = _rows("modern")
    narrow, wide, log = summary_lines(rows, 80), summary_lines(rows, 140), \
        summary_lines(rows, None)
    assert max(map(len, narrow)) <= 80 and max(map(len, wide)) <= 140
    assert "CPU snd %" not in narrow[0] and "CPU snd %" in wide[0]
    assert "tool CPU %" in log[0]
    # the round trips too: p50 always, the tail with room
    trips = narrow.index(next(x for x in narrow if x.startswith("round trips")))
    assert "p50 us" in narrow[trips + 1] and "p99 us" in wide[wide.index(
        next(x for x in wide if x.startswith("round trips"))) + 1]


SCRIPT = """
import sys
from nicbench.cli import console
from nicbench.cli.summary import summary_lines, terminal_width
from nicbench.results.rundir import RunDir
from nicbench.results.summary import summary_rows
rows = summary_rows(RunDir(sys.argv[1]).records())
width = terminal_width() if console.is_terminal() else None
lines = summary_lines(rows, width)
with open(sys.argv[2] + ".tmp", "w") as fh:
    fh.write(f"{width}\\n" + "\\n".join(lines) + "\\n")
import os; os.rename(sys.argv[2] + ".tmp", sys.argv[2])
"""


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed (apt-get install tmux)")
@pytest.mark.parametrize("columns", [80, 140])
def test_in_a_real_terminal_of(columns, tmp_path):
    out = tmp_path / "lines"
    script = tmp_path / "summary.py"
    script.write_text(SCRIPT)
    server = f"nbsum{os.getpid()}-{columns}"
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "TMUX")}
    subprocess.run([TMUX, "-L", server, "-f", "/dev/null", "new-session", "-d", "-x",
                    str(columns), "-y", "40", sys.executable, str(script),
                    str(DATA / "roundup"), str(out)], check=True, env=env, timeout=30)
    try:
        for _ in range(600):            # at most 60 s: the pane's python imports nicbench
            if out.exists():
                break
            time.sleep(0.1)
    finally:
        subprocess.run([TMUX, "-L", server, "kill-server"], capture_output=True, timeout=30)
    width, *lines = out.read_text().splitlines()
    assert int(width) == columns
    assert max(len(line) for line in lines) <= columns
    assert ("CPU snd %" in lines[0]) == (columns >= 120)
