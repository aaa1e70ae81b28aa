"""Turn what iperf 2 printed into a :class:`ParsedRun`: a pure function of the text.

Responsible for every iperf 2 layout the harness meets, recognised from the text itself:

* text output (legacy 2.0.5 layout and the 2.1.x layout) and enhanced output (``-e``);
* CSV (``-y C``): the 2.1.x layout (9 columns for TCP, 14 for UDP, no SUM rows, no UDP
  server report) and the 2.0.x layout (a UDP client prints its own 9-column row followed by
  the server report as a 14-column row);
* client and server side, TCP and UDP, one or several streams (``-P``), with or without
  interval rows (``-i``) and with or without ``[SUM]`` rows;
* iperf's own error lines (``tcp connect failed: Connection refused``): iperf 2.1.8 exits 0
  there, so the error is returned in ``ParsedRun.error`` for the caller to judge, not raised;
* a bounce-back client (``--bounceback``, params ``bounceback: true``): its round trips in
  ``ParsedRun.latency``, read by ``bounceback.py`` (which says how each figure is obtained).

Which rate is ``throughput_bps``: the rate that reached the receiver when the output shows
it (server-side output; the UDP "Server Report" a client prints), else the sender's rate.
``extra["rate_from"]`` says which one it is ("receiver", "sender", or "unknown" for TCP CSV,
whose rows do not say which end printed them). ``sent_bps`` is set only when a row is
known to be the sender's. Output this module cannot read raises :class:`ParseError` naming
what was expected and the line where reading stopped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any
from collections.abc import Iterable

from pydantic import Field, model_validator

from nicbench.config.fields import Float, Int, Rate, Size, Strict
from nicbench.errors import ConfigError, ParseError
from nicbench.tools import bounceback
from nicbench.tools.scan import Line, Rule, Scanner
from nicbench.tools.base import (IPERF_NUM, three_digits, ParsedRun, UdpStats, iperf_bytes, iperf_row_rate,
                                 iperf_row_re)
from nicbench.tools.driver import (Driver, Endpoints, Plan, Shape, Tool, VersionProbe,
                                   per_stream_rate, size_arg)
from nicbench.tools.params import VarRef

NAME = "iperf2"

_NUM = IPERF_NUM

# "[  1] 0.0000-1.0000 sec  1.81 GBytes  15.5 Gbits/sec<rest>" (2.1.x) and
# "[  3]  0.0- 1.0 sec   112 MBytes   943 Mbits/sec<rest>" (2.0.x pads with spaces).
_ROW = iperf_row_re(r"\d+|SUM(?:-\d+)?")
# UDP receiver columns: "0.000 ms 17042/433721 (3.9%)"; 2.0.x writes "0/  852".
_UDP_REST = re.compile(
    rf"^\s*(?P<jitter>-?{_NUM})\s+ms\s+(?P<lost>-?\d+)\s*/\s*(?P<total>-?\d+)")
# Enhanced TCP client columns: "21943/0          7     1662K/1898(3637) us" = Write/Err Rtry.
# The lookahead keeps the UDP client's "217781/0   217782 pps" from reading as retries.
_TCP_ENH_REST = re.compile(r"^\s*(?P<writes>\d+)/(?P<errs>\d+)\s+(?P<retry>\d+)(?=\s|$)(?!\s*pps)")

_CLIENT_HDR = re.compile(r"^Client connecting to (?P<host>\S+?),? (?P<proto>TCP|UDP) port (?P<port>\d+)"
                         r"(?:.*\((?P<flows>\d+) flows\))?")
_SERVER_HDR = re.compile(r"^Server listening on (?P<proto>TCP|UDP) port (?P<port>\d+)")
_CONNECTED = re.compile(r"^\[\s*(?P<sid>\d+)\]\s+local\s+\S+\s+port\s+\d+\s+connected with\s+\S+"
                        r"\s+port\s+\d+(?P<rest>.*)$")
_PEER = re.compile(r"\(peer (?P<ver>[^)\s]+)\)")
_VERSION = re.compile(r"^iperf version (?P<ver>\S+)")
_SENT = re.compile(r"^\[\s*(?P<sid>\d+)\]\s+Sent (?P<n>\d+) datagrams")
_SERVER_REPORT = re.compile(r"^\[\s*\d+\]\s+Server Report:")
# iperf 2 reports system-call failures as "<what> failed: <strerror>" (warn_errno), e.g.
# "tcp connect failed: Connection refused", "read failed: Connection refused".
_ERROR = re.compile(r"^(?:(?P<proto>tcp|udp) )?[A-Za-z][\w ]*? failed: .+$|^ERROR\b.*$")
_WARNING = re.compile(r"^(?:\[\s*\d+\]\s+)?WARNING:?\s*(?P<msg>.+)$")
# What identifies iperf3 output, so that it is refused here rather than half-read.
_IPERF3_MARK = re.compile(r"^(?:- - - - -|iperf Done\.|Connecting to host |iperf3: |"
                          r"Server listening on \d+)")

# CSV: "20261122015127,127.0.0.1,48256,127.0.0.1,15003,1,0.0-1.0,2124415036,16995320288[,...]"
_CSV_TIMESTAMP = re.compile(r"^\d{14}(?:\.\d+)?,")
_CSV_INTERVAL = re.compile(rf"^(?P<start>-?{_NUM})-(?P<end>{_NUM})$")
_CSV_TCP_COLS = 9   # timestamp, src, sport, dst, dport, id, interval, bytes, bit/s
_CSV_UDP_COLS = 14  # ... + jitter ms, lost, total, loss %, out-of-order

_EPS = 1e-9


@dataclass
class _Row:
    """One result row, already in SI units. ``kind`` is whose view it is."""

    sid: str                 # stream id as printed, or "SUM"
    start: float
    end: float
    nbytes: float
    bps: float
    line: int
    kind: str = "unknown"    # "sender", "receiver" or "unknown"
    jitter_ms: float | None = None
    lost: int | None = None
    total: int | None = None
    retries: int | None = None


@dataclass
class _Agg:
    """The whole-run figures of one view (sender or receiver), summed over streams."""

    bps: float
    nbytes: float
    duration: float
    streams: int | None
    jitter_ms: float | None
    lost: int | None
    total: int | None
    retries: int | None


# ---------------------------------------------------------------------------- entry points

def looks_like(text: str) -> bool:
    """True when ``text`` is iperf 2 output this module reads (text, enhanced or CSV)."""
    return _sniff(text) is not None


def parse(text: str) -> ParsedRun:
    """Read one iperf 2 run (client or server side) from ``text``.

    Returns a ParsedRun; if iperf printed an error line and no result, ``error`` holds that
    line and ``throughput_bps`` is None. Raises ParseError for anything else it cannot read.
    """
    lines = text.splitlines()
    fmt = _sniff(text)
    if fmt is None:
        first = next(((i, ln) for i, ln in enumerate(lines, 1) if ln.strip()), None)
        if first is None:
            raise ParseError(NAME, "iperf 2 output (text, -e or -y C CSV)", "empty input")
        lineno, line = first
        mark = next(((i, ln) for i, ln in enumerate(lines, 1) if _IPERF3_MARK.match(ln)), None)
        if mark is not None:
            raise ParseError(NAME, "iperf 2 output, not iperf3",
                             f"line {mark[0]}: {mark[1].strip()[:60]!r} is iperf3's")
        raise ParseError(NAME, "an iperf 2 header ('Client connecting to', 'Server listening "
                         "on'), a result row '[ ID] 0.0-10.0 sec ... Bytes ... bits/sec' or a "
                         "-y C CSV row", f"line {lineno}: {line.strip()[:60]!r}")
    if fmt == "csv":
        return _parse_csv(lines)
    if bounceback.is_bounceback(lines):
        version = next((m["ver"] for ln in lines if (m := _VERSION.match(ln.strip()))), None)
        return bounceback.parse_bounceback(lines, version)
    return _parse_text(lines)


# ---------------------------------------------------------------------------- format sniffing

def _sniff(text: str) -> str | None:
    """'csv', 'text' or None. iperf3 text is refused: its rows would match ours."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        return None
    if any(_IPERF3_MARK.match(ln) for ln in lines):
        return None
    if any(_CSV_TIMESTAMP.match(ln) for ln in lines):
        return "csv"
    for ln in lines:
        if (_CLIENT_HDR.match(ln) or _SERVER_HDR.match(ln) or _ROW.match(ln.strip())
                or _VERSION.match(ln)):
            return "text"
    # A CSV run that failed before any row prints only the error line.
    if any(_ERROR.match(ln.strip()) for ln in lines):
        return "csv" if all(_ERROR.match(ln.strip()) or _WARNING.match(ln.strip())
                            for ln in lines) else "text"
    return None


