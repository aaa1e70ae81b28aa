"""How much of a tool's output nicbench keeps: one number for every place that reads it
(``nicbench parse``, every capture from a host during a run), so that what a run keeps
is what ``parse`` can read back.

One run's output is KB (a netPIPE sweep, a few hundred lines) to a few MB (iperf3 -J of an
hour with per-second intervals). The parsers read line by line in Python: at 8 MB the
slowest takes about 5 s and the hungriest under 200 MB, inside the 10 s and 300 MB a bad
input may cost. Imports nothing of nicbench: every layer may use it.
"""

from __future__ import annotations

MAX_OUTPUT_BYTES = 8 << 20

# What a host's reply may hold beyond one tool output before the reading stops (the
# command is then killed): nicbench's own framing around it (CPU and interface readings,
# section markers, a tool's error output of up to ERROR_BYTES, its figures file).
CAPTURE_LIMIT_BYTES = MAX_OUTPUT_BYTES + (2 << 20)
ERROR_BYTES = 1 << 20

TRUNCATED_MARK = "\n[truncated by nicbench]\n"


def in_mb(n: int) -> str:
    return f"{n / (1 << 20):g} MB"


def over_cap(end: str) -> str:
    """The reason of a trial whose tool printed more than nicbench keeps."""
    return (f"{end} output over {in_mb(MAX_OUTPUT_BYTES)} (nicbench keeps at most "
            f"{in_mb(MAX_OUTPUT_BYTES)} of a tool's output)")
