"""The measurement commands: ``run``, ``parse``, ``restore``.

Kept apart from cli.py so the CLI module stays a thin table of commands; each command
body imports its library lazily so ``nicbench --help`` stays fast.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from nicbench.errors import ParseError, UsageError

PARSE_TOOLS = ("iperf2", "iperf3", "netpipe", "ntttcp", "netio")
DETECT_ORDER = ("iperf3", "ntttcp", "netpipe", "netio", "iperf2")


def _mbit(bps) -> str:
    return "-" if bps is None or bps != bps else f"{bps / 1e6:.1f}"


def _duration(seconds) -> str:
    if seconds is None:
        return "?"
    seconds = int(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


# -- run -----------------------------------------------------------------------------
def cmd_run(args) -> int:
    from nicbench.cli import _out, _table
    from nicbench.config.loader import load_inventory, load_profile, resolve_profile_path
    from nicbench.execution.run import run_profile

    profile = load_profile(resolve_profile_path(args.profile))
    inv = load_inventory(args.inventory)
    for name in args.pair or []:
        inv.pair(name)      # an unknown name is refused before anything is printed
    out = args.out or args.resume or f"reports/{profile.name}-{time.strftime('%Y%m%d-%H%M%S')}"

    def events(kind: str, data: dict) -> None:
        if kind == "point":
            _out(f"== {data['pair']} {data['point']}")
        elif kind == "skip":
            _out(f"   skipped {data['pair']} {data['point']}: {data['reason']}")
        elif kind == "give-up":
            _out(f"   gave up {data['test']}: {data['reason']}")
        elif kind == "trial":
            r = data["record"]
            of = f"/{data['n']}" if data["n"] else ""
            offered = f" offered {_mbit(r.offered_bps)}" if r.offered_bps else ""
            result = f"{_mbit(r.throughput_bps)} Mbit/s" if r.status == "ok" else \
                f"FAILED: {r.reason}"
            _out(f"   [{data['done']:>4}/{data['total']}] {r.test} #{data['i']}{of}{offered}: "
                 f"{result}  (ETA {_duration(data['eta_s'])})")
        elif kind == "udp-result":
            _out(f"   {data['test']}: {data['method']} found {_mbit(data['best_bps'])} Mbit/s "
                 f"(offered {_mbit(data['offered_bps'])}) in {data['trials']} trials")
        elif kind == "warning":
            print(f"nicbench: warning: {data['message']}", file=sys.stderr)

    _out(f"nicbench run {profile.name} -> {out}")
    run_dir = run_profile(profile, inv, out, pairs=args.pair, resume=bool(args.resume),
                          events=events, trust_new_keys=args.trust_new_host_keys)
    frame = __import__("pandas").read_csv(run_dir.summary_file)
    rows = [[r.pair, r.point, r.test, r.status, f"{r.n_ok}/{r.n_ok + r.n_failed}", r.select,
             _mbit(r.selected_bps), _mbit(r.median_bps),
             "-" if r.cpu_local_pct != r.cpu_local_pct else f"{r.cpu_local_pct:.0f}",
             "-" if r.cpu_remote_pct != r.cpu_remote_pct else f"{r.cpu_remote_pct:.0f}"]
            for r in frame.itertuples()]
    _out("")
    _out(_table(["pair", "point", "test", "status", "ok", "select", "Mbit/s", "median",
                 "cpu snd %", "cpu rcv %"], rows))
    _out(f"\nresults: {run_dir.path}/ (summary.csv, trials.jsonl, raw/)")
    if args.report:
        from nicbench.report import build_report

        page = build_report([str(run_dir.path)], str(run_dir.path / "report"),
                            warn=lambda m: print(f"nicbench: warning: {m}", file=sys.stderr))
        _out(f"report: {page}")
    return 0


# -- parse ---------------------------------------------------------------------------
def detect_tool(text: str) -> str:
    import importlib

    for name in DETECT_ORDER:
        if importlib.import_module(f"nicbench.tools.{name}").looks_like(text):
            return name
    raise ParseError("auto", "output of one of " + ", ".join(PARSE_TOOLS),
                     "no tool's output format recognised")


def parse_text(tool: str, text: str):
    import importlib

    if tool == "auto":
        tool = detect_tool(text)
    return importlib.import_module(f"nicbench.tools.{tool}").parse(text)


def cmd_parse(args) -> int:
    from nicbench.cli import _out

    path = Path(args.file)
    try:
        text = sys.stdin.read() if args.file == "-" else path.read_text(errors="replace")
    except OSError as exc:
        raise UsageError(f"{args.file}: cannot read: {exc.strerror}") from exc
    try:
        parsed = parse_text(args.tool, text)
    except ParseError as exc:
        raise ParseError(exc.tool, exc.expected, f"{args.file}: {exc.where}" if exc.where
                         else args.file) from None
    if args.json:
        _out(json.dumps(parsed.to_json(), indent=1))
        return 0
    _out(f"tool        {parsed.tool} {parsed.version or ''}".rstrip())
    _out(f"protocol    {parsed.protocol}")
    _out(f"throughput  {_mbit(parsed.throughput_bps)} Mbit/s")
    if parsed.udp:
        _out(f"udp         lost {parsed.udp.lost}/{parsed.udp.total} "
             f"({parsed.udp.loss_pct}%), jitter {parsed.udp.jitter_ms} ms")
    if parsed.cpu_pct is not None:
        _out(f"cpu         {parsed.cpu_pct:.1f} %")
    for p in parsed.points:
        _out(f"  {p.size_bytes:>9} bytes  {_mbit(p.throughput_bps):>9} Mbit/s")
    if parsed.error:
        _out(f"error       {parsed.error}")
    return 0


# -- restore -------------------------------------------------------------------------
def cmd_restore(args) -> int:
    from nicbench.cli import _out
    from nicbench.config.loader import load_inventory
    from nicbench.hosts import HostPool
    from nicbench.platforms.tuning import TuningSession, read_journal
    from nicbench.results.store import RunDir

    journal = RunDir(args.dir).journal_file
    if not journal.exists():
        raise UsageError(f"{journal}: no tuning journal (nothing was changed by that run)")
    pending = [c for c in read_journal(journal) if not c.restored]
    if not pending:
        _out("nothing to restore")
        return 0
    inv = load_inventory(args.inventory)
    with HostPool(inv) as pool:
        session = TuningSession(journal, log=_out)
        session.adopt(pending, {c.host: pool.platform(c.host) for c in pending})
        problems = session.restore()
    for p in problems:
        print(f"nicbench: error: {p}", file=sys.stderr)
    return 1 if problems else 0


def register(sub) -> None:
    run = sub.add_parser("run", help="run a profile on the inventory's pairs")
    run.add_argument("profile", help="profile name (profiles/NAME.yaml) or file")
    run.add_argument("-i", "--inventory", default="inventory.yaml")
    run.add_argument("--pair", action="append", metavar="NAME", help="only this pair (repeat)")
    run.add_argument("--out", help="results directory (default reports/<profile>-<time>/)")
    run.add_argument("--resume", metavar="DIR", help="continue a run that stopped half-way")
    run.add_argument("--trust-new-host-keys", action="store_true")
    run.add_argument("--report", action="store_true",
                     help="build the report of the run in DIR/report/ when it ends")
    run.set_defaults(func=cmd_run)

    parse = sub.add_parser("parse", help="read a tool's output (logs of runs made by hand)")
    parse.add_argument("tool", choices=PARSE_TOOLS + ("auto",))
    parse.add_argument("file", help="output file, or - for standard input")
    parse.add_argument("--json", action="store_true", help="print one JSON object")
    parse.set_defaults(func=cmd_parse)

    rst = sub.add_parser("restore", help="put back settings a run left changed (after a crash)")
    rst.add_argument("dir", help="the run's results directory")
    rst.add_argument("-i", "--inventory", default="inventory.yaml")
    rst.set_defaults(func=cmd_restore)
