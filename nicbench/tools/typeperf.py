"""Windows ``typeperf``: the command that samples a counter, and a pure parser of its CSV.

The reviews' iperf CPU figure came from the Windows system monitor during the run; nicbench
samples the same counter with ``typeperf`` and reads it here. typeperf is not a throughput
tool, so this module returns CPU samples, not a ParsedRun.

Format: PDH-CSV as typeperf prints it (../shared/samples/typeperf_public_winrs_sample.txt):
a header row ``"(PDH-CSV 4.0)","\\\\HOST\\Object(Instance)\\Counter",...``, one quoted row per
sample ``"04/19/2013 21:43:48.823","0.000000",...``, then typeperf's own status lines
("Exiting, please wait...", "The command completed successfully."), which are not CSV rows.
The counter column is found by its header (the part after ``\\\\HOST``), never by position,
because typeperf prints counters in the order they were given. A sample typeperf could not
take is printed as an empty or blank field; it is skipped, not read as 0. Windows set to a
locale with a decimal comma prints "12,5" and localises counter names; pass the localised
name as ``counter``.
"""

from __future__ import annotations

import csv
import re

from nicbench.errors import ParseError, UsageError

TOOL = "typeperf"
CPU_COUNTER = r"\Processor(_Total)\% Processor Time"

_PDH_HEADER = re.compile(r'^"?\(PDH-CSV [\d.]+\)"?')


def typeperf_argv(counter: str = CPU_COUNTER, interval_s: int = 1, *,
                  samples: int) -> list[str]:
    """``typeperf <counter> -si <interval_s> -sc <samples>``: one row per interval, then exit."""
    if not isinstance(counter, str) or not counter.startswith("\\"):
        raise UsageError(f"typeperf counter {counter!r}: needs a path like {CPU_COUNTER}")
    for name, value in (("interval_s", interval_s), ("samples", samples)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise UsageError(f"typeperf {name} {value!r}: needs an integer >= 1")
    return ["typeperf", counter, "-si", str(interval_s), "-sc", str(samples)]


def parse_cpu(text: str, counter: str = CPU_COUNTER) -> list[float]:
    """The samples of ``counter`` (default: total CPU %) in the order typeperf printed them.

    Raises ParseError when there is no PDH-CSV header, the counter has no column, or a value
    in that column is not a number.
    """
    lines = text.splitlines()
    header_at = next((i for i, ln in enumerate(lines) if _PDH_HEADER.match(ln.strip())), None)
    if header_at is None:
        first = next((ln for ln in lines if ln.strip()), "")
        where = f"line 1: {first[:80]!r}" if first else "empty input"
        raise ParseError(TOOL, 'a PDH-CSV header row starting "(PDH-CSV 4.0)"', where)
    header = next(csv.reader([lines[header_at]]))
    want = counter.lower()
    column = next((i for i, name in enumerate(header)
                   if i > 0 and _counter_path(name).lower() == want), None)
    if column is None:
        raise ParseError(TOOL, f"a column for the counter {counter}",
                         f"line {header_at + 1} (header has {len(header) - 1} counters)")
    samples: list[float] = []
    for lineno in range(header_at + 2, len(lines) + 1):
        line = lines[lineno - 1].strip()
        if not line.startswith('"'):
            continue  # typeperf's status lines and blank lines
        row = next(csv.reader([line]))
        if len(row) != len(header):
            raise ParseError(TOOL, f"{len(header)} fields per row, like the header",
                             f"line {lineno}: {line[:80]!r}")
        raw = row[column].strip()
        if not raw:
            continue
        try:
            samples.append(float(raw.replace(",", ".") if "." not in raw else raw))
        except ValueError:
            raise ParseError(TOOL, f"a number in the {counter} column",
                             f"line {lineno}: {raw!r}") from None
    return samples


def _counter_path(header_field: str) -> str:
    r"""``\\HOST\Processor(_Total)\% Processor Time`` -> ``\Processor(_Total)\% Processor Time``."""
    name = header_field.strip()
    if name.startswith("\\\\"):
        rest = name[2:]
        cut = rest.find("\\")
        return rest[cut:] if cut >= 0 else ""
    return name
