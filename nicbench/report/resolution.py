"""The resolution a tool printed a figure at: no difference finer than it is a measurement.

A tool that prints text rounds its figure before nicbench reads it; what it printed is
all there is. Each tool says its own (``tools/driver.py`` ``Tool.printed_resolution_bps``
and ``round_trip_resolution_us``, from its printf formats, in its module):

- iperf 2 and iperf3 text: three significant digits in an adaptive unit (``three_digits``):
  "943 Mbits/sec" (1 Mbit/s), "94.1 Mbits/sec" (0.1), "2.40 Gbits/sec" (10 Mbit/s);
- iperf3 JSON, iperf 2 CSV, netPIPE's output files (``%lf``), NTttcp's XML and JSON: the
  figure in full (bit/s or better): no resolution to speak of;
- netPIPE's console (``%8.2lf`` / ``%6.2lf`` "Mbps" of 2^20 bit/s): 0.01 x 2^20 bit/s;
- netio: whole KByte/s (1024 bytes) in its older formats, at least that in the newer;
- sockperf's round trips: ``%.3lf`` usec; iperf 2's bounce-back: one bin of its histogram.

A resolution of 0 means "finer than anything a comparison cares about".
"""

from __future__ import annotations

from nicbench.results.records import TrialRecord
from nicbench.tools.base import three_digits
from nicbench.tools.registry import TOOLS

__all__ = ["resolution_bps", "round_trip_resolution_us", "sample_resolution_bps",
           "three_digits"]


def resolution_bps(rec: TrialRecord) -> float:
    """The resolution of the throughput the tool printed for this trial, bit/s."""
    tool = TOOLS.get(rec.tool)
    if tool is None:
        return 0.0
    return tool.printed_resolution_bps(rec.throughput_bps or 0.0,
                                       str(rec.extra.get("format") or ""))


def sample_resolution_bps(records: list[TrialRecord]) -> float:
    """The coarsest resolution among the trials: the figures cannot be told apart finer."""
    return max((resolution_bps(r) for r in records if r.ok), default=0.0)


def round_trip_resolution_us(tool: str, records: list[TrialRecord]) -> float:
    """The coarsest resolution of the round-trip percentiles of these trials (their own or
    their probe's), in us: the histogram's bin where a record kept it, else what the
    tool prints."""
    bins = [float(b) for r in records
            if isinstance(b := r.extra.get("histogram_bin_us"), (int, float))]
    printed = TOOLS[tool].round_trip_resolution_us if tool in TOOLS else 0.0
    return max(bins, default=printed)
