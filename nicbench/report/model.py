"""The report as data: entries (an adapter in a run), figures and tables, before drawing.

Every chart is built as a plain model first (``build.py``): its panels, the bars or
curves with their values, labels and colours, the reference lines and the notes. Only then
does ``render.py`` draw it with matplotlib, and ``page.py`` write the HTML. Tests assert on
these models (what a chart shows) rather than on pixels.

Units in models are the charts' own: Mbit/s (10^6 bit/s) for speed, % for CPU, bytes for
block sizes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Entry:
    """One row of every chart: an adapter (with its driver) on one pair in one run."""

    key: str                 # "<run index>/<pair>", unique in the report
    run_index: int
    run_id: str
    run_name: str            # the results directory's name
    pair: str
    adapter: str             # adapter id
    adapter_label: str       # "model (driver version)", as the trials carry it
    label: str = ""          # adapter_label, suffixed when it is not unique (see build.py)
    colour: str = "#000000"
    rate_bps: float | None = None
    rate_source: str = ""
    emulated: bool = False


@dataclass
class Group:
    """A tuning point on the x axis: an MTU or a frame size."""

    key: str
    label: str
    mtu: int


@dataclass
class Bar:
    entry: str               # Entry.key
    group: str               # Group.key
    value: float | None      # None: a gap (refused, failed, not run)
    lo: float | None = None  # whisker ends: min..max of the repetitions
    hi: float | None = None
    n_ok: int = 0
    n: int = 0
    status: str = "ok"       # ok | partial | failed | skipped
    gap: str = ""            # what a gap shows: "refused", "failed", ...
    limit: float | None = None   # theoretical goodput of the link, same unit as value
    line_rate: float | None = None
    flag: str = ""           # why this bar is above the limit ("" when it is not)
    text: str = ""           # the label drawn over the bar


@dataclass
class BarPanel:
    title: str
    ylabel: str
    groups: list[Group]
    entries: list[str]       # Entry.key, in legend order
    bars: list[Bar]
    limit_label: str = ""    # legend text of the reference segments, "" when none
    ymax: float | None = None

    def bar(self, entry: str, group: str) -> Bar | None:
        return next((b for b in self.bars if b.entry == entry and b.group == group), None)


@dataclass
class Series:
    label: str
    entry: str               # Entry.key: the colour
    points: list[tuple[float, float]]
    linestyle: str = "-"
    marker: str = "o"
    flagged: list[tuple[float, float]] = field(default_factory=list)  # above the line rate


@dataclass
class Reference:
    """A horizontal reference line on a curve chart."""

    y: float
    label: str
    linestyle: str = "--"


@dataclass
class LinePanel:
    title: str
    xlabel: str
    ylabel: str
    series: list[Series]
    references: list[Reference] = field(default_factory=list)
    xlog: bool = True


@dataclass
class Figure:
    id: str                  # file stem under figures/ and tables/
    family: str              # speed | cpu | netpipe-adapter | netpipe-mtu | netpipe-peak
    title: str
    caption: str
    panels: list[Any]        # BarPanel | LinePanel
    entries: list[str]       # Entry.key shown in the legend
    notes: list[str] = field(default_factory=list)   # flags, gaps, caveats
    files: dict[str, str] = field(default_factory=dict)  # svg/png/csv -> path under OUT
    size_px: tuple[int, int] = (0, 0)                     # the PNG's size, set by render


@dataclass
class Table:
    id: str
    family: str              # summary | failures | netio | iperf-length | netpipe-peak | ...
    title: str
    columns: list[str]
    rows: list[list[Any]] = field(default_factory=list)
    caption: str = ""
    notes: list[str] = field(default_factory=list)
    row_entries: list[str | None] = field(default_factory=list)  # Entry.key per row
    files: dict[str, str] = field(default_factory=dict)


@dataclass
class Failure:
    """A configuration that did not give (all) its measurements, and why."""

    entry: str
    test: str
    tool: str
    point: str
    mtu: int
    status: str              # skipped | failed | partial
    n_ok: int
    n: int
    reasons: list[tuple[str, int]]   # (reason, how many trials gave it)
    kernel_message: str | None = None


@dataclass
class Report:
    entries: list[Entry]
    figures: list[Figure]
    tables: list[Table]
    failures: list[Failure]
    setup: list[dict]
    notes: list[str] = field(default_factory=list)
    title: str = "nicbench report"
    created_at: float = 0.0

    def entry(self, key: str) -> Entry:
        return next(e for e in self.entries if e.key == key)

    def figures_of(self, family: str) -> list[Figure]:
        return [f for f in self.figures if f.family == family]

    def tables_of(self, family: str) -> list[Table]:
        return [t for t in self.tables if t.family == family]
