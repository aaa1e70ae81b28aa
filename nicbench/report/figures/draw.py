"""Drawing the units into files: each unit drawn once, saved in every format asked for,
in two worker processes (matplotlib's text layout is CPU-bound and not thread-safe)."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, fields, is_dataclass, replace
from enum import Enum
from typing import Any

from nicbench.display import MAX_NAME, shown
from nicbench.errors import NicbenchError
from nicbench.report.figures.plan import Unit
from nicbench.report.figures.style import Colours, Style
from nicbench.report.model import BarPanel, HeatPanel, ScatterPanel
from nicbench.textfile import name_within, replacing
from nicbench.workers import process_pool

WORKERS = 2


@dataclass
class Job:
    """What a worker needs to write one unit's files."""

    unit: Unit
    colours: Colours
    styles: list[Style]
    formats: list[str]
    dpi: int | None
    out: str


def figure_of(unit: Unit, colours: Colours):
    """The matplotlib figure of ``unit`` (under the caller's style context), its text as
    :func:`displayed` shows it; drawn by the type of its panels (bars, a heatmap, dots,
    curves)."""
    from nicbench.report.figures import bars, comparison, curves, heat, scatter

    unit, colours = displayed(unit), displayed(colours)
    fig = unit.figure
    if isinstance(fig, comparison.ComparisonChart):
        assert unit.panel is not None
        return comparison.draw(fig, unit.panel, colours)
    panel = fig.panels[0] if fig.panels else None     # a figure's panels share a type
    if isinstance(panel, BarPanel):
        return bars.draw(fig, unit.panel or 0, colours)
    if isinstance(panel, HeatPanel):
        return heat.draw(fig, colours)
    if isinstance(panel, ScatterPanel):
        return scatter.draw(fig, colours)
    return curves.draw(fig, colours)


MAX_TEXT = 1000     # characters of any other text of a chart (a title naming an adapter)


def displayed(model: Any, field: str = "") -> Any:
    """``model`` (a unit and its figure, the colours) with every string as a chart shows
    it: control and bidi characters visible, a name (a field ``label``, ``*_label``,
    ``*_name``) cut to ``MAX_NAME`` characters and any other text to ``MAX_TEXT``. Each
    string is changed by its own value and field alone, so the keys that tie a bar to its
    row and colour still match. Enums (their values are strings) are left as they are."""
    if type(model) is str:
        name = field == "label" or field.endswith(("_label", "_name"))
        return shown(model, MAX_NAME if name else MAX_TEXT)
    if isinstance(model, Enum) or model is None or isinstance(model, (int, float)):
        return model
    if is_dataclass(model) and not isinstance(model, type):
        changes = {f.name: displayed(getattr(model, f.name), f.name) for f in fields(model)
                   if f.init}
        return replace(model, **changes)
    if isinstance(model, (list, tuple)):
        return type(model)(displayed(v, field) for v in model)
    if isinstance(model, dict):
        return {displayed(k): displayed(v, field) for k, v in model.items()}
    if isinstance(model, (set, frozenset)):
        return type(model)(displayed(v, field) for v in model)
    return model


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
            path = name_within(job.out, f"{job.unit.stem}.{fmt}")
            if path is None:
                raise NicbenchError(f"{job.out}: {shown(job.unit.stem)!r} is not a file name "
                                    "of this directory; nothing written outside it")
            if fmt == "png":
                save_png(mfig, str(path), job.dpi, job.unit.title)
            else:        # dpi None: the style's savefig.dpi (300), not the figure's 100
                with replacing(path, binary=True) as fh:     # complete or not there
                    mfig.savefig(fh, format=fmt, dpi=job.dpi,
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
    # forked (a worker starts with the caller's imports), and ended with this process
    pool = process_pool(workers)
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
    try:
        drawn = pool.map(render, jobs)           # every job handed out now
        if meanwhile is not None:
            meanwhile()
        return [name for names in drawn for name in names]
    finally:        # interrupted: the jobs not started are dropped, not drawn first
        pool.shutdown(cancel_futures=True)
