"""Turn what iperf3 printed into a :class:`ParsedRun`: a pure function of the text.

Responsible for:

* JSON output (``-J``) of the client or the server, TCP or UDP, one or several streams,
  including ``--get-server-output`` (the server's report embedded as ``server_output_json``
  or ``server_output_text``), and a server's output holding several JSON documents (one
  per test it served: the last one is returned, ``extra["sessions"]`` counts them);
* ``--bidir`` (3.7+), JSON and text: the forward direction (client to server) is the run's
  figure and ``ParsedRun.bidir`` holds both directions (:func:`_bidir`; in text, the
  ``[TX-C]``/``[RX-C]`` roles of each row); ``streams`` counts one direction's;
* the top-level ``"error"`` key: iperf3 exits 0 with ``-J`` and an error, so the error is
  returned in ``ParsedRun.error`` for the caller to judge, not raised;
* text output, for importing old logs: 3.x ``sender``/``receiver`` summary lines, ``[SUM]``
  lines, UDP jitter and Lost/Total, the ``CPU Utilization`` line, the ``iperf 3.x`` header
  of ``-V``, and the 3.1.x layout whose UDP client summary has no sender/receiver label.

Which rate is ``throughput_bps``: the receiver's (``end.sum_received``; a text ``receiver``
line) when the output has it, else the sender's; ``extra["rate_from"]`` says which. The
trap this avoids: for a UDP client, ``end.sum`` is the rate *sent*, the received rate is
``end.sum_received`` (iperf3 3.11+). ``sent_bps`` is the sender's rate when this output
knows it (a server that only received reports zeros for the sending side: that is "not
known", not 0). ``loss_pct`` is recomputed from the lost/total counts of the receiver.
``extra`` may hold: rate_from, side, remote_cpu_pct, retransmits, target_bps, reverse,
sessions, server (the embedded server output, parsed), server_parse_error.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import Field

from nicbench.config.fields import Float, Int, Rate, Size, Strict
from nicbench.errors import ParseError
from nicbench.tools.base import (IPERF_NUM, three_digits, Bidir, ParsedRun, UdpStats, iperf_bytes, iperf_row_rate,
                                 iperf_row_re)
from nicbench.tools.driver import (Driver, Endpoints, Need, Plan, Shape, Tool, VersionProbe,
                                   per_stream_rate, size_arg)
from nicbench.tools.params import VarRef
from nicbench.tools.scan import Line, Rule, Scanner

NAME = "iperf3"

# ---------------------------------------------------------------------------- entry points


def looks_like(text: str) -> bool:
    """True when ``text`` is iperf3 output (JSON or text) that this module reads."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            docs = _json_documents(text)
        except ParseError:
            return False
        return any(isinstance(d.get("start"), dict) or "error" in d for d in docs)
    return any(_IPERF3_TEXT_MARK.match(ln.strip()) for ln in text.splitlines())


def parse(text: str) -> ParsedRun:
    """Read one iperf3 run (client or server side, JSON or text) from ``text``."""
    if not text.strip():
        raise ParseError(NAME, "iperf3 output (-J JSON or text)", "empty input")
    if text.lstrip().startswith("{"):
        docs = _json_documents(text)
        run = _parse_json(docs[-1])
        if len(docs) > 1:
            # A server left running prints one document per test; the last is this run.
            run = replace(run, extra={**run.extra, "sessions": len(docs)})
        return run
    return _parse_text(text.splitlines())


# ---------------------------------------------------------------------------- JSON


def _json_documents(text: str) -> list[dict[str, Any]]:
    decoder = json.JSONDecoder()
    docs: list[dict[str, Any]] = []
    pos, n = 0, len(text)
    while True:
        while pos < n and text[pos].isspace():
            pos += 1
        if pos >= n:
            break
        begin = pos
        try:
            doc, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise ParseError(NAME, f"a complete JSON document ({exc.msg})",
                             f"line {exc.lineno} column {exc.colno}") from None
        except RecursionError:
            raise ParseError(NAME, "a JSON document as iperf3 writes it",
                             f"line {text.count(chr(10), 0, begin) + 1}: nested too deep"
                             ) from None
        if not isinstance(doc, dict):
            raise ParseError(NAME, "a JSON object at the top level",
                             f"line {text.count(chr(10), 0, begin) + 1}")
        docs.append(doc)
    return docs


