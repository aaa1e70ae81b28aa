"""netio (Kai Uwe Rommel): pure parser for the client's console output.

Turns what a ``netio`` client printed into a :class:`ParsedRun` with one :class:`Point` per
packet size (in the order printed). It runs nothing.

Formats, and where each one's layout comes from
-----------------------------------------------
``netio_1.13``  one direction (the client sends), ``TCP/IP connection established.`` then
    ``Packet size  1 k bytes:   10259 k bytes/sec``. Layout from real netio 1.13 output posted
    to linux-kernel (2001-12-13, Message-Id <20011213194555.50d6adeb.rene.rebe@gmx.net>); no
    1.13 source was found, so "k" is taken as 1024 bytes as in the 1.14 source below.
``netio_1.14``  one direction: ``printf("Packet size %2d KByte: ", ...)`` then
    ``printf("  %.0f KByte/s\\n", ...)`` or ``"  %.0f Byte/s\\n"`` under 100 KByte/s
    (netio.c rev 1.14, 2001/04/19, TcpIpBench()). Kilo = 1024: StopTimer(&t, 1024) returns
    time in 1/1024 s and KByte/s = bytes / that.
``netio_1.2x``  bidirectional since rev 1.15: ``printf("Packet size %s bytes: ",
    PacketSize(n))`` with PacketSize = ``"%2dk"`` for multiples of 1024 (and 1023: netio's
    largest TCP size is 32767 bytes, printed "32k") else ``"%d"``; then for each of Tx and Rx
    ``" %ld Byte/s"`` below 100 KByte/s per interval else ``" %ld KByte/s"`` -- so one line
    can mix Byte/s and KByte/s -- then ``" Tx, "`` / ``" Rx.\\n"``; UDP (rev 1.18+) adds the
    loss ``" (%ld%%)"`` before Tx/Rx. Checked against the 1.21 UDP and 1.26 TCP samples.
``netio_1.28+`` same line, numbers from print_result(): ``" %0.0f Byte/s"``,
    ``" %0.2f KByte/s"``, ``" %0.2f MByte/s"``, ``" %0.3f GByte/s"`` (netio.c rev 1.32,
    2012/11/22; rev 1.28 "changed number output from bytes/KB to bytes/KB/MB").
    A failed timer prints ``" (failed)"`` instead of a number; such output is refused.

Units: every K/M/G here is binary (1 KByte = 1024 bytes), so KByte/s -> bit/s is x * 1024 * 8;
converted once, here. ``size_bytes`` is k * 1024 for a "<k>k" size (so netio's 32767-byte TCP
block shows as 32768) and the printed number for a plain size. ``throughput_bps`` of a point
is its Tx rate; the run's ``throughput_bps`` is the largest Tx over the points. UDP loss per
point is kept in ``extra["udp_loss_pct"]``. netio uses one connection per direction, and its
duration per size (6 s in 1.2x+, 10 s in 1.14) is not printed, so ``duration_s`` is None.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field, field_validator

from nicbench.config.fields import Int, Size, Strict
from nicbench.errors import ParseError
from nicbench.tools.base import GIB, KIB, MIB, ParsedRun, Point
from nicbench.tools.driver import Driver, Endpoints, Plan, Shape, Tool, VersionProbe
from nicbench.tools.scan import Line, Scanner

NAME = "netio"

_BYTES = {"Byte": 1, "KByte": KIB, "MByte": MIB, "GByte": GIB, "k byte": KIB}

_BANNER = re.compile(r"NETIO - Network Throughput Benchmark, Version (?P<v>\S+)")
_CONNECTED = re.compile(r"^(?P<proto>TCP/IP|TCP|UDP|NetBIOS) connection established\.$")
_RATE = r"(?P<{n}>\d+(?:\.\d+)?) (?P<{n}u>Byte|KByte|MByte|GByte)/s(?: \((?P<{n}loss>\d+)%\))?"
_LINE_2X = re.compile(
    r"^Packet size\s+(?P<size>\d+k|\d+) bytes:\s+"
    + _RATE.format(n="tx") + r" Tx,\s+" + _RATE.format(n="rx") + r" Rx\.$")
_LINE_114 = re.compile(
    r"^Packet size\s+(?P<k>\d+) KByte:\s+(?P<tx>\d+(?:\.\d+)?) (?P<txu>Byte|KByte)/s$")
_LINE_113 = re.compile(
    r"^Packet size\s+(?P<k>\d+) k bytes:\s+(?P<tx>\d+(?:\.\d+)?) k bytes/sec$")
_PACKET = re.compile(r"^Packet size\b")


def looks_like(text: str) -> bool:
    """True when ``text`` has netio's banner or its client result lines."""
    return bool(_BANNER.search(text)) or any(
        _LINE_2X.match(s) or _LINE_114.match(s) or _LINE_113.match(s)
        for s in (ln.strip() for ln in text.splitlines()))


