"""``nicbench report``: a verdict, charts and tables combining one or more results directories.

::

    load.py       results directories -> checked Run objects (one clear error per bad one)
    colours.py    one colour and marker per adapter, from its id; shades for later runs
    model.py      the report as data: entries, figure models, tables, failures
    family.py     what a family of the report is: figures, tables, verdict, a section
    families/     the families in page order, one module each (FAMILIES)
    build.py      runs -> models: every family's, then the comparison, adapters,
                  every configuration, failures and setup around them
    svg.py        figure models -> SVG
    page.py       models -> report.html (jinja2), tables/*.csv, figures/*.svg, data/

``build_report`` runs them in that order and returns the path of report.html.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from collections.abc import Callable
from typing import Any

from nicbench.errors import NicbenchError, UsageError
from nicbench.history.model import Series
from nicbench.report.build import build
from nicbench.judging.words import MIN_CHANGE_PCT
from nicbench.report.load import Run, check_rate_names, load_runs
from nicbench.report.page import copy_runs, write_figures, write_page, write_tables
from nicbench.report.reference import load_reference
from nicbench.report.svg import render_all
from nicbench.physics.link import parse_link_rates

Warn = Callable[[str], None]
OURS = {"report.html", "report.html.tmp", "figures", "tables", "data", "publication"}
PUBLICATION = "publication"     # --figures: the charts as PNG/PDF/SVG files (figures/)


def build_report(dirs: list[str], out: str | None = None, *,
                 link_rates: list[str] | tuple[str, ...] = (),
                 labels: list[str] | tuple[str, ...] = (), reference: str | None = None,
                 single_file: bool = False, warn: Warn | None = None,
                 min_change_pct: float | None = None,
                 figures: list[str] | tuple[str, ...] = (), history: Any = None) -> Path:
    """The report of ``dirs`` written to ``out``; its path. ``history``: a results store
    whose earlier runs of these adapters make the History section (None: for runs of a
    campaign, its earlier nights beside it; else the runs given, when there are three or
    more of one adapter)."""
    rates = parse_link_rates(link_rates)
    runs = load_runs(dirs, warn, labels)
    ref = load_reference(reference) if reference else None
    check_rate_names(rates, runs)
    target = Path(out) if out else _default_out()
    _prepare_out(target, runs)
    report = build(runs, rates, ref,
                   min_change_pct=MIN_CHANGE_PCT if min_change_pct is None else min_change_pct,
                   trend=_trend(runs, history if history is not None
                                else _campaign_nights(dirs, warn)))
    render_all(report)
    try:
        if not single_file:
            write_figures(report, target)
        write_tables(report, target)
        copy_runs(runs, target, warn or (lambda m: None))
        page = write_page(report, target, single_file)
    except OSError as exc:
        raise NicbenchError(f"{exc.filename or target}: cannot write the report: "
                            f"{exc.strerror or exc}") from exc
    if figures:
        from nicbench.report.figures import FigureOptions, write_figures as publication
        publication(report.publication, report.entries, runs, target / PUBLICATION, FigureOptions(
            formats=list(figures), min_change_pct=min_change_pct), warn=warn)
    return page


def _trend(runs: list[Run], source: Any) -> list[Series] | None:
    """The history of the runs' adapters in ``source`` (a results store: every run of
    them it holds); None: the runs' own history."""
    if source is None:
        return None
    from nicbench.history import latest
    from nicbench.report.history import LAST_RUNS

    return latest(source, sorted({r.adapter for run in runs for r in run.records}), LAST_RUNS)


def _campaign_nights(dirs: list[str], warn: Warn | None) -> Any:
    """Runs of a campaign: the campaign's earlier nights beside it are their history (a
    night that cannot be read is said and leaves the report without it)."""
    from nicbench.history.regressions import campaign_nights
    from nicbench.report.history import LAST_RUNS

    try:
        return campaign_nights(list(dirs), LAST_RUNS)
    except NicbenchError as exc:
        (warn or (lambda m: None))(f"no history in the report: {exc.one_line()}")
        return None


def _default_out() -> Path:
    base = Path("reports") / f"report-{time.strftime('%Y%m%d-%H%M%S')}"
    out, n = base, 1
    while out.exists() and n < 1000:
        n += 1
        out = base.with_name(f"{base.name}-{n}")
    return out


def _prepare_out(out: Path, runs: list[Run]) -> None:
    """OUT is new, empty, or an earlier report (whose figures, tables and data are
    replaced); never a results directory or anything else."""
    real = out.resolve()
    for run in runs:
        if real == run.path.resolve():
            raise UsageError(f"--out {out}: that is a results directory; choose another --out")
    if out.exists():
        if not out.is_dir():
            raise UsageError(f"--out {out}: exists and is not a directory")
        if any(p.name not in OURS for p in out.iterdir()):
            raise UsageError(f"--out {out}: exists and holds more than a report; choose a "
                             "new or empty directory")
        # a link where our folders go is replaced, never followed (deleting in its target)
        for sub in ("figures", "tables", "data", PUBLICATION):
            if (out / sub).is_symlink():
                (out / sub).unlink()
        # an earlier report's files would linger unreferenced: remove them
        for sub, patterns in (("figures", ("*.svg", "*.png")), ("tables", ("*.csv",))):
            for pattern in patterns:
                for old in (out / sub).glob(pattern):
                    old.unlink()
        for sub in ("data", PUBLICATION):   # the runs' files; an earlier --figures
            if (out / sub).is_dir():
                shutil.rmtree(out / sub)
    try:
        (out / "tables").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NicbenchError(f"{out}: cannot create the report directory: "
                            f"{exc.strerror or exc}") from exc
