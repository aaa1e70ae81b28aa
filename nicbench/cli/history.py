"""``nicbench history``: each adapter's figure run after run, and where it changed, and why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from nicbench.cli import console
from nicbench.cli.console import mbit, out
from nicbench.display import shown
from nicbench.errors import UsageError
from nicbench.history import DEFAULT_LAST


def _source(args) -> Any:
    """What the history is read from: the results directories given, else the store."""
    if args.dirs and args.store is None:
        from nicbench.results.dataframe import DirSource

        return DirSource(args.dirs)
    if args.dirs:
        raise UsageError("give results directories or --store, not both")
    # The results store: --store, else NICBENCH_STORE, else reports/nicbench.duckdb.
    from nicbench.store import StoreKind, open_store, resolve

    location = resolve(args.store)
    if not location.enabled or (location.kind is StoreKind.DUCKDB
                                and not Path(location.target).exists()):
        raise UsageError(f"no results store at {location.shown}: give results directories "
                         "(nicbench history DIR...: runs, campaigns, or a directory of them), "
                         "or --store a store that nicbench run or store import wrote")
    return open_store(location, write=False)


def _us(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def cmd_history(args) -> int:
    from nicbench.history import history
    from nicbench.history.model import RULE

    if args.last < 0:
        raise UsageError(f"--last {args.last}: give how many runs of each series (0: all)")
    source = _source(args)
    try:
        found = history(source, adapter=args.adapter, test=args.test, point=args.point,
                        since=args.since, last=args.last or None)
    finally:
        if hasattr(source, "close"):
            from nicbench.cli.store import say_left_out

            say_left_out(source, "the history")
            source.close()
    if not found:
        asked = ", ".join(f"{k} {v}" for k, v in (("adapter", args.adapter),
                                                    ("test", args.test),
                                                    ("point", args.point),
                                                    ("since", args.since)) if v)
        console.warn("no measured trials" + (f" for {asked}" if asked else ""))
        return 0
    if args.json:
        for s in found:
            out(json.dumps(s.to_json(), default=str))
        return 0
    for k, s in enumerate(found):
        if k:
            out()
        changes = len(s.changes)
        rate = not s.figure.lower_better
        value, unit = (mbit, "Mbit/s") if rate else (_us, "us")
        what = "" if rate else f" {s.figure}"
        # names from the runs' files: shortened past MAX_NAME (console makes them visible)
        out(f"{shown(s.adapter)} {shown(s.test)} {shown(s.point)}{what} "
            f"({shown(s.adapter_label)}, {shown(s.tool)}): {len(s.nights)} "
            f"run{'s' if len(s.nights) != 1 else ''}, {changes} "
            f"change{'s' if changes != 1 else ''}")
        console.table(["run", "started (UTC)", unit, "select", "n", "stdev", "min-max",
                       "flag"],
                      [[shown(n.run_id), n.started_at.strftime("%Y-%m-%d %H:%M"),
                        value(n.value_bps), n.select, n.n, value(n.stdev_bps),
                        f"{value(n.min_bps)}-{value(n.max_bps)}",
                        f"{n.flag} ({n.flagged} not judged)" if n.flag else ""]
                       for n in s.nights])
        for c in s.changes:
            out(f"change at {shown(c.run_id)} ({c.started_at:%Y-%m-%d}): {c.interval_text()} "
                f"({value(c.before_bps)} -> {value(c.after_bps)} {unit}, {c.nights_before} "
                f"nights before, {c.nights_after} after; threshold ±{c.threshold_pct:.1f} %, "
                f"nights spread {c.night_spread_pct:.2f} %)")
            for line in c.setup_changes or ("no setup difference recorded",):
                out(f"  {line}")
    out()
    out(f"Each run's figure is the profile's select statistic of its repetitions; {RULE}.")
    return 0


def register(sub) -> None:
    hp = sub.add_parser("history", help="each adapter's figure run after run, the changes "
                                        "in it and the setup differences behind them")
    hp.add_argument("dirs", nargs="*", metavar="DIR",
                    help="results directories, campaign directories, or directories of "
                         "them (the nights); without DIR, the results store")
    hp.add_argument("--store", metavar="S",
                    help="the results store to read (a DuckDB file or a postgresql:// URL)")
    hp.add_argument("--adapter", metavar="A", help="only this adapter (inventory id)")
    hp.add_argument("--test", metavar="T", help="only this test (the profile's name)")
    hp.add_argument("--point", metavar="P", help="only this point (e.g. mtu9000)")
    hp.add_argument("--since", metavar="DATE",
                    help="only runs started on or after DATE (2026-11-20 or an ISO time, UTC)")
    hp.add_argument("--last", type=int, default=DEFAULT_LAST, metavar="N",
                    help=f"the last N runs of each series (default {DEFAULT_LAST}; 0: all)")
    hp.add_argument("--json", action="store_true",
                    help="one JSON object per line per series (adapter, test, point, runs, "
                         "changes)")
    hp.set_defaults(func=cmd_history)