# ---------------------------------------------------------------------------- text layout

@dataclass
class _TextRun:
    """What a text output says, line by line (the scanner's rules below)."""

    side: str | None = None
    protocol: str | None = None
    version: str | None = None
    flows: int | None = None
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    peer_versions: set[str] = field(default_factory=set)
    # Per session: a server that stayed up prints one block per client run; only the last
    # block is this run's (a new session starts when a connection follows result rows).
    rows: list[_Row] = field(default_factory=list)
    conn_ids: list[str] = field(default_factory=list)
    datagrams_sent: dict[str, int] = field(default_factory=dict)
    sessions: int = 0
    saw_server_report: bool = False

    def rules(self) -> list[Rule]:
        return [(_CLIENT_HDR, self.client), (_SERVER_HDR, self.server),
                (_VERSION, self.version_line), (_CONNECTED, self.connected),
                (_SENT, self.sent), (_SERVER_REPORT, self.server_report),
                (_ROW, self.row), (_ERROR, self.error), (_WARNING, self.warning)]

    def client(self, m: re.Match[str], line: Line) -> None:
        self.side, self.protocol = "client", m["proto"].lower()
        self.flows = int(m["flows"]) if m["flows"] else self.flows

    def server(self, m: re.Match[str], line: Line) -> None:
        self.side, self.protocol = "server", m["proto"].lower()

    def version_line(self, m: re.Match[str], line: Line) -> None:
        self.version = m["ver"]

    def connected(self, m: re.Match[str], line: Line) -> None:
        if self.rows or self.sessions == 0:
            self.sessions += 1
            self.rows, self.conn_ids, self.datagrams_sent = [], [], {}
        self.conn_ids.append(m["sid"])
        if p := _PEER.search(m["rest"]):
            self.peer_versions.add(p["ver"])

    def sent(self, m: re.Match[str], line: Line) -> None:
        self.datagrams_sent[m["sid"]] = int(m["n"])

    def server_report(self, m: re.Match[str], line: Line) -> None:
        self.saw_server_report = True

    def row(self, m: re.Match[str], line: Line) -> None:
        self.rows.append(_text_row(m, line.number, self.side))

    def error(self, m: re.Match[str], line: Line) -> None:
        self.errors.append(line.text)
        if self.protocol is None and m["proto"]:
            self.protocol = m["proto"]

    def warning(self, m: re.Match[str], line: Line) -> None:
        self.warnings.append(m["msg"].strip())


