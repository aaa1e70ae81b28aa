"""A family of the report: one module's figures, tables, verdict lines and page section.

A family is what a measurement adds to the report: its figure models, its tables, its
lines of the verdict (sentences, ranking tables, verdict.csv rows, first-screen rows),
its section of the page with its "how to read", and what the publication figures need to
know of each of its charts (:class:`Chart`). ``report/families/__init__.py`` lists the
families in page order; ``build.py``, ``page.py``, the template, the CSV writer and ``nicbench
figures`` loop over that list and name none of them.

A family's name is an enum: the report's own families are :class:`FamilyName`'s; a family
added elsewhere (a test's) brings its own ``StrEnum``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, ClassVar, TypeVar

from nicbench.report.model import (Block, Figure, FigureBlock, Glance, PageSection,
                                   Section, Sentence, Table, TableBlock)

if TYPE_CHECKING:
    from nicbench.history.model import Series
    from nicbench.report.configs import Index
    from nicbench.report.reference import ReferenceFile

T = TypeVar("T")


class FamilyName(StrEnum):
    """The report's own families, by the id of their section on the page."""

    HISTORY = "history"
    THROUGHPUT = "throughput"
    LATENCY = "latency"
    LOADED = "under-load"
    CPU = "cpu"
    NETPIPE = "netpipe"
    STREAMS = "streams"
    SMALLPKT = "smallpkt"
    PUBLISHED = "published"
    SIZE_TABLES = "size-tables"


@dataclass(frozen=True)
class Chart:
    """What is known of one kind of chart (``Figure.family``) beyond its model: what the
    page links its caption to, and how a publication file draws and lists it."""

    kind: str
    read: str = ""                  # the anchor of its "how to read" item ("" none)
    file_per_panel: bool = False    # a ranking per point: one publication file per panel
    bar_unit: str = "Mbit/s"        # what a bar's value is, in figures.csv
    card_colours: bool = False      # curves one per card: the style's colour of each card
    panel_legends: bool = True      # False: the figure's legend says it once (curves)
    log_y: bool = False             # curves on a log y axis
    point_units: tuple[str, str] | None = None  # (x, y) units of a curve point kept as is
    #                                             (None: x a whole number in the panel's)
    rows: Callable[[Figure], tuple[list[str], list[list[object]]]] | None = None
    #     its data for the page's CSV beside it, when the general columns do not fit


@dataclass
class Context:
    """What a family builds from: the runs' configurations, and what the command adds
    (published figures, a results store's history). ``once`` shares a computation
    between a family's figures, tables and verdict within one build."""

    ix: Index
    reference: ReferenceFile | None = None
    trend: list[Series] | None = None   # None: the history the runs themselves make
    memo: dict[object, object] = field(default_factory=dict)

    def once(self, fn: Callable[[Index], T]) -> T:
        return self.keep(fn, lambda: fn(self.ix))

    def keep(self, key: object, make: Callable[[], T]) -> T:
        """What ``make`` gives, made the first time ``key`` is asked for in this build."""
        if key not in self.memo:
            self.memo[key] = make()
        return self.memo[key]  # type: ignore[return-value]


@dataclass
class VerdictPart:
    """A family's share of the verdict: its sentences, its ranking tables (the Rankings
    section), its rows of verdict.csv and its rows of the first screen."""

    sentences: list[Sentence] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    csv_rows: list[list[object]] = field(default_factory=list)
    glance: Glance = field(default_factory=Glance)

    @classmethod
    def of_tables(cls, sentences: list[Sentence], tables: list[Table],
                  csv_rows: list[list[object]]) -> VerdictPart:
        """A family ranked in tables alone: the first screen shows each table's first
        ranked row (``glance.other_row``)."""
        from nicbench.report.glance import other_row

        return cls(sentences, tables, csv_rows, Glance(rows=[other_row(t) for t in tables]))


@dataclass
class Part:
    """What one family made of these runs, kept for its section of the page."""

    family: Family
    ctx: Context
    figures: list[Figure] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    verdict: VerdictPart = field(default_factory=VerdictPart)


class Family:
    """One family of the report. A subclass sets the class attributes and overrides what
    it offers; every method has a default of nothing."""

    name: ClassVar[StrEnum]
    section: ClassVar[Section]
    charts: ClassVar[tuple[Chart, ...]] = ()
    read: ClassVar[tuple[tuple[str, str], ...]] = ()    # (anchor, text) of How to read
    publishes: ClassVar[bool] = True    # its figures are drawn by ``nicbench figures``
    label_col: ClassVar[int] = 0        # the column naming each row of its tables

    def figures(self, ctx: Context) -> list[Figure]:
        return []

    def tables(self, ctx: Context) -> list[Table]:
        return []

    def verdict(self, ctx: Context) -> VerdictPart:
        return VerdictPart()

    def shown(self, part: Part) -> bool:
        """Whether these runs give the section anything."""
        return bool(part.figures or part.tables)

    def blocks(self, part: Part) -> Sequence[Block]:
        """The section's content: every figure, then every table."""
        return ([FigureBlock(f) for f in part.figures]
                + [TableBlock(t, self.label_col) for t in part.tables])


def page_section(part: Part) -> PageSection:
    """A family's section of the page (``shown`` False: left out of it)."""
    fam = part.family
    shown = fam.shown(part)
    return PageSection(fam.section, list(fam.blocks(part)) if shown else [], shown)


def figures_of(part: Part, *kinds: str) -> list[Figure]:
    return [f for f in part.figures if f.family in kinds]


def tables_of(part: Part, *kinds: str) -> list[Table]:
    return [t for t in part.tables if t.family in kinds]


def glance_of(parts: list[VerdictPart]) -> Glance:
    """The first screen: each family's rows in family order, their notes and unmeasured."""
    out = Glance()
    for p in parts:
        out.rows += p.glance.rows
        out.notes += p.glance.notes
        out.unmeasured += p.glance.unmeasured
    return out
