"""netPIPE: pure parsers for what NPtcp (NetPIPE 3.x) and NTtcp (NetPIPE 2.4) print.

This module turns netPIPE text into a :class:`ParsedRun` (one :class:`Point` per block size,
in file order) and recognises netPIPE's own error lines. It runs nothing.

Formats, and where each one's layout comes from
-----------------------------------------------
``np3_outfile``  NetPIPE 3.x ``-o`` file, one line per block size: ``"%8d %lf %12.8lf"`` =
    bytes, Mbps, seconds. Format string read from the Debian ``netpipe-tcp`` 3.7.2 binary
    (``strings /usr/bin/NPtcp``) and matching ../shared/samples/nptcp_*_outfile.txt.
``np3_screen``   NetPIPE 3.x transmitter console: ``"%3d: %7d bytes %6d times --> "`` then
    ``" %8.2lf Mbps in %10.2lf usec"`` (same binary; NPtcp writes these to stderr, and
    "Sending output to <file>" to stdout).
``np2_screen``   NetPIPE 2.4 ``NTtcp -P`` transmitter console (the Linux method of the 2002-2003
    reviews): ``"%3d: %9d bytes %4d times --> "`` then ``" %6.2lf Mbps in %lf sec"``, optionally
    followed (HAVE_GETRUSAGE builds) by ``", avg utime=%lf avg stime=%lf, min utime=%lf
    stime=%lf, utime var=%lf stime var=%lf"``; before the loop ``"Latency: %lf"`` and ``"Now
    starting main loop"``, and with ``-b`` ``"Send and Recv Buffers are %d bytes"``. Source:
    NetPIPE 2.4 ``netpipe.c`` as shipped in the Linux Test Project
    (linux-test-project/ltp, tools/netpipe-2.4/netpipe.c, rcsid "netpipe.c,v 1.2 2003/03/14").
    ``tools/netpipe-2.4/TCP.c`` adds "Send and Receive Buffers [on accepted socket] set to
    %d bytes" on stdout and the "NetPIPE: ..." error lines. Real 2.4 output quoted on
    linux-kernel (2002-11-23, "Intel GbE performance on E7500") has exactly this layout. No
    capture of it exists here: the tests use input written from these printf formats and
    say so.
``np2_outfile``  NetPIPE 2.4 ``-o`` file: ``"%lf %lf %d %d %lf"`` = seconds, Mbps, bits, bytes,
    variance, plus ``" %lf %lf %lf %lf"`` (user/system time and their variances) in
    HAVE_GETRUSAGE builds (same source file). Note the column order differs from 3.x.

Units: netPIPE's "Mbps" is bits / (t * 1024 * 1024) in both versions (``bwdata[n].bps`` in the
sources above), i.e. 2^20 bit/s; it is converted once, here, with ``MBIT_BINARY``. The time a
line shows is the one-way time of ONE message (round trip / 2, best of several trials), not
the time spent on that block size, so a run's wall-clock duration cannot be derived from the
output: ``duration_s`` is always None and the per-message times are kept in
``extra["message_time_s"]``.

Only the transmitter prints results. The receiver's console and netPIPE's error outputs hold
no data: :func:`parse` raises :class:`ParseError` for them, and :func:`error_text` returns
netPIPE's own error line so a trial can report what the tool said. A sweep cut short by an
error or a half-written last line is also refused: a truncated curve is not a measurement.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field

from nicbench.config.fields import Int, Size, Strict
from nicbench.errors import ParseError, UsageError
from nicbench.tools.base import MBIT_BINARY, ParsedRun, Point
from nicbench.tools.driver import Driver, Endpoints, Plan, Shape, Tool, VersionProbe, size_arg
from nicbench.tools.params import VarRef

NAME = "netpipe"

_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"

# 3.x: "%3d: %7d bytes %6d times -->  %8.2lf Mbps in %10.2lf usec"
_NP3_LINE = re.compile(
    rf"^\s*(?P<n>\d+):\s+(?P<bytes>\d+) bytes\s+(?P<times>\d+) times -->\s+"
    rf"(?P<mbps>{_NUM}) Mbps in\s+(?P<t>{_NUM}) usec\s*$")
# 2.4: "%3d: %9d bytes %4d times -->  %6.2lf Mbps in %lf sec[, avg utime=...]"
_NP2_LINE = re.compile(
    rf"^\s*(?P<n>\d+):\s+(?P<bytes>\d+) bytes\s+(?P<times>\d+) times -->\s+"
    rf"(?P<mbps>{_NUM}) Mbps in\s+(?P<t>{_NUM}) sec(?P<rusage>, avg utime=.*)?\s*$")
# The first half of a data line: printed (and flushed) before the block is measured, so a
# killed transmitter leaves exactly this behind.
_LINE_START = re.compile(r"^\s*\d+:\s+\d+ bytes\s+\d+ times -->")

# Lines that are netPIPE reporting a failure (3.7.2 binary strings; 2.4 netpipe.c/TCP.c).
_ERROR_LINE = re.compile(
    r"^(?:NetPIPE: .*"
    r"|Client: Cannot Connect!.*"
    r"|Server: Accept Failed!.*"
    r"|setsockopt: .* failed!.*"
    r"|Integrity check failed.*"
    r"|Can't open .* for output"
    r"|Couldn't allocate memory"
    r"|Start MUST be LESS than end"
    r"|Need a starting value >= 1"
    r"|Error: either -t or -r must be specified"
    r"|Error: -t must be specified before -h"
    r"|unknown protocol!)\s*$")

_LATENCY = re.compile(rf"^Latency:\s+(?P<s>{_NUM})\s*$")
_BUFFERS3 = re.compile(r"^Send and receive buffers are (\d+) and (\d+) bytes")
_BUFFERS2 = re.compile(r"^Send and Recv Buffers are (\d+) bytes")
# 2.4 TCP.c, on stdout: "Send and Receive Buffers set to %d bytes" (transmitter) and
# "Send and Receive Buffers on accepted socket set to %d bytes" (receiver).
_BUFFERS2_SET = re.compile(r"^Send and Receive Buffers (?:on accepted socket )?set to (\d+) bytes")


def _is_buffer_line(line: str) -> bool:
    """A socket-buffer line, which either end prints before the sweep starts."""
    return any(r.match(line) for r in (_BUFFERS3, _BUFFERS2, _BUFFERS2_SET))


_OUTFILE_NAME = re.compile(r"^Sending output to (.+?)\s*$")
_NUMBER = re.compile(rf"^{_NUM}$")
_INT = re.compile(r"^\d+$")

_SCREEN_EXAMPLE = "'  0:       1 bytes  11750 times -->      0.76 Mbps in      10.08 usec'"


def looks_like(text: str) -> bool:
    """True when ``text`` is netPIPE output of any kind this module knows, data or error."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return False
    if any(_NP3_LINE.match(ln) or _NP2_LINE.match(ln) or _LINE_START.match(ln)
           for ln in lines):
        return True
    if any(_is_buffer_line(ln) or ln.startswith("NetPIPE: ")
           or ln in ("Now starting the main loop", "Now starting main loop")
           for ln in lines):
        return True
    return _outfile_kind(lines[0].split()) is not None and all(
        _outfile_kind(ln.split()) == _outfile_kind(lines[0].split()) for ln in lines)