def _parse_text(lines: list[str]) -> ParsedRun:
    run = _TextRun()
    last_line = Scanner(run.rules()).scan(lines)
    rows, protocol = run.rows, run.protocol
    extra: dict[str, Any] = {"format": "text"}
    if protocol is None:
        protocol = "udp" if (run.datagrams_sent or run.saw_server_report
                             or any(r.lost is not None for r in rows)) else "tcp"
    if run.side:
        extra["side"] = run.side
    if len(run.peer_versions) == 1:
        extra["peer_version"] = next(iter(run.peer_versions))
    if run.sessions > 1:
        # The figures below are from the last of these (see _TextRun's sessions).
        extra["sessions"] = run.sessions
    if run.warnings:
        extra["warnings"] = run.warnings
    if run.datagrams_sent:
        extra["datagrams_sent"] = sum(run.datagrams_sent.values())

    error = run.errors[0] if run.errors else None
    if not rows:
        if error is not None:
            return ParsedRun(tool=NAME, protocol=protocol, throughput_bps=None,
                             version=run.version, error=error, extra=extra)
        raise ParseError(NAME, "a result row '[ ID] 0.0-10.0 sec ... Bytes ... bits/sec'",
                         f"line {last_line}: end of input")

    expected = (run.flows if run.flows and run.side == "client"
                else (len(set(run.conn_ids)) or None))
    return _build(rows, protocol, run.version, error, extra, expected)


