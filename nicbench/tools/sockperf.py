"""sockperf (Mellanox/NVIDIA): request/response latency, ping-pong mode; pure parser.

Turns what a ``sockperf ping-pong`` client printed (or its ``--full-log`` file) into a
:class:`ParsedRun` whose ``latency`` holds the round-trip times; it runs nothing. There is
no throughput: ``throughput_bps`` is always None.

Format, and where it comes from
-------------------------------
Read off the real Debian 12 binary (package ``sockperf 3.7-1``, ``sockperf, version
3.7-no.git``), tests/golden/captures/sockperf_lab_*. The client prints, after its run::

    sockperf: [Total Run] RunTime=2.008 sec; Warm up time=400 msec; SentMessages=...
    sockperf: ========= Printing statistics for Server No: 0
    sockperf: [Valid Duration] RunTime=1.548 sec; SentMessages=15290; ReceivedMessages=15290
    sockperf: ====> avg-rtt=101.211 (std-dev=931.024)
    sockperf: # dropped messages = 0; # duplicated messages = 0; # out-of-order messages = 0
    sockperf: Total 15290 observations; each percentile contains 152.90 observations
    sockperf: ---> <MAX> observation = 20924.719
    sockperf: ---> percentile 99.999 = 20924.719
    ...       (99.990, 99.900, 99.000, 90.000, 75.000, 50.000, 25.000)
    sockperf: ---> <MIN> observation =   14.130

with ANSI colour escapes around some parts even when writing to a file (removed here).
The console does not name the message size; ``-d`` (which the driver passes) prints its
settings first (``msg_size = 64``, ``mps = ...``, ``sec_test_duration = ...``), so the
raw output says what was measured; that is where ``message_bytes`` comes from.

**Round trip or half of it.** sockperf 3.7 reports *half* the round trip by default
("avg-latency=", "Summary: Latency is"): each sample is (receive time - send time) / 2.
With ``--full-rtt`` it reports the whole round trip ("avg-rtt=", "Summary: Round trip
is"). The driver always passes ``--full-rtt``; this parser stores round-trip times in
both cases (a half-RTT output's figures are doubled, exactly, and
``extra["sockperf_reported"]`` says which it was). Every time is in microseconds.

The percentiles are sockperf's own, over the messages of its "Valid Duration" (it drops
the warm-up and the last messages), counted in "Total N observations" (``samples``);
``p999_us`` is its "percentile 99.900", ``max_us`` / ``min_us`` its <MAX> / <MIN>,
``mean_us`` its avg. ``duration_s`` is the [Total Run] RunTime (the ``-t`` it was given).

``--full-log FILE`` writes the same summary and then one line per message of the valid
duration, ``packet, txTime(sec), rxTime(sec), rtt(usec)``: :func:`round_trips_us` reads
that column (a CDF is drawn from it) and :func:`parse` checks there are as many as
observed.

Errors (sockperf 3.7 exits 0 for both): no server on a UDP port gives "No messages were
received from the server. Is the server down?"; no server on a TCP port gives
"ERROR: Can`t connect socket (errno=111 Connection refused)". Both become ``error``.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from pydantic import Field, model_validator

from nicbench.config.fields import Int, Size, Strict
from nicbench.errors import ParseError
from nicbench.tools.base import Latency, ParsedRun
from nicbench.tools.driver import Driver, Endpoints, Plan, Shape, Tool, VersionProbe
from nicbench.tools.params import VarRef

NAME = "sockperf"

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_NUM = r"\d+(?:\.\d+)?"
_VERSION = re.compile(r"== version #(?P<v>\d+(?:\.\d+)+)")
_TARGET = re.compile(r"^\[\s*\d+\] IP = \S+\s+PORT =\s*\d+ # (?P<proto>UDP|TCP)$")
_TOTAL_RUN = re.compile(rf"\[Total Run\] RunTime=(?P<t>{_NUM}) sec")
_VALID = re.compile(rf"\[Valid Duration\] RunTime=(?P<t>{_NUM}) sec; "
                    r"SentMessages=(?P<sent>\d+); ReceivedMessages=(?P<recv>\d+)")
_AVG = re.compile(rf"====> avg-(?P<kind>rtt|latency)=(?P<avg>{_NUM}) \(std-dev=(?P<sd>{_NUM})\)")
_LOSS = re.compile(r"# dropped messages = (?P<dropped>\d+); # duplicated messages = "
                   r"(?P<dup>\d+); # out-of-order messages = (?P<ooo>\d+)")
_OBSERVED = re.compile(r"Total (?P<n>\d+) observations")
_PERCENTILE = re.compile(rf"---> percentile (?P<p>{_NUM}) =\s*(?P<v>{_NUM})$")
_EXTREME = re.compile(rf"---> <(?P<which>MAX|MIN)> observation =\s*(?P<v>{_NUM})$")
_SERVER_NO = re.compile(r"Printing statistics for Server No: (?P<n>\d+)")
_PARAMS = re.compile(r"^test was performed using the following parameters: (?P<p>.*)$")
_MSG_SIZE = re.compile(r"--msg-size=(?P<m>\d+)")
_CONNECTING = re.compile(r"^\[fd=\d+\] Connecting to: ")   # -d, TCP only
_INFO_SIZE = re.compile(r"^msg_size = (?P<m>\d+)$")        # -d's +INFO block
_ERRORS = (re.compile(r"ERROR: (?P<e>.+)$"),
           re.compile(r"(?P<e>No messages were received from the server\..*)$"))
_LOG_HEADER = re.compile(r"^packet, txTime\(sec\), rxTime\(sec\), rtt\(usec\)$")
_LOG_ROW = re.compile(rf"^\d+, {_NUM}, {_NUM}, (?P<rtt>{_NUM})$")

# sockperf's percentile lines nicbench keeps as Latency fields (the rest go to extra).
_FIELDS = {"50.000": "p50_us", "90.000": "p90_us", "99.000": "p99_us", "99.900": "p999_us"}


def looks_like(text: str) -> bool:
    """True when ``text`` is sockperf's console or full log (its banner or summary)."""
    clean = _ANSI.sub("", text)
    return bool(_VERSION.search(clean) or _OBSERVED.search(clean)) and "sockperf" in clean


