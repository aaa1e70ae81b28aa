"""iperf 2's bounce-back test (``iperf -c HOST --bounceback -e``; the 2.1 series has it,
2.1.8 here, 2.0.x not): what its client printed, read into round-trip times. A pure
function of the text, used by ``iperf2.parse`` when the output is a bounce-back run.

The client writes a message of ``-l`` bytes (100 by default) on a TCP connection of its
own; the server writes it straight back (TCP_QUICKACK on, no hold); the client times each
round trip from its write to the end of the echo's read. It sends bursts of 10 round trips
every ``--bounceback-period`` seconds (1 by default), or back to back with period 0.

What iperf 2.1.8 prints, and how each figure of :class:`~nicbench.tools.base.Latency` is
obtained from it::

    Bounce-back test (size=64.0 Byte) (server hold req=0 usecs & tcp_quickack)
    [ ID] Interval            Transfer    Bandwidth         BB cnt=avg/min/max/stdev   ...
    [  1] 0.0000-2.0154 sec  2.50 KBytes  10.2 Kbits/sec    20=0.040/0.017/0.334/0.071 ms ...
    [  1] 0.0000-2.0154 sec BB8(f)-PDF: bin(w=100us):cnt(20)=1:19,4:1 (5.00/95.00/99.7%=1/4/4,...)

* ``samples``, ``mean_us``, ``min_us``, ``max_us``: the whole-run row (the row from 0.0
  over the whole run) ``cnt=avg/min/max/stdev ms``, exact (printed to the microsecond);
* ``message_bytes``: the header's ``size=``;
* ``p50_us`` ... ``p999_us``: iperf prints no percentiles but its 5/95/99.7 % bins, so they
  are read off the final histogram (``BB8(f)-PDF``): bin label ``k`` counts the round trips
  in [(k-1) w, k w) (``histogram_insert``: ``bin = (int)(value / w)``, printed ``ix+1``),
  with w = 100 us in iperf 2.1.8 whatever ``--histograms`` says. The percentile q is the
  nearest-rank sample ``ceil(q n)``; all the histogram says of it is its bin, clipped to
  the run's exact min and max: the field holds the bin's upper edge (a bound the data
  vouch for, never an interpolation inside the bin), ``extra["p50_low_us"]`` ... the lower
  edge. Samples above the histogram's range (``obu``) count as the max. (Interpolating
  put a gbe median at 58.5 us where iperf's exact mean was 42 us.) A configuration's
  percentiles pool the repetitions' histograms (``results/roundtrips.py``);
* ``trimmed_mean_us``: the mean of the round trips at or below the 95th percentile (the
  single-sided trimmed mean of draft-ietf-ippm-responsiveness-08, section 5.3.1), an upper
  bound from the same histogram: each kept sample at its bin's upper edge, and never above
  the exact mean (trimming the top can only lower it); ``extra["trimmed_mean_low_us"]``
  the lower bound (each at its bin's lower edge).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from nicbench.errors import ParseError
from nicbench.tools.base import IPERF_NUM, Latency, ParsedRun, iperf_bytes, iperf_row_re
from nicbench.tools.scan import Line, Rule, Scanner

NAME = "iperf2"
_NUM = IPERF_NUM
TRIM_PCT = 95.0          # the draft's TMP: what a trimmed mean keeps

BOUNCEBACK_HDR = re.compile(rf"^Bounce-back test \(size=\s*(?P<size>{_NUM})\s*(?P<prefix>[KMG]?)Byte")
_ROW = iperf_row_re(r"\d+")
# "   20=0.040/0.017/0.334/0.071 ms" after the bandwidth column.
_BB_REST = re.compile(rf"^\s*(?P<cnt>\d+)=(?P<avg>{_NUM})/(?P<min>{_NUM})/(?P<max>{_NUM})/"
                      rf"(?P<stdev>{_NUM})\s+ms(?:.*?(?P<rps>{_NUM})\s+rps)?")
_PDF = re.compile(rf"^\[\s*\d+\]\s+(?P<start>{_NUM})\s*-\s*(?P<end>{_NUM})\s+sec\s+BB8(?P<final>\(f\))?"
                  r"-PDF:\s+bin\(w=(?P<w>\d+)(?P<unit>us|ms)\):cnt\((?P<cnt>\d+)\)=(?P<bins>[\d:,]*)"
                  r"(?:\s+\(.*obl/obu=(?P<obl>\d+)/(?P<obu>\d+)\))?")
_ERROR = re.compile(r"^(?:(?:tcp|udp) )?[A-Za-z][\w ]*? failed: .+$|^ERROR\b.*$")


def is_bounceback(lines: list[str]) -> bool:
    """Whether an iperf 2 client's output is a bounce-back run."""
    return any(BOUNCEBACK_HDR.match(ln.strip()) or _PDF.match(ln.strip()) for ln in lines)


