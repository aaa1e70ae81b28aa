"""``nicbench parse``: read a tool's output saved by hand."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from nicbench.cli.console import mbit, out
from nicbench.errors import ParseError, UsageError
from nicbench.tools.base import ParsedRun
from nicbench.tools.registry import DETECT_ORDER, TOOLS


def detect_tool(text: str) -> str:
    for name in DETECT_ORDER:
        if TOOLS[name].looks_like(text):
            return name
    raise ParseError("auto", "output of one of " + ", ".join(TOOLS),
                     "no tool's output format recognised")


def parse_text(tool: str, text: str) -> ParsedRun:
    if tool == "auto":
        tool = detect_tool(text)
    return TOOLS[tool].parse(text)


def cmd_parse(args) -> int:
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
        out(json.dumps(parsed.to_json(), indent=1))
        return 0
    out(f"tool        {parsed.tool} {parsed.version or ''}".rstrip())
    out(f"protocol    {parsed.protocol}")
    out(f"throughput  {mbit(parsed.throughput_bps)} Mbit/s")
    if parsed.udp:
        out(f"udp         lost {parsed.udp.lost}/{parsed.udp.total} "
            f"({parsed.udp.loss_pct}%), jitter {parsed.udp.jitter_ms} ms")
    if parsed.cpu_pct is not None:
        out(f"cpu         {parsed.cpu_pct:.1f} %")
    for p in parsed.points:
        out(f"  {p.size_bytes:>9} bytes  {mbit(p.throughput_bps):>9} Mbit/s")
    if parsed.error:
        out(f"error       {parsed.error}")
    return 0


def register(sub) -> None:
    parse = sub.add_parser("parse", help="read a tool's output (logs of runs made by hand)")
    parse.add_argument("tool", choices=tuple(TOOLS) + ("auto",))
    parse.add_argument("file", help="output file, or - for standard input")
    parse.add_argument("--json", action="store_true", help="print one JSON object")
    parse.set_defaults(func=cmd_parse)