def _lines(text: str) -> list[str]:
    """Lines without colour escapes and without sockperf's ``sockperf: `` prefix."""
    return [_ANSI.sub("", ln).strip().removeprefix("sockperf: ").strip()
            for ln in text.splitlines()]


def parse(text: str) -> ParsedRun:
    """Parse a sockperf ping-pong client's output (run with ``-d``, whose +INFO block
    names the message size) or its --full-log file into round-trip times. Raises
    ParseError naming what is missing."""
    lines = _lines(text)
    if not any(lines):
        raise ParseError(NAME, "sockperf ping-pong output", "empty input")
    version = m["v"] if (m := _VERSION.search("\n".join(lines))) else None
    protocol = next((t["proto"].lower() for ln in lines if (t := _TARGET.match(ln))), None)
    if protocol is None and any(_CONNECTING.match(ln) for ln in lines):
        protocol = "tcp"      # a TCP client that could not connect names no target
    for ln in lines:
        for pattern in _ERRORS:
            if e := pattern.search(ln):
                return ParsedRun(tool=NAME, protocol=protocol or "udp", throughput_bps=None,
                                 version=version, error=e["e"].strip())
    servers = {s["n"] for ln in lines if (s := _SERVER_NO.search(ln))}
    if len(servers) > 1:
        raise ParseError(NAME, "the statistics of one server", f"{len(servers)} servers")
    found: dict[str, Any] = {}
    for ln in lines:
        _read_line(ln, found)
    missing = [w for w in ("observations", "avg", "p50_us", "p90_us", "p99_us", "p999_us",
                           "max_us", "min_us") if w not in found]
    if missing:
        raise ParseError(NAME, "sockperf's summary (avg-rtt, 'Total N observations', "
                         "percentiles 50/90/99/99.9, <MAX>, <MIN>)",
                         f"no {', '.join(missing)} in {len(lines)} lines")
    size = found.get("msg_size")
    if size is None:
        raise ParseError(NAME, "the message size: '-d' prints 'msg_size = N', a full log "
                         "'--msg-size=N' (nicbench runs sockperf with -d)",
                         "neither in the output")
    half = found["kind"] == "latency"
    k = 2.0 if half else 1.0      # half a round trip -> a round trip, exactly
    latency = Latency(samples=found["observations"], message_bytes=size,
                      p50_us=k * found["p50_us"], p90_us=k * found["p90_us"],
                      p99_us=k * found["p99_us"], p999_us=k * found["p999_us"],
                      max_us=k * found["max_us"], min_us=k * found["min_us"],
                      mean_us=k * found["avg"])
    logged = _log_rows(lines)
    if logged is not None and len(logged) != latency.samples:
        raise ParseError(NAME, f"{latency.samples} per-message lines in the full log",
                         f"{len(logged)} lines")
    extra: dict[str, Any] = {
        "sockperf_reported": "half-rtt" if half else "rtt",
        "stdev_us": k * found["sd"],
        **{f"p{p.replace('.', '_').rstrip('0').rstrip('_')}_us": k * v
           for p, v in found["other"].items()},
        **{key: found[key] for key in ("valid_duration_s", "sent", "received", "dropped",
                                       "duplicated", "out_of_order") if key in found}}
    return ParsedRun(tool=NAME, protocol=protocol or "udp", throughput_bps=None,
                     version=version, duration_s=found.get("duration_s"), streams=1,
                     latency=latency, extra=extra)


