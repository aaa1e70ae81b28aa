"""Drawing the units into files: each unit drawn once, saved in every format asked for,
in two worker processes (matplotlib's text layout is CPU-bound and not thread-safe)."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from nicbench.report.figures.plan import Unit
from nicbench.report.figures.style import Colours

WORKERS = 2
# PNG's zlib at its default level took a third of a chart's time; level 1 writes files a
# little larger (a few hundred KB at 300 dpi) in a fraction of it.
PNG_OPTIONS = {"pil_kwargs": {"compress_level": 1}}


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
        case "speed" | "cpu" | "netpipe-plateau" | "published":
            return bars.draw(fig, unit.panel or 0, colours)
        case "heatmap":
            return heat.draw(fig, colours)
        case "cost":
            return scatter.draw(fig, colours)
        case _:
            return curves.draw(fig, colours)


def render(job: Job) -> list[str]:
    """Draw ``job.unit`` under the styles and save it once per format: the file names."""
    import matplotlib.pyplot as plt

    from nicbench.report.figures import pdffonts

    if "pdf" in job.formats:
        pdffonts.install()
    names = []
    with plt.style.context(job.styles):
        mfig = figure_of(job.unit, job.colours)
        freeze_layout(mfig)
        for fmt in job.formats:
            path = Path(job.out) / f"{job.unit.stem}.{fmt}"
            mfig.savefig(path, format=fmt, dpi=job.dpi or "figure",
                         metadata=_metadata(fmt, job.unit.title),
                         **(PNG_OPTIONS if fmt == "png" else {}))
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

def render_all(jobs: list[Job], workers: int = WORKERS) -> list[str]:
    """Every job's files; the biggest units first, spread over ``workers`` processes."""
    jobs = sorted(jobs, key=lambda j: -j.unit.cost())
    workers = max(1, min(workers, len(jobs), os.cpu_count() or 1))
    if workers == 1:
        return [name for j in jobs for name in render(j)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return [name for names in pool.map(render, jobs) for name in names]
