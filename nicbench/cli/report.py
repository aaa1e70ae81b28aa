"""``nicbench report``: charts and tables of one or more results directories."""

from __future__ import annotations

from nicbench.cli import console
from nicbench.cli.console import out


def cmd_report(args) -> int:
    from nicbench.report import build_report

    page = build_report(args.dirs, args.out, link_rates=args.link_rate,
                        warn=console.warn)
    out(f"report: {page}")
    return 0


def register(sub) -> None:
    rp = sub.add_parser("report", help="charts and tables of one or more results directories")
    rp.add_argument("dirs", nargs="+", metavar="DIR", help="results directory of a run")
    rp.add_argument("--out", help="report directory (default reports/report-<time>/)")
    rp.add_argument("--link-rate", action="append", default=[], metavar="NAME=RATE",
                    help="line rate of a pair or adapter id, e.g. gbe=1gbit (repeat); "
                         "overrides the rate read from the inventory")
    rp.set_defaults(func=cmd_report)