def _parse_json(doc: dict[str, Any], where: str = "") -> ParsedRun:
    start = _obj(doc.get("start"), f"{where}start")
    end = _obj(doc.get("end"), f"{where}end")
    test = _obj(start.get("test_start"), f"{where}start.test_start")
    protocol = "udp" if str(test.get("protocol", "TCP")).upper() == "UDP" else "tcp"
    version = _version(start.get("version"))
    error = doc.get("error")
    error = str(error) if error not in (None, "") else None

    if "connecting_to" in start:
        side = "client"
    elif "accepted_connection" in start:
        side = "server"
    else:
        side = None
    reverse = bool(test.get("reverse"))
    # The passive side of iperf3 fills the other direction's sums with zeros. A client
    # knows both ends (results are exchanged); a server knows only its own direction.
    knows_sender = side != "server" or reverse
    knows_receiver = side != "server" or not reverse

    extra: dict[str, Any] = {"format": "json"}
    if side:
        extra["side"] = side
    if reverse:
        extra["reverse"] = True
    target = test.get("target_bitrate") or start.get("target_bitrate")
    if isinstance(target, (int, float)) and target > 0:
        extra["target_bps"] = float(target)

    sum_sent = _sum(end, "sum_sent", where) if knows_sender else None
    sum_received = _sum(end, "sum_received", where) if knows_receiver else None
    # Loss and jitter are the receiver's: take them from the receiver's sum only. (A 3.11+
    # sum_sent carries lost_packets 0 and jitter 0: the sender's view, which knows neither.)
    udp_src = sum_received
    if sum_sent is None and sum_received is None and "sum" in end:
        # iperf3 before 3.11 (UDP) writes only end.sum: on a client, its own bytes and rate
        # with the server's jitter and loss; on a server, what it received.
        legacy = _sum(end, "sum", where)
        if side == "server" and not reverse:
            sum_received = legacy
        else:
            sum_sent = legacy
        udp_src = legacy
    server_run = _server_output(doc, extra)

    bidir = _bidir(end, where, side, protocol, sum_sent, sum_received)
    streams = end.get("streams")
    nstreams = len(streams) if isinstance(streams, list) and streams else test.get("num_streams")
    if bidir is not None and isinstance(test.get("num_streams"), int):
        nstreams = test["num_streams"]      # per direction: end.streams lists both
    cpu = end.get("cpu_utilization_percent")
    cpu_pct = None
    if isinstance(cpu, dict):
        cpu_pct = _number(cpu.get("host_total"))
        remote = _number(cpu.get("remote_total"))
        # A server is never sent the client's CPU figures: its remote_total is a bare 0.
        if remote is not None and (side != "server" or remote > 0):
            extra["remote_cpu_pct"] = remote
    sent_bps = _number(sum_sent.get("bits_per_second")) if sum_sent is not None else None
    if protocol == "tcp" and sum_sent is not None and "retransmits" in sum_sent:
        extra["retransmits"] = sum_sent["retransmits"]

    if sum_received is None and server_run is not None \
            and server_run.extra.get("rate_from") == "receiver":
        # Older client without sum_received, but --get-server-output brought the receiver's
        # own report: its figures are the received ones.
        extra["rate_from"] = "server_output"
        return ParsedRun(tool=NAME, protocol=protocol, version=version,
                         throughput_bps=server_run.throughput_bps,
                         duration_s=server_run.duration_s, streams=nstreams, cpu_pct=cpu_pct,
                         udp=server_run.udp or (_udp_stats(udp_src) if udp_src else None),
                         bytes_total=server_run.bytes_total, sent_bps=sent_bps, error=error,
                         extra=extra)
    if sum_received is not None:
        main, extra["rate_from"] = sum_received, "receiver"
    elif sum_sent is not None:
        main, extra["rate_from"] = sum_sent, "sender"
    else:
        if error is not None:  # e.g. "unable to connect to server": no figures at all
            return ParsedRun(tool=NAME, protocol=protocol, throughput_bps=None,
                             version=version, error=error, extra=extra)
        raise ParseError(NAME, "end.sum_received, end.sum_sent or end.sum",
                         f"{where}end" + (" is empty (the test did not finish?)" if not end
                                          else ""))

    udp = _udp_stats(udp_src) if protocol == "udp" and udp_src is not None else None
    return ParsedRun(tool=NAME, protocol=protocol, version=version,
                     throughput_bps=_number(main.get("bits_per_second")),
                     duration_s=_duration(main), streams=nstreams, cpu_pct=cpu_pct, udp=udp,
                     bytes_total=_number(main.get("bytes")), sent_bps=sent_bps, error=error,
                     extra=extra, bidir=bidir if main is sum_received else None)


