"""Drawing the units into files: each unit drawn once, saved in every format asked for,
in two worker processes (matplotlib's text layout is CPU-bound and not thread-safe)."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from nicbench.report.figures.plan import Unit
from nicbench.report.figures.style import Colours

WORKERS = 2


@dataclass
class Job:
    """What a worker needs to write one unit's files."""

    unit: Unit
    colours: Colours
    styles: list[str]
    formats: list[str]
    dpi: int | None
    out: str


def figure_of(unit: Unit, colours: Colours):
    """The matplotlib figure of ``unit`` (under the caller's style context)."""
    from nicbench.report.figures import bars, comparison, curves, heat, scatter

    fig = unit.figure
    if isinstance(fig, comparison.ComparisonChart):
        assert unit.panel is not None
        return comparison.draw(fig, unit.panel, colours)
    match unit.family:
        case "speed" | "cpu" | "netpipe-plateau" | "published" | "latency" | "loaded":
            return bars.draw(fig, unit.panel or 0, colours)
        case "heatmap":
            return heat.draw(fig, colours)
        case "cost":
            return scatter.draw(fig, colours)
        case _:
            return curves.draw(fig, colours)


def render(job: Job) -> list[str]:
    """Draw ``job.unit`` under the styles and save it once per format: the file names."""
    from matplotlib import rcParams, style

    from nicbench.report.figures import metrics, pdffonts
    from nicbench.report.figures.png import save_png

    if "pdf" in job.formats:
        pdffonts.install()
    names = []
    with style.context(job.styles):
        metrics.share(rcParams)         # each string measured once in this process
        mfig = figure_of(job.unit, job.colours)
        freeze_layout(mfig)
        for fmt in job.formats:
            path = Path(job.out) / f"{job.unit.stem}.{fmt}"
            if fmt == "png":
                save_png(mfig, str(path), job.dpi, job.unit.title)
            else:        # dpi None: the style's savefig.dpi (300), not the figure's 100
                mfig.savefig(path, format=fmt, dpi=job.dpi,
                             metadata=_metadata(fmt, job.unit.title))
            names.append(path.name)
    return names


def freeze_layout(mfig) -> None:
    """Lay the figure out once (constrained layout: text extents, no rendering) and keep
    that layout for every format, instead of laying it out again at each save."""
    engine = mfig.get_layout_engine()
    if engine is not None:
        engine.execute(mfig)
        mfig.set_layout_engine("none")


def _metadata(fmt: str, title: str) -> dict[str, str | None]:
    if fmt == "pdf":
        return {"Title": title, "Creator": "nicbench", "CreationDate": None}
    if fmt == "svg":
        return {"Title": title, "Date": None}
    return {"Title": title}

def start(workers: int = WORKERS) -> ProcessPoolExecutor | None:
    """The worker processes, started now and importing matplotlib and loading the fonts
    while the caller still reads the runs and builds the models (None: draw here)."""
    workers = max(1, min(workers, os.cpu_count() or 1))
    if workers == 1:
        return None
    methods = multiprocessing.get_all_start_methods()
    # fork: a worker starts with the caller's imports instead of importing them again
    context = multiprocessing.get_context("fork") if "fork" in methods else None
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context)
    for _ in range(workers):
        pool.submit(warm)
    return pool


def warm() -> None:
    """What every worker needs before its first chart: the drawing modules, matplotlib's
    font list and the house style's font."""
    from matplotlib import style
    from matplotlib.font_manager import FontProperties, findfont

    from nicbench.report.figures import bars, comparison, curves, heat, scatter  # noqa: F401
    from nicbench.report.figures import metrics, pdffonts, png  # noqa: F401
    from nicbench.report.figures.style import style_files

    with style.context(style_files(None)):
        findfont(FontProperties())


def render_all(jobs: list[Job], workers: int = WORKERS,
               pool: ProcessPoolExecutor | None = None,
               meanwhile: Callable[[], None] | None = None) -> list[str]:
    """Every job's files; the biggest units first, spread over ``pool`` (or ``workers``
    processes started here); ``meanwhile`` runs here while they draw."""
    jobs = sorted(jobs, key=lambda j: -j.unit.cost())
    if pool is None and len(jobs) > 1:
        pool = start(workers)
    if pool is None:
        names = [name for j in jobs for name in render(j)]
        if meanwhile is not None:
            meanwhile()
        return names
    with pool:
        drawn = pool.map(render, jobs)           # every job handed out now
        if meanwhile is not None:
            meanwhile()
        return [name for names in drawn for name in names]
