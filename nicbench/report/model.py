"""The report as data: entries (an adapter in a run), figure models and tables, before drawing.

Every chart is built as a plain model first (the chart-family modules): its panels, the
bars, cells or curves with their values, labels, colours and markers, the reference lines,
the legend and the notes. Only then does ``svg.py`` draw it and ``page.py`` write the HTML.
Tests assert on these models (what a chart shows) rather than on pixels.

Units in models are the charts' own: Mbit/s (10^6 bit/s) for speed, % for CPU, bytes for
block sizes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import ClassVar, assert_never

from markupsafe import Markup

from nicbench.results.summary import RowStatus


@dataclass
class Entry:
    """One adapter (with its driver) on one pair in one run: a row of the charts."""

    key: str                 # "<run index>/<pair>", unique in the report
    run_index: int
    run_label: str           # the run's short label: "A", or --label A=driver-7.1
    run_id: str
    run_name: str            # the results directory's name
    pair: str
    adapter: str             # adapter id in the inventory: what pairs runs in a comparison
    adapter_label: str       # "model (driver version)", as the trials carry it
    label: str = ""          # adapter_label, suffixed with the run label or pair when needed
    colour: str = "#000000"  # the adapter's colour (a shade of it in runs after the first)
    base_colour: str = "#000000"
    marker: str = "circle"
    rate_bps: float | None = None
    rate_source: str = ""
    emulated: bool = False


@dataclass
class Row:
    """A row of a bar chart or heatmap: an entry, or a published figure (--reference)."""

    key: str
    label: str
    colour: str
    marker: str = "circle"
    entry: str | None = None     # Entry.key; None for a published row
    published: str = ""          # the source of a published figure


class BarStatus(StrEnum):
    """A configuration's RowStatus, or a figure published elsewhere (--reference)."""

    OK = "ok"
    PARTIAL = "partial"
    FAILED = "failed"
    SKIPPED = "skipped"
    PUBLISHED = "published"

    @classmethod
    def of(cls, status: RowStatus) -> BarStatus:
        match status:
            case RowStatus.OK:
                return cls.OK
            case RowStatus.PARTIAL:
                return cls.PARTIAL
            case RowStatus.FAILED:
                return cls.FAILED
            case RowStatus.SKIPPED:
                return cls.SKIPPED
            case _:
                assert_never(status)


@dataclass
class Bar:
    """One horizontal bar (or a gap) of a row at one point."""

    row: str                 # Row.key
    value: float | None      # None: a gap (refused, failed, not run)
    lo: float | None = None  # whisker ends: lowest and highest repetition
    hi: float | None = None
    n_ok: int = 0
    n: int = 0
    status: BarStatus = BarStatus.OK
    gap: str = ""            # the gap's word: Failure.word of what happened
    text: str = ""           # the label drawn at the end of the bar
    limit: float | None = None       # theoretical goodput of the link, same unit as value
    line_rate: float | None = None
    flag: str = ""           # why this bar is above the limit ("" when it is not)
    fill: str = "#000000"
    whisker: str = "#000000"  # ink that shows on the bar's fill (black or white)
    series: str = ""         # several bars per row (CPU: sender, receiver): which one
    mark: float | None = None    # a marker on the bar (a tool's own CPU figure)


@dataclass
class BarSeries:
    """One of several bars drawn in each row (a CPU panel: sender and receiver)."""

    key: str
    label: str
    opacity: float = 1.0


@dataclass
class BarPanel:
    """Horizontal bars, one row per entry, top to bottom in ``rows`` order."""

    title: str
    xlabel: str
    rows: list[Row]
    bars: list[Bar]
    xmax: float
    series: list[BarSeries] = field(default_factory=list)   # empty: one bar per row
    limit_label: str = ""    # legend text of the limit marks, "" when none
    sorted_by: str = ""      # how rows are ordered, said in the caption ("" = entry order)

    def bar(self, row: str, series: str = "") -> Bar | None:
        return next((b for b in self.bars if b.row == row and b.series == series), None)


@dataclass
class Cell:
    value: float | None
    text: str
    fill: str
    ink: str
    gap: str = ""


@dataclass
class HeatPanel:
    """Rows (entries) by columns (points); each cell coloured by its value."""

    title: str
    rows: list[Row]
    columns: list[str]
    cells: list[list[Cell]]          # [row][column]
    vmin: float                      # the colour scale: vmin dark .. vmax light
    vmax: float
    unit: str


