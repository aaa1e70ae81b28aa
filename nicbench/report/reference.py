"""Published figures beside today's: ``nicbench report DIR --reference FILE``.

A reference file is YAML: the publication (``title``, ``source``: where to read it, e.g.
``../shared/seeds/004_5443acf57e752bd8.txt``), the unit its figures are printed in, and one
entry per figure: ``adapter``, ``method`` (a tool or test name of nicbench: ``netio``,
``iperf2``, ...), ``point`` (a packet size such as ``1K`` for netio, else a point of the
profile: ``mtu1500`` or ``MTU 1500``), ``value``, optionally ``setup`` (the machine or
bench it was measured on), ``cpu_pct``, and ``section`` (page, section or table of the
source). ``references/arnold-2002-netio.yaml`` is shipped, copied from the netio
benchmark page.

Each (method, setup) is drawn as a chart of its own, small multiples per point, the
published figures as grey hatched bars marked "published", and beside them the runs'
adapters measured with that method at that point, in the publication's unit. A table lists
every figure with its source. A file that is not such a YAML is one error line naming the
file, line and key.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Literal
from collections.abc import Callable

from pydantic import Field, ValidationError

from nicbench.config.fields import Strict
from nicbench.config.source import load_yaml
from nicbench.errors import ConfigError, ConfigErrors
from nicbench.report.bars import ranking_order
from nicbench.report.colours import PUBLISHED, ink_on
from nicbench.report.configs import Config, Index, fmt, slug, tools_with
from nicbench.report.model import ChartKind, Bar, BarStatus, BarPanel, Figure, LegendItem, Row, Table
from nicbench.report.tables import size_label
from nicbench.results.policy import summarize
from nicbench.tools.driver import Shape

Unit = Literal["KB/s", "Mbit/s", "Mbps", "MB/s"]
# bit/s per unit: netio's KB/s is 1024 bytes/s, netPIPE's "Mbps" 2^20 bit/s, MB/s 2^20 B/s
BPS = {"KB/s": 8 * 1024.0, "Mbit/s": 1e6, "Mbps": float(1 << 20), "MB/s": 8.0 * (1 << 20)}
UNIT_TEXT = {"KB/s": "KB/s (1024 bytes/s)", "Mbit/s": "Mbit/s (10^6 bit/s)",
             "Mbps": "netPIPE Mbps (2^20 bit/s)", "MB/s": "MB/s (2^20 bytes/s)"}


class PublishedFigure(Strict):
    adapter: str = Field(min_length=1, max_length=80)
    method: str = Field(min_length=1, max_length=40)
    point: str = Field(min_length=1, max_length=40)
    value: float = Field(gt=0)
    unit: Unit | None = None
    setup: str = Field("", max_length=120)
    cpu_pct: float | None = Field(None, ge=0, le=100)
    section: str = Field(min_length=1, max_length=300)


class ReferenceFile(Strict):
    format_version: Literal[1] = 1
    title: str = Field(min_length=1)
    source: str = Field(min_length=1)
    unit: Unit = "Mbit/s"
    figures: list[PublishedFigure] = Field(min_length=1, max_length=10_000)


def load_reference(path: str) -> ReferenceFile:
    """The reference file at ``path``; a ConfigError (file:line: key: message) if it is
    not one."""
    data, where = load_yaml(path)
    if not isinstance(data, dict):
        raise ConfigError("expected a mapping of keys at the top level (title, source, "
                          "unit, figures)", file=where.default_file, line=1)
    try:
        return ReferenceFile.model_validate(data)
    except ValidationError as exc:
        errors = [where.error(tuple(err["loc"]), err["msg"].removeprefix("Value error, "))
                  for err in exc.errors()]
        raise ConfigErrors(errors) from None


def _unit(ref: ReferenceFile, fig: PublishedFigure) -> Unit:
    return fig.unit or ref.unit


def _matches(c: Config, method: str) -> bool:
    return method in (c.tool, c.test)


def measured(c: Config, point: str, unit: Unit) -> float | None:
    """What the run measured at a published figure's point, in the publication's unit: a
    packet size of a size tool's results (``1K``), or the configuration's own point."""
    rule = c.rule if c.rule in ("mean", "median") else "best"
    if any(r.points for r in c.ok) and c.tool not in tools_with(Shape.CURVE):
        vals = [float(p.tx_bps or p.throughput_bps) for r in c.ok for p in r.points
                if p.size_bytes and size_label(p.size_bytes) == point]
        v = summarize(vals).selected(rule)
        return v / BPS[unit] if v is not None else None
    if point in (c.point, c.group.label) and c.row.selected_bps is not None:
        return c.row.selected_bps / BPS[unit]
    return None


def _lookup(values: dict[str, float | None]) -> Callable[[Config], float | None]:
    return lambda c: values[c.entry.key]


def reference_figures(ix: Index, ref: ReferenceFile) -> tuple[list[Figure], Table]:
    groups: dict[tuple[str, str], list[PublishedFigure]] = defaultdict(list)
    for f in ref.figures:
        groups[(f.method, f.setup)].append(f)
    figures = []
    for (method, setup), figs in groups.items():
        unit = _unit(ref, figs[0])
        points = list(dict.fromkeys(f.point for f in figs))
        panels = []
        mine = [c for c in ix.configs if _matches(c, method)]
        for point in points:
            rows: list[Row] = []
            bars: list[Bar] = []
            published = sorted((f for f in figs if f.point == point),
                               key=lambda f: -f.value)
            for k, f in enumerate(published):
                key = f"published/{k}/{f.adapter}"
                rows.append(Row(key=key, label=f.adapter, colour=PUBLISHED,
                                marker="square", published=f"{ref.title}: {f.section}"))
                bars.append(Bar(row=key, value=f.value, status=BarStatus.PUBLISHED, n_ok=1, n=1,
                                text=f"{f.value:g} (published)", fill=PUBLISHED,
                                whisker=ink_on(PUBLISHED)))
            values = {c.entry.key: measured(c, point, unit) for c in mine}
            for e in ranking_order(ix, mine, _lookup(values)):
                c = next(c for c in mine if c.entry.key == e.key)
                v = values[e.key]
                if v is None:
                    continue
                rows.append(Row(key=e.key, label=e.label, colour=e.colour, marker=e.marker,
                                entry=e.key))
                bars.append(Bar(row=e.key, value=v, n_ok=len(c.ok), n=c.planned,
                                status=BarStatus.of(c.row.status), text=f"{v:.1f} {c.counts}",
                                fill=e.colour, whisker=ink_on(e.colour)))
            panels.append(BarPanel(title=f"{method} {point}", xlabel=UNIT_TEXT[unit],
                                   rows=rows, bars=bars, xmax=0.0, sorted_by="largest first"))
        top = max((b.value or 0.0) for p in panels for b in p.bars) * 1.1 or 1.0
        for p in panels:
            p.xmax = top
        entries = list(dict.fromkeys(r.entry for p in panels for r in p.rows if r.entry))
        figures.append(Figure(
            id=slug("published", method, setup), family=ChartKind.PUBLISHED,
            title=f"Published: {method}" + (f", {setup}" if setup else ""),
            caption=(f"Figures published in {ref.title} ({ref.source}), grey and hatched, "
                     f"in its unit, {UNIT_TEXT[unit]}; beside them the adapters of these "
                     f"runs measured with {method} at the same point, where there are any."),
            panels=list(panels), entries=entries, columns=2 if len(panels) > 1 else 1,
            legend=[LegendItem("published figure", PUBLISHED, "bar")],
            notes=[] if entries else [f"None of these runs measured {method} at these "
                                      "points: only the published figures are drawn."]))
    t = Table(id="published", family=ChartKind.PUBLISHED, title=f"Published: {ref.title}",
              columns=["adapter", "method", "setup", "point", "value", "unit", "CPU %",
                       "source"],
              caption=f"Every figure of the reference file, as published; source: "
                      f"{ref.source}.")
    for f in ref.figures:
        t.rows.append([f"{f.adapter} (published)", f.method, f.setup, f.point, f"{f.value:g}",
                       _unit(ref, f), fmt(f.cpu_pct), f.section])
        t.row_entries.append(None)
    return figures, t
