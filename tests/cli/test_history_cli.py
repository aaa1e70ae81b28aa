"""``nicbench history``: per series a table and its changes, ``--json`` a line per series
with the fields the issue names; bad input one line, exit 2."""

from __future__ import annotations

import json
import re
import signal

import numpy as np
import pytest
from clihelp import in_process
from nights import night

GBE = 930e6


@pytest.fixture(autouse=True)
def _keep_sigterm():
    old = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, old)


@pytest.fixture(scope="module")
def nights_dir(tmp_path_factory):
    """Six nights of two adapters; gbe 5 % lower from the fifth on, with a new driver."""
    root = tmp_path_factory.mktemp("nights")
    rng = np.random.default_rng(4)
    for i in range(6):
        gbe = GBE * (0.95 if i >= 4 else 1.0)
        night(root / f"night-{i + 1}", f"2026-11-{i + 11}",
              {"gbe": list(gbe * (1 + rng.normal(0, 0.003, 4))),
               "fe": list(94e6 * (1 + rng.normal(0, 0.003, 4)))},
              driver_version="3.3" if i >= 4 else "3.2")
    return root


def test_json_is_a_line_per_series_with_its_runs_and_changes(capsys, nights_dir):
    rc, out, err = in_process(capsys, "history", str(nights_dir), "--json")
    assert (rc, err) == (0, "")
    series = [json.loads(line) for line in out.splitlines()]
    assert [(s["adapter"], s["test"], s["point"]) for s in series] == [
        ("fe", "tcp", "mtu1500"), ("gbe", "tcp", "mtu1500")]
    gbe = series[1]
    assert [r["run_id"] for r in gbe["runs"]] == [f"202611{d}-030000" for d in range(11, 17)]
    assert all(r["started_at"].startswith(f"2026-11-{d}T03:00:00")
               for r, d in zip(gbe["runs"], range(11, 17), strict=True))
    assert all(isinstance(r["value_bps"], float) for r in gbe["runs"])
    [change] = gbe["changes"]
    assert change["run_id"] == "20261115-030000"
    assert change["change_pct"] == pytest.approx(-5, abs=0.6)
    assert change["before_bps"] > change["after_bps"] > 0
    assert change["rule"] == "levels-t-interval"
    low, high = change["interval_pct"]
    assert low <= change["change_pct"] <= high < -change["threshold_pct"] < 0
    assert "nb-a gbe driver_version 3.2 -> 3.3" in change["setup_changes"]
    # fe's driver changed too, its figure did not: no change
    assert series[0]["changes"] == []


def test_the_table_and_the_filters(capsys, nights_dir):
    rc, out, err = in_process(capsys, "history", str(nights_dir), "--adapter", "gbe",
                              "--since", "2026-11-13")
    assert (rc, err) == (0, "")
    assert out.startswith("gbe tcp mtu1500 (Card gbe (d), iperf3): 4 runs, 1 change\n")
    assert "20261112-030000" not in out and "20261113-030000" in out
    said = re.search(r"change at 20261115-030000 \(2026-11-15\): (-\d\.\d) % "
                     r"\[-\d\.\d, -\d\.\d\] \(.* 2 nights before, 2 after; threshold", out)
    assert said is not None and float(said.group(1)) == pytest.approx(-5, abs=0.6), out
    assert "  nb-a gbe driver_version 3.2 -> 3.3" in out
    assert "comparison's threshold" in out.splitlines()[-1]
    rc, out, err = in_process(capsys, "history", str(nights_dir), "--adapter", "nope")
    assert rc == 0 and out == "" and "no measured trials for adapter nope" in err


def test_last_keeps_the_newest_runs_of_each_series(capsys, nights_dir):
    rc, out, _ = in_process(capsys, "history", str(nights_dir), "--adapter", "gbe",
                            "--last", "3", "--json")
    [gbe] = [json.loads(line) for line in out.splitlines()]
    assert rc == 0 and [r["run_id"] for r in gbe["runs"]] == [
        "20261114-030000", "20261115-030000", "20261116-030000"]
    # within those three the change at 15 has one night before it: a level of one night
    # is no level (it could be a spike), so no change is said
    assert gbe["changes"] == []
    rc, out, _ = in_process(capsys, "history", str(nights_dir), "--adapter", "gbe",
                            "--last", "4", "--json")
    [gbe] = [json.loads(line) for line in out.splitlines()]
    assert [c["run_id"] for c in gbe["changes"]] == ["20261115-030000"]