def _bidir(end: dict[str, Any], where: str, side: str | None, protocol: str,
           sum_sent: dict[str, Any] | None, sum_received: dict[str, Any] | None
           ) -> Bidir | None:
    """Both directions of a ``--bidir`` run (3.7+: the ``*_bidir_reverse`` sums), else None.

    On a client ``sum_sent``/``sum_received`` are the forward direction (client to server)
    and ``sum_sent_bidir_reverse``/``sum_received_bidir_reverse`` the reverse, each as its
    sender and its receiver counted it. A server knows the forward's received and the
    reverse's sent figures only (it fills the others with zeros). Over UDP a 3.12 client's
    ``sum_received_bidir_reverse`` repeats the forward's bytes; what it received back is
    ``sum_bidir_reverse`` (as ``sum`` is the forward's, sender's view)."""
    if "sum_sent_bidir_reverse" not in end and "sum_received_bidir_reverse" not in end:
        return None
    if sum_received is None:
        return None
    rev_sent = _sum(end, "sum_sent_bidir_reverse", where)
    rev_key = "sum_bidir_reverse" if protocol == "udp" else "sum_received_bidir_reverse"
    rev_received = _sum(end, rev_key, where) if side != "server" else None

    def rate(s: dict[str, Any] | None) -> float | None:
        return _number(s.get("bits_per_second")) if s is not None else None
    forward = rate(sum_received)
    if forward is None:
        return None
    return Bidir(forward_bps=forward, reverse_bps=rate(rev_received),
                 forward_sent_bps=rate(sum_sent), reverse_sent_bps=rate(rev_sent))


def _server_output(doc: dict[str, Any], extra: dict[str, Any]) -> ParsedRun | None:
    """Parse what ``--get-server-output`` embedded; record it (or why it failed) in extra."""
    try:
        if isinstance(doc.get("server_output_json"), dict):
            run = _parse_json(doc["server_output_json"], "server_output_json.")
        elif isinstance(doc.get("server_output_text"), str):
            run = _parse_text(doc["server_output_text"].splitlines())
        else:
            return None
    except ParseError as exc:
        # The client's own figures stand without it; say why the server's could not be read.
        extra["server_parse_error"] = str(exc)
        return None
    extra["server"] = run.to_json()
    return run


