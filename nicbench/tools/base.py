"""The record every tool parser returns, and unit conversions shared by parsers.

Parsers are pure functions ``text -> ParsedRun``: they never touch a connection, and they
convert every unit exactly once, here, into SI: throughput in bit/s (10^6 bit/s = 1 Mbit/s),
sizes in bytes, durations in seconds, CPU in percent.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from nicbench.errors import ParseError

Protocol = Literal["tcp", "udp"]

# Unit factors. Tools disagree on prefixes; each parser names which one it uses.
KIB = 1024
MIB = 1024 * 1024
GIB = 1024 ** 3
MBIT_SI = 1_000_000
MBIT_BINARY = 1 << 20  # netPIPE's "Mbps" is 2^20 bit/s


def three_digits(value_bps: float) -> float:
    """The last printed digit of a figure printed to three significant digits, bit/s
    (iperf 2's ``byte_snprintf``, iperf3's ``unit_snprintf``: ``%4.2f`` below 10, ``%4.1f``
    below 100, ``%4.0f`` above, in an adaptive unit)."""
    if value_bps <= 0:
        return 0.0
    return 10.0 ** (math.floor(math.log10(value_bps)) - 2)

# iperf (2 and 3) text output: "K/M/G" in byte amounts are binary, in rates SI.
_IPERF_BYTES = {"": 1, "K": KIB, "M": MIB, "G": GIB, "T": 1024 ** 4}
_IPERF_BITS = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


IPERF_NUM = r"\d+(?:\.\d+)?"


def iperf_row_re(sid: str) -> re.Pattern:
    """A text result row of iperf 2 or 3: ``[  5]   0.00-1.00  sec   112 MBytes   941 Mbits/sec``
    and what follows it (``rest``); ``sid`` is the pattern of the bracketed stream id. Rates
    can be printed in bytes/sec when the user passed -f K/M/G."""
    n = IPERF_NUM
    return re.compile(
        rf"^\[\s*(?P<sid>{sid})\]\s+(?P<start>{n})\s*-\s*(?P<end>{n})\s+sec\s+"
        rf"(?P<xfer>{n})\s+(?P<xprefix>[KMGT]?)Bytes\s+"
        rf"(?P<rate>{n})\s+(?P<rprefix>[KMGTkmgt]?)(?P<runit>bits|Bytes)/sec(?P<rest>.*)$")


def iperf_bytes(value: float, prefix: str) -> float:
    """``1.81 GBytes`` -> bytes (iperf uses 1024-based prefixes for byte amounts)."""
    return value * _IPERF_BYTES[prefix.upper()]


def iperf_bits(value: float, prefix: str) -> float:
    """``15.5 Gbits/sec`` -> bit/s (iperf uses 1000-based prefixes for rates)."""
    return value * _IPERF_BITS[prefix.upper()]


def iperf_row_rate(m: re.Match[str]) -> float:
    """The rate of an :func:`iperf_row_re` match in bit/s: ``941 Mbits/sec`` is 1000-based,
    a byte rate (``-f K/M/G``: ``112 MBytes/sec``) 1024-based like every iperf byte unit."""
    rate = float(m["rate"])
    if m["runit"] == "Bytes":
        return iperf_bytes(rate, m["rprefix"]) * 8
    return iperf_bits(rate, m["rprefix"])


@dataclass(frozen=True)
class UdpStats:
    lost: int | None = None
    total: int | None = None
    loss_pct: float | None = None
    jitter_ms: float | None = None


@dataclass(frozen=True)
class Latency:
    """Round-trip times of one latency run (request/response of small messages), in
    microseconds, over ``samples`` round trips of ``message_bytes`` each. The percentiles
    are the tool's own where it prints them, else taken from its per-sample output (or its
    histogram: the tool's parser says how). ``trimmed_mean_us``: the mean of the round trips
    at or below the 95th percentile (the trimmed mean of draft-ietf-ippm-responsiveness,
    from which a responsiveness score is computed), where the output allows it."""

    samples: int
    message_bytes: int
    p50_us: float
    p90_us: float
    p99_us: float
    p999_us: float
    max_us: float
    min_us: float | None = None
    mean_us: float | None = None
    trimmed_mean_us: float | None = None


@dataclass(frozen=True)
class Bidir:
    """Both directions of one bidirectional run (iperf3 ``--bidir``), in bit/s, each summed
    over its streams. ``forward`` is client to server: its received rate is the run's
    ``throughput_bps``, so a bidirectional figure is compared with one-way figures like
    with like; ``reverse`` is server to client, at once over the same link. A rate the
    output does not know (a server never learns what the client received) is None."""

    forward_bps: float
    reverse_bps: float | None
    forward_sent_bps: float | None = None
    reverse_sent_bps: float | None = None

    @property
    def total_bps(self) -> float | None:
        """What reached both receivers: on a full-duplex link at most twice one direction."""
        return None if self.reverse_bps is None else self.forward_bps + self.reverse_bps


@dataclass(frozen=True)
class Point:
    """One message size of a size sweep (netPIPE, netio)."""

    size_bytes: int
    throughput_bps: float
    tx_bps: float | None = None
    rx_bps: float | None = None


@dataclass(frozen=True)
class ParsedRun:
    """What one run of a tool printed, in SI units.

    ``throughput_bps`` is the aggregate over all streams of the rate that reached the
    receiver where the output shows it (UDP server report, iperf3 ``sum_received``), else
    the sender's rate. ``sent_bps`` is the sender's rate when known. ``error`` holds the
    tool's own error text when the tool reported one (iperf3 exits 0 with an "error" key).
    """

    tool: str
    protocol: str                 # "tcp" | "udp" (Protocol)
    throughput_bps: float | None
    version: str | None = None
    duration_s: float | None = None
    streams: int | None = None
    cpu_pct: float | None = None
    udp: UdpStats | None = None
    points: tuple[Point, ...] = ()
    bytes_total: float | None = None
    sent_bps: float | None = None
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    latency: Latency | None = None
    # Set by a driver, never by a parser: the receiver printed no report, so the transfer
    # never ended there (a stalled link), whatever the sender printed.
    no_receiver_report: bool = False
    # A bidirectional run's two directions (iperf3 --bidir); None for a one-way run.
    bidir: Bidir | None = None

    def __post_init__(self) -> None:
        # A NaN or an infinity is never a measurement (a corrupted file, an overflowed
        # sum): refused here, whichever parser read it, so no row shows "inf" or "-".
        bad = _non_finite(self)
        if bad is not None:
            raise ParseError(self.tool, "finite numbers", f"{bad[0]} is {bad[1]}")

    def to_json(self) -> dict[str, Any]:
        """The object ``nicbench parse --json`` prints."""
        out: dict[str, Any] = {
            "tool": self.tool,
            "version": self.version,
            "protocol": self.protocol,
            "throughput_bps": self.throughput_bps,
            "duration_s": self.duration_s,
            "streams": self.streams,
            "cpu_pct": self.cpu_pct,
            "udp": asdict(self.udp) if self.udp else None,
            "points": [asdict(p) for p in self.points],
        }
        if self.sent_bps is not None:
            out["sent_bps"] = self.sent_bps
        if self.bytes_total is not None:
            out["bytes_total"] = self.bytes_total
        if self.error is not None:
            out["error"] = self.error
        if self.extra:
            out["extra"] = self.extra
        if self.latency is not None:
            out["latency"] = asdict(self.latency)
        if self.bidir is not None:
            out["bidir"] = asdict(self.bidir)
        return out


def _non_finite(run: ParsedRun) -> tuple[str, float] | None:
    """The first float of a run (fields, udp, points, extra) that is NaN or infinite, with
    its path. Written out flat: a netPIPE sweep can hold 10^5 points."""
    for name in ("throughput_bps", "duration_s", "cpu_pct", "bytes_total", "sent_bps"):
        value = getattr(run, name)
        if isinstance(value, float) and not math.isfinite(value):
            return name, value
    if run.udp is not None:
        for name in ("loss_pct", "jitter_ms"):
            value = getattr(run.udp, name)
            if isinstance(value, float) and not math.isfinite(value):
                return f"udp.{name}", value
    if run.latency is not None:
        for name, value in asdict(run.latency).items():
            if isinstance(value, float) and not math.isfinite(value):
                return f"latency.{name}", value
    if run.bidir is not None:
        for name, value in asdict(run.bidir).items():
            if isinstance(value, float) and not math.isfinite(value):
                return f"bidir.{name}", value
    for i, p in enumerate(run.points):
        for name, value in (("throughput_bps", p.throughput_bps), ("tx_bps", p.tx_bps),
                            ("rx_bps", p.rx_bps)):
            if isinstance(value, float) and not math.isfinite(value):
                return f"points[{i}].{name}", value
    todo: list[tuple[str, Any]] = [("extra", run.extra)]
    while todo:
        where, value = todo.pop()
        if isinstance(value, float) and not math.isfinite(value):
            return where, value
        if isinstance(value, dict):
            todo.extend((f"{where}.{k}", v) for k, v in value.items())
        elif isinstance(value, (list, tuple)):
            todo.extend((f"{where}[{i}]", v) for i, v in enumerate(value)
                        if not isinstance(v, (int, float)) or not math.isfinite(v))
    return None
