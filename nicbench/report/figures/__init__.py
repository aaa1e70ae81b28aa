"""Publication figures: the report's charts drawn by matplotlib as PNG, PDF or SVG files.

::

    style.py       the house style (house.mplstyle), a user's style over it, card colours
    plan.py        which files: a unit per file (a ranking per point, else a figure), and
                   the rows of figures.csv
    bars.py        rankings: speed, CPU, netPIPE's plateau, published figures
    heat.py        the heatmap
    curves.py      netPIPE per adapter and per MTU
    scatter.py     speed against CPU
    comparison.py  run against run (its model from the comparison table's rows)
    draw.py        units -> files, in two processes, each drawn once
    png.py         a PNG from matplotlib's pixels without Pillow's row filters
    pdffonts.py    one TrueType subset per font and worker for every PDF
    metrics.py     each string's extent measured once per worker, not per figure and format

Every chart is drawn from the figure models the report's families build
(``report/families/``; ``build.publication_figures`` asks them for figures alone), so numbers, order, colours and the flags of values above the
wire's limit are the HTML's. ``nicbench figures`` and ``nicbench report --figures`` call
:func:`figures_of` and :func:`write_figures`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from nicbench.errors import NicbenchError, UsageError
from nicbench.report.load import Run
from nicbench.report.model import Entry, Figure

FORMATS = ("png", "pdf", "svg")
CSV_NAME = "figures.csv"
Warn = Callable[[str], None]


@dataclass
class FigureOptions:
    formats: list[str] = field(default_factory=lambda: ["png", "pdf"])
    style: str | None = None            # a user's .mplstyle over the house style
    dpi: int | None = None              # None: the style's savefig.dpi
    adapters: list[str] = field(default_factory=list)
    tests: list[str] = field(default_factory=list)
    min_change_pct: float | None = None
    workers: int = 2


@dataclass
class Written:
    out: Path
    files: list[str]
    units: int
    csv: Path


def parse_formats(text: str, option: str = "--format") -> list[str]:
    formats = [f.strip().lower().lstrip(".") for f in text.split(",") if f.strip()]
    bad = [f for f in formats if f not in FORMATS]
    if not formats or bad:
        raise UsageError(f"{option} {text!r}: give one or more of {', '.join(FORMATS)}, "
                         "separated by commas (e.g. png,pdf)")
    return list(dict.fromkeys(formats))


def parse_dpi(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        dpi = int(text)
    except ValueError:
        dpi = 0
    if not 50 <= dpi <= 1200:
        raise UsageError(f"--dpi {text!r}: give a whole number of dots per inch from 50 to "
                         "1200 (300 is print resolution)")
    return dpi


def select(runs: list[Run], adapters: list[str], tests: list[str]) -> list[Run]:
    """The runs cut to the adapters (inventory id or pair) and tests asked for."""
    if not adapters and not tests:
        return runs
    known_a = {n for run in runs for r in run.records for n in (r.adapter, r.pair)}
    known_t = {r.test for run in runs for r in run.records}
    for name in adapters:
        if name not in known_a:
            raise UsageError(f"--adapters {name}: no adapter or pair of that name in these "
                             f"runs (they have: {', '.join(sorted(known_a))})")
    for name in tests:
        if name not in known_t:
            raise UsageError(f"--tests {name}: no test of that name in these runs (they "
                             f"have: {', '.join(sorted(known_t))})")

    def keep(pair: str, adapter: str, test: str) -> bool:
        return ((not adapters or pair in adapters or adapter in adapters)
                and (not tests or test in tests))

    out = []
    for run in runs:
        out.append(replace(
            run, records=[r for r in run.records if keep(r.pair, r.adapter, r.test)],
            summary=[s for s in run.summary if keep(s.pair, s.adapter, s.test)]))
    return out


def figures_of(dirs: list[str], out: str, options: FigureOptions, *,
               link_rates: list[str] | tuple[str, ...] = (),
               labels: list[str] | tuple[str, ...] = (), warn: Warn | None = None) -> Written:
    """``nicbench figures``: the runs read, the families asked for their figures alone
    (no verdict, comparison table or history is built), the files drawn."""
    from nicbench.report.build import publication_figures
    from nicbench.report.load import check_rate_names, load_runs
    from nicbench.physics.link import parse_link_rates

    from nicbench.report.figures.draw import start

    rates = parse_link_rates(link_rates)
    if options.style:
        from nicbench.report.figures.style import check_style
        check_style(options.style, warn)
    pool = start(options.workers)     # the workers warm up while the runs are read
    try:
        runs = select(load_runs(dirs, warn, labels), options.adapters, options.tests)
        check_rate_names(rates, runs)
        target = Path(out)
        for run in runs:
            if target.resolve() == run.path.resolve():
                raise UsageError(f"--out {out}: that is a results directory; choose "
                                 "another")
        entries, figures = publication_figures(runs, rates)
        return write_figures(figures, entries, runs, target, options, pool, warn)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)


def write_figures(figures: list[Figure], entries: list[Entry], runs: list[Run], out: Path,
                  options: FigureOptions, pool=None, warn: Warn | None = None) -> Written:
    """The files of every unit of ``figures`` (a report's ``publication``; the
    comparison's too, for several runs) in ``out``, and figures.csv of what they plot. Every file is written under a temporary
    name and renamed when complete; nothing outside ``out`` is written or removed."""
    from nicbench.report.configs import Index
    from nicbench.report.figures.comparison import comparison_charts
    from nicbench.report.figures.draw import Job, render_all
    from nicbench.report.figures.plan import CSV_COLUMNS, rows_of, units
    from nicbench.report.figures.style import card_colours, palette, style_files
    from nicbench.results.summary import write_csv as write_rows

    styles = style_files(options.style)
    colours = card_colours(entries, palette(styles))
    charts = []
    if len(runs) > 1:
        from nicbench.judging.words import MIN_CHANGE_PCT
        charts = comparison_charts(Index(runs, entries),
                                   options.min_change_pct or MIN_CHANGE_PCT)
    todo = units(figures, charts)
    try:
        out.mkdir(parents=True, exist_ok=True)
        remove_earlier(out, warn)
        csv = out / CSV_NAME

        def write_csv() -> None:            # while the workers draw
            write_rows(csv, CSV_COLUMNS, (row for u in todo for row in rows_of(u, colours)))

        files = render_all([Job(u, colours, styles, options.formats, options.dpi, str(out))
                            for u in todo], options.workers, pool, write_csv)
    except OSError as exc:
        raise NicbenchError(f"{exc.filename or out}: cannot write the figures: "
                            f"{exc.strerror or exc}") from exc
    return Written(out=out, files=files, units=len(todo), csv=csv)


def remove_earlier(out: Path, warn: Warn | None = None) -> None:
    """The files an earlier ``nicbench figures`` wrote into ``out`` (named in its
    figures.csv), so that a chart no longer drawn does not linger, and the temporary
    files of one interrupted (``.NAME.PID.nicbench-tmp``); nothing else. figures.csv is
    read, not trusted: a name in it that is not a file of ``out`` itself
    (``../victims/keep.png``, an absolute path) is said and left alone."""
    import csv

    from nicbench.textfile import TMP_SUFFIX, name_within

    for leftover in out.glob(f".*{TMP_SUFFIX}"):
        leftover.unlink(missing_ok=True)        # a name listed in out: a file of out
    listing = out / CSV_NAME
    if not listing.is_file() or listing.is_symlink():
        return
    refused: list[str] = []
    with listing.open(newline="", encoding="utf-8", errors="replace") as fh:
        stems = {row.get("file") or "" for row in csv.DictReader(fh)}
    for stem in sorted(stems - {""}):
        for fmt in FORMATS:
            path = name_within(out, f"{stem}.{fmt}")
            try:
                if path is None:
                    raise IsADirectoryError
                path.unlink(missing_ok=True)    # a link itself, never what it points to
            except OSError:                     # a directory, a name too long
                refused.append(stem)
                break
    if refused and warn is not None:
        from nicbench.display import shown
        warn(f"{listing}: {len(refused)} name(s) that are not files of {out} (e.g. "
             f"{shown(refused[0])!r}) left alone; only files in --out are ever removed")