@dataclass(frozen=True)
class Histogram:
    """A bounce-back histogram: bin width in us, (bin label, count) pairs in order, the
    samples above its range."""

    width_us: float
    bins: tuple[tuple[int, int], ...]
    above: int = 0
    below: int = 0

    @property
    def count(self) -> int:
        return sum(c for _, c in self.bins) + self.above + self.below

    def spread(self, lo_us: float, hi_us: float) -> list[tuple[float, float, int]]:
        """(low, high, count) per bin, the edges clipped to the run's [min, max]; the
        samples outside the range as a bin at the min or the max."""
        out = [(lo_us, lo_us, self.below)] if self.below else []
        for label, n in self.bins:
            low = min(max((label - 1) * self.width_us, lo_us), hi_us)
            high = max(min(label * self.width_us, hi_us), low)
            out.append((low, high, n))
        if self.above:
            out.append((hi_us, hi_us, self.above))
        return out


def percentile_bin(h: Histogram, q: float, lo_us: float, hi_us: float) -> tuple[float, float]:
    """The bin (low, high edges, clipped to [min, max]) holding the nearest-rank
    q-quantile (0 < q <= 1): all a histogram says of it."""
    n = h.count
    rank = max(1, math.ceil(q * n - 1e-9))
    before = 0
    for low, high, c in h.spread(lo_us, hi_us):
        if before + c >= rank:
            return low, high
        before += c
    return hi_us, hi_us


def trimmed_mean_bounds(h: Histogram, keep_pct: float, lo_us: float,
                        hi_us: float) -> tuple[float, float]:
    """Bounds of the mean of the lowest ``keep_pct`` % of the samples: each kept sample at
    its bin's lower edge, and at its upper edge."""
    keep = max(1, math.floor(h.count * keep_pct / 100.0 + 1e-9))
    low_sum = high_sum = 0.0
    taken = 0
    for low, high, c in h.spread(lo_us, hi_us):
        k = min(c, keep - taken)
        low_sum += low * k
        high_sum += high * k
        taken += k
        if taken >= keep:
            break
    return low_sum / taken, high_sum / taken


def _histogram(m: re.Match[str], lineno: int) -> Histogram:
    width = float(m["w"]) * (1000.0 if m["unit"] == "ms" else 1.0)
    bins = []
    for part in filter(None, m["bins"].split(",")):
        label, _, count = part.partition(":")
        if not label.isdigit() or not count.isdigit():
            raise ParseError(NAME, "histogram bins 'bin:count,...'", f"line {lineno}: {part!r}")
        bins.append((int(label), int(count)))
    h = Histogram(width, tuple(bins), int(m["obu"] or 0), int(m["obl"] or 0))
    if h.count != int(m["cnt"]):
        raise ParseError(NAME, f"histogram bins adding up to cnt({m['cnt']})",
                         f"line {lineno}: they add up to {h.count}")
    return h


