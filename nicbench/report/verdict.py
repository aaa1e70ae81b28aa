"""The verdict: which card is fastest, at what frame size, at what CPU cost.

As the reviews' conclusions did, per adapter and method (a test of the profile; the tests
one ``sweep:`` made are one method, ``methods``): the best figure it reached and the point
(and swept value) where it reached it, that figure as a share of the wire's
limit at that point, the CPU load of both hosts, the speed per CPU % of the busier host,
and what could not be measured and why. Per method a ranking sentence names the order,
and a second one the CPU cost, where the CPU figures allow it.

The figure is the configuration's selected value (the profile's ``select``), except for
netPIPE, whose figure is the sustained plateau of its curve (``netpipe.plateau``), not a
small message's burst. A figure beyond the wire's limit (``Config.above_limit``) is not a
measurement of the card: it is never ranked, and the verdict says so (for netPIPE with the
value at the curve's largest block beside it).

CPU: the median over the repetitions whose throughput is within the tool's printed
resolution of the selected figure (``Config.shown``: every repetition tied for the best,
not one of them), with the interquartile range of those repetitions; Mbit/s per CPU %
from those medians. A CPU figure whose IQR is above ``NOISY_IQR_POINTS`` (or unknown, one
repetition), or taken while the host was busy with something else (the median of the
other load over those repetitions, each host's ``cpu.other``, above ``NOISY_OTHER_POINTS``), is
shown but too noisy to rank on: the cost sentence leaves it out and says so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar
from dataclasses import dataclass, field

from nicbench.report.bars import selected
from nicbench.report.configs import (MBIT, NOISY_IQR_POINTS, NOISY_OTHER_POINTS, Config,
                                     CpuFigure, Index, chart_title, fmt, mbit, tools_with)
from nicbench.report.model import Entry, Sentence, Table
from nicbench.results.records import CpuPart
from nicbench.report.netpipe import largest_block, plateau, samples
from nicbench.tools.driver import Shape

T = TypeVar("T")

SENTENCE_NAMES = 6        # a ranking sentence names this many adapters, then the slowest

CSV_COLUMNS = ["adapter", "adapter_id", "run", "test", "tool", "rank", "point",
               "selected_bps", "figure", "limit_bps", "limit_pct", "cpu_sender_pct",
               "cpu_receiver_pct", "cpu_sender_iqr", "cpu_receiver_iqr", "cpu_other_pct",
               "cpu_statistic",
               "cpu_repetitions", "cpu_ranked", "mbit_per_cpu_pct", "gain_pct",
               "above_limit", "largest_block_bytes", "largest_block_bps",
               "status", "not_measured",
               # every verdict row family in one file: which row, its ranked figure in its
               # unit, the statistic and repetitions it is over, the physical bound it is
               # held to and whether it is beyond it (then never ranked)
               "verdict_row", "value", "unit", "statistic", "bound", "beyond_bound",
               # the bound's allowance (printed resolution + timing error, in the bound's
               # unit); whether the rank is shared; why a card with a figure has none
               "bound_allowance", "tied", "not_ranked", "cpu_tied"]
# The verdict's row families (verdict.csv's ``verdict_row``).
FASTEST = "fastest"
LOWEST_TAIL = "lowest tail latency"
SMALLEST_INCREASE = "smallest increase under load"
HIGHEST_SMALL_PACKET = "highest small-packet rate"

ABOVE_LAB = "above the wire's limit on this lab; not ranked"
ABOVE_REAL = "above the wire's limit (check the link rate and the raw output); not ranked"


@dataclass
class Gap:
    """A point where an adapter did not measure in full."""

    point: str               # "MTU 9000"
    word: str                # "refused"; "" when some repetitions measured
    counts: str              # "0/15 (15 not run)"

    def __str__(self) -> str:
        return f"{self.point}: {self.word + ' ' if self.word else ''}{self.counts}"


@dataclass
class Verdict:
    entry: Entry
    method: tuple[str, str, str]          # (tool, protocol, test) of the chart
    test: str                             # the profile's test name
    best: Config | None                   # the configuration of the best figure
    value: float | None                   # Mbit/s
    figure: str                           # what the figure is: "best of 15", "plateau"
    status: str                           # ok | partial | not measured
    gaps: list[Gap]
    gain_pct: float | None = None         # best against the smallest point's figure
    smallest: str = ""                    # that point ("MTU 1500")
    rank: int | None = None
    # points whose figure is above the wire's limit: (configuration, figure in Mbit/s)
    above: list[tuple[Config, float]] = field(default_factory=list)
    cpu_rank: int | None = None           # by Mbit/s per CPU %, where the CPU allows it
    tied: bool = False                    # shares its rank with another card (``rank``)
    cpu_tied: bool = False                # shares its CPU rank with another card
    # why a card with a figure is not ranked: its link has a card above the limit
    not_ranked: str = ""

    @property
    def shown(self) -> Config | None:
        """The configuration the row shows: the best within the limit, else the highest
        of those above it (not ranked)."""
        if self.best is not None:
            return self.best
        return max(self.above, key=lambda ca: ca[1])[0] if self.above else None

    @property
    def above_words(self) -> str:
        if not self.above:
            return ""
        return ABOVE_LAB if self.entry.emulated else ABOVE_REAL

    @property
    def largest(self) -> tuple[int, float] | None:
        """netPIPE: (largest block, Mbit/s) of the configuration shown when it is above
        the limit; its most physical point."""
        c = self.shown
        if c is None or self.best is not None or c.tool not in tools_with(Shape.CURVE):
            return None
        return largest_block(c)

    @property
    def missing(self) -> list[str]:
        return [str(g) for g in self.gaps]

    @property
    def shown_value(self) -> float | None:
        """The figure of the configuration shown: the ranked value, else the highest
        figure above the limit."""
        if self.value is not None:
            return self.value
        return max((v for _, v in self.above), default=None)

    @property
    def limit(self) -> float | None:
        c = self.shown
        return mbit(c.limit_bps) if c is not None else None

    @property
    def limit_pct(self) -> float | None:
        v = self.shown_value
        if v is None or not self.limit:
            return None
        return 100.0 * v / self.limit

    def cpu_figure(self, part: CpuPart) -> CpuFigure:
        c = self.shown
        return c.cpu_figure(part) if c is not None else CpuFigure(None, None, 0)

    @property
    def busier(self) -> CpuFigure | None:
        """The CPU figure of the busier host (higher median)."""
        figs = [f for f in (self.cpu_figure(CpuPart.SENDER_BUSY),
                            self.cpu_figure(CpuPart.RECEIVER_BUSY)) if f.median is not None]
        return max(figs, key=lambda f: f.median or 0.0) if figs else None

    @property
    def per_cpu(self) -> float | None:
        """Mbit/s per CPU % of the busier host (medians over the repetitions used)."""
        cpu = self.busier
        if self.value is None or cpu is None or not cpu.median:
            return None
        return self.value / cpu.median

    @property
    def cpu_noise(self) -> str:
        """Why the CPU figure cannot rank this row ("" when it can)."""
        if self.value is None:
            return ""
        figs = [(side, self.cpu_figure(f)) for side, f in (("sending", CpuPart.SENDER_BUSY),
                                                           ("receiving", CpuPart.RECEIVER_BUSY))]
        figs = [(side, f) for side, f in figs if f.median is not None]
        if not figs:
            return "no CPU figure"
        busy = [f"the {side} host was busy with something else: {other:.0f} % other load"
                for side, other in self.other_loads if other > NOISY_OTHER_POINTS]
        unknown = [side for side, f in figs if f.iqr is None]
        if unknown:
            return "; ".join(["one repetition: spread unknown", *busy])
        wide = [f"{side} IQR {f.iqr:.0f}" for side, f in figs if f.noisy]
        return "; ".join(([f"{', '.join(wide)} points"] if wide else []) + busy)

    @property
    def other_loads(self) -> list[tuple[str, float]]:
        """(side, median % of the host's other load over the repetitions used), where it
        was read (Linux hosts, records of this version)."""
        out = []
        for side, name in (("sending", CpuPart.SENDER_OTHER),
                           ("receiving", CpuPart.RECEIVER_OTHER)):
            median = self.cpu_figure(name).median
            if median is not None:
                out.append((side, median))
        return out

    @property
    def other_load(self) -> float | None:
        """The larger of the two hosts' other-load medians (verdict.csv)."""
        return max((v for _, v in self.other_loads), default=None)

    @property
    def repetitions(self) -> list[int]:
        c = self.shown
        return c.cpu_repetitions if c is not None else []


def figure_of(tool: str) -> tuple[str, Callable[[Config], float | None]]:
    if tool in tools_with(Shape.CURVE):
        return "plateau", plateau
    return "selected", selected


def place(c: Config) -> str:
    """Where a figure was reached: its point, and for a test made by a sweep the value it
    ran at ("MTU 1500, streams 8")."""
    sw = c.test_spec.swept if c.test_spec is not None else None
    return c.group.label + (f", {sw.param} {sw.value}" if sw is not None else "")


def _sweep_order(c: Config) -> tuple[int, float]:
    sw = c.test_spec.swept if c.test_spec is not None else None
    value = sw.value if sw is not None else 0
    return (c.mtu, float(value) if isinstance(value, (int, float)) else 0.0)


def methods(ix: Index) -> dict[tuple[str, str, str], list[Config]]:
    """The verdict's methods: the charts' (a test of the profile each), except that the
    tests one sweep made are one method, the test as written (``swept.of``): its values
    are settings of that method as its points are, so each adapter's row is the best
    figure over all of them and names the value it was reached at, as it names the point.
    One row per swept value would rank the same cards again at every value (the streams
    section draws them all) and make a ranking of the first value a choice nothing in
    the report's rules makes. Where other tests remain, swept tests and tests with a probe
    beside them are left to their own sections (``charts(own_sections=False)``)."""
    out: dict[tuple[str, str, str], list[Config]] = {}
    for (tool, protocol, test), configs in ix.charts(own_sections=False).items():
        for c in configs:
            sw = c.test_spec.swept if c.test_spec is not None else None
            key = (tool, protocol, sw.of) if sw is not None else (tool, protocol, test)
            out.setdefault(key, []).append(c)
    return out


def verdicts(ix: Index) -> dict[tuple[str, str, str], list[Verdict]]:
    out: dict[tuple[str, str, str], list[Verdict]] = {}
    for method, configs in methods(ix).items():
        if method[0] in tools_with(Shape.LATENCY):
            continue        # round trips: latency.verdict ranks them, lowest first
        kind, value = figure_of(method[0])
        rows = []
        for e in ix.entries_of(configs):
            mine = sorted((c for c in configs if c.entry.key == e.key), key=_sweep_order)
            vals = [(value(c), c) for c in mine]
            measured = [(v, c) for v, c in vals if v is not None]
            physical = [(v, c) for v, c in measured if not c.above_limit(v)]
            above = [(c, v) for v, c in measured if c.above_limit(v)]
            best_v, best_c = max(physical, key=lambda vc: vc[0]) if physical else (None, None)
            gaps = [Gap(place(c), c.word, c.counts) if v is None
                    else Gap(place(c), "", c.counts) for v, c in vals
                    if v is None or c.failed or c.not_run]
            shown_c = best_c or (max(above, key=lambda ca: ca[1])[0] if above else None)
            status = ("not measured" if not measured else
                      "above the limit" if best_c is None else
                      "partial" if gaps or above else "ok")
            what = "plateau" if kind == "plateau" else (
                shown_c.rule + (f" of {shown_c.planned}" if not shown_c.search else "")
                if shown_c is not None else "")
            gain, smallest = None, ""
            if best_c is not None and best_v is not None and physical \
                    and physical[0][1] is not best_c and physical[0][0]:
                gain = 100.0 * (best_v / physical[0][0] - 1.0)
                smallest = place(physical[0][1])
            rows.append(Verdict(entry=e, method=method, test=(best_c or mine[0]).test,
                                best=best_c, value=best_v, figure=what, status=status,
                                gaps=gaps, gain_pct=gain, smallest=smallest, above=above))
        ranked = sorted(rows, key=lambda v: (v.value is None, -(v.value or 0.0),
                                             not v.above, ix.order[v.entry.key]))
        unrankable_links(ranked)
        rank(ranked)
        rank_cpu(sorted((v for v in ranked if v.per_cpu is not None and not v.cpu_noise
                         and v.rank is not None),
                        key=lambda v: (-(v.per_cpu or 0.0), ix.order[v.entry.key])))
        out[method] = ranked
    return out


# -- ranks that mean something --------------------------------------------------------------
def link_of(v: Verdict) -> str:
    """The link a card's figure is held to: its line rate ("1000 Mbit/s link")."""
    rate = v.entry.rate_bps
    return f"{rate / 1e6:g} Mbit/s link" if rate else "link of unknown rate"


def unrankable_links(rows: list[Verdict]) -> None:
    """A link where a card's figure is above the limit cannot be ranked by this method on
    this setup: that card's best is not a measurement, and crowning the next card of the
    same link would reward the lower figure. Its cards keep their figures, without a
    rank, and say why (``Verdict.not_ranked``)."""
    over: dict[str, list[Verdict]] = {}
    for v in rows:
        top_above = max((x for _, x in v.above), default=None)
        if top_above is not None and (v.value is None or top_above > v.value):
            over.setdefault(link_of(v), []).append(v)
    for v in rows:
        bad = over.get(link_of(v))
        if bad and v.value is not None:
            v.not_ranked = (f"the method could not rank the {link_of(v)} on this setup: "
                            + ", ".join(b.entry.label for b in bad)
                            + " read above the wire's limit")


def figure_resolution(c: Config) -> float:
    """What a figure of this configuration cannot tell apart, Mbit/s: a UDP search's rate
    step, else the tool's printed resolution."""
    search = c.test_spec.udp_search if c.test_spec is not None else None
    if c.search and search is not None:
        return float(search.step_bps) / MBIT
    return c.resolution_bps / MBIT


def apart(upper: Verdict, lower: Verdict) -> bool:
    """Whether ``upper`` ranks above ``lower``: their figures differ by more than the
    figures' resolution (:func:`figure_resolution`) and, where both have repetitions (two
    or more), the comparison's rule says ``lower``'s repetitions are slower than
    ``upper``'s (``compare.judge_samples``: the whole 95 % interval beyond the threshold,
    p < 0.05). Otherwise they are tied."""
    from nicbench.judging.words import SLOWER, judge_samples

    assert upper.best is not None and lower.best is not None
    assert upper.value is not None and lower.value is not None
    res = max(figure_resolution(upper.best), figure_resolution(lower.best))
    if upper.value - lower.value <= res * (1 + 1e-9):
        return False
    a, b = samples(upper.best), samples(lower.best)
    if len(a) < 2 or len(b) < 2 or upper.best.search or lower.best.search:
        return True
    return judge_samples(a, b, res).word is SLOWER


def assign_ranks(rows: Sequence[T], apart_fn: Callable[[T, T], bool],
            set_rank: Callable[[T, int, bool], None]) -> None:
    """Ranks in order, a card sharing the rank of the first card of its group (the leader)
    unless apart from it: competition ranks (1, 1, 3), every member of a group of two or
    more marked tied."""
    groups: list[list[T]] = []
    for v in rows:
        if groups and not apart_fn(groups[-1][0], v):
            groups[-1].append(v)
        else:
            groups.append([v])
    k = 1
    for g in groups:
        for v in g:
            set_rank(v, k, len(g) > 1)
        k += len(g)


def rank(rows: list[Verdict]) -> None:
    """Rank the cards with a figure and a rankable link (:func:`unrankable_links`), best
    first, tied where :func:`apart` says they cannot be told apart."""
    def put(v: Verdict, k: int, tied: bool) -> None:
        v.rank, v.tied = k, tied

    for v in rows:
        v.rank, v.tied = None, False
    assign_ranks([v for v in rows if v.value is not None and not v.not_ranked], apart, put)


def cpu_samples(v: Verdict) -> list[float]:
    """Mbit/s per CPU % of the busier host, one per repetition the CPU figure is over."""
    c = v.best
    if c is None:
        return []
    out = []
    for r in c.cpu_records:
        cpus = [x for x in (CpuPart.SENDER_BUSY.of(r), CpuPart.RECEIVER_BUSY.of(r))
                if x is not None]
        if r.throughput_bps is not None and cpus and max(cpus) > 0:
            out.append(r.throughput_bps / MBIT / max(cpus))
    return out


def cpu_apart(upper: Verdict, lower: Verdict) -> bool:
    """Whether ``upper`` is cheaper than ``lower``, over the repetitions' Mbit/s per CPU %
    (:func:`cpu_samples`): by the comparison's rule where their numbers can be tested,
    else (two or three repetitions) only where every repetition of ``upper`` is cheaper
    than every one of ``lower`` by more than 1 % (``compare.MIN_CHANGE_PCT``) of
    ``upper``'s median. A figure of one repetition is never ranked by CPU
    (``Verdict.cpu_noise``)."""
    import statistics

    from nicbench.judging.words import MIN_CHANGE_PCT, SLOWER, judge_samples
    from nicbench.judging.stats import testable

    a, b = cpu_samples(upper), cpu_samples(lower)
    if len(a) < 2 or len(b) < 2:
        return False
    if testable(len(a), len(b)):
        return judge_samples(a, b).word is SLOWER
    return min(a) - max(b) > MIN_CHANGE_PCT / 100.0 * statistics.median(a)


def rank_cpu(rows: list[Verdict]) -> None:
    """CPU ranks of the cards whose CPU figure can rank (cheapest first), tied where the
    repetitions' spread does not tell them apart (:func:`cpu_apart`)."""
    def put(v: Verdict, k: int, tied: bool) -> None:
        v.cpu_rank, v.cpu_tied = k, tied

    assign_ranks(rows, cpu_apart, put)


def _name(v: Verdict) -> str:
    return f"{v.entry.label} {v.value:.1f} at {place(v.best)}" if v.best else \
        v.entry.label


def _cpu_words(v: Verdict) -> str:
    """"CPU 48 % sending, 47 % receiving (medians over repetitions 3, 5, 7; IQR 2, 3
    points)", and, when it is, "too noisy to rank on"."""
    snd, rcv = v.cpu_figure(CpuPart.SENDER_BUSY), v.cpu_figure(CpuPart.RECEIVER_BUSY)
    if snd.median is None and rcv.median is None:
        return ""
    text = (f"CPU {fmt(snd.median, 0) or '?'} % sending, {fmt(rcv.median, 0) or '?'} % "
            "receiving")
    reps = v.repetitions
    c = v.shown
    every = c is not None and len(reps) > 1 and len(reps) == len(c.ok)
    over = (f"repetition {reps[0]}" if len(reps) == 1 else
            f"all {len(reps)} successful repetitions" if every else
            f"repetitions {', '.join(str(r) for r in reps)}" if reps else "")
    iqr = ", ".join(fmt(f.iqr, 0) or "?" for f in (snd, rcv) if f.median is not None)
    if len(reps) > 1:
        text += f" (medians over {over}; IQR {iqr} points)"
    elif over:
        text += f" ({over})"
    busy = [w for w in v.cpu_noise.split("; ") if "busy with something else" in w]
    if v.cpu_noise.startswith("one repetition"):
        text += ": one repetition, no spread to rank on"
    elif v.cpu_noise:
        text += ": too noisy to rank on"
    if busy:
        text += f" ({'; '.join(busy)})"
    return text


def _above(v: Verdict) -> str:
    """"gbe at MTU 9000 1014.2 Mbit/s (102.4 %; largest block 1009.9 at 1048576 bytes)"."""
    parts = []
    for c, value in v.above:
        limit = mbit(c.limit_bps)
        bit = f"{value:.1f} Mbit/s at {place(c)}"
        extra = [f"{100 * value / limit:.1f} % of the limit"] if limit else []
        if c.tool in tools_with(Shape.CURVE):
            lb = largest_block(c)
            if lb is not None:
                extra.append(f"largest block {lb[1]:.1f} at {lb[0]} bytes")
        parts.append(bit + (f" ({'; '.join(extra)})" if extra else ""))
    return f"{v.entry.label} {', '.join(parts)}"


def sentence(method: tuple[str, str, str], rows: list[Verdict]) -> Sentence:
    """"iperf3 TCP: X fastest, 990.0 Mbit/s at MTU 9000 (100.0 % of the wire's limit;
    CPU 48 % sending, 47 % receiving (medians over repetitions 3, 5; IQR 2, 1 points);
    +5.2 % over MTU 1500). Then Y 985.0 at MTU 6000, ... Above the wire's limit on this
    lab; not ranked: Z 1014.2 Mbit/s at MTU 9000 (...). Not measured: ... CPU cost ...
    cheapest ...; too noisy to rank on: ..."."""
    title = chart_title(*method)
    ranked = [v for v in rows if v.rank is not None]
    unranked = [v for v in rows if v.not_ranked]
    above = [v for v in rows if v.above]
    if not ranked and not above and not unranked:
        return Sentence(title, f"{title}: nothing was measured.")
    if ranked:
        top = ranked[0]
        text = f"{title}: {top.entry.label} fastest, {top.value:.1f} Mbit/s"
        if top.best is not None:
            text += f" at {place(top.best)}"
        bits = []
        if top.limit_pct is not None:
            bits.append(f"{top.limit_pct:.1f} % of the wire's limit")
        cpu = _cpu_words(top)
        if cpu:
            bits.append(cpu)
        if top.gain_pct is not None and top.smallest:
            bits.append(f"{top.gain_pct:+.1f} % over {top.smallest}")
        mates = [v for v in ranked if v.rank == top.rank and v is not top]
        if mates:
            bits.append("tied with " + ", ".join(_name(v) for v in mates) + ": no "
                        "difference beyond the figure's resolution and the comparison's "
                        "rule")
        if bits:
            text += f" ({'; '.join(bits)})"
        text += "."
    elif unranked:
        text = f"{title}: nothing ranked."
    else:
        text = f"{title}: no figure within the wire's limit; nothing ranked."
    rest = [v for v in ranked[1:] if v.rank != ranked[0].rank]
    if rest:
        shown = rest[:SENTENCE_NAMES - 1]
        names = [_name(v) + (f" (tied at rank {v.rank})" if v.tied else "") for v in shown]
        if len(rest) > len(shown):
            names.append(f"{len(rest) - len(shown)} more; slowest {_name(rest[-1])}")
        text += " Then " + ", ".join(names) + "."
    for why in dict.fromkeys(v.not_ranked for v in unranked):
        cards = [v for v in unranked if v.not_ranked == why]
        text += (f" Not ranked: {why}; measured "
                 + ", ".join(_name(v) for v in cards[:SENTENCE_NAMES])
                 + (f"; {len(cards) - SENTENCE_NAMES} more" if len(cards) > SENTENCE_NAMES
                    else "") + ".")
    if above:
        words = {v.above_words for v in above}
        head = ABOVE_LAB if words == {ABOVE_LAB} else "above the wire's limit; not ranked"
        listed = "; ".join(_above(v) for v in above[:SENTENCE_NAMES])
        more = f"; {len(above) - SENTENCE_NAMES} more" if len(above) > SENTENCE_NAMES else ""
        text += f" {head[0].upper() + head[1:]}: {listed}{more}."
    gaps = [v for v in rows if v.gaps and any(g.word for g in v.gaps)]
    if gaps:
        listed = "; ".join(f"{v.entry.label} {_words(v)}" for v in gaps[:SENTENCE_NAMES])
        more = f"; {len(gaps) - SENTENCE_NAMES} more" if len(gaps) > SENTENCE_NAMES else ""
        text += f" Not measured: {listed}{more}."
    text += _cost(ranked)
    return Sentence(title, text)


def _cost(ranked: list[Verdict]) -> str:
    """The CPU cost sentence: ranked by Mbit/s per CPU % of the busier host only where
    every CPU figure's IQR is at most ``NOISY_IQR_POINTS``; the others named as too noisy."""
    with_cpu = [v for v in ranked if v.per_cpu is not None]
    if len(with_cpu) < 2:
        return ""
    cheap = sorted((v for v in with_cpu if v.cpu_rank is not None),
                   key=lambda v: v.cpu_rank or 0)
    noisy = [v for v in with_cpu if v.cpu_rank is None]
    text = ""
    if len(cheap) > 1:
        names = [f"{v.entry.label} {v.per_cpu:.1f}"
                 + (f" (tied at CPU rank {v.cpu_rank})" if v.cpu_tied else "")
                 for v in cheap[:SENTENCE_NAMES]]
        text += (" CPU cost, Mbit/s per CPU % of the busier host (medians over every "
                 "successful repetition of the configuration; tied where their spread "
                 "does not tell them apart): cheapest " + ", then ".join(names) + ".")
    if noisy:
        listed = "; ".join(f"{v.entry.label} ({v.cpu_noise})" for v in noisy[:SENTENCE_NAMES])
        more = f"; {len(noisy) - SENTENCE_NAMES} more" if len(noisy) > SENTENCE_NAMES else ""
        what = "Not ranked by CPU" if len(cheap) > 1 else "No CPU ranking"
        text += (f" {what}: CPU figures too noisy to rank on (IQR above "
                 f"{NOISY_IQR_POINTS:g} points, one repetition, or the host busy with "
                 f"something else): {listed}{more}.")
    return text


def _words(v: Verdict) -> str:
    """The gaps of one adapter in a few words: "refused at MTU 6000, 9000, 16000"."""
    by_word: dict[str, list[str]] = {}
    for g in v.gaps:
        if g.word:
            by_word.setdefault(g.word, []).append(g.point)
    return ", ".join(f"{w} at {_points(points)}" for w, points in by_word.items())


def _points(points: list[str]) -> str:
    if len(points) > 1 and all(p.startswith("MTU ") for p in points):
        return "MTU " + ", ".join(p.removeprefix("MTU ") for p in points)
    return ", ".join(points)


def verdict_table(method: tuple[str, str, str], rows: list[Verdict]) -> Table:
    title = chart_title(*method)
    t = Table(id="verdict-" + "-".join(p for p in method if p), family="verdict",
              title=title,
              columns=["rank", "adapter", "best Mbit/s", "at", "figure", "% of limit",
                       "CPU sender %", "CPU receiver %", "CPU IQR, points",
                       "CPU repetitions", "Mbit/s per CPU %", "CPU rank",
                       "vs smallest point", "not measured"])
    for v in rows:
        c = v.shown
        pct = v.limit_pct
        if v.value is not None:
            figure = fmt(v.value)
        elif v.above:
            figure = f"{fmt(v.shown_value)} ! {v.above_words}"
            lb = v.largest
            if lb is not None:
                figure += f"; largest block {lb[1]:.1f} at {lb[0]} bytes"
        else:
            figure = "not measured"
        snd, rcv = v.cpu_figure(CpuPart.SENDER_BUSY), v.cpu_figure(CpuPart.RECEIVER_BUSY)
        figs = [f for f in (snd, rcv) if f.median is not None]
        iqr = ("none: one repetition" if figs and all(f.n == 1 for f in figs) else
               " / ".join(fmt(f.iqr, 0) or "?" for f in figs))
        per = fmt(v.per_cpu)
        if per and v.cpu_noise:
            per += f" (too noisy to rank on: {v.cpu_noise})"
        missing = list(v.missing)
        if v.best is not None and v.above:
            missing.append(_above(v).removeprefix(v.entry.label + " ") + ": "
                           + v.above_words)
        if v.not_ranked:
            missing.append(f"not ranked: {v.not_ranked}")
        t.rows.append([(f"{v.rank} (tied)" if v.tied else v.rank) if v.rank else "",
                       v.entry.label, figure,
                       place(c) if c else "", v.figure,
                       (fmt(pct) + (" !" if v.value is None and v.above else ""))
                       if pct is not None else "",
                       fmt(snd.median, 0), fmt(rcv.median, 0), iqr,
                       ", ".join(str(r) for r in v.repetitions), per,
                       (f"{v.cpu_rank} (tied)" if v.cpu_tied else v.cpu_rank)
                       if v.cpu_rank else "",
                       f"{v.gain_pct:+.1f} % over {v.smallest}" if v.gain_pct is not None
                       else "",
                       "; ".join(missing)])
        t.row_entries.append(v.entry.key)
    return t


def verdict_csv_rows(all_rows: dict[tuple[str, str, str], list[Verdict]]) -> list[list[object]]:
    out: list[list[object]] = []
    for method, rows in all_rows.items():
        for v in rows:
            c = v.shown
            snd, rcv = v.cpu_figure(CpuPart.SENDER_BUSY), v.cpu_figure(CpuPart.RECEIVER_BUSY)
            lb = v.largest
            out.append([
                v.entry.label, v.entry.adapter, v.entry.run_label, v.test, method[0], v.rank,
                c.point if c else "",
                _num(v.shown_value * MBIT if v.shown_value is not None else None),
                v.figure, _num(c.limit_bps if c else None), _num(v.limit_pct, 2),
                _num(snd.median, 2), _num(rcv.median, 2), _num(snd.iqr, 2), _num(rcv.iqr, 2),
                _num(v.other_load, 2), c.statistic if c else "", ",".join(str(r) for r in v.repetitions),
                "no" if v.cpu_noise else ("yes" if v.per_cpu is not None else ""),
                _num(v.per_cpu, 3), _num(v.gain_pct, 2),
                _above(v).removeprefix(v.entry.label + " ") if v.above else "",
                lb[0] if lb else "", _num(lb[1] * MBIT if lb else None),
                v.status, "; ".join(v.missing), FASTEST,
                _num(v.shown_value * MBIT if v.shown_value is not None else None), "bit/s",
                v.figure,
                _num(c.limit_bps if c else None),
                v.above_words if v.value is None and v.above else "",
                _num(c.allowance_bps if c else None),
                "yes" if v.tied else "", v.not_ranked, "yes" if v.cpu_tied else ""])
    return out


def csv_row(**cells: object) -> list[object]:
    """A verdict.csv row of another verdict row family (latency, under load, small
    packets): the cells it names, the others empty."""
    unknown = set(cells) - set(CSV_COLUMNS)
    assert not unknown, unknown
    return [cells.get(col, "") for col in CSV_COLUMNS]


def _num(value: float | None, digits: int = 1) -> object:
    return "" if value is None else round(value, digits)
