"""Throughput against streams: how many parallel streams it takes to fill a link, and both
directions at once.

A profile sweeps a test over iperf's ``streams`` (``sweep: {streams: [1, 2, 4, 8]}``, one
test per value, each saying where it came from in ``swept:``; NTttcp's ``threads``
likewise); the tests of one sweep are one family. A bidirectional test (iperf3 ``bidir:
true``) not swept over streams is a family of its own, at its one stream count. Per family, one chart per adapter:

- one way: the selected throughput (the speed charts' figure) against the stream count,
  a curve per MTU, with the link's goodput limit and line rate;
- both ways (``bidir``): a panel of each direction (forward, client to server, is the
  trial's figure; reverse) against the one-way goodput limit, and a panel of the two
  together against twice it: a full-duplex link carries its rate each way at once.

The bidirectional figures are the median over the repetitions the speed charts' value is
taken over (``Config.shown``), each direction and the sum from the same repetitions. A
point above its limit by
more than the tool's printed resolution and timing error allow (``Config.above_limit``) is marked and named under the chart:
it is not a measurement of the card (no chart here ranks; the speed charts, which do,
never rank such a value). A table per family lists every point.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass

from nicbench.report.bars import axis_max
from nicbench.report.colours import MTU_MARKERS, REFERENCE, mtu_colours
from nicbench.report.configs import (MBIT, Config, Entry, Index, fmt, mbit, slug,
                                     sorted_groups, tool_title)
from nicbench.report.model import ChartKind, Curve, Figure, LegendItem, LinePanel, Reference, Table
from nicbench.results.plausible import above_bound, timing_error_s

# The parameter that counts parallel streams: iperf's -P, NTttcp's threads (-m N,...: a
# connection each).
PARAMS = ("streams", "threads")
XLABEL = "parallel streams (log scale)"
YLABEL = "throughput, Mbit/s"
REVERSE_DASH = "5 3"
LIMIT_DASH, RATE_DASH = "6 3", "2 3"


@dataclass(frozen=True)
class Family:
    tool: str
    protocol: str
    name: str            # the test as written (a sweep's ``of``)
    bidir: bool


@dataclass(frozen=True)
class Figures:
    """What one configuration puts on the chart, Mbit/s: the one-way figure, or both
    directions and their sum (None where the output did not know one)."""

    forward: float | None
    reverse: float | None = None
    both: float | None = None


def families(ix: Index) -> dict[Family, list[tuple[int, Config]]]:
    """Each family's configurations with their stream counts, in the Index's order."""
    out: dict[Family, list[tuple[int, Config]]] = defaultdict(list)
    for c in ix.configs:
        spec = c.test_spec
        if spec is None:
            continue
        bidir = spec.params.get("bidir") is True
        if spec.swept is not None and spec.swept.param in PARAMS:
            name, n = spec.swept.of, spec.swept.value
        elif bidir and not spec.beside:
            # a bidirectional test not swept over streams: a family alone (a load with a
            # probe beside it is latency under load's: loaded.py shows its throughput)
            name, n = spec.name, spec.params.get("streams", 1)
        else:
            continue
        if isinstance(n, int) and not isinstance(n, bool) and n >= 1:
            out[Family(c.tool, c.row.protocol, name, bidir)].append((n, c))
    return dict(out)


def figures_of(c: Config, bidir: bool) -> Figures:
    if not bidir:
        return Figures(forward=mbit(c.row.selected_bps))
    shown = [r.bidir for r in c.shown if r.bidir is not None]
    if not shown:
        return Figures(forward=mbit(c.row.selected_bps))

    def median(values: list[float | None]) -> float | None:
        vals = [v for v in values if v is not None]
        return statistics.median(vals) / MBIT if vals else None
    return Figures(forward=median([b.forward_bps for b in shown]),
                   reverse=median([b.reverse_bps for b in shown]),
                   both=median([b.total_bps for b in shown]))


def _above(value: float | None, limit: float | None, c: Config) -> bool:
    """A figure (Mbit/s) above a limit (Mbit/s) by more than its tool's printed
    resolution and timing error allow (``results.plausible.above_bound``)."""
    return above_bound(None if value is None else value * MBIT,
                       None if limit is None else limit * MBIT, c.resolution_bps,
                       timing_error_s(c.tool), c.timed_s)


@dataclass
class _Series:
    label: str
    colour: str
    marker: str
    dash: str
    points: list[tuple[float, float]]
    flagged: list[tuple[float, float]]
    entry: str


def _series(label: str, colour: str, marker: str, dash: str, entry: str,
            values: list[tuple[int, float | None, float | None, Config]]) -> _Series:
    """``values``: (streams, Mbit/s, its limit in Mbit/s, its configuration)."""
    pts = [(float(n), v) for n, v, _, _ in values if v is not None]
    flagged = [(float(n), v) for n, v, lim, c in values
               if v is not None and _above(v, lim, c)]
    return _Series(label, colour, marker, dash, pts, flagged, entry)


def adapter_figure(fam: Family, e: Entry, mine: list[tuple[int, Config]],
                   ) -> tuple[Figure, list[str]] | None:
    """One adapter's chart of a family (None when nothing of it measured), and the
    notes of its points above their limits."""
    groups = sorted_groups(c.group for _, c in mine)
    colours = mtu_colours(len(groups))
    each: list[_Series] = []
    both: list[_Series] = []
    refs: dict[tuple[str, float], Reference] = {}
    refs_both: dict[tuple[str, float], Reference] = {}
    missing: list[str] = []
    notes: list[str] = []
    for k, g in enumerate(groups):
        colour, marker = colours[k], MTU_MARKERS[k % len(MTU_MARKERS)]
        mine_g = sorted((n, c) for n, c in mine if c.group.key == g.key)
        rows = [(n, c, figures_of(c, fam.bidir), mbit(c.limit_bps)) for n, c in mine_g]
        for n, c, f, _ in rows:
            if f.forward is None:
                missing.append(f"{n} streams, {g.label}: {c.word} {c.counts}")
        suffix = f", {g.label}" if len(groups) > 1 else ""
        limit = next((lim for *_, lim in rows if lim), None)
        made: list[tuple[_Series, float | None]] = []
        if fam.bidir:
            made += [(_series(f"forward{suffix}", colour, marker, "", e.key,
                              [(n, f.forward, lim, c) for n, c, f, lim in rows]), limit),
                     (_series(f"reverse{suffix}", colour, marker, REVERSE_DASH, e.key,
                              [(n, f.reverse, lim, c) for n, c, f, lim in rows]), limit)]
            each += [s for s, _ in made]
            total = _series(f"both directions{suffix}", colour, marker, "", e.key,
                            [(n, f.both, 2 * lim if lim else None, c)
                             for n, c, f, lim in rows])
            both.append(total)
            made.append((total, 2 * limit if limit else None))
        else:
            made.append((_series(g.label, colour, marker, "", e.key,
                                 [(n, f.forward, lim, c) for n, c, f, lim in rows]), limit))
            each += [s for s, _ in made]
        if limit:
            refs[(LIMIT_DASH, round(limit, 3))] = Reference(
                limit, f"goodput limit, {g.label}: {limit:.1f}", LIMIT_DASH)
            refs_both[(LIMIT_DASH, round(2 * limit, 3))] = Reference(
                2 * limit, f"twice the goodput limit (full duplex), {g.label}: "
                f"{2 * limit:.1f}", LIMIT_DASH)
        notes += [_flag_note(e, series.label, int(n), v, lim or 0.0)
                  for series, lim in made for n, v in series.flagged]
    if not any(s.points for s in each + both):
        return None
    if e.rate_bps:
        rate = e.rate_bps / MBIT
        refs[(RATE_DASH, rate)] = Reference(rate, f"line rate {rate:g} Mbit/s", RATE_DASH)
        refs_both[(RATE_DASH, 2 * rate)] = Reference(
            2 * rate, f"twice the line rate {2 * rate:g} Mbit/s", RATE_DASH)
    panels = [_panel("each direction" if fam.bidir else e.label, each, refs)]
    if fam.bidir:
        panels.append(_panel("both directions together", both, refs_both))
    top = axis_max([y for p in panels for cv in p.curves for _, y in cv.points]
                   + [r.y for p in panels for r in p.references])
    for p in panels:
        p.ymax = top
    name = f"{tool_title(fam.tool, fam.protocol)}: test {fam.name}"
    title = (f"{name}, both directions at once, by streams: {e.label}" if fam.bidir
             else f"{name} by parallel streams: {e.label}")
    caption = ("Throughput against the number of parallel streams (iperf -P), the value "
               "the speed charts show (selected over the repetitions), one curve per MTU. "
               if not fam.bidir else
               "Both directions at once (iperf3 --bidir, -P streams each way): forward "
               "(client to server) solid, reverse dashed, and their sum against twice the "
               "link's goodput limit. ")
    caption += "A point above its limit is marked, named below and never ranked."
    fig = Figure(id=slug("streams", fam.name, fam.tool, fam.protocol, str(e.run_index),
                         e.pair),
                 family=ChartKind.STREAMS, title=title, caption=caption, panels=list(panels),
                 entries=[e.key], legend=_legend(panels), notes=notes, missing=missing,
                 columns=2 if len(panels) > 1 else 1)
    return fig, notes


def _panel(title: str, series: list[_Series], refs: dict) -> LinePanel:
    curves = [Curve(label=s.label, colour=s.colour, marker=s.marker, points=s.points,
                    dash=s.dash, flagged=s.flagged, entry=s.entry) for s in series]
    return LinePanel(title=title, xlabel=XLABEL, ylabel=YLABEL, curves=curves,
                     references=sorted(refs.values(), key=lambda r: -r.y), xunit="streams")


def _legend(panels: list[LinePanel]) -> list[LegendItem]:
    items = [LegendItem("goodput limit of the link", REFERENCE, "line", LIMIT_DASH)]
    if any(r.dash == RATE_DASH for p in panels for r in p.references):
        items.append(LegendItem("line rate", REFERENCE, "line", RATE_DASH))
    if any(cv.flagged for p in panels for cv in p.curves):
        items.append(LegendItem("above the link's goodput limit (see the notes)", "#000000",
                                "band"))
    return items


def _flag_note(e: Entry, what: str, n: int, value: float, limit: float) -> str:
    over = 100.0 * (value / limit - 1.0) if limit else 0.0
    return (f"{e.label}, {what}, {n} streams: {value:.1f} Mbit/s is {over:.1f} % above "
            f"its limit of {limit:.1f} Mbit/s: not a measurement of the card, not ranked.")


def streams_figures(ix: Index) -> tuple[list[Figure], list[Table]]:
    figures: list[Figure] = []
    tables: list[Table] = []
    for fam, members in families(ix).items():
        for e in ix.entries_of(c for _, c in members):
            made = adapter_figure(fam, e, [(n, c) for n, c in members if c.entry is e])
            if made is not None:
                figures.append(made[0])
        tables.append(_table(ix, fam, members))
    return figures, tables


def _table(ix: Index, fam: Family, members: list[tuple[int, Config]]) -> Table:
    name = f"{tool_title(fam.tool, fam.protocol)}: test {fam.name}"
    columns = ["adapter", "point", "streams", "throughput Mbit/s"]
    if fam.bidir:
        columns += ["forward Mbit/s", "reverse Mbit/s", "both directions Mbit/s"]
    columns += ["n", "goodput limit Mbit/s", "above the limit"]
    t = Table(id=slug("streams", fam.name, fam.tool, fam.protocol),
              family="streams", title=f"{name}: throughput by streams", columns=columns)
    for n, c in sorted(members, key=lambda m: (ix.order[m[1].entry.key], m[1].mtu, m[0])):
        f = figures_of(c, fam.bidir)
        limit = mbit(c.limit_bps)
        above = [w for w, v, lim in (("forward" if fam.bidir else "value", f.forward, limit),
                                     ("reverse", f.reverse, limit),
                                     ("both", f.both, 2 * limit if limit else None))
                 if _above(v, lim, c)]
        row: list[object] = [c.entry.label, c.group.label, n,
                             fmt(mbit(c.row.selected_bps)) or f"{c.word} {c.counts}"]
        if fam.bidir:
            row += [fmt(f.forward), fmt(f.reverse), fmt(f.both)]
        row += [c.counts, fmt(limit), ", ".join(above)]
        t.rows.append(row)
        t.row_entries.append(c.entry.key)
    return t