def _read_line(ln: str, found: dict[str, Any]) -> None:
    """One summary line's figures into ``found``."""
    found.setdefault("other", {})
    if m := _PERCENTILE.search(ln):
        field = _FIELDS.get(m["p"])
        if field is not None:
            found[field] = float(m["v"])
        else:
            found["other"][m["p"]] = float(m["v"])
    elif m := _EXTREME.search(ln):
        found[f"{m['which'].lower()}_us"] = float(m["v"])
    elif m := _AVG.search(ln):
        found.update(kind=m["kind"], avg=float(m["avg"]), sd=float(m["sd"]))
    elif m := _OBSERVED.search(ln):
        found["observations"] = int(m["n"])
    elif m := _VALID.search(ln):
        found.update(valid_duration_s=float(m["t"]), sent=int(m["sent"]),
                     received=int(m["recv"]))
    elif m := _TOTAL_RUN.search(ln):
        found["duration_s"] = float(m["t"])
    elif m := _LOSS.search(ln):
        found.update(dropped=int(m["dropped"]), duplicated=int(m["dup"]),
                     out_of_order=int(m["ooo"]))
    elif (m := _PARAMS.match(ln)) and (s := _MSG_SIZE.search(m["p"])):
        found["msg_size"] = int(s["m"])
    elif m := _INFO_SIZE.match(ln):
        found["msg_size"] = int(m["m"])


def _log_rows(lines: list[str]) -> list[float] | None:
    """The rtt column of a --full-log file (None if ``lines`` are not one)."""
    try:
        start = next(i for i, ln in enumerate(lines) if _LOG_HEADER.match(ln))
    except StopIteration:
        return None
    rows: list[float] = []
    for lineno, ln in enumerate(lines[start + 1:], start=start + 2):
        if not ln or set(ln) == {"-"}:
            continue
        m = _LOG_ROW.match(ln)
        if m is None:
            raise ParseError(NAME, "'packet, txTime, rxTime, rtt' rows after the header",
                             f"line {lineno}: {ln[:80]!r}")
        rows.append(float(m["rtt"]))
    return rows


def round_trips_us(text: str) -> list[float]:
    """Every round trip of a --full-rtt --full-log file, in microseconds, in send order
    (what a CDF of one run is drawn from). ParseError if the text is not such a file."""
    lines = _lines(text)
    if not any(_AVG.search(ln) and "avg-rtt" in ln for ln in lines):
        raise ParseError(NAME, "a full log written with --full-rtt (avg-rtt=)",
                         "no avg-rtt line")
    rows = _log_rows(lines)
    if rows is None:
        raise ParseError(NAME, "a --full-log file ('packet, txTime(sec), rxTime(sec), "
                         "rtt(usec)' then one row per message)", "no such header")
    return rows


# -- parameters, driver and the tool -------------------------------------------------
# --full-log writes ~40 bytes per message: at most this many keep the file well under
# nicbench's 8 MB cap on a tool's output (limits.MAX_OUTPUT_BYTES).
MAX_LOGGED_MESSAGES = 150_000
# What a ping-pong client takes beyond its -t, measured on the lab with sockperf 3.7
# (-t 1: 3.27 s, -t 2: 4.29 s, -t 3: 5.32 s): its warm-up (0.4 s) and ~1.9 s of start and
# end of its own.
OVERHEAD_S = 2.3


