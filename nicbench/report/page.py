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
from nicbench.report.model import (BarPanel, Entry, Figure, HeatPanel, LinePanel, Report,
                                   ScatterPanel)
from nicbench.report.setup import data_dir
from nicbench.report import compare
from nicbench.results.manifest import shareable
from nicbench.results.runfiles import copy_file, copy_tree
from nicbench.results.summary import write_csv
from nicbench.textfile import replacing, write_atomic

SECTIONS = [
    ("verdict", "Verdict"),
    ("comparison", "Run against run"),
    ("rankings", "Rankings"),
    ("history", "History"),
    ("adapters", "Adapters"),
    ("throughput", "Throughput"),
    ("latency", "Latency"),
    ("under-load", "Under load"),
    ("cpu", "CPU and cost"),
    ("netpipe", "netPIPE"),
    ("streams", "Streams"),
    ("smallpkt", "Small packets"),
    ("published", "Published figures"),
    ("size-tables", "Tables by packet size"),
    ("summary", "Every configuration"),
    ("failures", "Failures"),
    ("setup", "Setup"),
    ("method", "How to read"),
]
LONG_TITLES = {"throughput": "throughput per adapter and MTU (iperf, NTttcp, UDP)",
               "latency": "request/response latency (sockperf)", "cpu": "CPU load and cost",
               "netpipe": "netPIPE", "size-tables": "tables by packet size (netio, iperf -l)"}