def error_text(text: str) -> str | None:
    """netPIPE's own error line in ``text`` (the first one), or None if there is none.

    ``"NetPIPE: Synchronization string incorrect! |aaaaaa|"`` is what 3.x prints when the
    two ends were given different options; perror() tails such as ``": Connection reset by
    peer"`` are kept.
    """
    for line in text.splitlines():
        if _ERROR_LINE.match(line.strip()):
            return line.strip()
    return None


def parse(text: str) -> ParsedRun:
    """Parse a netPIPE -o file or transmitter console into one Point per block size.

    ``throughput_bps`` is the peak over the points; protocol is always "tcp" (NPtcp/NTtcp).
    Raises ParseError (naming the line) for receiver output, netPIPE errors, truncated
    sweeps and anything that is not netPIPE.
    """
    lines = text.splitlines()
    if not any(ln.strip() for ln in lines):
        raise ParseError(NAME, "netPIPE output (an -o file or the transmitter's console)",
                         "empty input")
    first = next(i for i, ln in enumerate(lines) if ln.strip())
    if _outfile_kind(lines[first].split()) is not None:
        return _parse_outfile(lines)
    return _parse_screen(lines)


def _outfile_kind(fields: list[str]) -> str | None:
    if len(fields) == 3 and _INT.match(fields[0]) and all(_NUMBER.match(f) for f in fields[1:]):
        return "np3_outfile"
    if (len(fields) in (5, 9) and _INT.match(fields[2]) and _INT.match(fields[3])
            and all(_NUMBER.match(f) for f in fields)):
        return "np2_outfile"
    return None


