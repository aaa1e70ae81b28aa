"""What makes ``nicbench figures`` fast changes no file: text extents measured once per
worker give the same pixels, the PNG writer keeps a transparent page's alpha, and the
models are built without importing scipy.stats (bench/figures.py measures the time)."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

DATA = Path(__file__).parent / "data"
ROUNDUP = DATA / "roundup"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    """A ranking (laid out by hand) and a netPIPE chart per MTU (constrained layout)."""
    from nicbench.report.build import build
    from nicbench.report.figures.draw import Job
    from nicbench.report.figures.plan import units
    from nicbench.report.figures.style import card_colours, palette, style_files
    from nicbench.report.load import load_runs

    report = build(load_runs([ROUNDUP]))
    styles = style_files(None)
    colours = card_colours(report.entries, palette(styles))
    todo = units(report.publication, [])
    picked = [next(u for u in todo if u.family == f) for f in ("speed", "netpipe-mtu")]
    return [Job(u, colours, styles, ["png"], 100, "") for u in picked]


def _pngs(jobs, out: Path) -> dict[str, bytes]:
    from dataclasses import replace

    from nicbench.report.figures.draw import render

    out.mkdir()
    names = [n for j in jobs for n in render(replace(j, out=str(out)))]
    return {n: (out / n).read_bytes() for n in names}


def test_text_measured_once_per_worker_gives_the_same_files(jobs, tmp_path, monkeypatch):
    import matplotlib.text as mtext
    from matplotlib.backends.backend_agg import RendererAgg

    from nicbench.report.figures import metrics

    shared = _pngs(jobs, tmp_path / "shared")        # render() shares the extents
    assert metrics.matplotlibs is not None
    monkeypatch.setattr(mtext, "_get_text_metrics_with_cache", metrics.matplotlibs)
    monkeypatch.setattr(metrics, "share", lambda rc: None)
    own = _pngs(jobs, tmp_path / "own")             # matplotlib's cache per renderer
    assert shared.keys() == own.keys() and len(shared) == 2
    for name, data in shared.items():
        assert data == own[name], f"{name}: other bytes with the extents shared"
    monkeypatch.undo()

    asked = []
    measure = RendererAgg.get_text_width_height_descent
    monkeypatch.setattr(RendererAgg, "get_text_width_height_descent",
                        lambda self, *a, **k: asked.append(a[0]) or measure(self, *a, **k))
    _pngs(jobs, tmp_path / "again")
    assert asked == []          # every string of these charts measured already


def test_other_text_rcparams_measure_again():
    from matplotlib import rcParams, rc_context

    from nicbench.report.figures import metrics

    metrics.share(rcParams)
    metrics._extents[("probe",)] = (1.0, 1.0, 0.0)
    metrics.share(rcParams)
    assert ("probe",) in metrics._extents             # same rcParams: kept
    other = "stix" if rcParams["mathtext.fontset"] != "stix" else "dejavusans"
    with rc_context({"mathtext.fontset": other}):
        metrics.share(rcParams)
    assert ("probe",) not in metrics._extents         # other text settings: measured anew


def test_png_of_a_transparent_page_keeps_its_alpha(tmp_path):
    from matplotlib.figure import Figure
    from PIL import Image

    from nicbench.report.figures.png import save_png

    fig = Figure(figsize=(2, 1))
    fig.patch.set_alpha(0)
    fig.add_subplot().plot([1, 2, 3], [3, 1, 2])
    save_png(fig, str(tmp_path / "mine.png"), 150, "t")
    theirs = io.BytesIO()
    fig.savefig(theirs, format="png", dpi=150)
    with Image.open(tmp_path / "mine.png") as mine, Image.open(theirs) as ref:
        assert mine.mode == "RGBA"
        assert np.array_equal(np.asarray(mine), np.asarray(ref.convert("RGBA")))


def test_models_of_one_run_are_built_without_scipy_stats():
    code = ("import sys\n"
            "from nicbench.report.build import build\n"
            "from nicbench.report.load import load_runs\n"
            f"build(load_runs([{str(ROUNDUP)!r}]))\n"
            "print(sorted(m for m in sys.modules if m.startswith('scipy')))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
