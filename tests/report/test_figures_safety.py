"""``nicbench figures`` and ``nicbench report`` against a hostile or unlucky user: nothing
outside the output directory written or removed, no file cut short, no worker left after
the parent dies, names drawn as text, style values that cannot be drawn refused.

Every case runs the real command (in this process, or as a real process where a signal
is the point) on real results directories (``data/run-a``, ``data/roundup``, or a copy
of run-a with its adapters' names made hostile)."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from nicbench.cli import main

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
RUN_A, ROUNDUP = DATA / "run-a", DATA / "roundup"
sys.path.insert(0, str(HERE.parent))
from clihelp import argv, env  # noqa: E402
from procs import alive, children  # noqa: E402

MATH = r"\notacommand{x} $$$$ \frac{ " + "{" * 300 + "x" + "}" * 300
HOSTILE = {"lab-gbe": MATH, "lab-nojumbo": "=HYPERLINK(\"x\") \x1b[31mRED\u202eevil"}


@pytest.fixture(autouse=True)
def _keep_sigterm():
    old = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, old)


def renamed(tmp_path: Path, labels: dict[str, str], name: str = "hostile") -> Path:
    """A copy of run-a whose adapters (id -> label) carry ``labels`` as their names, in
    the trials and in the manifest's inventory."""
    run = tmp_path / name
    shutil.copytree(RUN_A, run)
    records = [json.loads(line) for line in (run / "trials.jsonl").read_text().splitlines()]
    for r in records:
        r["adapter_label"] = labels.get(r["adapter"], r["adapter_label"])
    (run / "trials.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    manifest = json.loads((run / "manifest.json").read_text())
    for a in manifest["inventory"]["adapters"]:
        a["model"] = labels.get(a["id"], a["model"])
    (run / "manifest.json").write_text(json.dumps(manifest))
    return run


# -- nothing outside --out ------------------------------------------------------------------
def test_a_figures_csv_naming_files_outside_out_removes_none_of_them(tmp_path, capsys):
    victims = tmp_path / "victims"
    victims.mkdir()
    for name in ("keep.png", "keep.pdf", "abs.svg"):
        (victims / name).write_text("precious")
    out = tmp_path / "figs"
    out.mkdir()
    (out / "figures.csv").write_text(
        f"file,figure\n../victims/keep,x\n{victims}/abs,y\nsub/../../victims/keep,z\n"
        "speed-iperf3-tcp-mtu-1500,w\n")
    (out / "speed-iperf3-tcp-mtu-1500.svg").write_text("<svg/>")     # a file of out: removed
    rc = main(["figures", str(RUN_A), "--out", str(out), "--format", "png",
               "--tests", "iperf3-tcp"])
    err = capsys.readouterr().err
    assert rc == 0
    assert sorted(p.read_text() for p in victims.iterdir()) == ["precious"] * 3
    assert not (out / "speed-iperf3-tcp-mtu-1500.svg").exists()
    [line] = err.splitlines()
    assert "figures.csv: 3 name(s) that are not files of" in line and "left alone" in line


def test_links_planted_in_out_are_replaced_never_written_through(tmp_path, capsys):
    victims = tmp_path / "victims"
    victims.mkdir()
    out = tmp_path / "figs"
    out.mkdir()
    for name in ("speed-iperf3-tcp-mtu-1500.png", "figures.csv"):
        (victims / name).write_text("precious")
        (out / name).symlink_to(victims / name)
    assert main(["figures", str(RUN_A), "--out", str(out), "--format", "png",
                 "--tests", "iperf3-tcp"]) == 0
    capsys.readouterr()
    assert [p.read_text() for p in sorted(victims.iterdir())] == ["precious"] * 2
    for name in ("speed-iperf3-tcp-mtu-1500.png", "figures.csv"):
        assert not (out / name).is_symlink() and (out / name).stat().st_size > 100
    assert not [p for p in out.iterdir() if p.name.endswith(".nicbench-tmp")]


def test_report_replaces_a_link_where_its_publication_folder_goes(tmp_path, capsys):
    victims = tmp_path / "victims"
    victims.mkdir()
    (victims / "figures.csv").write_text("file\n../keep\n")
    (victims / "x.svg").write_text("precious")
    out = tmp_path / "rep"
    out.mkdir()
    (out / "publication").symlink_to(victims)
    assert main(["report", str(RUN_A), "--out", str(out), "--figures", "svg",
                 "--store", "none"]) == 0
    capsys.readouterr()
    assert sorted(p.name for p in victims.iterdir()) == ["figures.csv", "x.svg"]
    assert (out / "publication").is_dir() and not (out / "publication").is_symlink()
    assert (out / "publication" / "figures.csv").is_file()


# -- interrupted: finished files or none, and no process left ---------------------------------
def _start_figures(out: Path) -> tuple[subprocess.Popen, set[int]]:
    """``nicbench figures`` of the roundup (37 charts, three formats) as a real process in
    a session of its own, once its two workers are up: (process, worker pids)."""
    proc = subprocess.Popen(argv("figures", str(ROUNDUP), "--out", str(out),
                                 "--format", "png,pdf,svg"),
                            env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    workers: set[int] = set()
    while len(workers) < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
        workers = children(proc.pid)
    assert len(workers) >= 2, f"no two workers: {workers}, rc {proc.poll()}"
    return proc, workers


def _gone_within(pids: set[int], seconds: float) -> set[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = {p for p in pids if alive(p)}
        if not left:
            return left
        time.sleep(0.1)
    return {p for p in pids if alive(p)}


def test_kill_9_of_figures_takes_its_workers_with_it(tmp_path):
    proc, workers = _start_figures(tmp_path / "figs")
    try:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        left = _gone_within(workers, 10)
        assert not left, f"workers {left} still running after their parent's kill -9"
    finally:
        for pid in workers:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def _complete(path: Path) -> bool:
    data = path.read_bytes()
    if path.suffix == ".png":
        return data.startswith(b"\x89PNG") and data.endswith(b"IEND\xaeB`\x82")
    if path.suffix == ".pdf":
        return data.startswith(b"%PDF") and data.rstrip().endswith(b"%%EOF")
    return data.rstrip().endswith(b"</svg>")


def test_ctrl_c_leaves_finished_files_or_none_and_no_worker(tmp_path):
    out = tmp_path / "figs"
    proc, workers = _start_figures(out)
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None \
                and not any(p.suffix == ".pdf" for p in out.glob("*")):
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)          # Ctrl-C: the whole foreground group
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    files = [p for p in out.iterdir() if p.name != "figures.csv"]
    assert files, "interrupted before any file: nothing to check"
    assert [p.name for p in files if not _complete(p)] == []
    assert not list(out.glob(".*"))                  # no temporary file left
    assert not _gone_within(workers, 10)


def test_an_interrupted_write_leaves_the_old_file_and_no_temporary_one(tmp_path):
    from nicbench.textfile import replacing

    path = tmp_path / "chart.pdf"
    path.write_bytes(b"%PDF old, whole")
    with pytest.raises(KeyboardInterrupt), replacing(path, binary=True) as fh:
        fh.write(b"%PDF new, half")
        raise KeyboardInterrupt
    assert path.read_bytes() == b"%PDF old, whole"
    assert [p.name for p in tmp_path.iterdir()] == ["chart.pdf"]
    # a first write: no file at all
    with pytest.raises(KeyboardInterrupt), replacing(tmp_path / "new.png", binary=True) as fh:
        fh.write(b"\x89PNG half")
        raise KeyboardInterrupt
    assert [p.name for p in tmp_path.iterdir()] == ["chart.pdf"]


def test_a_name_read_from_a_file_is_never_followed_out_of_its_directory(tmp_path):
    from nicbench.textfile import name_within

    assert name_within(tmp_path, "speed-x.png") == tmp_path / "speed-x.png"
    for bad in ("../keep.png", "/etc/passwd", "..", ".", "", "a/b.png", "a\\b.png",
                "x\0.png"):
        assert name_within(tmp_path, bad) is None, bad


# -- names are text -----------------------------------------------------------------------------
def _units(run: Path):
    from nicbench.report.build import build
    from nicbench.report.figures.plan import units
    from nicbench.report.figures.style import card_colours, palette, style_files
    from nicbench.report.load import load_runs

    runs = load_runs([run])
    report = build(runs)
    styles = style_files(None)
    return units(report.publication, []), card_colours(report.entries, palette(styles)), styles


def _draw(unit, colours, styles) -> tuple[object, bytes]:
    from matplotlib import style

    from nicbench.report.figures.draw import figure_of

    with style.context(styles), warnings.catch_warnings():
        warnings.simplefilter("error")              # no matplotlib warning either
        mfig = figure_of(unit, colours)
        buf = io.BytesIO()
        mfig.savefig(buf, format="png", dpi=100)
    return mfig, buf.getvalue()


def _labels(mfig) -> list[str]:
    """Every text of the figure: tick labels, texts beside bars, legends, titles."""
    from matplotlib.text import Text

    return [t.get_text() for t in mfig.findobj(Text)]


def test_mathtext_and_control_characters_in_names_are_drawn_as_plain_text(tmp_path):
    from nicbench.display import shown

    todo, colours, styles = _units(renamed(tmp_path, HOSTILE))
    drawn, every = 0, []
    for u in todo:
        if u.family not in ("speed", "netpipe-mtu"):
            continue
        mfig, png = _draw(u, colours, styles)
        assert png.startswith(b"\x89PNG")
        texts = _labels(mfig)
        assert shown(MATH) in texts and not any(t.get_parse_math() for t in
                                               mfig.findobj(lambda a: hasattr(
                                                   a, "get_parse_math")))
        assert not any("\x1b" in t or "\u202e" in t for t in texts)
        every += texts
        drawn += 1
    assert drawn >= 3
    assert any(t.startswith('=HYPERLINK("x") \\x1b[31mRED\\u202eevil') for t in every)


@pytest.mark.parametrize("length", [200_000, 10_000])
def test_a_huge_name_is_shortened_and_the_chart_stays_page_sized(tmp_path, length):
    from nicbench.display import ELLIPSIS, MAX_NAME
    from nicbench.report.figures.draw import MAX_TEXT

    todo, colours, styles = _units(renamed(tmp_path, {"lab-gbe": "W" * length,
                                                      "lab-nojumbo": "\\frac{" * (length // 6)}))
    drawn = 0
    for u in todo:
        if u.family not in ("speed", "netpipe-mtu", "netpipe-adapter"):
            continue
        mfig, png = _draw(u, colours, styles)
        width, height = mfig.get_size_inches()
        assert width <= 20 and height <= 30, (u.stem, width, height)
        assert len(png) < 2 << 20
        long = [t for t in _labels(mfig) if t.startswith("W")]      # names and titles
        assert u.family == "netpipe-adapter" or any(        # its title alone names it
            len(t) == MAX_NAME and t.endswith(ELLIPSIS) for t in long), u.stem
        assert all(len(t) <= MAX_TEXT and t.endswith(ELLIPSIS) for t in long)
        drawn += 1
    assert drawn >= 3


def test_figures_csv_neutralises_a_name_that_starts_a_formula(tmp_path, capsys):
    import csv

    out = tmp_path / "figs"
    assert main(["figures", str(renamed(tmp_path, HOSTILE)), "--out", str(out),
                 "--format", "svg", "--tests", "iperf3-tcp"]) == 0
    capsys.readouterr()
    with open(out / "figures.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    labels = {r["label"] for r in rows}
    assert "'=HYPERLINK(\"x\") \x1b[31mRED\u202eevil" in labels
    assert not any(v.startswith(("=", "+", "@")) for r in rows for v in r.values())
    assert all(float(r["value"]) > 0 for r in rows if r["value"])


# -- style files figures cannot draw --------------------------------------------------------------
# A value matplotlib takes but figures cannot draw (savefig.bbox: tight, TeX, a 1e6 pt font,
# 100,000 dpi): tests/report/test_figures.py::test_a_bad_style_file_is_one_line_exit_2.
@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "directory", "huge"])
def test_a_style_that_is_not_a_regular_small_file_is_refused_at_once(tmp_path, kind):
    path = tmp_path / "journal.mplstyle"
    if kind == "dev-zero":
        path = Path("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        path.write_text("font.size: 9\n" * 30000)
    # a real process: a FIFO must not hang it, /dev/zero must not fill its memory
    done = subprocess.run(argv("figures", str(RUN_A), "--out", str(tmp_path / "o"),
                               "--style", str(path)),
                          env=env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()
    assert str(path) in line and ("not a regular file" in line or "larger than" in line \
                                  or "directory" in line), line


def test_non_style_keys_are_one_warning_line_and_no_matplotlib_warning(tmp_path):
    style = tmp_path / "journal.mplstyle"
    style.write_text("font.size: 9\nsavefig.directory: /etc\nbackend: TkAgg\n"
                     "interactive: True\n")
    done = subprocess.run(argv("figures", str(RUN_A), "--out", str(tmp_path / "o"),
                               "--style", str(style), "--format", "svg",
                               "--tests", "iperf3-tcp"),
                          env={**env(), "PYTHONWARNINGS": "default"}, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith(f"nicbench: warning: {style}: savefig.directory (line 2), "
                           "backend (line 3), interactive (line 4): not style settings"), line
    assert (tmp_path / "o" / "speed-iperf3-tcp-mtu-1500.svg").is_file()


def test_a_lone_surrogate_in_a_name_is_written_as_its_escape(tmp_path, capsys):
    """JSON can carry "\\udc80", which no UTF-8 file can hold: figures.csv, the report's
    CSVs and its page write it as the escape, not an internal error."""
    run = renamed(tmp_path, {"lab-gbe": "bad \udc80 name"})
    assert main(["figures", str(run), "--out", str(tmp_path / "figs"), "--format", "svg",
                 "--tests", "iperf3-tcp"]) == 0
    assert main(["report", str(run), "--out", str(tmp_path / "rep"), "--store", "none"]) == 0
    capsys.readouterr()
    assert "bad \\udc80 name" in (tmp_path / "figs" / "figures.csv").read_text()
    assert "bad \\udc80 name" in (tmp_path / "rep" / "report.html").read_text()
    assert "bad \\udc80 name" in (tmp_path / "rep" / "tables" / "verdict.csv").read_text()