def _parse_outfile(lines: list[str]) -> ParsedRun:
    kind: str | None = None
    points: list[Point] = []
    times: list[float] = []
    for lineno, line in enumerate(lines, start=1):
        fields = line.split()
        if not fields:
            continue
        this = _outfile_kind(fields)
        if kind is None:
            kind = this
        if this is None or this != kind:
            want = ("'bytes Mbps seconds' (NetPIPE 3.x -o file)" if kind == "np3_outfile"
                    else "'seconds Mbps bits bytes variance' (NetPIPE 2.4 -o file)")
            raise ParseError(NAME, f"a line of {want}", f"line {lineno}: {line.strip()!r}")
        if kind == "np3_outfile":
            size, mbps, seconds = int(fields[0]), float(fields[1]), float(fields[2])
        else:
            seconds, mbps, bits, size = (float(fields[0]), float(fields[1]),
                                         int(fields[2]), int(fields[3]))
            # bits and bytes are both printed; if they disagree this is not a 2.4 file.
            if bits != 8 * size:
                raise ParseError(NAME, "bits = 8 x bytes in a NetPIPE 2.4 -o line",
                                 f"line {lineno}: {line.strip()!r}")
        points.append(Point(size_bytes=size, throughput_bps=mbps * MBIT_BINARY))
        times.append(seconds)
    assert kind is not None  # parse() only calls this when the first line matched
    return _run(points, times, {"format": kind})


def _parse_screen(lines: list[str]) -> ParsedRun:
    points: list[Point] = []
    times: list[float] = []
    repeats: list[int] = []
    extra: dict = {}
    kind: str | None = None
    for lineno, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            continue
        m3, m2 = _NP3_LINE.match(line), _NP2_LINE.match(line)
        if m3 or m2:
            this = "np3_screen" if m3 else "np2_screen"
            if kind is not None and this != kind:
                raise ParseError(NAME, f"every data line in the same layout as the first "
                                 f"({kind})", f"line {lineno}: {line!r}")
            kind = this
            m = m3 or m2
            assert m is not None
            seconds = float(m["t"]) * (1e-6 if m3 else 1.0)
            points.append(Point(size_bytes=int(m["bytes"]),
                                throughput_bps=float(m["mbps"]) * MBIT_BINARY))
            times.append(seconds)
            repeats.append(int(m["times"]))
            continue
        if _ERROR_LINE.match(line):
            got = f" after {len(points)} block sizes" if points else ""
            raise ParseError(NAME, f"netPIPE data lines like {_SCREEN_EXAMPLE}; netPIPE "
                             f"reported an error{got}: {line}", f"line {lineno}")
        if _LINE_START.match(line):
            raise ParseError(NAME, "a complete data line ('... Mbps in ... usec|sec'); the "
                             "sweep was cut off mid-measurement", f"line {lineno}: {line!r}")
        if points:
            # Once the sweep has started netPIPE prints nothing but data lines.
            raise ParseError(NAME, f"a netPIPE data line like {_SCREEN_EXAMPLE}",
                             f"line {lineno}: {line!r}")
        _preamble(line, extra)
    if not points:
        hint = ""
        if any(_is_buffer_line(ln.strip()) for ln in lines):
            hint = " (this looks like the receiver's console: only the transmitter prints results)"
        raise ParseError(NAME, f"netPIPE data lines like {_SCREEN_EXAMPLE}{hint}",
                         f"end of input after line {len(lines)}, no data line")
    assert kind is not None
    extra["format"] = kind
    extra["repeats"] = repeats
    return _run(points, times, extra)


def _preamble(line: str, extra: dict) -> None:
    """Keep what the lines before the sweep say; ignore the rest (it varies by option)."""
    if m := _BUFFERS3.match(line):
        extra["send_buffer_bytes"] = int(m[1])
        extra["receive_buffer_bytes"] = int(m[2])
    elif m := _BUFFERS2.match(line):
        extra["send_buffer_bytes"] = extra["receive_buffer_bytes"] = int(m[1])
    elif m := _LATENCY.match(line):
        extra["latency_s"] = float(m["s"])
    elif m := _OUTFILE_NAME.match(line):
        extra["outfile"] = m[1]