@dataclass
class _Read:
    """What a bounce-back client's output says, line by line (the scanner's rules)."""

    size: int | None = None
    whole: tuple[re.Match[str], re.Match[str], int] | None = None
    hist: Histogram | None = None
    errors: list[str] = field(default_factory=list)
    last: int = 0

    def rules(self) -> list[Rule]:
        return [(BOUNCEBACK_HDR, self.header), (_PDF, self.pdf), (_ROW, self.row),
                (_ERROR, self.error)]

    def header(self, m: re.Match[str], line: Line) -> None:
        self.size = round(iperf_bytes(float(m["size"]), m["prefix"]))

    def pdf(self, m: re.Match[str], line: Line) -> None:
        if m["final"] or self.hist is None:
            self.hist = _histogram(m, line.number)

    def row(self, m: re.Match[str], line: Line) -> bool:
        if (b := _BB_REST.match(m["rest"])) is None:
            return False           # a row of another kind: the error rule may take it
        # the whole-run row starts at 0 and is the last such row
        if abs(float(m["start"])) < 1e-9 and (
                self.whole is None or float(m["end"]) >= float(self.whole[0]["end"])):
            self.whole = (m, b, line.number)
        return True

    def error(self, m: re.Match[str], line: Line) -> None:
        self.errors.append(line.text)


def _read(lines: list[str]) -> _Read:
    out = _Read()
    out.last = Scanner(out.rules()).scan(lines)
    return out


def _checked(r: _Read) -> tuple[Histogram, re.Match[str], re.Match[str], int]:
    if r.whole is None:
        raise ParseError(NAME, "a bounce-back whole-run row '[ ID] 0.0000-T sec ... "
                         "cnt=avg/min/max/stdev ms'", f"line {r.last}: end of input")
    row, bb, lineno = r.whole
    if r.hist is None:
        raise ParseError(NAME, "a bounce-back histogram row '... BB8(f)-PDF: bin(w=..)...'",
                         f"line {r.last}: end of input")
    if r.hist.count != int(bb["cnt"]):
        raise ParseError(NAME, f"a histogram of the whole run's {bb['cnt']} round trips",
                         f"its cnt is {r.hist.count} (output cut short?)")
    return r.hist, row, bb, lineno


def final_histogram(lines: list[str]) -> tuple[Histogram, float, float]:
    """A bounce-back client's final histogram with the run's exact min and max (us), the
    edges its bins are clipped to. ParseError if the output has none."""
    hist, _, bb, _ = _checked(_read(lines))
    return hist, float(bb["min"]) * 1000.0, float(bb["max"]) * 1000.0


def parse_bounceback(lines: list[str], version: str | None = None) -> ParsedRun:
    """A bounce-back client's output as a ParsedRun whose ``latency`` holds its round trips
    (``throughput_bps`` None: the probe's few bytes are not a rate of the link)."""
    extra: dict[str, Any] = {"format": "text", "side": "client", "mode": "bounceback"}
    r = _read(lines)
    error = r.errors[0] if r.errors else None
    if r.whole is None and error is not None:
        return ParsedRun(tool=NAME, protocol="tcp", throughput_bps=None, version=version,
                         error=error, extra=extra)
    if r.whole is not None and r.size is None:
        raise ParseError(NAME, "the 'Bounce-back test (size=...)' header",
                         f"line {r.whole[2]}")
    hist, row, bb, _ = _checked(r)
    assert r.size is not None
    lo, hi = float(bb["min"]) * 1000.0, float(bb["max"]) * 1000.0
    mean = float(bb["avg"]) * 1000.0
    bins = {name: percentile_bin(hist, q, lo, hi) for name, q in
            (("p50", 0.50), ("p90", 0.90), ("p99", 0.99), ("p999", 0.999))}
    trim_lo, trim_hi = trimmed_mean_bounds(hist, TRIM_PCT, lo, hi)
    latency = Latency(
        samples=int(bb["cnt"]), message_bytes=r.size,
        p50_us=bins["p50"][1], p90_us=bins["p90"][1], p99_us=bins["p99"][1],
        p999_us=bins["p999"][1], max_us=hi, min_us=lo, mean_us=mean,
        trimmed_mean_us=min(trim_hi, mean))
    extra.update({f"{name}_low_us": low for name, (low, _) in bins.items()})
    extra["trimmed_mean_low_us"] = min(trim_lo, mean)
    extra["histogram_bin_us"] = hist.width_us
    extra["stdev_us"] = float(bb["stdev"]) * 1000.0
    if bb["rps"]:
        extra["rps"] = float(bb["rps"])
    return ParsedRun(tool=NAME, protocol="tcp", throughput_bps=None, version=version,
                     duration_s=float(row["end"]) - float(row["start"]), streams=1,
                     error=error, extra=extra, latency=latency)
