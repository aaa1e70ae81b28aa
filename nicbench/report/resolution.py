"""The resolution a tool printed a figure at: no difference finer than it is a measurement.

A tool that prints text rounds its figure before nicbench reads it; what it printed is
all there is. From each tool's printf format (see its parser's docstring):

- iperf 2 and iperf3 text (``byte_snprintf`` / ``unit_snprintf``): three significant
  digits in an adaptive unit, ``%4.2f`` below 10, ``%4.1f`` below 100, ``%4.0f`` above:
  "943 Mbits/sec" (1 Mbit/s), "94.1 Mbits/sec" (0.1), "2.40 Gbits/sec" (10 Mbit/s);
- iperf3 JSON, iperf 2 CSV, netPIPE's output files (``%lf``), NTttcp's XML and JSON: the
  figure in full (bit/s or better): no resolution to speak of;
- netPIPE's console (``%8.2lf`` / ``%6.2lf`` "Mbps" of 2^20 bit/s): 0.01 x 2^20 bit/s;
- netio: whole KByte/s (1024 bytes) in its older formats, at least that in the newer.

A resolution of 0 means "finer than anything a comparison cares about".
"""

from __future__ import annotations

import math

from nicbench.results.records import TrialRecord
from nicbench.tools.base import MBIT_BINARY

_THREE_DIGITS = {("iperf2", "text"), ("iperf3", "text")}
_NETPIPE_CONSOLE = {"np3_screen", "np2_screen"}
KBYTE_BITS = 1024 * 8


def three_digits(value_bps: float) -> float:
    """The last printed digit of a figure printed to three significant digits, bit/s."""
    if value_bps <= 0:
        return 0.0
    return 10.0 ** (math.floor(math.log10(value_bps)) - 2)


def resolution_bps(rec: TrialRecord) -> float:
    """The resolution of the throughput the tool printed for this trial, bit/s."""
    fmt = str(rec.extra.get("format") or "")
    value = rec.throughput_bps or 0.0
    if (rec.tool, fmt) in _THREE_DIGITS:
        return three_digits(value)
    if rec.tool == "netpipe" and fmt in _NETPIPE_CONSOLE:
        return 0.01 * MBIT_BINARY
    if rec.tool == "netio":
        return KBYTE_BITS
    return 0.0


def sample_resolution_bps(records: list[TrialRecord]) -> float:
    """The coarsest resolution among the trials: the figures cannot be told apart finer."""
    return max((resolution_bps(r) for r in records if r.ok), default=0.0)


# Round trips (us): sockperf prints them to 3 decimals (``%.3lf`` usec); iperf 2's
# bounce-back percentiles are read off its histogram (``tools/bounceback.py``), exact to
# within one bin (100 us in 2.1.8, ``histogram_bin_us`` where the record kept it).
SOCKPERF_US = 0.001
BOUNCEBACK_BIN_US = 100.0


def round_trip_resolution_us(tool: str, records: list[TrialRecord]) -> float:
    """The coarsest resolution of the round-trip percentiles of these trials (their own or
    their probe's), in us: no difference finer than it is a measurement."""
    if tool == "sockperf":
        return SOCKPERF_US
    bins = [float(b) for r in records
            if isinstance(b := r.extra.get("histogram_bin_us"), (int, float))]
    return max(bins, default=BOUNCEBACK_BIN_US if tool == "iperf2" else 0.0)
