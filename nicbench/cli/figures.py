"""``nicbench figures``: the report's charts as publication files (PNG, PDF, SVG) drawn by
matplotlib in the house style or the reviewer's own."""

from __future__ import annotations

from nicbench.cli import console
from nicbench.cli.console import out


def cmd_figures(args) -> int:
    from nicbench.report.figures import (FigureOptions, figures_of, parse_dpi,
                                         parse_formats)
    from nicbench.results.campaign import run_dirs

    options = FigureOptions(formats=parse_formats(args.format), style=args.style,
                            dpi=parse_dpi(args.dpi), adapters=_names(args.adapters),
                            tests=_names(args.tests))
    dirs = [str(d) for given in args.dirs for d in run_dirs(given)]
    written = figures_of(dirs, args.out, options, link_rates=args.link_rate,
                         labels=args.label, warn=console.warn)
    out(f"figures: {written.units} charts, {len(written.files)} files in {written.out} "
        f"(data: {written.csv.name})")
    return 0


def _names(values: list[str]) -> list[str]:
    return [n.strip() for v in values for n in v.split(",") if n.strip()]


def register(sub) -> None:
    fp = sub.add_parser("figures", help="the report's charts as PNG, PDF or SVG files for "
                                        "publication (matplotlib, your style)")
    fp.add_argument("dirs", nargs="+", metavar="RUN",
                    help="results directory of a run, or a campaign directory (its runs); "
                         "two or more: a comparison, runs A, B, ... in this order")
    fp.add_argument("--out", required=True, metavar="DIR",
                    help="directory for the files and figures.csv (made if missing)")
    fp.add_argument("--format", default="png,pdf", metavar="FMT[,FMT]",
                    help="png, pdf and/or svg (default png,pdf)")
    fp.add_argument("--style", metavar="FILE.mplstyle",
                    help="a matplotlib style file laid over nicbench's house style")
    fp.add_argument("--dpi", metavar="N", help="PNG resolution (default: the style's, 300)")
    fp.add_argument("--adapters", action="append", default=[], metavar="NAME[,NAME]",
                    help="only these adapters (inventory id or pair name; repeat or comma)")
    fp.add_argument("--tests", action="append", default=[], metavar="TEST[,TEST]",
                    help="only these tests of the profile (repeat or comma)")
    fp.add_argument("--link-rate", action="append", default=[], metavar="NAME=RATE",
                    help="line rate of a pair or adapter id, as for nicbench report")
    fp.add_argument("--label", action="append", default=[], metavar="RUN=LABEL",
                    help="a short label for a run, as for nicbench report")
    fp.set_defaults(func=cmd_figures)
