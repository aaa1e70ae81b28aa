"""Request/response latency (every test whose figure is a round trip, ``Config.round_trips``:
sockperf ping-pong, iperf 2's bounce-back): the percentile bars per adapter, a CDF of one
repetition, the table, and the verdict row "lowest tail latency".

Every figure is a round trip in microseconds, and lower is better. A configuration's
percentile is that of all its successful repetitions' round trips pooled
(``results/roundtrips.py``: sockperf's kept full logs, iperf 2's histograms as their bins),
printed only where at least 10 round trips lie beyond it (else the cell says how many it
needs), with the round trips counted, a 95 % order-statistics interval, and the range of
the repetitions' own percentiles (the whiskers). Without kept round trips (sockperf
without ``per_sample``) it is the median of the repetitions' own percentiles, said so.
Never the lowest repetition of each percentile taken apart. The CDF is the repetition
whose median is nearest the pooled one (``latency_repetition``), drawn from its raw
per-sample output where the run kept it, else from the percentiles sockperf printed (a
coarse CDF, said so in the notes).

A round trip below the wire's minimum (both frames serialized once at the adapter's line
rate, ``theory.round_trip_floor_us``) is not a measurement of such a card: as a rate
above the wire's limit, it is flagged (the mark on the p50 bars, the table, the verdict)
and never ranked. The lab's tbf shaping models no serialization, so its slow links read
below their floor (README, "Lab latency figures").

The verdict ranks each adapter once, at its lowest p99 over its points within the wire's
physics (as the throughput verdict takes an adapter's best point), lowest first. Two are
ranked apart only where their p99s differ by more than the tool's resolution (sockperf's
printed 0.001 us, the bounce-back histogram's bin) and, with repetitions, the
comparison's rule over their repetitions' p99s calls one higher latency (:func:`apart`);
otherwise they share a rank, "tied", in the entries' order, as the throughput verdict's
do, and the sentence names them. Whether the leader's p99 is beyond the runner-up's is
the test the comparison uses: a block bootstrap of the pooled p99 over time slices where
both kept their round trips in time order, else Mann-Whitney over the repetitions' p99
(``stats``); with too few repetitions for any p below 0.05 the sentence says it cannot
tell.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nicbench.errors import ParseError
from nicbench.judging import stats
from nicbench.report.bars import row_of
from nicbench.report.colours import ink_on
from nicbench.report.configs import (Config, Index, chart_title, fmt, slug, sorted_groups)
from nicbench.report.model import (ChartKind, Bar, BarPanel, BarStatus, Curve, Figure, LegendItem,
                                   LinePanel, Sentence, Table)
from nicbench.report.resolution import round_trip_resolution_us
from nicbench.physics.link import round_trip_floor_us
from nicbench.report.verdict import LOWEST_TAIL, assign_ranks, csv_row
from nicbench.results import roundtrips
from nicbench.results.records import TrialRecord
from nicbench.tools import sockperf
from nicbench.tools.registry import TOOLS, display_name
from nicbench.tools.driver import Shape

# (summary column, Latency field, label): the percentiles the bars show, in order.
PERCENTILES = (("p50_us", "p50", "p50"), ("p90_us", "p90", "p90"),
               ("p99_us", "p99", "p99"), ("p999_us", "p999", "p99.9"))
_LABELS = {name: label for _, name, label in PERCENTILES}
TAIL = ("p99_us", "p99")        # the verdict's figure
CDF_POINTS = 400                # a CDF drawn from at most this many quantiles


def statistic(c: Config) -> str:
    """How a configuration's percentile is taken, in words: "pooled round trips of 3
    repetitions kept whole"."""
    pooled = c.row.pooled
    if pooled is not None:
        return pooled.words
    n = len(latency_ok(c))
    return f"median of {n} repetitions" if n != 1 else "one repetition"


def cell(c: Config, label: str) -> str:
    """A percentile's cell: its figure (a bin as a range), or the round trips it needs."""
    pooled = c.row.pooled
    if pooled is None:
        return ""
    return pooled[label].figure()


