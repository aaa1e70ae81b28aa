"""``nicbench parse``: read a tool's output saved by hand."""

from __future__ import annotations

import io
import json
import sys

from nicbench.cli.console import mbit, out
from nicbench.errors import ParseError
from nicbench.limits import MAX_OUTPUT_BYTES
from nicbench.textfile import TextFileError, decode_output, read_bytes, read_limited
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


# A larger file than nicbench keeps of any tool's output (nicbench/limits.py, where the
# figure is explained) is refused before it is read.


def read_output(tool: str, name: str) -> str:
    """The text of a saved output (``-`` for standard input): a regular file of at most
    8 MB, UTF-8 or UTF-16 (what Windows PowerShell's ``>`` writes). Anything else is a
    ParseError (exit 3), like output that cannot be read."""
    too_big = "give the output of one run (nicbench parse reads at most 8 MB)"
    try:
        if name != "-":
            data = read_bytes(name, MAX_OUTPUT_BYTES, too_big)
        elif hasattr(sys.stdin, "buffer"):
            data = read_limited(sys.stdin.buffer, MAX_OUTPUT_BYTES, too_big)
        else:   # a text stream put in its place
            data = read_limited(io.BytesIO(sys.stdin.read().encode()), MAX_OUTPUT_BYTES,
                                too_big)
        return decode_output(data)
    except TextFileError as exc:
        where = f"line {exc.line}: {exc.message}" if exc.line else exc.message
        raise ParseError(tool, "a tool's text output", where) from None
    except OSError as exc:
        raise ParseError(tool, "a file holding a tool's output",
                         f"cannot read: {exc.strerror or exc}") from None


def cmd_parse(args) -> int:
    try:
        parsed = parse_text(args.tool, read_output(args.tool, args.file))
    except ParseError as exc:
        raise ParseError(exc.tool, exc.expected, f"{args.file}: {exc.where}" if exc.where
                         else args.file) from None
    if args.json:
        out(json.dumps(parsed.to_json(), indent=1))
        return 0
    out(f"tool        {parsed.tool} {parsed.version or ''}".rstrip())
    out(f"protocol    {parsed.protocol}")
    lat = parsed.latency
    if lat is not None:          # a latency tool: round trips, no throughput
        out(f"round trip  p50 {lat.p50_us:g}  p90 {lat.p90_us:g}  p99 {lat.p99_us:g}  "
            f"p99.9 {lat.p999_us:g}  max {lat.max_us:g} us ({lat.samples} round trips of "
            f"{lat.message_bytes} bytes)")
    else:
        out(f"throughput  {mbit(parsed.throughput_bps)} Mbit/s")
    if parsed.udp:
        out(f"udp         lost {parsed.udp.lost}/{parsed.udp.total} "
            f"({parsed.udp.loss_pct}%), jitter {parsed.udp.jitter_ms} ms")
    if (b := parsed.bidir) is not None:     # --bidir: the throughput is the forward one
        out(f"forward     {mbit(b.forward_bps)} Mbit/s (client to server)")
        out(f"reverse     {mbit(b.reverse_bps)} Mbit/s (server to client)"
            if b.reverse_bps is not None else
            "reverse     not known here (a server does not learn what the client received)")
    if parsed.latency:
        lat = parsed.latency
        out(f"latency     {lat.samples} round trips of {lat.message_bytes} bytes: p50 "
            f"{lat.p50_us:.1f}, p90 {lat.p90_us:.1f}, p99 {lat.p99_us:.1f}, p99.9 "
            f"{lat.p999_us:.1f}, max {lat.max_us:.1f} us")
    if parsed.cpu_pct is not None:
        out(f"cpu         {parsed.cpu_pct:.1f} %")
    for p in parsed.points:
        out(f"  {p.size_bytes:>9} bytes  {mbit(p.throughput_bps):>9} Mbit/s")
    if parsed.error:
        out(f"error       {parsed.error}")
    return 0


def register(sub) -> None:
    parse = sub.add_parser("parse", help="read a tool's output (logs of runs made by hand)")
    parse.add_argument("tool", choices=(*tuple(TOOLS), "auto"))
    parse.add_argument("file", help="output file, or - for standard input")
    parse.add_argument("--json", action="store_true", help="print one JSON object")
    parse.set_defaults(func=cmd_parse)