def _text_row(m: re.Match[str], lineno: int, side: str | None) -> _Row:
    sid = "SUM" if m["sid"].startswith("SUM") else m["sid"]
    row = _Row(sid=sid, start=float(m["start"]), end=float(m["end"]),
               nbytes=iperf_bytes(float(m["xfer"]), m["xprefix"]), bps=iperf_row_rate(m),
               line=lineno)
    rest = m["rest"]
    if u := _UDP_REST.match(rest):
        # Jitter and loss are measured by the receiver only: in client output these rows
        # are the "Server Report"; in server output, the server's own rows.
        row.jitter_ms, row.lost, row.total = float(u["jitter"]), int(u["lost"]), int(u["total"])
        row.kind = "receiver"
    else:
        row.kind = {"client": "sender", "server": "receiver"}.get(side or "", "unknown")
        if t := _TCP_ENH_REST.match(rest):
            row.retries = int(t["retry"])
    return row


# ---------------------------------------------------------------------------- CSV layout

def _parse_csv(lines: list[str]) -> ParsedRun:
    parsed: list[tuple[list[str], int]] = []
    errors: list[str] = []
    warnings: list[str] = []

    def csv_row(m: re.Match[str], line: Line) -> None:
        cols = line.text.split(",")
        if len(cols) not in (_CSV_TCP_COLS, _CSV_UDP_COLS):
            raise ParseError(NAME, f"{_CSV_TCP_COLS} (TCP) or {_CSV_UDP_COLS} (UDP) CSV "
                             f"columns, found {len(cols)}", f"line {line.number}")
        parsed.append((cols, line.number))

    def other(line: Line) -> None:
        raise ParseError(NAME, "a -y C CSV row", f"line {line.number}: {line.text[:60]!r}")

    Scanner([(_CSV_TIMESTAMP, csv_row),
             (_ERROR, lambda m, line: errors.append(line.text)),
             (_WARNING, lambda m, line: warnings.append(m["msg"].strip()))],
            otherwise=other).scan(lines)

    extra: dict[str, Any] = {"format": "csv"}
    if warnings:
        extra["warnings"] = warnings
    error = errors[0] if errors else None
    if not parsed:
        m = _ERROR.match(error or "")
        protocol = (m["proto"] if m and m["proto"] else "tcp")
        return ParsedRun(tool=NAME, protocol=protocol, throughput_bps=None, error=error,
                         extra=extra)

    has_udp = any(len(c) == _CSV_UDP_COLS for c, _ in parsed)
    has_tcp_cols = any(len(c) == _CSV_TCP_COLS for c, _ in parsed)
    # Whose view is each row? The rows do not say; the mix of layouts does:
    #  - 2.1.x UDP client: its whole-run row reads total = -1 (it has no server report), and
    #    its interval rows count datagrams sent, so every UDP row there is the sender's;
    #  - 2.0.x UDP client: own rows have 9 columns, the server report has 14;
    #  - only 14-column rows with real totals: a UDP server;
    #  - only 9-column rows: TCP, client or server cannot be told apart.
    udp_client_21 = any(len(c) == _CSV_UDP_COLS and _int(c[11], ln) < 0 for c, ln in parsed)
    if not has_udp:
        kinds, side = {_CSV_TCP_COLS: "unknown"}, None
    elif udp_client_21:
        kinds, side = {_CSV_UDP_COLS: "sender", _CSV_TCP_COLS: "sender"}, "client"
    elif has_tcp_cols:
        kinds, side = {_CSV_TCP_COLS: "sender", _CSV_UDP_COLS: "receiver"}, "client"
    else:
        kinds, side = {_CSV_UDP_COLS: "receiver"}, "server"
    if side:
        extra["side"] = side

    rows = []
    for cols, lineno in parsed:
        iv = _CSV_INTERVAL.match(cols[6])
        if not iv:
            raise ParseError(NAME, "an interval 'start-end' in CSV column 7",
                             f"line {lineno}: {cols[6]!r}")
        sid_num = _int(cols[5], lineno)
        row = _Row(sid="SUM" if sid_num <= 0 else str(sid_num),  # 2.0.x SUM rows use id -1
                   start=float(iv["start"]), end=float(iv["end"]),
                   nbytes=float(_int(cols[7], lineno)), bps=float(_int(cols[8], lineno)),
                   line=lineno, kind=kinds[len(cols)])
        if len(cols) == _CSV_UDP_COLS and row.kind == "receiver":
            row.jitter_ms = _float(cols[9], lineno)
            row.lost, row.total = _int(cols[10], lineno), _int(cols[11], lineno)
        rows.append(row)

    return _build(rows, "udp" if has_udp else "tcp", None, error, extra, None)