def interval(c: Config, label: str) -> str:
    pooled = c.row.pooled
    return pooled[label].interval() if pooled is not None else ""


def spread(c: Config, label: str) -> str:
    pooled = c.row.pooled
    return pooled[label].spread() if pooled is not None else ""


def latency_ok(c: Config) -> list[TrialRecord]:
    return [r for r in c.ok if r.latency is not None]


def figures(ix: Index) -> tuple[list[Figure], list[Table]]:
    figs: list[Figure] = []
    tables: list[Table] = []
    for (tool, protocol, test), configs in ix.charts(Shape.LATENCY).items():
        title = chart_title(tool, protocol, test)
        order = ranked(ix, configs)
        figs.append(_bars(tool, protocol, test, title, configs, order))
        cdf = _cdf(tool, protocol, test, title, configs, order)
        if cdf is not None:
            figs.append(cdf)
        tables.append(_table(tool, protocol, test, title, configs, order))
    return figs, tables


def ranked(ix: Index, configs: list[Config]) -> list[Config]:
    """Configurations by their p99, lowest first; those below the wire's minimum after
    (not ranked), unmeasured last; ties in entry order."""
    return sorted(configs, key=lambda c: (c.row.p99_us is None, below_floor(c),
                                          c.row.p99_us or 0.0, ix.order[c.entry.key], c.mtu))


def floor_us(c: Config) -> float | None:
    """The wire's shortest round trip for this configuration's messages (None without a
    known line rate or a measured message size)."""
    size = next((r.latency.message_bytes for r in latency_ok(c) if r.latency), None)
    if not c.entry.rate_bps or size is None:
        return None
    return round_trip_floor_us(c.entry.rate_bps, size, c.row.protocol)


def below_floor(c: Config) -> bool:
    """Its median round trip is shorter than the wire allows: not such a card's figure."""
    floor = floor_us(c)
    return bool(floor and c.row.p50_us is not None and c.row.p50_us < floor)


def floor_words(c: Config) -> str:
    floor = floor_us(c)
    where = "on this lab" if c.entry.emulated else "(check the link rate and the raw output)"
    return (f"p50 {c.row.p50_us:.1f} us below the wire's minimum round trip "
            f"{floor:.2f} us {where}; not ranked")


def _bars(tool: str, protocol: str, test: str, title: str, configs: list[Config],
          order: list[Config]) -> Figure:
    panels = []
    for g in sorted_groups(c.group for c in configs):
        mine = [c for c in order if c.group.key == g.key]
        rows = [row_of(c.entry) for c in mine]
        for column, name, label in PERCENTILES:
            bars = [_bar(c, column, name) for c in mine]
            if name == "p50":
                for b, c in zip(bars, mine, strict=True):
                    b.limit = floor_us(c)
                    b.flag = floor_words(c) if below_floor(c) else ""
                    if b.flag:
                        b.text += " !"
            top = max((max(b.hi or 0.0, b.value or 0.0, b.limit or 0.0) for b in bars),
                      default=0.0)
            panels.append(BarPanel(title=f"{g.label}: {label}", xlabel="round trip, us",
                                   rows=rows, bars=bars, xmax=top * 1.1 or 1.0,
                                   sorted_by="p99, lowest first"))
    stats_used = sorted({statistic(c) for c in configs if latency_ok(c)})
    return Figure(
        id=slug("latency", tool, protocol, test), family=ChartKind.LATENCY,
        title=f"{title}: round-trip percentiles",
        caption=("Round trips of one message in flight, in microseconds, lower is better: "
                 "each bar is that percentile of every repetition's round trips pooled, "
                 "blank where fewer than 10 lie beyond it; whiskers: the repetitions' own. "
                 "Rows by p99, lowest first."),
        panels=list(panels), entries=list(dict.fromkeys(c.entry.key for c in order)),
        legend=[LegendItem("repetitions' own, lowest to highest", "#000000", "whisker"),
                LegendItem("the wire's minimum round trip (p50 panels)", "#000000", "limit")],
        notes=[f"Taken as: {'; '.join(stats_used)}; a histogram's percentile as its bin's "
               "upper edge."] + [f"{c.entry.label}, {c.group.label}: {floor_words(c)}."
                                 for c in order if below_floor(c)],
        columns=2)