@pytest.mark.parametrize("args, said", [
    (["NIGHTS", "--last", "-1"], "--last -1: give how many runs of each series (0: all)"),
    (["NIGHTS", "--since", "yesterday"], "'yesterday': not a date: give YYYY-MM-DD"),
    (["MISSING"], "no such results directory"),
    (["--store", "MISSING"], "no results store at"),
    (["--store", "none"], "no results store at"),
    (["NIGHTS", "--store", "x.duckdb"], "give results directories or --store, not both"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path, nights_dir, args, said):
    where = {"NIGHTS": str(nights_dir), "MISSING": str(tmp_path / "missing")}
    rc, out, err = in_process(capsys, "history", *(where.get(a, a) for a in args))
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and said in err and "Traceback" not in err


HOSTILE = "\x1b[2J\x1b]0;pwned\x07Card\u202egbe[bold red]x[/][/oops]"
RUN_MARKUP = "[bold red]r[/][/oops]\x1b[5m"
HOSTILE_SHOWN = "\\x1b[2J\\x1b]0;pwned\\x07Card\\u202egbe[bold red]x[/][/oops]"


@pytest.fixture(scope="module")
def hostile_nights(tmp_path_factory, nights_dir):
    """The nights with gbe's label carrying ESC sequences (clear the screen, set the
    window title), a right-to-left override, rich markup and 5,000 more characters."""
    import shutil

    root = tmp_path_factory.mktemp("hostile") / "nights"
    shutil.copytree(nights_dir, root)
    for trials in root.glob("*/trials.jsonl"):
        last = trials.parent.name == "night-6"      # its run id in a table cell, too
        records = [json.loads(line) for line in trials.read_text().splitlines()]
        for r in records:
            r["adapter_label"] = HOSTILE + "W" * 5000
            if last:
                r["run_id"] += RUN_MARKUP
        trials.write_text("".join(json.dumps(r) + "\n" for r in records))
        if last:
            manifest = json.loads((trials.parent / "manifest.json").read_text())
            manifest["run_id"] += RUN_MARKUP
            (trials.parent / "manifest.json").write_text(json.dumps(manifest))
    return root


def test_control_and_bidi_characters_in_a_name_reach_the_terminal_as_escapes(
        capsys, hostile_nights):
    rc, out, err = in_process(capsys, "history", str(hostile_nights), "--adapter", "gbe")
    assert (rc, err) == (0, "")
    assert not any(c in out for c in ("\x1b", "\x07", "\u202e"))
    header = out.splitlines()[0]
    assert HOSTILE_SHOWN in header
    assert len(header) < 300 and "W" * 5000 not in out          # shortened for display


def test_on_a_real_terminal_rich_prints_a_name_as_text(hostile_nights):
    """On a terminal (a pty) the table is rich's: a name's "[bold red]" is text, not rich
    markup, and its ESC sequences are escapes (rich's own colour codes aside)."""
    import os
    import pty
    import subprocess
    import time

    from clihelp import argv, env

    master, slave = pty.openpty()
    proc = subprocess.Popen(argv("history", str(hostile_nights), "--adapter", "gbe",
                                 "--last", "2"),
                            stdout=slave, stderr=slave, stdin=subprocess.DEVNULL,
                            env={**env(), "COLUMNS": "400", "TERM": "xterm"})
    os.close(slave)
    chunks = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            data = os.read(master, 65536)
        except OSError:                 # EIO: the process closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait(timeout=60) == 0
    text = b"".join(chunks).decode()
    assert "\x1b[2J" not in text and "\x1b]0;" not in text and "\u202e" not in text
    assert text.count(HOSTILE_SHOWN) >= 1
    assert "[bold red]r[/][/oops]\\x1b[5m" in text and "\x1b[5m" not in text