def _obj(value: Any, path: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ParseError(NAME, "a JSON object", path)
    return value


def _sum(end: dict[str, Any], key: str, where: str) -> dict[str, Any] | None:
    value = end.get(key)
    if value is None:
        return None
    if not isinstance(value, dict) or "bits_per_second" not in value:
        raise ParseError(NAME, "an object with bits_per_second", f"{where}end.{key}")
    rate = value["bits_per_second"]
    if _number(rate) is None or not math.isfinite(rate):
        raise ParseError(NAME, "a finite number in bits_per_second",
                         f"{where}end.{key}.bits_per_second: {rate!r}")
    return value


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _duration(s: dict[str, Any]) -> float | None:
    if (sec := _number(s.get("seconds"))) is not None:
        return sec
    a, b = _number(s.get("start")), _number(s.get("end"))
    return b - a if a is not None and b is not None else None


def _udp_stats(s: dict[str, Any]) -> UdpStats:
    lost, total = _count(s, "lost_packets"), _count(s, "packets")
    # lost_percent is not trusted: in a 3.12 client's sum_received it is computed against
    # the client's packet count, and a server's per-stream entry reads 0 despite losses.
    pct = 100.0 * lost / total if lost is not None and total else None
    return UdpStats(lost=lost, total=total, loss_pct=pct, jitter_ms=_number(s.get("jitter_ms")))


def _count(s: dict[str, Any], key: str) -> int | None:
    value = _number(s.get(key))
    if value is not None and not math.isfinite(value):   # int(NaN) would be a ValueError
        raise ParseError(NAME, f"a packet count in {key}", f"{value}")
    return None if value is None else int(value)


def _version(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    m = re.match(r"^iperf\s+(\S+)", value.strip())
    return m.group(1) if m else value.strip()


# ---------------------------------------------------------------------------- text

_NUM = IPERF_NUM
_ROW = iperf_row_re(r"\d+|SUM")
_UDP_REST = re.compile(rf"^\s*(?P<jitter>{_NUM})\s+ms\s+(?P<lost>-?\d+)\s*/\s*(?P<total>\d+)")
_RETR_REST = re.compile(r"^\s*(?P<retr>\d+)\b")
_LABEL = re.compile(r"\b(?P<label>sender|receiver)\s*$")
_SEPARATOR = re.compile(r"^- - - - -")
_CONNECTED = re.compile(r"^\[\s*(?P<sid>\d+)\]\s+local\s+\S+\s+port\s+\d+\s+connected to")
_VERSION_LINE = re.compile(r"^iperf (?P<ver>3\.\S+)")
_CPU = re.compile(rf"^CPU Utilization: local/\w+ (?P<local>{_NUM})%.*remote/\w+ (?P<remote>{_NUM})%")
# iperf3 prints every error as "iperf3: <message>" ("iperf3: error - unable to connect...",
# "iperf3: interrupt - ...", "iperf3: the client has unexpectedly closed the connection").
_ERROR_LINE = re.compile(r"^iperf3: .+$")
_WARNING_LINE = re.compile(r"^warning: (?P<msg>.+)$")
# --bidir rows: "[  5][TX-C]": stream 5, the client transmitting (the forward direction);
# RX-C is the client receiving (reverse), and on the server RX-S forward, TX-S reverse.
_ROLE = re.compile(r"^(\[\s*(?:\d+|SUM)\])\[(?P<dir>[TR]X)-(?P<end>[CS])\]")
_REVERSE = {("RX", "C"), ("TX", "S")}
_SENT = re.compile(r"^\[\s*\d+\]\s+Sent (?P<n>\d+) datagrams")
# iperf 2's text is refused: its result rows look much like ours.
_IPERF2_MARK = re.compile(r"^(?:Client connecting to \S+,? (?:TCP|UDP) port|"
                          r"Server listening on (?:TCP|UDP) port|\[\s*\d+\] Server Report:)")
_IPERF3_TEXT_MARK = re.compile(r"^(?:Connecting to host |Server listening on \d+|- - - - -|"
                               r"iperf Done\.|iperf3: |iperf 3\.)")


@dataclass
class _Row:
    sid: str
    start: float
    end: float
    nbytes: float
    bps: float
    line: int
    label: str | None
    jitter_ms: float | None = None
    lost: int | None = None
    total: int | None = None
    retr: int | None = None
    role: bool = False       # a --bidir row ("[  5][TX-C]"), of one direction
    reverse: bool = False    # ... of the reverse one (server to client)


_SESSION = re.compile(r"^(?P<who>Connecting to host |Accepted connection from )")
_LISTENING = re.compile(r"^Server listening on ")


@dataclass
class _TextRun:
    """What a text output says, line by line (the scanner's rules below)."""

    side: str | None = None
    version: str | None = None
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    sessions: int = 0
    # Per session (a server left running prints one block per test; the last is this run):
    rows: list[_Row] = field(default_factory=list)
    after_last_sep: list[_Row] = field(default_factory=list)
    conn_ids: set[str] = field(default_factory=set)
    cpu: tuple[float, float] | None = None
    sent_datagrams: int = 0
    seen_separator: bool = False

    def rules(self) -> list[Rule]:
        return [(_IPERF2_MARK, self.iperf2), (_SESSION, self.session),
                (_LISTENING, self.listening), (_VERSION_LINE, self.version_line),
                (_CONNECTED, lambda m, line: self.conn_ids.add(m["sid"])),
                (_SEPARATOR, self.separator), (_CPU, self.cpu_line),
                (_SENT, self.sent), (_ERROR_LINE, lambda m, line: self.errors.append(line.text)),
                (_WARNING_LINE, lambda m, line: self.warnings.append(m["msg"]))]

    def iperf2(self, m: re.Match[str], line: Line) -> None:
        raise ParseError(NAME, "iperf3 output, not iperf 2",
                         f"line {line.number}: {line.text[:60]!r} is iperf 2's")

    def session(self, m: re.Match[str], line: Line) -> None:
        self.side = "client" if m["who"].startswith("Connecting") else "server"
        self.sessions += 1
        self.rows, self.after_last_sep, self.conn_ids = [], [], set()
        self.cpu, self.sent_datagrams, self.seen_separator = None, 0, False

    def listening(self, m: re.Match[str], line: Line) -> None:
        self.side = "server"

    def version_line(self, m: re.Match[str], line: Line) -> None:
        self.version = m["ver"]

    def separator(self, m: re.Match[str], line: Line) -> None:
        self.after_last_sep, self.seen_separator = [], True

    def cpu_line(self, m: re.Match[str], line: Line) -> None:
        self.cpu = (float(m["local"]), float(m["remote"]))

    def sent(self, m: re.Match[str], line: Line) -> None:
        self.sent_datagrams += int(m["n"])

    def row(self, line: Line) -> None:
        text = line.text
        role = _ROLE.match(text)
        if role:        # --bidir: "[  5][TX-C]" is a row of stream 5, client to server
            text = role[1] + text[role.end():]
        if m := _ROW.match(text):
            row = _text_row(m, line.number)
            row.role = role is not None
            row.reverse = role is not None and (role["dir"], role["end"]) in _REVERSE
            self.rows.append(row)
            self.after_last_sep.append(row)


def _parse_text(lines: list[str]) -> ParsedRun:
    run = _TextRun()
    last_line = Scanner(run.rules(), otherwise=run.row).scan(lines)
    side, version, rows, conn_ids = run.side, run.version, run.rows, run.conn_ids
    sessions, sent_datagrams, warnings, errors = (run.sessions, run.sent_datagrams,
                                                  run.warnings, run.errors)
    cpu, seen_separator, after_last_sep = run.cpu, run.seen_separator, run.after_last_sep
    extra: dict[str, Any] = {"format": "text"}

    if side:
        extra["side"] = side
    if sessions > 1:
        extra["sessions"] = sessions
    if sent_datagrams:
        extra["datagrams_sent"] = sent_datagrams
    if warnings:
        extra["warnings"] = warnings
    error = errors[0] if errors else None
    protocol = "udp" if (any(r.total is not None for r in rows) or sent_datagrams
                         or any("Datagrams" in ln for ln in lines)) else "tcp"

    labelled = [r for r in rows if r.label]
    summary = labelled
    if not summary and seen_separator:
        # 3.1.x prints some summaries unlabelled; they are the rows after the last
        # "- - -" separator. Whose they are follows from the side: a server's are received
        # figures; a client's carry its own rate with the server's jitter and loss.
        unlabelled = "receiver" if side == "server" else "sender"
        for r in after_last_sep:
            r.label = unlabelled
        summary = after_last_sep
    if not summary:
        if error is not None:
            return ParsedRun(tool=NAME, protocol=protocol, throughput_bps=None,
                             version=version, error=error, extra=extra)
        raise ParseError(NAME, "a summary line after '- - - - -' ('... sec ... Bytes ... "
                         "bits/sec ... sender|receiver')", f"line {last_line}: end of input")

    two_way = any(r.role for r in summary)
    back = [r for r in summary if r.reverse]
    if two_way:
        # --bidir: the forward direction (client to server) is the run's figure, its
        # streams those whose interval rows are forward (the "connected" lines list both)
        summary = [r for r in summary if not r.reverse]
        conn_ids = {r.sid for r in rows if r.role and not r.reverse and r.sid != "SUM"}
    views = _text_views(summary, conn_ids, side)
    sender = views.get("sender")
    if "receiver" in views:
        main, extra["rate_from"] = views["receiver"], "receiver"
    else:
        main, extra["rate_from"] = views["sender"], "sender"
    bidir = None
    if two_way and "receiver" in views:
        rev = _text_views(back, {r.sid for r in rows if r.reverse and r.sid != "SUM"}, side)
        bidir = Bidir(forward_bps=main.bps,
                      reverse_bps=rev["receiver"].bps if "receiver" in rev else None,
                      forward_sent_bps=sender.bps if sender is not None else None,
                      reverse_sent_bps=rev["sender"].bps if "sender" in rev else None)

    udp = None
    if protocol == "udp":
        # Loss belongs to the receiver's line; a labelled 3.x sender line counts only its
        # own datagrams (lost 0). An unlabelled 3.1.x client line carries the server's counts.
        src = views.get("receiver") or (main if not labelled else None)
        if src is not None and src.total is not None and src.lost is not None:
            udp = UdpStats(lost=src.lost, total=src.total,
                           loss_pct=100.0 * src.lost / src.total if src.total else None,
                           jitter_ms=src.jitter_ms)
    if protocol == "tcp" and sender is not None and sender.retr is not None:
        extra["retransmits"] = sender.retr
    cpu_pct = None
    if cpu is not None:
        cpu_pct = cpu[0]
        extra["remote_cpu_pct"] = cpu[1]

    return ParsedRun(tool=NAME, protocol=protocol, throughput_bps=main.bps, version=version,
                     duration_s=main.duration, streams=main.streams, cpu_pct=cpu_pct,
                     udp=udp, bytes_total=main.nbytes,
                     sent_bps=sender.bps if sender is not None else None, error=error,
                     extra=extra, bidir=bidir)


def _text_views(summary: list[_Row], conn_ids: set[str], side: str | None
                ) -> dict[str, _View]:
    """The whole-run figures of each labelled side (receiver, sender) of ``summary``."""
    views = {label: _text_view([r for r in summary if r.label == label], conn_ids)
             for label in ("receiver", "sender") if any(r.label == label for r in summary)}
    if side == "server" and "receiver" in views and views.get("sender") \
            and views["sender"].nbytes == 0:
        # iperf3 3.0/3.1 servers print a "0.00 Bytes  0.00 bits/sec  sender" line for the
        # direction they did not send in: that is "not known here", not a rate of 0.
        del views["sender"]
    return views


def _text_row(m: re.Match[str], lineno: int) -> _Row:
    rest = m["rest"]
    lab = _LABEL.search(rest)
    row = _Row(sid=m["sid"], start=float(m["start"]), end=float(m["end"]),
               nbytes=iperf_bytes(float(m["xfer"]), m["xprefix"]), bps=iperf_row_rate(m),
               line=lineno, label=lab["label"] if lab else None)
    if u := _UDP_REST.match(rest):
        row.jitter_ms, row.lost, row.total = float(u["jitter"]), int(u["lost"]), int(u["total"])
    elif r := _RETR_REST.match(rest):
        row.retr = int(r["retr"])
    return row


@dataclass
class _View:
    """One side's whole-run figures (sender or receiver), over all streams."""

    bps: float
    nbytes: float
    duration: float
    streams: int | None
    jitter_ms: float | None
    lost: int | None
    total: int | None
    retr: int | None


def _text_view(rows: list[_Row], conn_ids: set[str]) -> _View:
    total_row = next((r for r in reversed(rows) if r.sid == "SUM"), None)
    streams = list({r.sid: r for r in rows if r.sid != "SUM"}.values())
    if conn_ids and len(streams) < len(conn_ids) and (total_row is None or streams):
        raise ParseError(NAME, f"summary lines for {len(conn_ids)} streams, found "
                         f"{len(streams)} (output cut short?)", f"line {rows[-1].line}")

    def total_of(attr: str) -> Any:
        # iperf3's own [SUM] is computed from exact counts; else add up the streams.
        if total_row is not None and getattr(total_row, attr) is not None:
            return getattr(total_row, attr)
        vals = [getattr(r, attr) for r in streams]
        return sum(vals) if vals and all(v is not None for v in vals) else None

    if total_row is not None:
        jitter = total_row.jitter_ms
        bps, nbytes = total_row.bps, total_row.nbytes
        duration = total_row.end - total_row.start
    else:
        jit = [r.jitter_ms for r in streams if r.jitter_ms is not None]
        # iperf3's [SUM] jitter is the mean of its streams': do the same when it is absent.
        jitter = sum(jit) / len(jit) if jit and len(jit) == len(streams) else None
        bps, nbytes = sum(r.bps for r in streams), sum(r.nbytes for r in streams)
        duration = max(r.end - r.start for r in streams)
    return _View(bps=bps, nbytes=nbytes, duration=duration,
                 streams=len(streams) or (len(conn_ids) or None), jitter_ms=jitter,
                 lost=total_of("lost"), total=total_of("total"), retr=total_of("retr"))


# -- parameters, driver and the tool -------------------------------------------------
class Iperf3Params(Strict):
    duration_s: Float = Field(10, ge=1, le=3600)   # -t: iperf3 reads whole seconds
    window: Size | VarRef | None = None
    length: Size | VarRef | None = None
    streams: Int = Field(1, ge=1, le=128)       # -P: parallel streams (per direction)
    # --bidir (iperf3 3.7+): both directions at once, -P streams each; throughput_bps is
    # the forward direction (client to server), the record's bidir holds both.
    bidir: bool = False
    rate: Rate | VarRef | None = None           # UDP: the total offered, over all streams
    omit_s: Float = Field(0, ge=0, le=60)
    port: Int = Field(5201, ge=1024, le=65535)


class Iperf3Driver(Driver):
    params = Iperf3Params

    def plan(self, exe_server: str, exe_client: str, raw_params: dict[str, Any],
             ends: Endpoints, tag: str) -> Plan:
        p = self.parse_params(raw_params)
        server = [exe_server, "-s", "-1", "-J", "-B", ends.receiver_addr, "-p", str(p.port)]
        client = [exe_client, "-c", ends.receiver_addr, "-B", ends.sender_addr,
                  "-p", str(p.port), "-J", "-t", f"{p.duration_s:g}"]
        if p.omit_s:
            client += ["-O", f"{p.omit_s:g}"]
        if p.window is not None:
            client += ["-w", size_arg(p.window)]
        if p.length is not None:
            client += ["-l", size_arg(p.length)]
        if p.streams > 1:
            client += ["-P", str(p.streams)]
        if p.bidir:
            client += ["--bidir"]
        if ends.protocol == "udp":
            total = int(ends.offered_bps or p.rate or 1_000_000)
            client += ["-u", "-b", str(per_stream_rate(total, p.streams))]
        return Plan(server=server, client=client, port=p.port, listen_protocol="tcp",
                    server_exits=True, expected_s=float(p.duration_s + p.omit_s))

    def interpret(self, client_text: str, server_text: str, outfile_text: str | None,
                  protocol: str) -> ParsedRun:
        return parse(client_text)

    def needs(self, params: Any) -> tuple[Need, ...]:
        p = self.parse_params(params) if isinstance(params, dict) else params
        return (BIDIR_NEED,) if p.bidir else ()

    def refuses(self, params: Any, protocol: str, searched: bool) -> list[tuple[str, str]]:
        p = self.parse_params(params) if isinstance(params, dict) else params
        if p.bidir and searched:
            return [("bidir", "a UDP rate search judges the loss of one direction: drop "
                              "bidir or udp_search")]
        return []


# iperf3's --bidir came with 3.7 (its RELNOTES: "iperf 3.7 ... --bidir"); older ones stop
# with "unrecognized option".
BIDIR_NEED = Need("--bidir", (3, 7), "bidir")



# The bound's allowance for iperf3's timing (results.plausible.above_bound): the receiver's
# figure (end.sum_received) divides the bytes it read by the test's duration as the client
# timed it (a select() timer with scheduler-tick granularity), while its last reads and the
# first window in flight fall on either side of that clock: 10 ms over the duration, 0.1 %
# of a 10 s test (the lab's iperf3 reads 100.02 % of a 941.5 Mbit/s limit). Its JSON prints
# seconds to 1 us, which says how finely it printed the clock, not how far the ends' reads
# stand from the wire's; the one figure for iperf3, a rate's limit and a frame rate's
# line rate alike.
TIMING_ERROR_S = 0.01

TOOL = Tool(
    timing_error_s=TIMING_ERROR_S,
    printed_resolution_bps=lambda v, fmt: three_digits(v) if fmt == "text" else 0.0,
    cpu_words="cpu_utilization_percent host_total: the iperf3 process's own CPU time",
    name=NAME, display="iperf3", params=Iperf3Params, driver=Iperf3Driver(),
    parse=parse, looks_like=looks_like,
    executables={'linux': 'iperf3', 'windows': 'iperf3.exe'},
    version=VersionProbe(args=("--version",), regex=r"iperf (\d+\.\d+(?:\.\d+)?)"),
    result=Shape.RATE, detect_priority=10,
    units="JSON bits_per_second in bit/s; text rates with SI prefixes, byte amounts with binary prefixes")