def _bar(c: Config, column: str, name: str) -> Bar:
    value = getattr(c.row, column)
    pooled = c.row.pooled
    pc = pooled[_LABELS[name]] if pooled is not None else None
    n_ok = len(latency_ok(c))
    bar = Bar(row=c.entry.key, value=value, n_ok=n_ok, n=c.planned,
              status=BarStatus.of(c.row.status), fill=c.entry.colour,
              whisker=ink_on(c.entry.colour))
    if value is None:
        bar.gap = (f"needs {pc.need:,} round trips" if pc is not None and pc.n
                   else c.word or "no data")
        bar.text = bar.gap
    else:
        bar.text = f"{pc.figure() if pc is not None else f'{value:.1f}'} us"
        if pc is not None and pc.reps > 1 and pc.reps_low is not None:
            bar.lo, bar.hi = pc.reps_low, pc.reps_high
    return bar


@dataclass
class Cdf:
    points: list[tuple[float, float]]    # (round trip us, fraction at or below)
    per_sample: bool                     # from every round trip (else the percentiles)
    repetition: int | None
    binned: bool = False                 # from a histogram: exact at its bins' edges


def cdf_of(c: Config) -> Cdf | None:
    """The CDF of the configuration's selected repetition: every round trip of its raw
    full log where the run kept one, else sockperf's printed percentiles."""
    rep = c.row.latency_repetition
    rec = next((r for r in latency_ok(c) if r.repetition == rep), None)
    if rec is None or rec.latency is None:
        return None
    hist = roundtrips.kept(c.run.path, rec.raw, rec.tool) if rec.tool != sockperf.NAME \
        else None
    if hist is not None and hist.binned and hist.n:
        # a histogram's CDF is exact at its bins' upper edges: the share at or below each
        done, pts = 0, [(hist.bins[0][0], 0.0)]
        for _, high, n in hist.bins:
            done += n
            pts.append((high, done / hist.n))
        return Cdf(pts, False, rep, binned=True)
    trips = _kept_round_trips(c.run.path, rec)
    if trips:
        trips.sort()
        n = len(trips)
        step = max(1, n // CDF_POINTS)
        idx = sorted({*range(0, n, step), n - 1})
        return Cdf([(trips[i], (i + 1) / n) for i in idx], True, rep)
    lat = rec.latency
    printed = [(lat.min_us, 0.0), (rec.extra.get("p25_us"), 0.25), (lat.p50_us, 0.5),
               (rec.extra.get("p75_us"), 0.75), (lat.p90_us, 0.9), (lat.p99_us, 0.99),
               (lat.p999_us, 0.999), (rec.extra.get("p99_99_us"), 0.9999), (lat.max_us, 1.0)]
    pts = [(float(v), q) for v, q in printed if isinstance(v, (int, float)) and v > 0]
    return Cdf(sorted(pts), False, rep)


def _kept_round_trips(run_path: Path, rec: TrialRecord) -> list[float]:
    rel = rec.raw.get("outfile")
    if not rel:
        return []
    try:
        return sockperf.round_trips_us((run_path / rel).read_text(errors="replace"))
    except (OSError, ParseError):
        return []


def hint(tool: str) -> str:
    """How the tool keeps every round trip, where it printed its percentiles alone."""
    return TOOLS[tool].per_sample_hint if tool in TOOLS else ""


def _cdf(tool: str, protocol: str, test: str, title: str, configs: list[Config],
         order: list[Config]) -> Figure | None:
    curves, notes = [], []
    for c in order:
        cdf = cdf_of(c)
        if cdf is None or not cdf.points:
            continue
        label = f"{c.entry.label}, {c.group.label}" if len(sorted_groups(
            x.group for x in configs)) > 1 else c.entry.label
        curves.append(Curve(label=label, colour=c.entry.colour, marker=c.entry.marker,
                            points=cdf.points, entry=c.entry.key))
        source = (f"every round trip of repetition {cdf.repetition}'s raw full log"
                  if cdf.per_sample else
                  f"{display_name(c.tool)}'s printed percentiles of repetition "
                  f"{cdf.repetition} (no per-sample output kept: {hint(c.tool)})"
                  if hint(c.tool)
                  else f"repetition {cdf.repetition}'s histogram: the share at or below "
                  "each bin's upper edge, exact there, a straight line between (no "
                  "per-sample output)" if cdf.binned
                  else f"the percentiles {display_name(c.tool)} gave for repetition "
                  f"{cdf.repetition} (read off its histogram: no per-sample output)")
        notes.append(f"{label}: {source}.")
    if not curves:
        return None
    return Figure(
        id=slug("latency-cdf", tool, protocol, test), family=ChartKind.LATENCY_CDF,
        title=f"{title}: distribution of round trips",
        caption=("Share of round trips at or below each time (log scale), for the one "
                 "repetition whose median is the selected one per adapter; lower and "
                 "further left is better."),
        panels=[LinePanel(title="", xlabel="round trip, us", ylabel="fraction of round trips",
                          curves=curves, xlog=True, ymax=1.0)],
        entries=[cv.entry for cv in curves if cv.entry], notes=notes)


def _table(tool: str, protocol: str, test: str, title: str, configs: list[Config],
           order: list[Config]) -> Table:
    t = Table(id=slug("latency", tool, protocol, test), family=ChartKind.LATENCY,
              title=f"{title}: round trips, us",
              columns=["adapter", "at", "repetitions", "statistic", "p50", "p90", "p99",
                       "p99.9", "max", "p50 lowest-highest", "round trips", "p50 95 % CI",
                       "p99 95 % CI", "p99 lowest-highest", "p99.9 95 % CI",
                       "CDF repetition", "wire minimum"])
    for c in order:
        r = c.row
        t.rows.append([c.entry.label, c.group.label, c.counts, statistic(c),
                       cell(c, "p50"), cell(c, "p90"), cell(c, "p99"), cell(c, "p99.9"),
                       fmt(r.max_us),
                       f"{fmt(r.p50_min_us)}-{fmt(r.p50_max_us)}" if r.p50_min_us is not None
                       else "", r.latency_samples or "", interval(c, "p50"),
                       interval(c, "p99"), spread(c, "p99"), interval(c, "p99.9"),
                       r.latency_repetition or "",
                       (f"{floor_us(c):.2f}" + (" ! below it" if below_floor(c) else ""))
                       if floor_us(c) is not None else ""])
        t.row_entries.append(c.entry.key)
    return t


# -- the verdict: lowest tail latency -----------------------------------------------
def verdict_sets(ix: Index, configs: list[Config]) -> tuple[list[Config], list[Config],
                                                              list[Config]]:
    """(ranked, below the wire's minimum, not measured): one configuration per adapter,
    as the throughput verdict takes an adapter's best point: its lowest p99 among its
    points within the wire's physics, else its lowest below it; the not measured are
    every configuration without a p99 (its gaps)."""
    picks = []
    for e in ix.entries_of(configs):
        measured = [c for c in configs if c.entry.key == e.key and c.row.p99_us is not None]
        good = [c for c in measured if not below_floor(c)] or measured
        if good:
            picks.append(min(good, key=lambda c: (c.row.p99_us or 0.0, c.mtu)))
    in_order = ranked(ix, picks)
    return ([c for c in in_order if not below_floor(c)],
            [c for c in in_order if below_floor(c)],
            [c for c in configs if c.row.p99_us is None])


def verdict(ix: Index) -> tuple[list[Sentence], list[Table]]:
    sentences, tables = [], []
    for (tool, protocol, test), configs in ix.charts(Shape.LATENCY).items():
        title = chart_title(tool, protocol, test)
        order, below, _missing = verdict_sets(ix, configs)
        t = Table(id=slug("verdict-latency", tool, protocol, test), family="verdict",
                  title=f"{title}: lowest tail latency",
                  columns=["rank", "adapter", "p99, us", "at", "statistic", "p50, us",
                           "p99.9, us", "not measured"])
        got = ranks(order)
        for c in order:
            rank, tied = got[id(c)]
            t.rows.append([f"{rank} (tied)" if tied else str(rank), c.entry.label,
                           cell(c, "p99"), c.group.label, statistic(c), cell(c, "p50"),
                           cell(c, "p99.9"), ""])
            t.row_entries.append(c.entry.key)
        for c in below:
            t.rows.append(["", c.entry.label, cell(c, "p99"), c.group.label, statistic(c),
                           cell(c, "p50"), cell(c, "p99.9"), floor_words(c)])
            t.row_entries.append(c.entry.key)
        for c in configs:
            if c.row.p99_us is None:
                t.rows.append(["", c.entry.label, cell(c, "p99"), c.group.label, "", "",
                               "", f"{_why_none(c)} {c.counts}"])
                t.row_entries.append(c.entry.key)
        tables.append(t)
        sentences.append(Sentence(title, _sentence(title, order, below, configs)))
    return sentences, tables


def resolution_us(c: Config) -> float:
    """The resolution of this configuration's round trips (``resolution.py``)."""
    return round_trip_resolution_us(c.tool, c.ok)


def verdict_csv_rows(ix: Index) -> list[list[object]]:
    """verdict.csv's "lowest tail latency" rows: per adapter, ranked or below the wire's
    minimum (not ranked), and every configuration not measured, with its statistic and the
    bound."""
    out: list[list[object]] = []
    for (tool, _protocol, _test), configs in ix.charts(Shape.LATENCY).items():
        order, below, missing = verdict_sets(ix, configs)
        got = ranks(order)
        for c in order + below + missing:
            floor = floor_us(c)
            out.append(csv_row(
                adapter=c.entry.label, adapter_id=c.entry.adapter, run=c.entry.run_label,
                test=c.test, tool=tool,
                rank=got[id(c)][0] if c in order else "",
                tied="yes" if c in order and got[id(c)][1] else "", point=c.point,
                figure="p99", status=c.row.status.value if c.row.p99_us is not None
                else "not measured",
                not_measured="" if c.row.p99_us is not None else f"{_why_none(c)} "
                f"{c.counts}",
                verdict_row=LOWEST_TAIL, value=_num(c.row.p99_us), unit="us",
                statistic=f"p99 of the {statistic(c)}" if c.row.p99_us is not None
                else "", bound=_num(floor),
                beyond_bound=floor_words(c) if below_floor(c) else ""))
    return out


def _why_none(c: Config) -> str:
    """Why a configuration has no p99: too few round trips for one, or no data."""
    pooled = c.row.pooled
    if pooled is not None and pooled.n and not pooled["p99"].printed:
        return f"p99 {pooled['p99'].figure()}"
    return c.word or "no data"


def _num(value: float | None) -> object:
    return "" if value is None else round(value, 3)


def apart(upper: Config, lower: Config) -> bool:
    """Whether ``upper`` (the lower p99) ranks above ``lower``: their p99s differ by more
    than the round trips' resolution and, where both have repetitions (two or more), the
    comparison's rule calls ``lower``'s repetitions' p99s higher latency
    (``judging.words.judge_samples``): as the throughput verdict's ranks (``verdict.apart``)."""
    from nicbench.judging.words import HIGHER_LATENCY, judge_samples

    res = max(resolution_us(upper), resolution_us(lower))
    if (lower.row.p99_us or 0.0) - (upper.row.p99_us or 0.0) <= res * (1 + 1e-9):
        return False
    xa = [r.latency.p99_us for r in latency_ok(upper) if r.latency]
    xb = [r.latency.p99_us for r in latency_ok(lower) if r.latency]
    if len(xa) < 2 or len(xb) < 2:
        return True
    return judge_samples(xa, xb, res, lower_better=True).word is HIGHER_LATENCY


def ranks(order: list[Config]) -> dict[int, tuple[int, bool]]:
    """(rank, tied) of each configuration of ``order`` (by ``id``), lowest p99 first:
    shared where :func:`apart` cannot tell two apart (``verdict.assign_ranks``)."""
    out: dict[int, tuple[int, bool]] = {}

    def put(c: Config, k: int, tied: bool) -> None:
        out[id(c)] = (k, tied)

    assign_ranks(order, apart, put)
    return out


def _tied(a: Config, b: Config, got: dict[int, tuple[int, bool]]) -> bool:
    return got[id(a)][0] == got[id(b)][0]


def _sentence(title: str, order: list[Config], below: list[Config],
              configs: list[Config]) -> str:
    if not order and not below:
        return f"{title}: no round trips were measured."
    if not order:
        return (f"{title}: no round trip within the wire's physics; nothing ranked. "
                + _below_words(below))
    top = order[0]
    text = (f"{title}: lowest tail latency {top.entry.label}, p99 {cell(top, 'p99')} us "
            f"at {top.group.label} ({statistic(top)}, n = {top.row.latency_samples or 0:,}; "
            f"p50 {cell(top, 'p50')} us).")
    if len(order) > 1:
        second = order[1]
        got = ranks(order)
        if _tied(top, second, got):
            mates = [c for c in order[1:] if _tied(top, c, got)]
            text += (f" Tied with {', '.join(c.entry.label for c in mates)} (no difference "
                     f"beyond the {max(resolution_us(top), resolution_us(second)):g} us the "
                     "round trips are read to and the comparison's rule over the "
                     "repetitions' p99s; listed in the report's entry order).")
        text += " Then " + ", ".join(
            f"{c.entry.label} {c.row.p99_us:.1f}"
            + (f" (tied at rank {got[id(c)][0]})" if got[id(c)][1] else "")
            for c in order[1:]) + "."
        text += " " + _separable(top, second)
    if below:
        text += " " + _below_words(below)
    missing = [c for c in configs if c.row.p99_us is None]
    if missing:
        text += " Not measured: " + "; ".join(f"{c.entry.label} {_why_none(c)}"
                                               for c in missing) + "."
    return text


def _below_words(below: list[Config]) -> str:
    return "Below the wire's minimum round trip; not ranked: " + "; ".join(
        f"{c.entry.label} {floor_words(c).removesuffix('; not ranked')}" for c in below) + "."


def blocks_of(c: Config) -> list[np.ndarray]:
    """A latency configuration's kept round trips as a block bootstrap's blocks (time
    slices of its full logs); none unless every repetition kept them in time order."""
    parts = []
    for r in c.ok:
        trips = roundtrips.kept(c.run.path, r.raw, r.tool) if r.latency is not None else None
        if trips is None or not trips.slices:
            return []
        parts.append(trips)
    return roundtrips.blocks(parts)


def _separable(a: Config, b: Config) -> str:
    """Whether the leader's p99 is beyond the runner-up's: a block bootstrap of the pooled
    round trips where both kept them in time order, else the rank test over the
    repetitions' own p99."""
    shift = roundtrips.compare_percentile(ba, bb, 0.99) if (ba := blocks_of(a)) and \
        (bb := blocks_of(b)) else None
    if shift is not None:
        lead = "beyond" if shift.ci_low_us > 0 else "within"
        return (f"The lead over {b.entry.label} is {lead} the noise of the round trips "
                f"(block bootstrap of the pooled p99 over {shift.a_blocks} and "
                f"{shift.b_blocks} time slices: 95 % interval of the difference "
                f"{shift.ci_low_us:+.1f} to {shift.ci_high_us:+.1f} us).")
    xa = [r.latency.p99_us for r in latency_ok(a) if r.latency]
    xb = [r.latency.p99_us for r in latency_ok(b) if r.latency]
    if not stats.testable(len(xa), len(xb)):
        many = "s" if max(len(xa), len(xb)) > 1 else ""
        return (f"{len(xa)} against {len(xb)} repetition{many} cannot tell the first two apart "
                f"(the smallest p possible is {stats.smallest_p(len(xa), len(xb)):.2f}).")
    p = stats.mann_whitney_p(xa, xb)
    if p is None:
        return ""
    lead = "beyond" if p < stats.ALPHA else "within"
    return (f"The lead over {b.entry.label} is {lead} the repetitions' spread "
            f"(Mann-Whitney p = {p:.3f} over their p99s).")