def _int(value: str, lineno: int) -> int:
    try:
        return int(value)
    except ValueError:
        try:  # some builds print byte counts and rates as floats
            return int(float(value))
        except (ValueError, OverflowError):   # "nan", "inf"
            raise ParseError(NAME, "an integer CSV field", f"line {lineno}: {value!r}") from None


def _float(value: str, lineno: int) -> float:
    try:
        return float(value)
    except ValueError:
        raise ParseError(NAME, "a number in a CSV field", f"line {lineno}: {value!r}") from None


# ---------------------------------------------------------------------------- shared

def _whole_run_rows(rows: Iterable[_Row]) -> dict[str, _Row]:
    """Per stream id, the row covering the whole run (interval rows are ignored).

    That row starts at 0 and is the last such row of its stream. If some row of the stream
    starts at or after where that candidate ends, the candidate is only the first interval
    row and the whole-run row is missing: the output was cut short.
    """
    by_sid: dict[str, list[_Row]] = {}
    for r in rows:
        by_sid.setdefault(r.sid, []).append(r)
    finals: dict[str, _Row] = {}
    for sid, rs in by_sid.items():
        whole = [r for r in rs if abs(r.start) < _EPS]
        label = "[SUM]" if sid == "SUM" else f"stream {sid}"
        if not whole:
            raise ParseError(NAME, f"a whole-run row (starting at 0.0 s) for {label}",
                             f"line {rs[-1].line}: end of its rows")
        final = whole[-1]
        later = [r for r in rs if r.start > _EPS and r.start >= final.end - _EPS]
        if later:
            raise ParseError(NAME, f"a whole-run row for {label} after its interval rows "
                             f"(output cut short?)", f"line {later[-1].line}")
        finals[sid] = final
    return finals


