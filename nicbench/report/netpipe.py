"""netPIPE charts: throughput against block size, per adapter and per MTU, and the plateau.

The reviews drew netPIPE three ways, and so does the report:

- one chart per adapter, a curve per MTU ("Linux, MTU size"), each MTU in a colour (and
  marker) of its own, the same in every adapter's chart;
- one chart per MTU, a curve per adapter ("equal MTU"), in the adapters' colours; with more
  than ``CURVES_PER_PANEL`` adapters, small multiples of that many each;
- the sustained plateau per adapter and MTU, as a ranking like the speed charts.

Both curve families are built by one function (:func:`curve_figure`) from a list of curves
and the list of who is missing and why, which is named under the chart.

The plateau is what a link sustains: the median throughput over the blocks of the curve's
last octave (block sizes of at least half the largest), per repetition, then selected over
the repetitions by the profile's rule. The burst maximum (netPIPE's own "peak", often a
small message crossing faster than any wire, most of all on the lab's token-bucket links)
is kept in the table beside it, not drawn as the bar.

netPIPE prints "Mbps" meaning 2^20 bit/s; the parser converts it once (bit/s), and the
charts are in Mbit/s = 10^6 bit/s like every other chart.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass

from nicbench.report.bars import (REAL_EXPLANATION, TBF_EXPLANATION, axis_max, bar_legend,
                                  explanation, ranking_order, ranking_panel, set_axis)
from nicbench.report.colours import MTU_MARKERS, REFERENCE, mtu_colours
from nicbench.report.configs import (MBIT, Config, Group, Index, chart_title, fmt, mbit,
                                     slug, sorted_groups, tools_with)
from nicbench.report.model import (ChartKind, Curve, Entry, Figure, LegendItem, LinePanel, Reference,
                                   Table)
from nicbench.results.policy import summarize
from nicbench.results.records import TrialRecord
from nicbench.tools.driver import Shape

CURVES_PER_PANEL = 8

# Where netPIPE's curve is above the wire's limit on the lab, measured (issue 18; README.md
# says the same, tests/unit/test_verdict.py checks it). A ping-pong message of S bytes
# crosses the first B bytes of a link's token bucket at memory speed and the rest at the
# line rate, so it reads about S / (S - B) of the limit: above it by more than the 1 %
# flag margin until S is about 100 x B. The lab's buckets (lab/lab.py): 32 KB on its
# Gigabit links (two 16 KB frames), 3 KB on its Fast Ethernet link.
LAB_NETPIPE_RANGE = (
    "On the lab's shaped links netPIPE reads above the wire's limit until the block is "
    "about 100 times the link's token bucket: on the Gigabit links (a 32 KB bucket) "
    "every block up to 1 MB at MTU 6000 and 9000 (1 MB still 1.7-2 % above), up to 768 "
    "KB at MTU 1500 and 256 KB at MTU 16000; on the Fast Ethernet link (a 3 KB bucket) "
    "up to 64-192 KB, within the limit from 256 KB. Measured on a 2-core machine shared "
    "with other runs; when it is busy, large blocks fall below the limit sooner for want "
    "of CPU, which says nothing of the card either.")
XLABEL = "block size, bytes (log scale)"
YLABEL = "throughput, Mbit/s"


def _select(values: list[float], rule: str) -> float | None:
    """The engine's selection (best | mean | median); a search's rule takes the best."""
    return summarize(values).selected(rule if rule in ("mean", "median") else "best")


def plateau_of(rec: TrialRecord) -> float | None:
    """The sustained rate of one netPIPE run, bit/s: the median over the blocks of at least
    half the largest block (the curve's last octave)."""
    pts = [(p.size_bytes, float(p.throughput_bps)) for p in rec.points if p.size_bytes]
    if not pts:
        return None
    largest = max(s for s, _ in pts)
    return statistics.median(v for s, v in pts if s * 2 >= largest)


def burst_of(rec: TrialRecord) -> tuple[float, int] | None:
    """The highest point of one run's curve: (bit/s, block size)."""
    pts = [(float(p.throughput_bps), p.size_bytes) for p in rec.points if p.size_bytes]
    return max(pts) if pts else None


def largest_block(c: Config) -> tuple[int, float] | None:
    """(the largest block size, its throughput in Mbit/s selected over the repetitions):
    the curve's most physical point, shown beside a plateau above the wire's limit."""
    pts = curve_points(c)
    if not pts:
        return None
    size, value = pts[-1]
    return int(size), value


def plateau(c: Config) -> float | None:
    """The configuration's plateau in Mbit/s: the repetitions' plateaus, selected."""
    vals = [v for v in (plateau_of(r) for r in c.ok) if v is not None]
    return mbit(_select(vals, c.rule)) if vals else None


def plateaus(c: Config) -> list[float]:
    return [v / MBIT for v in (plateau_of(r) for r in c.ok) if v is not None]


def curve_points(c: Config) -> list[tuple[float, float]]:
    """Throughput per block size in Mbit/s, selected over the repetitions by the rule."""
    per_size: dict[int, list[float]] = defaultdict(list)
    for r in c.ok:
        for p in r.points:
            if p.size_bytes:
                per_size[p.size_bytes].append(float(p.throughput_bps))
    out = []
    for s, v in sorted(per_size.items()):
        sel = _select(v, c.rule)
        if sel is not None:
            out.append((float(s), sel / MBIT))
    return out


@dataclass
class CurveSpec:
    """A curve to draw (or a reason it is not there)."""

    config: Config
    label: str
    colour: str
    marker: str
    points: list[tuple[float, float]]


def _flagged(c: Config, pts: list[tuple[float, float]]) -> list[tuple[float, float]]:
    limit = c.limit_bps
    return [(x, y) for x, y in pts if limit and c.above_limit(y)]


def _curve_flag(e: Entry, glabel: str, flagged: list[tuple[float, float]],
                limit: float) -> str:
    sizes = [int(x) for x, _ in flagged]
    peak_x, peak_y = max(flagged, key=lambda p: p[1])
    return (f"{e.label}, {glabel}: {len(flagged)} block sizes from {min(sizes)} to "
            f"{max(sizes)} bytes are above the link's goodput limit of {limit:.1f} Mbit/s "
            f"(highest {peak_y:.1f} Mbit/s at {int(peak_x)} bytes"
            + (f", above the line rate {e.rate_bps / MBIT:g} Mbit/s" if e.rate_bps and
               peak_y > e.rate_bps / MBIT else "") + ").")


def curve_figure(fig_id: str, family: str, title: str, caption: str,
                 specs: list[CurveSpec], missing: list[str], panel_title: str,
                 per_panel: int = CURVES_PER_PANEL) -> Figure:
    """A curve chart: ``specs`` in panels of at most ``per_panel`` curves, the limits of
    their links as reference lines, points above them marked, and who is missing named."""
    notes: list[str] = []
    explain: list[str] = []
    panels = []
    chunks = [specs[i:i + per_panel] for i in range(0, len(specs), per_panel)] or [[]]
    for k, chunk in enumerate(chunks):
        curves = []
        limits: dict[float, str] = {}
        for s in chunk:
            flagged = _flagged(s.config, s.points)
            curves.append(Curve(label=s.label, colour=s.colour, marker=s.marker,
                                points=s.points, flagged=flagged, entry=s.config.entry.key))
            c, e = s.config, s.config.entry
            if c.limit_bps:
                y = c.limit_bps / MBIT
                limits.setdefault(round(y, 3), f"goodput limit, {c.group.label}: {y:.1f}")
            if flagged and c.limit_bps:
                notes.append(_curve_flag(e, c.group.label, flagged, c.limit_bps / MBIT))
                explain.append(explanation(e))
        refs = [Reference(y, label, "6 3") for y, label in sorted(limits.items(),
                                                                   reverse=True)]
        rates = sorted({s.config.entry.rate_bps for s in chunk if s.config.entry.rate_bps})
        for rate in rates:
            refs.append(Reference(rate / MBIT, f"line rate {rate / MBIT:g} Mbit/s", "2 3"))
        name = panel_title if len(chunks) == 1 else \
            f"{panel_title}, {k * per_panel + 1}-{k * per_panel + len(chunk)} of {len(specs)}"
        panels.append(LinePanel(title=name, xlabel=XLABEL, ylabel=YLABEL, curves=curves,
                                references=refs))
    top = axis_max([y for p in panels for cv in p.curves for _, y in cv.points]
                   + [r.y for p in panels for r in p.references]) / 1.1 * 1.05
    for p in panels:
        p.ymax = top
    legend = [LegendItem("goodput limit of the link", REFERENCE, "line", "6 3")]
    if any(r.dash == "2 3" for p in panels for r in p.references):
        legend.append(LegendItem("line rate", REFERENCE, "line", "2 3"))
    if any(cv.flagged for p in panels for cv in p.curves):
        legend.append(LegendItem("above the link's goodput limit (see the notes)", "#000000",
                                 "band"))
    entries = list(dict.fromkeys(s.config.entry.key for s in specs))
    if TBF_EXPLANATION in explain:
        explain.append(LAB_NETPIPE_RANGE)
    return Figure(id=fig_id, family=family, title=title, caption=caption, panels=list(panels),
                  entries=entries, legend=legend, missing=missing,
                  notes=notes + list(dict.fromkeys(explain)),
                  columns=2 if len(panels) > 1 else 1)


def _why_missing(c: Config | None, who: str) -> str:
    if c is None:
        return f"{who}: not measured (not in that run's profile)"
    if c.ok:
        return f"{who}: no block sizes in its output"
    return f"{who}: {c.word} {c.counts}"


def netpipe_figures(ix: Index) -> tuple[list[Figure], list[Table]]:
    figures: list[Figure] = []
    tables: list[Table] = []
    for (tool, protocol, test), configs in ix.charts(Shape.CURVE).items():
        name = chart_title(tool, protocol, test)
        groups = sorted_groups(c.group for c in configs)
        colours = mtu_colours(len(groups))
        style = {g.key: (colours[k], MTU_MARKERS[k % len(MTU_MARKERS)])
                 for k, g in enumerate(groups)}
        by = {(c.entry.key, c.group.key): c for c in configs}
        points = {id(c): curve_points(c) for c in configs}
        how = _curve_how(configs)
        entries = ix.entries_of(configs)
        # one chart per adapter, a curve per MTU (one colour per MTU)
        for e in entries:
            specs, missing = [], []
            for g in groups:
                c = by.get((e.key, g.key))
                if c is not None and points[id(c)]:
                    colour, marker = style[g.key]
                    specs.append(CurveSpec(c, g.label, colour, marker, points[id(c)]))
                else:
                    missing.append(_why_missing(c, g.label))
            if not specs:
                continue
            figures.append(curve_figure(
                _adapter_id(test, e, groups), ChartKind.NETPIPE_ADAPTER,
                f"{name} by block size: {e.label}, one curve per MTU",
                f"Throughput per block size ({how}); one colour and marker per MTU, the "
                f"same in every adapter's chart, dark for the smallest MTU to light for the "
                f"largest.", specs, missing, e.label))
        # one chart per MTU, a curve per adapter (the adapters' colours)
        for g in groups:
            mine = [by[(e.key, g.key)] for e in ranking_order(ix, [
                c for c in configs if c.group.key == g.key], plateau) if (e.key, g.key) in by]
            specs = [CurveSpec(c, c.entry.label, c.entry.colour, c.entry.marker,
                               points[id(c)]) for c in mine if points[id(c)]]
            missing = [_why_missing(c, c.entry.label) for c in mine if not points[id(c)]]
            missing += [_why_missing(None, e.label) for e in entries
                        if (e.key, g.key) not in by]
            if not specs:
                continue
            figures.append(curve_figure(
                slug("netpipe", test, g.key.split(":", 1)[1]),
                ChartKind.NETPIPE_MTU, f"{name} by block size at {g.label}, one curve per adapter",
                f"Throughput per block size ({how}), one curve per adapter in its colour, "
                f"highest plateau within the wire's limit first, then those above it (not "
                f"ranked).", specs, missing, g.label))
        fig, table = plateau_figure(ix, configs, groups, tool, protocol, test)
        figures.append(fig)
        tables.append(table)
    return figures, tables


def _adapter_id(test: str, e: Entry, groups: list[Group]) -> str:
    """A name a reader would choose: netpipe-gbe (netpipe-b-gbe for a later run's), never
    one of the per-MTU charts' (netpipe-mtu1500)."""
    name = slug("netpipe", test, e.pair if e.run_index == 0 else f"{e.run_label}-{e.pair}")
    if name in {slug("netpipe", test, g.key.split(":", 1)[1]) for g in groups}:
        name += "-adapter"
    return name


def _curve_how(configs: list[Config]) -> str:
    rules = sorted({c.rule for c in configs})
    reps = sorted({len(c.ok) for c in configs if c.ok})
    if reps == [1]:
        return "one run per configuration"
    return f"{'/'.join(rules)} over the repetitions that succeeded"


def plateau_figure(ix: Index, configs: list[Config], groups: list[Group], tool: str,
                   protocol: str, test: str) -> tuple[Figure, Table]:
    name = chart_title(tool, protocol, test)
    panels, notes, explain = [], [], set()
    for g in groups:
        p, n, x = ranking_panel(ix, configs, g, plateau, "sustained throughput, Mbit/s",
                                whiskers=False)
        by = {c.entry.key: c for c in configs if c.group.key == g.key}
        for b in p.bars:
            vals = plateaus(by[b.row])
            if b.value is not None and len(vals) > 1:
                b.lo, b.hi = min(vals), max(vals)
        panels.append(p)
        notes += n
        explain |= x
    set_axis(panels)
    if TBF_EXPLANATION in explain:
        explain.add(LAB_NETPIPE_RANGE)
    fig_id = slug("netpipe", test, "plateau")
    fig = Figure(
        id=fig_id, family=ChartKind.NETPIPE_PLATEAU, title=f"{name}: sustained throughput",
        caption=("At each MTU a ranking by the plateau of the curve (median over its last "
                 "octave of blocks), fastest first; the burst maximum is in the table. "
                 "Black mark: the link's goodput limit."),
        panels=list(panels), entries=[e.key for e in ix.entries_of(configs)],
        legend=bar_legend(panels), notes=notes + sorted(explain))
    t = Table(id=fig_id, family=ChartKind.NETPIPE_PLATEAU, title=f"{name}: plateau and burst maximum",
              columns=["adapter", "point", "plateau Mbit/s", "from blocks, bytes",
                       "burst maximum Mbit/s", "at block size, bytes", "n",
                       "goodput limit Mbit/s", "plateau above the limit"])
    for c in sorted(configs, key=lambda c: (c.mtu, ix.order[c.entry.key])):
        v = plateau(c)
        bursts = [b for b in (burst_of(r) for r in c.ok) if b is not None]
        burst = max(bursts) if bursts else None
        sizes = sorted({p.size_bytes for r in c.ok for p in r.points if p.size_bytes})
        largest = sizes[-1] if sizes else 0
        span = [s for s in sizes if s * 2 >= largest]
        limit = mbit(c.limit_bps)
        above = ""
        if v is not None and limit and c.above_limit(v):
            above = f"{100 * (v / limit - 1):.1f} % above"
        t.rows.append([c.entry.label, c.group.label, fmt(v) or f"{c.word} {c.counts}",
                       f"{span[0]}-{span[-1]}" if span else "",
                       fmt(mbit(burst[0])) if burst else "", burst[1] if burst else "",
                       c.counts, fmt(limit), above])
        t.row_entries.append(c.entry.key)
    return fig, t


__all__ = [
    "LAB_NETPIPE_RANGE",
    "REAL_EXPLANATION",
    "TBF_EXPLANATION",
    "curve_figure",
    "netpipe_figures",
    "plateau",
    "plateau_of",
]


def samples(c: Config | None) -> list[float]:
    """The repetitions' figures in Mbit/s: throughput, or a netPIPE run's plateau."""
    if c is None:
        return []
    if c.tool in tools_with(Shape.CURVE):
        return plateaus(c)
    return [r.throughput_bps / MBIT for r in c.ok if r.throughput_bps is not None]
