"""The report's files: report.html, figures/*.svg, tables/*.csv and data/ (the runs' files).

The page is rendered by jinja2 from ``templates/report.html.j2`` with autoescape on: every
value from results (labels, reasons, commands, host facts) is escaped unless marked safe,
and the only safe markup is the charts' SVG, which ``svg.py`` builds with its text
escaped. The page loads nothing from the network: its CSS and its one script (a card
finder and sortable tables, ``templates/report.js``; without it the page is whole) are inline,
its charts are ``figures/*.svg`` beside it, or inline with ``--single-file`` (one file that
can be mailed alone).

The report folder carries what makes every number traceable: each run's trials.jsonl,
manifest.json, summary.csv and raw outputs under ``data/<letter>-<name>/`` (hard links
where the file system allows, copies otherwise), and every table and every chart's data
as CSV (``tables/``: ``verdict.csv`` and, for several runs, ``comparison.csv`` among
them). No path of the machine that made it appears in the page.
"""

from __future__ import annotations

import os
import re
import time
from importlib import resources
from pathlib import Path
from collections.abc import Callable

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from nicbench import __version__
from nicbench.display import visible
from nicbench.report.configs import NOISY_IQR_POINTS, point_label
from nicbench.report.load import Run
from nicbench.report.families import FAMILIES, chart
from nicbench.report.model import (BarPanel, Entry, Figure, HeatPanel, LinePanel, PageSection,
                                   Place, Report, ScatterPanel)
from nicbench.report.setup import data_dir
from nicbench.report import compare
from nicbench.results.manifest import shareable
from nicbench.results.runfiles import copy_file, copy_tree
from nicbench.results.summary import write_csv
from nicbench.textfile import replacing, write_atomic

# The page's frame, around the families' sections (report/families/): the verdict and
# what compares, then the families placed on top, the adapters, the families' body, and
# the tables, failures, setup and how to read that close every report.
TOP = [("verdict", "Verdict"), ("comparison", "Run against run"), ("rankings", "Rankings")]
MIDDLE = [("adapters", "Adapters")]
END = [("summary", "Every configuration"), ("failures", "Failures"), ("setup", "Setup"),
       ("method", "How to read")]
RUN_FILES = ("trials.jsonl", "summary.csv")     # copied as they are; the manifest not