def _aggregate(rows: list[_Row], expected_streams: int | None) -> _Agg:
    finals = _whole_run_rows(rows)
    total_row = finals.pop("SUM", None)
    streams = list(finals.values())
    if expected_streams and streams and len(streams) < expected_streams:
        missing = expected_streams - len(streams)
        raise ParseError(NAME, f"whole-run rows for {expected_streams} streams, "
                         f"found {len(streams)} ({missing} missing: output cut short?)",
                         f"line {max(r.line for r in rows)}")

    if total_row is not None:
        # iperf's own [SUM] is computed from exact byte counts: better than adding up rows
        # that were each rounded to three significant figures.
        bps, nbytes = total_row.bps, total_row.nbytes
        duration = total_row.end - total_row.start
    else:
        bps = sum(r.bps for r in streams)
        nbytes = sum(r.nbytes for r in streams)
        duration = max(r.end - r.start for r in streams)

    def pick(attr: str) -> list[Any]:
        vals = [getattr(r, attr) for r in streams]
        return vals if vals and all(v is not None for v in vals) else []

    def summed(attr: str) -> Any:
        vals = pick(attr)
        return sum(vals) if vals else None

    if total_row is not None and total_row.lost is not None:
        lost, total = total_row.lost, total_row.total
    else:
        lost, total = summed("lost"), summed("total")
    jitter: float | None
    if total_row is not None and total_row.jitter_ms is not None:
        jitter = total_row.jitter_ms
    else:
        # No aggregate jitter printed: the mean over streams, as iperf3 reports its sum.
        jit = pick("jitter_ms")
        jitter = sum(float(j) for j in jit) / len(jit) if jit else None
    if total_row is not None and total_row.retries is not None:
        retries = total_row.retries
    else:
        retries = summed("retries")

    n = len(streams) if streams else expected_streams
    return _Agg(bps=bps, nbytes=nbytes, duration=duration, streams=n, jitter_ms=jitter,
                lost=lost, total=total, retries=retries)


def _build(rows: list[_Row], protocol: str, version: str | None, error: str | None,
           extra: dict[str, Any], expected_streams: int | None) -> ParsedRun:
    views = {kind: _aggregate([r for r in rows if r.kind == kind], expected_streams)
             for kind in ("receiver", "sender", "unknown")
             if any(r.kind == kind for r in rows)}
    sender = views.get("sender")
    if "receiver" in views:
        main, extra["rate_from"] = views["receiver"], "receiver"
    elif sender is not None:
        main, extra["rate_from"] = sender, "sender"
    else:
        main, extra["rate_from"] = views["unknown"], "unknown"

    udp = None
    if protocol == "udp" and main.total is not None and main.lost is not None:
        udp = UdpStats(lost=main.lost, total=main.total,
                       # iperf prints the percentage with %.2g ("3.9%"): recompute it.
                       loss_pct=100.0 * main.lost / main.total if main.total > 0 else None,
                       jitter_ms=main.jitter_ms)
    retries = sender.retries if sender is not None else main.retries
    if protocol == "tcp" and retries is not None:
        extra["retransmits"] = retries

    return ParsedRun(tool=NAME, protocol=protocol, throughput_bps=main.bps, version=version,
                     duration_s=main.duration, streams=main.streams, udp=udp,
                     bytes_total=main.nbytes,
                     sent_bps=sender.bps if sender is not None else None,
                     error=error, extra=extra)


# -- parameters, driver and the tool -------------------------------------------------
class Iperf2Params(Strict):
    duration_s: Float = Field(10, ge=0.1, le=3600)   # -t: iperf 2 reads fractions
    window: Size | VarRef | None = None       # -w, both ends
    # -w on the server only: the receiver's socket buffer (SO_RCVBUF), the sender's left
    # as the OS gives it (a UDP sender with a large one drops its own frames in the link's
    # queue: README.md, "Small packets", has the measurements)
    receive_buffer: Size | VarRef | None = None
    length: Size | VarRef | None = None       # -l, both ends
    mss: Int | VarRef | None = None           # -M, both ends (the reviews: 100000)
    print_mss: bool = True                    # -m on the server, as the reviews did
    streams: Int = Field(1, ge=1, le=128)     # -P
    rate: Rate | VarRef | None = None         # -b for UDP (the search sets it per trial)
    port: Int = Field(5001, ge=1024, le=65535)
    enhanced: bool = True                     # -e: richer reports (iperf >= 2.0.10)
    # --bounceback (iperf 2.1.x; 2.1.8 has it): round trips of `length`-byte messages
    # (100 unless set) instead of a transfer; its figures: ParsedRun.latency (bounceback.py).
    bounceback: bool = False
    # --bounceback-period: a burst of 10 round trips every this many seconds (iperf's
    # default 1 s); 0 sends them back to back. Only with bounceback.
    bounceback_period_s: Float | None = Field(None, ge=0, le=60)

    @model_validator(mode="after")
    def _combinations(self):
        if self.window is not None and self.receive_buffer is not None:
            raise ValueError("give window (-w at both ends) or receive_buffer (-w at the "
                             "server only), not both")
        if not self.bounceback:
            if self.bounceback_period_s is not None:
                raise ValueError("bounceback_period_s is for a bounce-back test: add "
                                 "bounceback: true or drop it")
            return self
        if self.streams != 1:
            raise ValueError("a bounce-back test runs one connection: drop streams")
        if self.rate is not None or self.mss is not None or self.window is not None \
                or self.receive_buffer is not None:
            raise ValueError("a bounce-back test takes length and bounceback_period_s, not "
                             "rate, mss, window or receive_buffer")
        return self