@dataclass
class Curve:
    label: str
    colour: str
    marker: str
    points: list[tuple[float, float]]
    dash: str = ""           # "" solid, else an SVG dash array
    flagged: list[tuple[float, float]] = field(default_factory=list)  # above the limit
    entry: str | None = None
    line: bool = True        # False: markers only (history's change points)
    titles: list[str] = field(default_factory=list)   # each point's tooltip, if not bytes


@dataclass
class Reference:
    """A horizontal reference line on a curve chart."""

    y: float
    label: str
    dash: str = "6 3"


@dataclass
class LinePanel:
    title: str
    xlabel: str
    ylabel: str
    curves: list[Curve]
    references: list[Reference] = field(default_factory=list)
    xlog: bool = True
    ymax: float = 0.0
    xunit: str = "bytes"     # what x counts (netPIPE's block sizes; streams)
    yunit: str = "Mbit/s"    # what a point's y is, in its tooltip
    ymin: float = 0.0        # where the y axis starts (history's trends: near the figures)


@dataclass
class Dot:
    x: float
    y: float
    colour: str
    marker: str
    label: str               # what the dot is: "adapter, MTU 1500"
    entry: str | None = None


@dataclass
class ScatterPanel:
    title: str
    xlabel: str
    ylabel: str
    dots: list[Dot]
    xmax: float
    ymax: float


Panel = BarPanel | HeatPanel | LinePanel | ScatterPanel


@dataclass
class LegendItem:
    label: str
    colour: str
    shape: str               # "bar" | "line" | a marker name | "limit" | "whisker"
    dash: str = ""


class ChartKind(StrEnum):
    """The report's own kinds of chart (``Figure.family``), each one of a family's
    ``charts`` (``report/family.py`` ``Chart``). A family added elsewhere names its own."""

    SPEED = "speed"
    HEATMAP = "heatmap"
    CPU = "cpu"
    COST = "cost"
    NETPIPE_PLATEAU = "netpipe-plateau"
    NETPIPE_MTU = "netpipe-mtu"
    NETPIPE_ADAPTER = "netpipe-adapter"
    STREAMS = "streams"
    SMALLPKT = "smallpkt"
    LATENCY = "latency"
    LATENCY_CDF = "latency-cdf"
    LOADED = "loaded"
    HISTORY = "history"
    PUBLISHED = "published"


@dataclass
class Figure:
    id: str                  # file stem under figures/ and tables/
    family: str              # its kind of chart: one of its family's ``charts``
    #                          (report/family.py Chart: speed, heatmap, netpipe-mtu, ...)
    title: str
    caption: str
    panels: list[Panel]
    entries: list[str]       # Entry.key of every entry the chart shows
    legend: list[LegendItem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)     # flags, caveats
    missing: list[str] = field(default_factory=list)   # who is not in the chart, and why
    columns: int = 1         # small multiples: panels per row
    files: dict[str, str] = field(default_factory=dict)  # svg/csv -> path under OUT
    svg: str = ""            # the drawing, set by svg.render_all
    size_px: tuple[int, int] = (0, 0)


@dataclass
class Table:
    id: str
    family: str              # verdict | comparison | summary | failures | netio | ...
    title: str
    columns: list[str]
    rows: list[list[object]] = field(default_factory=list)
    caption: str = ""
    notes: list[str] = field(default_factory=list)
    row_entries: list[str | None] = field(default_factory=list)  # Entry.key per row
    files: dict[str, str] = field(default_factory=dict)
    csv_columns: list[str] = field(default_factory=list)    # when the CSV differs
    csv_rows: list[list[object]] = field(default_factory=list)
    hover: list[list[str]] = field(default_factory=list)    # per cell, shown on hover


@dataclass
class Failure:
    """A configuration that did not give (all) its measurements, and why."""

    entry: str
    test: str
    tool: str
    point: str
    mtu: int
    status: RowStatus        # skipped | failed | partial
    word: str                # the gap word of the charts
    counts: str              # "0/15 (3 failed, 12 not run)"
    reasons: list[tuple[str, int]]   # (reason, how many trials gave it)
    kernel_message: str | None = None


@dataclass
class Sentence:
    """A line of the verdict: text with the entries it names (for their colours)."""

    method: str
    text: str


@dataclass
class MethodWarning:
    """A difference in method between runs that are compared (``difference`` False: a
    line saying what was found the same, or not recorded)."""

    what: str
    text: str
    group: str = ""          # "runs A and B, host nbr-a": the lines are grouped by it
    difference: bool = True