def _run(points: list[Point], times: list[float], extra: dict) -> ParsedRun:
    extra = dict(extra)
    extra["message_time_s"] = times
    extra["mbps_unit_bit_per_s"] = MBIT_BINARY
    return ParsedRun(
        tool=NAME,
        protocol="tcp",
        throughput_bps=max(p.throughput_bps for p in points),
        points=tuple(points),
        streams=1,  # netPIPE measures over a single TCP connection
        duration_s=None,
        extra=extra,
    )


# -- parameters, driver and the tool -------------------------------------------------
class NetpipeParams(Strict):
    buffer: Size | VarRef | None = None       # -b (the reviews: 65535)
    upper: Size | None = None                 # -u, largest block
    lower: Size | None = None                 # -l, smallest block
    perturbation: Int | None = Field(None, ge=0, le=1024)  # -p
    repeats: Int | None = Field(None, ge=1, le=100000)    # -n: fixed repeats per size
    port: Int = Field(5002, ge=1024, le=65535)


class NetpipeDriver(Driver):
    """NPtcp 3.x: the receiver has no -h; the transmitter writes the curve to -o."""

    params = NetpipeParams

    def plan(self, exe_server: str, exe_client: str, raw_params: dict[str, Any],
             ends: Endpoints, tag: str) -> Plan:
        p = self.parse_params(raw_params)
        opts = ["-P", str(p.port)]
        if p.buffer is not None:
            opts += ["-b", size_arg(p.buffer)]
        if p.upper is not None:
            opts += ["-u", size_arg(p.upper)]
        if p.lower is not None:
            opts += ["-l", size_arg(p.lower)]
        if p.perturbation is not None:
            opts += ["-p", str(p.perturbation)]
        if p.repeats is not None:
            opts += ["-n", str(p.repeats)]
        if ends.client_file is None:
            raise UsageError("netPIPE writes its curve to a file on the sender: the trial "
                             "must name one (Endpoints.client_file)")
        outfile = ends.client_file
        return Plan(server=[exe_server, *opts],
                    client=[exe_client, "-h", ends.receiver_addr, *opts, "-o", outfile],
                    port=p.port, listen_protocol="tcp", server_exits=True, expected_s=None,
                    client_outfile=outfile)

    def interpret(self, client_text: str, server_text: str, outfile_text: str | None,
                  protocol: str) -> ParsedRun:
        for text in (client_text, server_text):
            err = error_text(text)
            if err:
                return ParsedRun(tool="netpipe", protocol="tcp", throughput_bps=None, error=err)
        return parse(outfile_text or client_text)


# The bound's allowance for netPIPE's timing (results.plausible.above_bound): each line's time
# is one message's one-way time, a round trip halved, the best of TRIALS (3) timed trials
# of nrepeat round trips each, nrepeat chosen so that a trial lasts about RUNTM = 0.25 s
# (NetPIPE 3.x netpipe.c): the clock is read once at each end of a trial, microseconds
# apart at worst, and the best of three picks the quickest wakeups. 10 us over a trial's
# TRIAL_S: 0.004 %, far below the lab's token-bucket bursts.
TIMING_ERROR_S = 1e-5
# Its console prints "Mbps" (2^20 bit/s) as %8.2lf / %6.2lf: 0.01 of that unit; its output
# files print %lf (the figure in full).
CONSOLE_FORMATS = ("np3_screen", "np2_screen")
TRIAL_S = 0.25

TOOL = Tool(
    timing_error_s=TIMING_ERROR_S,
    printed_resolution_bps=lambda v, fmt: 0.01 * MBIT_BINARY if fmt in CONSOLE_FORMATS
    else 0.0,
    name=NAME, display="netPIPE", params=NetpipeParams, driver=NetpipeDriver(),
    parse=parse, looks_like=looks_like,
    executables={'linux': 'NPtcp'},
    version=VersionProbe(package="netpipe-tcp"),
    result=Shape.CURVE, detect_priority=30,
    units="'Mbps' = 2^20 bit/s (NetPIPE's own unit: 1 Mbps = 1.048576 Mbit/s)")