# A row covering a whole run (it starts at 0.0 s), as iperf 2.1 ("[  1] 0.0000-2.0043 sec
# 225 MBytes  941 Mbits/sec") and 2.0 ("[  3]  0.0- 1.0 sec ...") print it, for grep -E.
# The server runs without -i, so no interval row (0.0-1.0 of a longer run) can match.
IPERF2_WHOLE_RUN_ROW = r"^\[ *([0-9]+|SUM[-0-9]*)\] +0\.0+ *- *[0-9.]+ sec .*/sec"



class Iperf2Driver(Driver):
    params = Iperf2Params

    def protocol_error(self, raw_params: dict[str, Any], protocol: str) -> str | None:
        if raw_params.get("bounceback") and protocol != "tcp":
            return "iperf 2's bounce-back test is TCP only: give protocol: tcp"
        return None

    def plan(self, exe_server: str, exe_client: str, raw_params: dict[str, Any],
             ends: Endpoints, tag: str) -> Plan:
        p = self.parse_params(raw_params)
        if p.bounceback:
            return self._bounceback_plan(p, exe_server, exe_client, ends)
        common: list[str] = ["-p", str(p.port)]
        if p.window is not None:
            common += ["-w", size_arg(p.window)]
        if p.length is not None:
            common += ["-l", size_arg(p.length)]
        if p.mss is not None:
            common += ["-M", str(int(p.mss))]
        if ends.protocol == "udp":
            common += ["-u"]
        if p.enhanced:
            common += ["-e"]
        server = [exe_server, "-s", "-B", ends.receiver_addr, *common]
        if p.receive_buffer is not None:
            server += ["-w", size_arg(p.receive_buffer)]
        if p.print_mss:
            server.append("-m")
        client = [exe_client, "-c", ends.receiver_addr, "-B", ends.sender_addr, *common,
                  "-t", f"{p.duration_s:g}"]
        if p.streams > 1:
            client += ["-P", str(p.streams)]
        rate = ends.offered_bps or p.rate
        if ends.protocol == "udp" and rate:
            # -b is per stream (as iperf3's): the rate is the total over the streams
            client += ["-b", str(per_stream_rate(int(rate), p.streams))]
        # iperf 2 servers never exit by themselves and take 1-2 s to honour TERM; they
        # flush each report as they print it, so once the whole-run rows are there KILL
        # loses nothing: one row per stream, and the [SUM] row when there are several.
        # Over TCP the client has read the server's close by then (2.1 waits for it; 2.0
        # has closed already), so that can be waited for while the client runs; over UDP
        # the server may still owe the client its report (the "AckFIN").
        return Plan(server=server, client=client, port=p.port, listen_protocol=ends.protocol,
                    server_exits=False, expected_s=float(p.duration_s),
                    report_re=IPERF2_WHOLE_RUN_ROW,
                    report_count=p.streams + (1 if p.streams > 1 else 0),
                    report_wait_s=2.0, stop_signal="KILL",
                    finish_overlaps=ends.protocol == "tcp")

    @staticmethod
    def _bounceback_plan(p: Iperf2Params, exe_server: str, exe_client: str,
                         ends: Endpoints) -> Plan:
        """A bounce-back test: the server echoes (it needs no option for it: the client
        asks), the client times the round trips. Its server is ended as a TCP one is."""
        if ends.protocol != "tcp":
            raise ConfigError("iperf 2's bounce-back test is TCP only: give protocol: tcp")
        common = ["-p", str(p.port), "-e"]
        if p.length is not None:
            common += ["-l", size_arg(p.length)]
        client = [exe_client, "-c", ends.receiver_addr, "-B", ends.sender_addr, *common,
                  "--bounceback", "-t", f"{p.duration_s:g}"]
        if p.bounceback_period_s is not None:
            client += ["--bounceback-period", f"{p.bounceback_period_s:g}"]
        # a period longer than the run still sends its first burst and waits it out
        expected = max(float(p.duration_s), float(p.bounceback_period_s or 0))
        return Plan(server=[exe_server, "-s", "-B", ends.receiver_addr, *common],
                    client=client, port=p.port, listen_protocol="tcp", server_exits=False,
                    expected_s=expected, report_re=IPERF2_WHOLE_RUN_ROW, report_count=1,
                    report_wait_s=2.0, stop_signal="KILL", finish_overlaps=True)

    def interpret(self, client_text: str, server_text: str, outfile_text: str | None,
                  protocol: str) -> ParsedRun:
        client = parse(client_text)
        if client.latency is not None or client.extra.get("mode") == "bounceback":
            return client          # round trips: timed by the client alone
        if client.error or (protocol == "udp" and client.udp):
            return client
        # TCP: the server saw what arrived; the client only what it wrote into its socket
        # buffer. A receiver that printed no report never saw the transfer end (a stalled
        # link): that is a failure, not a reason to trust the sender's figure.
        try:
            server = parse(server_text)
        except ParseError:
            server = None
        if server is None or server.throughput_bps is None:
            return replace(client, no_receiver_report=True, error=client.error or
                           "the receiver printed no report: the transfer did not complete")
        return replace(client, throughput_bps=server.throughput_bps,
                       sent_bps=client.sent_bps or client.throughput_bps,
                       udp=server.udp or client.udp,
                       extra={**client.extra, "rate_from": "server"})


