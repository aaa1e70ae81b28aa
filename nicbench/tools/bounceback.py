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
  nearest-rank sample ``ceil(q n)``; within its bin it is interpolated linearly between the
  bin's edges, clipped to the run's exact min and max. So a percentile is exact to within
  one bin (100 us), never outside the bin its sample lies in nor outside [min, max]; samples
  above the histogram's range (``obu``) count as the max;
* ``trimmed_mean_us``: the mean of the round trips at or below the 95th percentile (the
  single-sided trimmed mean of draft-ietf-ippm-responsiveness-08, section 5.3.1), from the
  same histogram: the samples of a bin taken evenly spread over its clipped edges.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from nicbench.errors import ParseError
from nicbench.tools.base import IPERF_NUM, Latency, ParsedRun, iperf_bytes, iperf_row_re

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


def percentile(h: Histogram, q: float, lo_us: float, hi_us: float) -> float:
    """The nearest-rank q-quantile (0 < q <= 1), interpolated within its bin."""
    n = h.count
    rank = max(1, math.ceil(q * n - 1e-9))
    before = 0
    for low, high, c in h.spread(lo_us, hi_us):
        if before + c >= rank:
            return low + (high - low) * (rank - before) / c
        before += c
    return hi_us


def trimmed_mean(h: Histogram, keep_pct: float, lo_us: float, hi_us: float) -> float:
    """The mean of the lowest ``keep_pct`` % of the samples, each bin's samples evenly
    spread over its clipped edges."""
    keep = max(1, math.floor(h.count * keep_pct / 100.0 + 1e-9))
    total, taken = 0.0, 0
    for low, high, c in h.spread(lo_us, hi_us):
        for j in range(min(c, keep - taken)):
            total += low + (high - low) * (j + 0.5) / c
        taken += min(c, keep - taken)
        if taken >= keep:
            break
    return total / taken


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


def parse_bounceback(lines: list[str], version: str | None = None) -> ParsedRun:
    """A bounce-back client's output as a ParsedRun whose ``latency`` holds its round trips
    (``throughput_bps`` None: the probe's few bytes are not a rate of the link)."""
    size: int | None = None
    whole: tuple[re.Match[str], re.Match[str], int] | None = None
    hist: Histogram | None = None
    errors: list[str] = []
    extra: dict[str, Any] = {"format": "text", "side": "client", "mode": "bounceback"}
    last = 0
    for lineno, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line:
            continue
        last = lineno
        if m := BOUNCEBACK_HDR.match(line):
            size = round(iperf_bytes(float(m["size"]), m["prefix"]))
        elif m := _PDF.match(line):
            if m["final"] or hist is None:
                hist = _histogram(m, lineno)
        elif (m := _ROW.match(line)) and (b := _BB_REST.match(m["rest"])):
            # the whole-run row starts at 0 and is the last such row
            if abs(float(m["start"])) < 1e-9 and (whole is None or
                                                 float(m["end"]) >= float(whole[0]["end"])):
                whole = (m, b, lineno)
        elif _ERROR.match(line):
            errors.append(line)
    error = errors[0] if errors else None
    if whole is None:
        if error is not None:
            return ParsedRun(tool=NAME, protocol="tcp", throughput_bps=None, version=version,
                             error=error, extra=extra)
        raise ParseError(NAME, "a bounce-back whole-run row '[ ID] 0.0000-T sec ... "
                         "cnt=avg/min/max/stdev ms'", f"line {last}: end of input")
    row, bb, lineno = whole
    samples = int(bb["cnt"])
    if size is None:
        raise ParseError(NAME, "the 'Bounce-back test (size=...)' header", f"line {lineno}")
    if hist is None:
        raise ParseError(NAME, "a bounce-back histogram row '... BB8(f)-PDF: bin(w=..)...'",
                         f"line {last}: end of input")
    if hist.count != samples:
        raise ParseError(NAME, f"a histogram of the whole run's {samples} round trips",
                         f"its cnt is {hist.count} (output cut short?)")
    lo, hi = float(bb["min"]) * 1000.0, float(bb["max"]) * 1000.0
    latency = Latency(
        samples=samples, message_bytes=size,
        p50_us=percentile(hist, 0.50, lo, hi), p90_us=percentile(hist, 0.90, lo, hi),
        p99_us=percentile(hist, 0.99, lo, hi), p999_us=percentile(hist, 0.999, lo, hi),
        max_us=hi, min_us=lo, mean_us=float(bb["avg"]) * 1000.0,
        trimmed_mean_us=trimmed_mean(hist, TRIM_PCT, lo, hi))
    extra["histogram_bin_us"] = hist.width_us
    extra["stdev_us"] = float(bb["stdev"]) * 1000.0
    if bb["rps"]:
        extra["rps"] = float(bb["rps"])
    return ParsedRun(tool=NAME, protocol="tcp", throughput_bps=None, version=version,
                     duration_s=float(row["end"]) - float(row["start"]), streams=1,
                     error=error, extra=extra, latency=latency)