class SockperfParams(Strict):
    # --plan's estimate: a trial takes duration_s plus this (not a parameter)
    fixed_overhead_s: ClassVar[float] = OVERHEAD_S
    duration_s: Int = Field(5, ge=1, le=3600)             # -t (whole seconds)
    message: Size | VarRef = 64                           # -m, bytes (sockperf: 14 ... 65507)
    # --mps: messages per second; None sends the next as soon as the reply came (max)
    mps: Int | None = Field(None, ge=1, le=1_000_000)
    # --full-log: every round trip kept (raw/...-outfile), for the CDF; needs a bounded
    # count, so mps x duration_s <= MAX_LOGGED_MESSAGES
    per_sample: bool = False
    port: Int = Field(11111, ge=1024, le=65535)

    @model_validator(mode="after")
    def _bounded(self) -> SockperfParams:
        if isinstance(self.message, int) and not 14 <= self.message <= 65507:
            raise ValueError(f"message {self.message} bytes: sockperf -m takes 14 ... 65507")
        if self.per_sample:
            if self.mps is None:
                raise ValueError("per_sample keeps every round trip: give mps (messages "
                                 "per second) so that their count is bounded")
            if self.mps * self.duration_s > MAX_LOGGED_MESSAGES:
                raise ValueError(f"per_sample with mps {self.mps} for {self.duration_s} s "
                                 f"logs {self.mps * self.duration_s:,} round trips; at most "
                                 f"{MAX_LOGGED_MESSAGES:,} (lower mps or duration_s)")
        return self


class SockperfDriver(Driver):
    params = SockperfParams

    def plan(self, exe_server: str, exe_client: str, raw_params: dict[str, Any],
             ends: Endpoints, tag: str) -> Plan:
        p = self.parse_params(raw_params)
        tcp = ["--tcp"] if ends.protocol == "tcp" else []
        client = [exe_client, "ping-pong", *tcp, "-i", ends.receiver_addr, "-p", str(p.port),
                  "--client_ip", ends.sender_addr, "-m", str(int(p.message)),
                  "-t", str(p.duration_s), "--full-rtt", "-d"]
        if p.mps is not None:
            client += ["--mps", str(p.mps)]
        outfile = None
        if p.per_sample:
            if ends.client_file is None:
                raise ValueError("sockperf per_sample needs a file on the sender "
                                 "(Endpoints.client_file)")
            outfile = ends.client_file
            client += ["--full-log", outfile]
        return Plan(server=[exe_server, "server", *tcp, "-i", ends.receiver_addr,
                            "-p", str(p.port)],
                    client=client, port=p.port, listen_protocol=ends.protocol,
                    server_exits=False, expected_s=p.duration_s + OVERHEAD_S,
                    client_outfile=outfile, stop_signal="INT")

    def interpret(self, client_text: str, server_text: str, outfile_text: str | None,
                  protocol: str) -> ParsedRun:
        # The full log holds the same summary, the message size and every round trip;
        # the console's error lines come first (a failed run writes no log).
        run = parse(client_text)
        if run.error is None and outfile_text:
            logged = parse(outfile_text)
            if logged.latency != run.latency:
                raise ParseError(NAME, "the full log's summary equal to the console's",
                                 f"{logged.latency} != {run.latency}")
        return run


# The bound's allowance for sockperf's timing (results.plausible.above_bound): a latency
# tool, its figure is a round trip, bounded below by the wire (theory.round_trip_floor_us)
# to its printed resolution (0.001 us); no rate to hold against a limit.
TIMING_ERROR_S = 0.0
PRINTED_US = 0.001       # it prints round trips as %.3lf usec

TOOL = Tool(
    timing_error_s=TIMING_ERROR_S,
    round_trip_resolution_us=PRINTED_US,
    per_sample_hint="per_sample: true keeps it",
    name=NAME, display="sockperf", params=SockperfParams, driver=SockperfDriver(),
    parse=parse, looks_like=looks_like,
    executables={"linux": "sockperf"},
    version=VersionProbe(args=("--version",), regex=r"version (\d+\.\d+(?:\.\d+)?)"),
    result=Shape.LATENCY, detect_priority=30,
    units="round-trip times in microseconds (sockperf --full-rtt)",
    notes=("ping-pong: one message in flight; a round trip is send to reply received",))