@dataclass
class _Run:
    """What a netio client's output says, line by line (the scanner's rules in parse)."""

    protocol: str | None = None
    points: list[Point] = field(default_factory=list)
    losses: list[dict[str, Any]] = field(default_factory=list)
    layout: str | None = None

    def connected(self, c: re.Match[str], line: Line) -> None:
        proto = c["proto"]
        if proto == "NetBIOS":
            raise ParseError(NAME, "a TCP or UDP benchmark (NetBIOS is not measured here)",
                             f"line {line.number}: {line.text!r}")
        self.protocol = "udp" if proto == "UDP" else "tcp"

    def packet(self, m: re.Match[str], line: Line) -> None:
        text = line.text
        if m2 := _LINE_2X.match(text):
            this = "netio_1.2x"
            size_txt = m2["size"]
            size = int(size_txt[:-1]) * KIB if size_txt.endswith("k") else int(size_txt)
            tx = float(m2["tx"]) * _BYTES[m2["txu"]] * 8
            rx = float(m2["rx"]) * _BYTES[m2["rxu"]] * 8
            self.points.append(Point(size_bytes=size, throughput_bps=tx, tx_bps=tx, rx_bps=rx))
            if m2["txloss"] is not None or m2["rxloss"] is not None:
                self.losses.append({"size_bytes": size,
                                    "tx_loss_pct": _pct(m2["txloss"]),
                                    "rx_loss_pct": _pct(m2["rxloss"])})
        elif m1 := (_LINE_114.match(text) or _LINE_113.match(text)):
            this = "netio_1.1x"
            unit = m1.groupdict().get("txu") or "k byte"
            tx = float(m1["tx"]) * _BYTES[unit] * 8
            self.points.append(Point(size_bytes=int(m1["k"]) * KIB, throughput_bps=tx,
                                     tx_bps=tx, rx_bps=None))
        else:
            hint = " (netio's timer failed for this size)" if "(failed)" in text else ""
            raise ParseError(NAME, "a result line like 'Packet size  1k bytes:  72320 KByte/s "
                             f"Tx,  86656 KByte/s Rx.'{hint}", f"line {line.number}: {text!r}")
        if self.layout is not None and this != self.layout:
            raise ParseError(NAME, f"every result line in the layout of the first "
                             f"({self.layout})", f"line {line.number}: {text!r}")
        self.layout = this


def parse(text: str) -> ParsedRun:
    """Parse a netio client's output (1.1x, 1.2x, 1.28+; TCP or UDP) into per-size Points."""
    lines = text.splitlines()
    if not any(ln.strip() for ln in lines):
        raise ParseError(NAME, "netio client output", "empty input")
    version = m["v"] if (m := _BANNER.search(text)) else None
    run = _Run()
    Scanner([(_CONNECTED, run.connected), (_PACKET, run.packet)]).scan(lines)
    protocol, points, losses, layout = run.protocol, run.points, run.losses, run.layout
    if not points:
        raise ParseError(NAME, "netio client result lines ('Packet size ... bytes: ...'); "
                         "the server side prints none", f"end of input after line {len(lines)}")
    if protocol is None:
        # 1.1x clients only speak TCP (or NetBIOS, refused above); a 1.2x+ line without the
        # "connection established" line is a fragment we cannot place.
        if layout == "netio_1.1x":
            protocol = "tcp"
        else:
            raise ParseError(NAME, "a 'TCP connection established.' or 'UDP connection "
                             "established.' line before the results", "line 1")
    if protocol == "tcp" and losses:
        raise ParseError(NAME, "no loss figures in a TCP run", "the result lines")
    extra: dict[str, Any] = {"format": layout, "kbyte_bytes": KIB}
    if losses:
        extra["udp_loss_pct"] = losses
    return ParsedRun(
        tool=NAME,
        protocol=protocol,
        throughput_bps=max(p.throughput_bps for p in points),
        version=version,
        duration_s=None,
        streams=1,
        points=tuple(points),
        extra=extra,
    )


def _pct(raw: str | None) -> float | None:
    return None if raw is None else float(raw)


# -- parameters, driver and the tool -------------------------------------------------
class NetioParams(Strict):
    port: Int = Field(18767, ge=1024, le=65535)
    # netio -b: one block size; unset, netio runs its own series 1k, 2k, ... 32k
    block: Size | None = None

    @field_validator("block")
    @classmethod
    def _whole_kib(cls, v):
        if v is not None and (v % 1024 or v == 0):
            raise ValueError(f"{v} bytes: netio -b takes whole kilobytes (1K ... 32K)")
        return v


class NetioDriver(Driver):
    params = NetioParams

    def plan(self, exe_server: str, exe_client: str, raw_params: dict[str, Any],
             ends: Endpoints, tag: str) -> Plan:
        p = self.parse_params(raw_params)
        flag = "-u" if ends.protocol == "udp" else "-t"
        return Plan(server=[exe_server, "-s", flag, "-p", str(p.port)],
                    client=[exe_client, flag, "-p", str(p.port),
                            *(["-b", f"{p.block // 1024}k"] if p.block else []),
                            ends.receiver_addr],
                    port=p.port, listen_protocol=ends.protocol, server_exits=False,
                    expected_s=None)

    def interpret(self, client_text: str, server_text: str, outfile_text: str | None,
                  protocol: str) -> ParsedRun:
        return parse(client_text)


# The bound's allowance for netio's timing (results.plausible.above_bound): each block size
# is sent for a few seconds timed by its own millisecond clock, the last buffer's bytes on
# either side of the end: 10 ms over the time of one size's transfer.
TIMING_ERROR_S = 0.01
KBYTE_BITS = KIB * 8     # it prints whole KByte/s (1024 bytes) in its older formats

TOOL = Tool(
    timing_error_s=TIMING_ERROR_S,
    printed_resolution_bps=lambda v, fmt: KBYTE_BITS,
    name=NAME, display="netio", params=NetioParams, driver=NetioDriver(),
    parse=parse, looks_like=looks_like,
    executables={'linux': 'netio', 'windows': 'netio.exe'},
    version=VersionProbe(regex=r"Version (\d+\.\d+)"),
    result=Shape.SIZES, detect_priority=40,
    units="KByte/s = 1024 bytes/s")