def _environment() -> Environment:
    env = Environment(loader=PackageLoader("nicbench.report", "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                      finalize=_shown)
    env.globals.update(numeric=_numeric, point_label=point_label)
    return env


_ENV: Environment | None = None


def environment() -> Environment:
    global _ENV
    if _ENV is None:
        _ENV = _environment()
    return _ENV


def _shown(value: object) -> object:
    """Every value the page prints: text from results with its control and bidi
    characters as escapes (an ESC, a right-to-left override in an adapter's name); the
    charts' SVG (marked safe) is left as svg.py made it."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return visible(value, "\n\t")
    return value


def _numeric(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    try:
        float(str(value).replace("%", "").replace("+", "").strip())
        return True
    except ValueError:
        return False


# -- CSV ----------------------------------------------------------------------------------
def write_tables(report: Report, out: Path) -> None:
    tdir = out / "tables"
    tdir.mkdir(parents=True, exist_ok=True)
    for t in report.tables:
        path = tdir / f"{t.id}.csv"
        if t.csv_columns:
            write_csv(path, t.csv_columns, plain_numbers(t.csv_columns, t.csv_rows))
        else:
            write_csv(path, t.columns, plain_numbers(t.columns, t.rows))
        t.files["csv"] = f"tables/{path.name}"
    for f in report.figures:
        path = tdir / f"figure-{f.id}.csv"
        cols, rows = figure_rows(report, f)
        write_csv(path, cols, rows)
        f.files["csv"] = f"tables/{path.name}"


# "89,248" or "! 1,488,095 (sender busy)": a figure the page groups by thousands
_GROUPED = re.compile(r"^(?P<pre>!?\s*)(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?)(?P<post>(?:\s.*)?)$")


def plain_numbers(columns: list[str], rows: list[list[object]]) -> list[list[object]]:
    """The rows with every figure grouped by thousands for the page written plain for a
    spreadsheet ("89,248" -> 89248); a list of repetitions ("100,101,102") is left alone."""
    lists = {k for k, c in enumerate(columns) if "repetition" in c}
    out: list[list[object]] = []
    for row in rows:
        cells: list[object] = []
        for k, cell in enumerate(row):
            m = _GROUPED.match(cell) if isinstance(cell, str) and k not in lists else None
            if m is None:
                cells.append(cell)
                continue
            num = m["num"].replace(",", "")
            if not m["pre"] and not m["post"]:
                cells.append(float(num) if "." in num else int(num))
            else:
                cells.append(f"{m['pre']}{num}{m['post']}")
        out.append(cells)
    return out


def figure_rows(report: Report, fig: Figure) -> tuple[list[str], list[list[object]]]:
    """A figure's data, long format: what each bar, cell, curve point or dot shows."""
    if all(isinstance(p, BarPanel) for p in fig.panels):
        cols = ["panel", "adapter", "series", "value", "whisker_min", "whisker_max", "n_ok",
                "n", "status", "gap", "label", "limit", "line_rate", "flag", "colour"]
        rows: list[list[object]] = []
        for p in fig.panels:
            assert isinstance(p, BarPanel)
            names = {r.key: r.label for r in p.rows}
            for b in p.bars:
                rows.append([p.title, names[b.row], b.series, b.value, b.lo, b.hi, b.n_ok,
                             b.n, b.status, b.gap, b.text, b.limit, b.line_rate, b.flag,
                             b.fill])
        return cols, rows
    if all(isinstance(p, HeatPanel) for p in fig.panels):
        cols = ["adapter", "point", "value", "text"]
        rows = []
        for p in fig.panels:
            assert isinstance(p, HeatPanel)
            for r, line in zip(p.rows, p.cells, strict=False):
                for col, c in zip(p.columns, line, strict=False):
                    rows.append([r.label, col, c.value, c.text])
        return cols, rows
    if all(isinstance(p, ScatterPanel) for p in fig.panels):
        cols = ["panel", "adapter", "cpu_pct", "mbit_s"]
        rows = [[p.title, d.label, d.x, d.y] for p in fig.panels
                if isinstance(p, ScatterPanel) for d in p.dots]
        return cols, rows
    own = chart(fig.family).rows
    if own is not None:          # a chart whose family writes its data its own way
        return own(fig)
    lines = [p for p in fig.panels if isinstance(p, LinePanel)]
    kept = chart(fig.family).point_units        # a point kept as it is (a round trip, us)
    x_col = "block_size_bytes" if not lines or lines[0].xunit == "bytes" else lines[0].xunit
    y_col = "mbit_s" if not lines or lines[0].yunit == "Mbit/s" else _column(lines[0].yunit)
    if kept is not None:
        x_col, y_col = _column(kept[0]), _column(kept[1])
    cols = ["panel", "curve", x_col, y_col, "above_limit"]
    rows = []
    for p in fig.panels:
        if not isinstance(p, LinePanel):
            continue
        for curve in p.curves:
            flagged = set(curve.flagged)
            for x, y in curve.points:
                rows.append([p.title, curve.label, x if kept else int(x), y,
                             "yes" if (x, y) in flagged else ""])
    return cols, rows


def _column(unit: str) -> str:
    """A unit as a CSV column name: "frames/s" -> "frames_per_s", "µs" -> "us"."""
    return unit.replace("/", "_per_").replace("µ", "u").replace(" ", "_").lower()


def write_figures(report: Report, out: Path) -> None:
    fdir = out / "figures"
    fdir.mkdir(parents=True, exist_ok=True)
    for f in report.figures:
        path = fdir / f"{f.id}.svg"
        with replacing(path) as fh:             # complete or not there, never via a link
            fh.write('<?xml version="1.0" encoding="UTF-8"?>\n' + f.svg)
        f.files["svg"] = f"figures/{path.name}"


# -- the runs' files ----------------------------------------------------------------------
def copy_runs(runs: list[Run], out: Path, warn: Callable[[str], None] | None = None) -> None:
    """Each run's trials, summary and raw outputs under data/ of the report, and its
    manifest without this machine's paths (``Manifest.shareable``). Only the regular
    files the run directory holds itself: a link or special file is skipped with a
    warning (``results/runfiles.py``), never followed."""
    warn = warn or (lambda m: None)
    for run in runs:
        dst = out / data_dir(run)
        dst.mkdir(parents=True, exist_ok=True)
        if run.manifest is not None:
            write_atomic(dst / "manifest.json", shareable(run.path / "manifest.json"))
        for name in RUN_FILES:
            if os.path.lexists(run.path / name):
                copy_file(run.path / name, dst / name, warn)
        copy_tree(run.path / "raw", dst / "raw", warn)


# -- HTML ---------------------------------------------------------------------------------
def _runs_line(report: Report) -> str:
    runs: dict[int, tuple[str, str, str]] = {}
    for e in report.entries:
        runs.setdefault(e.run_index, (e.run_label, e.run_name, e.run_id))
    n = len({e.adapter for e in report.entries})
    parts = [f"{label} = {name}" + (f" (run {rid})" if rid != name else "")
             for label, name, rid in runs.values()]
    what = "Run" if len(runs) == 1 else "Runs"
    return f"{what} {', '.join(parts)}; {n} adapter{'s' if n != 1 else ''}"


def _method_items(report: Report) -> list[tuple[str, str]]:
    """(anchor, text) of "How to read this report"; the anchor "" for the general ones."""
    items = [
        ("",
        "Throughput is in Mbit/s (10^6 bit/s) and, in the netio-style tables, KB/s (1024 "
        "bytes per second, as netio prints it). netPIPE prints 'Mbps' meaning 2^20 bit/s; "
        "its figures are converted to Mbit/s like the others."),
        *[item for fam in FAMILIES for item in fam.read],
        ("",
        "Every adapter has one colour, derived from its inventory id so that it keeps it "
        "in every report, and a marker as a second cue (in front of its name, on its curves "
        "and dots); the colours are colour-blind safe (Okabe & Ito, Tol). The same adapter "
        "in a later run is a shade of its colour."),
        ("",
        "Every value is traceable: the CSV beside each chart holds what it shows, and each "
        "run's trials.jsonl and raw outputs are in data/ beside this page."),
    ]
    if report.comparison:
        items.append(("", "Runs are compared adapter by adapter (by inventory id), each later run "
                     "against the first that has the adapter, on all the stored "
                     "repetitions: the shift is the Hodges-Lehmann estimate (the median of "
                     "every B - A difference) with its exact 95 % interval, as % of A's "
                     "median; p is the two-sided Mann-Whitney U test (exact, mid-ranks for "
                     "ties), adjusted by Benjamini-Hochberg across the rows of the "
                     "comparison. " + compare.HOW_TO_READ + " 'Not "
                     "testable' when the repetitions are too few for any p below 0.05 (one "
                     "in either run, two against two, three against three). A round trip "
                     "(a latency test's p50 and p99, a probe's under load) is compared the "
                     "same way over the repetitions' own percentile, in us: 'lower latency' "
                     "(better) or 'higher latency'; one below the wire's minimum round trip "
                     "is never judged, as a rate above its limit is not."))
    if any(en.rate_bps is None for en in report.entries):
        items.append(("", "Some adapters have no known line rate: their bars have no limit "
                      "mark."))
    return items


def _sections(report: Report) -> tuple[list[tuple[str, str]], list[PageSection],
                                       list[PageSection]]:
    """The contents' (id, title) in page order, and the families' sections on top and in
    the body that these runs give something."""
    shown = [s for s in report.sections if s.shown]
    top = [s for s in shown if s.section.place == Place.TOP]
    body = [s for s in shown if s.section.place == Place.BODY]
    frame = {"comparison": report.comparison, "rankings": bool(report.rankings)}
    nav = ([(i, t) for i, t in TOP if frame.get(i, True)]
           + [(s.section.id, s.section.nav) for s in top] + MIDDLE
           + [(s.section.id, s.section.nav) for s in body] + END)
    return nav, top, body


def render_page(report: Report, single_file: bool = False) -> str:
    if single_file and any(not f.svg for f in report.figures):
        from nicbench.report.svg import render_all
        render_all(report)
    nav, top, body = _sections(report)
    # the sections of the methods a run may not have: left out, named once at the top
    absent = [s.section.absent for s in report.sections if not s.shown and s.section.absent]
    css = resources.files("nicbench.report").joinpath("templates/report.css").read_text(
        encoding="utf-8")
    script = resources.files("nicbench.report").joinpath("templates/report.js").read_text(
        encoding="utf-8").replace("</", "<\\/")
    return environment().get_template("report.html.j2").render(
        report=report, single_file=single_file, css=css, script=script, version=__version__,
        card_of={e.key: _card_words(e) for e in report.entries},
        made=time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(report.created_at)),
        runs_line=_runs_line(report), sections=nav, absent=absent,
        shown={i for i, _ in nav}, top_sections=top, body_sections=body,
        colour_of={e.key: e.colour for e in report.entries},
        method_items=_method_items(report), read_anchor=read_anchors(),
        noisy_iqr=f"{NOISY_IQR_POINTS:g}")


def read_anchors() -> dict[str, str]:
    """Each kind of chart's "how to read" item, as its family names it."""
    return {c.kind: c.read for fam in FAMILIES for c in fam.charts if c.read}


def _card_words(e: Entry) -> str:
    """What the finder matches a card by: its label, adapter id, pair and run."""
    return " ".join(dict.fromkeys(w for w in (e.label, e.adapter_label, e.adapter, e.pair,
                                             e.run_label) if w))


def write_page(report: Report, out: Path, single_file: bool = False) -> Path:
    page = out / "report.html"
    write_atomic(page, render_page(report, single_file))
    return page