# The bound's allowance for iperf 2's timing (results.plausible.above_bound): its figure is
# bytes over the interval its own microsecond clock timed, ended by a timer checked between
# writes (reads on the server): the end lands up to a scheduler tick and a write's time late
# or early, and the bytes in flight when it lands (a send buffer not yet on the wire, or
# the first window before the receiver's clock starts) are counted on the wrong side. A UDP
# receiver's interval runs from the first datagram it reads to the last, printed to 0.1 ms
# ("0.0000-5.0012 sec"), but read by a process the scheduler may hold off: of 21 paced 5 s
# small-packet trials on the lab (load average 4-6) that delivered what they offered, the
# receiver's interval was 9.2 ms shorter to 23.1 ms longer than the frames it counted took
# at the offered rate (a short one reads the rate high). 10 ms over the test's duration,
# 0.1 % of a 10 s test; the one figure for iperf 2, the throughput's limit and a frame
# rate's line rate alike (results.plausible.bound_allowance, results.framerate.error_pps).
TIMING_ERROR_S = 0.01
# Its bounce-back percentiles are read off its histogram, exact to within one bin: 100 us
# in 2.1.8 whatever --histograms says (``bounceback.py``).
BOUNCEBACK_BIN_US = 100.0

TOOL = Tool(
    timing_error_s=TIMING_ERROR_S,
    printed_resolution_bps=lambda v, fmt: three_digits(v) if fmt == "text" else 0.0,
    round_trip_resolution_us=BOUNCEBACK_BIN_US,
    name=NAME, display="iperf 2", params=Iperf2Params, driver=Iperf2Driver(),
    parse=parse, looks_like=looks_like,
    executables={'linux': 'iperf', 'windows': 'iperf.exe'},
    version=VersionProbe(args=("-v",), regex=r"iperf version (\S+)"),
    result=Shape.RATE, detect_priority=90,
    units="rates in bit/s with SI prefixes (Mbits/sec = 10^6 bit/s); byte amounts with binary prefixes (MBytes = 2^20 bytes)")
