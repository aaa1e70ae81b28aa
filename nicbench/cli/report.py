"""``nicbench report``: a verdict, charts and tables of one or more results directories."""

from __future__ import annotations

from pathlib import Path

from nicbench.cli import console
from nicbench.cli.console import out
from nicbench.errors import UsageError


def cmd_report(args) -> int:
    from nicbench.report import build_report
    from nicbench.report.figures import parse_formats
    from nicbench.results.campaign import run_dirs

    if args.out and Path(args.out).exists() and not Path(args.out).is_dir():
        raise UsageError(f"--out {args.out}: exists and is not a directory: give a new "
                         "name or a report directory")
    # A campaign directory stands for its runs: the directories of several controllers
    # that shared a campaign (--shard) make one report.
    dirs = [str(d) for given in args.dirs for d in run_dirs(given)]
    # The store the report's history is read from: checked here (one line, exit 2 if it
    # is not a store), read by the report's History section.
    args.store_location = _store(args.store)
    formats = parse_formats(args.figures, "--figures") if args.figures else []
    history = _history(args.store_location)
    try:
        page = build_report(dirs, args.out, link_rates=args.link_rate, labels=args.label,
                            reference=args.reference, single_file=args.single_file,
                            warn=console.warn, min_change_pct=_min_change(args.min_change),
                            figures=formats, history=history)
    finally:
        if history is not None:
            from nicbench.cli.store import say_left_out

            say_left_out(history, "the report's history")
            history.close()
    if formats:
        out(f"figures: {page.parent / 'publication'}")
    out(f"report: {page}")
    return 0


def register(sub) -> None:
    from nicbench.cli.store import add_store_option

    rp = sub.add_parser("report", help="a verdict, charts and tables of one or more results "
                                       "directories (several: a comparison)")
    rp.add_argument("dirs", nargs="+", metavar="DIR",
                    help="results directory of a run, or a campaign directory (its runs); "
                         "runs are A, B, ... in this order")
    rp.add_argument("--out", help="report directory (default reports/report-<time>/)")
    rp.add_argument("--link-rate", action="append", default=[], metavar="NAME=RATE",
                    help="line rate of a pair or adapter id, e.g. gbe=1gbit (repeat); "
                         "overrides the rate read from the inventory")
    rp.add_argument("--label", action="append", default=[], metavar="RUN=LABEL",
                    help="a short label for a run, e.g. A=driver-7.1 (RUN: its letter or "
                         "directory name; repeat)")
    rp.add_argument("--reference", metavar="FILE",
                    help="YAML of published figures to draw beside the runs' (e.g. "
                         "references/arnold-2002-netio.yaml)")
    rp.add_argument("--single-file", action="store_true",
                    help="one self-contained report.html with the charts inline (mailable)")
    rp.add_argument("--min-change", default=None, metavar="PCT",
                    help="the smallest change a comparison calls faster or slower, %% of "
                         "run A's median (default 1; never below the tool's printed "
                         "resolution)")
    rp.add_argument("--figures", metavar="FMT[,FMT]",
                    help="also every chart as publication files (png, pdf, svg; drawn by "
                         "matplotlib in the house style) in OUT/publication/, as nicbench "
                         "figures draws them")
    add_store_option(rp)
    rp.set_defaults(func=cmd_report)


def _store(arg: str | None):
    from nicbench.store import StoreKind, open_store, resolve

    location = resolve(arg)
    if location.enabled and (arg is not None or Path(location.target).exists()
                             or location.kind is not StoreKind.DUCKDB):
        open_store(location, write=False).close()
    return location


def _history(location):
    """The store the History section reads (its runs of the reported adapters), or None:
    no store, or one not made yet (then a campaign's own earlier nights are the history).
    A store busy with a writer leaves the report without its history, said once."""
    from nicbench.store import StoreBusy, StoreKind, open_store

    if not location.enabled or (location.kind is StoreKind.DUCKDB
                                and not Path(location.target).exists()):
        return None
    try:
        return open_store(location, write=False)
    except StoreBusy as exc:
        console.warn(f"no history from the store in this report: {exc.one_line()}")
        return None


def _min_change(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < 100:        # NaN too
        raise UsageError(f"--min-change {text!r}: give a % of run A's median from 0 to "
                         "below 100, e.g. --min-change 1.5")
    return value