NETPIPE_GROUPS = [("netpipe-plateau", "Sustained throughput per adapter and MTU"),
                  ("netpipe-mtu", "Per MTU, one curve per adapter"),
                  ("netpipe-adapter", "Per adapter, one curve per MTU")]
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
    if fig.family == "history":
        cols = ["panel", "curve", "run", "mbit_s", "what"]
        return cols, [[p.title, c.label, int(x), round(y, 3), c.titles[k] if c.titles else ""]
                      for p in fig.panels if isinstance(p, LinePanel)
                      for c in p.curves for k, (x, y) in enumerate(c.points)]
    lines = [p for p in fig.panels if isinstance(p, LinePanel)]
    x_col = "block_size_bytes" if not lines or lines[0].xunit == "bytes" else lines[0].xunit
    y_col = "mbit_s" if not lines or lines[0].yunit == "Mbit/s" else _column(lines[0].yunit)
    cols = ["panel", "curve", x_col, y_col, "above_limit"]
    rows = []
    for p in fig.panels:
        if not isinstance(p, LinePanel):
            continue
        for curve in p.curves:
            flagged = set(curve.flagged)
            for x, y in curve.points:
                rows.append([p.title, curve.label, int(x), y,
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


# Where each chart family's "how to read" is (its item's anchor in the last section).
READ_ANCHOR = {"speed": "read-speed", "heatmap": "read-heatmap", "cpu": "read-cpu",
               "cost": "read-cost", "netpipe-plateau": "read-netpipe",
               "netpipe-mtu": "read-netpipe", "netpipe-adapter": "read-netpipe",
               "streams": "read-streams"}


def _method_items(report: Report) -> list[tuple[str, str]]:
    """(anchor, text) of "How to read this report"; the anchor "" for the general ones."""
    items = [
        ("",
        "Throughput is in Mbit/s (10^6 bit/s) and, in the netio-style tables, KB/s (1024 "
        "bytes per second, as netio prints it). netPIPE prints 'Mbps' meaning 2^20 bit/s; "
        "its figures are converted to Mbit/s like the others."),
        ("read-speed",
        "Speed charts rank the adapters at each MTU, fastest first. A bar is the "
        "configuration's selected value (the profile's select: best, mean or median of the "
        "repetitions, as in the review the profile follows); its whisker runs from the "
        "lowest to the highest repetition that succeeded; 'n ok/n' counts those against "
        "the repetitions planned and names how many failed and were not run. A UDP search's "
        "bar is the rate it found. A value above the link's limit is not a measurement of "
        "the card: it comes after the ranked ones, marked ! and not ranked."),
        ("read-heatmap",
        "Heatmaps: one row per adapter, fastest first at its best point, one column per "
        "point; the colour runs from the chart's lowest selected value (dark) to its "
        "highest (light), so small differences show, and the numbers are the figures. A "
        "grey cell names what happened; a white cell marked ! is above the link's limit, "
        "left off the scale and not ranked."),
        ("",
        "A gap names what happened, one word per event whatever the tool: 'refused' only "
        "when the driver or kernel refused the setting, 'path check failed' when the MTU "
        "was taken but the path did not carry it, 'stalled' when the transfer moved almost "
        "nothing or never ended at the receiver, 'timed out', 'given up', ... The failures "
        "section gives every reason in the kernel's or the tool's words."),
        ("",
        "The black mark on a bar is the best goodput of the link at that MTU: "
        "R × (MTU − 52) / (MTU + 38) for TCP with timestamps (− 40 without, − 28 for UDP), "
        "R the link's line rate, 38 the bytes each frame costs on the wire besides the IP "
        "packet (Ethernet header 14, FCS 4, preamble 8, inter-frame gap 12): 941.5 Mbit/s "
        "at MTU 1500 and 990.0 at 9000 on Gigabit Ethernet. A value above it by more "
        "than the tool's printed resolution plus its timing error over the time measured "
        "(iperf 2 and iperf3: 10 ms of the test's duration; netPIPE: 10 us of a 0.25 s "
        "trial) is marked ! and listed under its chart."),
        ("",
        "The line rate is taken from --link-rate NAME=RATE when given, else from the "
        "inventory adapter's link_rate recorded in the run's manifest, else from the rate "
        "the adapter's description names; the table of adapters says which."),
        ("read-cpu",
        "CPU load: /proc/stat of the sending and of the receiving host, busy share of all "
        "cores while the sender ran, the median over every successful repetition of the "
        "configuration (not only the fastest), with their interquartile range and the "
        "hosts' other load over the same repetitions; a tool's own CPU figure is a "
        "marker, labelled with where it comes from. Mbit/s per CPU % divides the figure "
        "by the median CPU of the busier host; the verdict ranks by it only where the IQR "
        f"is at most {NOISY_IQR_POINTS:g} points. A figure above the wire's limit is "
        "never ranked, nor is any card of that link: the verdict says the method could "
        "not rank it on this setup. Cards whose figures differ by no more than the "
        "figure's resolution, or (with repetitions) by no change the comparison's rule "
        "would call, share a rank: tied. The receiver's load runs from its server's start "
        "to its finish; the axis stops at 100 %."),
        ("read-cost",
        "Speed against CPU: each dot is the selected speed against the busier host's CPU "
        "(the median over every successful repetition of that point); the rankings give "
        "Mbit/s per CPU % with the CPU's spread and rank by it only where the spread "
        "allows."),
        ("read-netpipe",
        "netPIPE's figure is the plateau of its curve: the median throughput over the "
        "blocks of the last octave (at least half the largest block), what the link "
        "sustains; its burst maximum is in the table. Its curves are one run per "
        "configuration, one colour per adapter (per MTU in an adapter's own chart, dark "
        "for the smallest MTU to light for the largest)."),
        ("read-streams",
        "Streams: throughput against iperf's -P, the speed charts' value; with --bidir, "
        "each direction as it reached its receiver, forward (client to server) solid, "
        "reverse dashed, medians over the repetitions the speed charts' value is taken "
        "over, and their sum against twice the goodput limit (a full-duplex link carries "
        "its rate each way)."),
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


def render_page(report: Report, single_file: bool = False) -> str:
    if single_file and any(not f.svg for f in report.figures):
        from nicbench.report.svg import render_all
        render_all(report)
    present = {"comparison": report.comparison,
               "published": bool(report.figures_of("published")),
               "streams": bool(report.figures_of("streams")),
               "smallpkt": bool(report.figures_of("smallpkt")),
               "history": bool(report.figures_of("history")),
               "under-load": bool(report.tables_of("loaded")),
               "rankings": bool(report.tables_of("verdict") or report.tables_of("verdict-loaded"))}
    # the sections of the methods a run may not have: left out, named once at the top
    empty = {"throughput": not report.figures_of("speed"),
             "latency": not (report.figures_of("latency") or report.tables_of("latency")),
             "cpu": not report.figures_of("cpu"),
             "netpipe": not report.figures_of("netpipe-plateau"),
             "size-tables": not (report.tables_of("netio") or report.tables_of("iperf-length"))}
    present.update({k: not v for k, v in empty.items()})
    sections = [(i, t) for i, t in SECTIONS if present.get(i, True)]
    absent = [LONG_TITLES[i] for i, _ in SECTIONS if empty.get(i)]
    css = resources.files("nicbench.report").joinpath("templates/report.css").read_text(
        encoding="utf-8")
    script = resources.files("nicbench.report").joinpath("templates/report.js").read_text(
        encoding="utf-8").replace("</", "<\\/")
    return environment().get_template("report.html.j2").render(
        report=report, single_file=single_file, css=css, script=script, version=__version__,
        card_of={e.key: _card_words(e) for e in report.entries},
        made=time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(report.created_at)),
        runs_line=_runs_line(report), sections=sections, absent=absent,
        shown={i for i, _ in sections}, netpipe_groups=NETPIPE_GROUPS,
        colour_of={e.key: e.colour for e in report.entries},
        method_items=_method_items(report), read_anchor=READ_ANCHOR, noisy_iqr=f"{NOISY_IQR_POINTS:g}")


def _card_words(e: Entry) -> str:
    """What the finder matches a card by: its label, adapter id, pair and run."""
    return " ".join(dict.fromkeys(w for w in (e.label, e.adapter_label, e.adapter, e.pair,
                                             e.run_label) if w))


def write_page(report: Report, out: Path, single_file: bool = False) -> Path:
    page = out / "report.html"
    write_atomic(page, render_page(report, single_file))
    return page