@dataclass
class Report:
    entries: list[Entry]
    figures: list[Figure]
    tables: list[Table]
    failures: list[Failure]
    setup: list[RunSetup]
    verdict: list[Sentence] = field(default_factory=list)
    warnings: list[MethodWarning] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    title: str = "nicbench report"
    created_at: float = 0.0
    comparison: bool = False
    glance: Glance | None = None     # the verdict's first screen (glance.py)
    rankings: list[Table] = field(default_factory=list)   # each family's ranking tables
    sections: list[PageSection] = field(default_factory=list)  # the families', page order
    publication: list[Figure] = field(default_factory=list)    # what --figures draws

    def entry(self, key: str) -> Entry:
        return next(e for e in self.entries if e.key == key)

    def figures_of(self, family: str) -> list[Figure]:
        return [f for f in self.figures if f.family == family]

    def tables_of(self, family: str) -> list[Table]:
        return [t for t in self.tables if t.family == family]


@dataclass
class Command:
    entry: str
    point: str
    test: str
    server: str
    client: str
    receiver: str
    sender: str
    trials: int
    variants: int
    raw: str = ""            # a raw output of the configuration, relative to the report


@dataclass
class RunSetup:
    """What the setup section says of one run."""

    index: int
    label: str
    run_id: str
    name: str
    data_dir: str            # the copy of the run's files, relative to the report
    facts: list[tuple[str, str]]
    hosts: list[list[object]]
    adapters: list[list[object]]
    interfaces: list[list[object]]
    tests: list[list[object]]
    points: list[list[object]]
    commands: list[Command]
    record_versions: str = ""
    restore_problems: list[str] = field(default_factory=list)
    no_manifest: bool = False
    torn_line: int | None = None


@dataclass
class GlanceRow:
    """One method in the verdict's first screen: the best card and the cheapest one."""

    method: str
    fastest: str = ""            # the card's label ("" when nothing was ranked)
    fastest_key: str | None = None
    figure: str = ""             # "993.0 Mbit/s"
    limit_pct: str = ""          # "99.9"
    at: str = ""                 # "MTU 16000"
    cpu: str = ""                # the busier host's CPU % where it can rank, else ""
    cpu_note: str = ""           # why not (hover and footnote mark), "" when it ranks
    cheapest: str = ""           # the card with the most Mbit/s per CPU %, where ranked
    cheapest_key: str | None = None
    cheapest_figure: str = ""    # "81.7 Mbit/s per CPU %"
    link: str = ""               # the id of the method's ranking table


@dataclass
class Glance:
    """The verdict's first screen: a row per method, then one line per card that did
    not measure somewhere (the detail stays in the ranking tables and CSV)."""

    rows: list[GlanceRow] = field(default_factory=list)
    unmeasured: list[tuple[str, str, str]] = field(default_factory=list)  # key, label, what
    notes: list[str] = field(default_factory=list)


class Place(StrEnum):
    """Where a family's section stands on the page: atop, after the rankings (a history
    of the cards is read before what they are), or in the body after the adapters."""

    TOP = "top"
    BODY = "body"


# -- a section's content, as the template's generic section draws it ------------------------
class BlockKind(StrEnum):
    FIGURE = "figure"
    TABLE = "table"
    TEXT = "text"
    HEADING = "heading"
    GROUP = "group"


@dataclass
class FigureBlock:
    figure: Figure
    kind: ClassVar[BlockKind] = BlockKind.FIGURE


@dataclass
class TableBlock:
    table: Table
    label_col: int = 0
    kind: ClassVar[BlockKind] = BlockKind.TABLE


@dataclass
class TextBlock:
    """A paragraph; ``css`` its class ("" none, "muted", "note"). Text the report writes
    itself may carry markup as ``Markup``; anything from results is escaped."""

    text: str | Markup
    css: str = ""
    kind: ClassVar[BlockKind] = BlockKind.TEXT


@dataclass
class HeadingBlock:
    id: str
    text: str
    kind: ClassVar[BlockKind] = BlockKind.HEADING


@dataclass
class GroupBlock:
    """Blocks left out of print, said in one line there (``print_note``)."""

    blocks: list[Block]
    print_note: str
    kind: ClassVar[BlockKind] = BlockKind.GROUP


Block = FigureBlock | TableBlock | TextBlock | HeadingBlock | GroupBlock


@dataclass(frozen=True)
class Section:
    """A family's section of the page: its id (the anchor), its name in the contents and
    its heading; ``absent``: how the top of the page names it when these runs have
    nothing for it ("" : left out without a word)."""

    id: str
    nav: str
    heading: str
    absent: str = ""
    place: Place = Place.BODY
    intro: str | Markup = ""     # the paragraph under its heading ("" none): the
    #                              family's own words, markup allowed


@dataclass
class PageSection:
    """A family's section as the template draws it."""

    section: Section
    blocks: list[Block]
    shown: bool = True
