"""Comparison of runs: the same adapter in two runs (two drivers, two nights, two labs).

Entries are paired by the adapter's inventory id (and, where one run tested that adapter
on several pairs, by the pair's name). Each later run is compared with the first run that
has the adapter ("A"), configuration by configuration (test and point of the same name).

One statistic per row, for the number and the word alike (``stats.py``): the
Hodges-Lehmann shift B - A (the median of all pairwise differences of the stored
repetitions) with its exact 95 % confidence interval from the Mann-Whitney distribution,
in Mbit/s and as % of A's median, and the two-sided Mann-Whitney p, raw and adjusted by
Benjamini-Hochberg across the rows of one comparison (run A against run B) that can be
tested. The word:

- ``faster`` / ``slower`` (the sign of the shift), for a round trip ``lower latency`` /
  ``higher latency`` (lower is better: a shift below zero is the better way): the
  adjusted p is below 0.05 AND the
  whole confidence interval lies beyond the practical threshold: ``--min-change`` % of
  A's median (1 % by default), never below the resolution the tool printed its figures
  at (``resolution.py``: iperf 2 prints three digits, whole Mbit/s near a gigabit);
- ``within noise``: the sizes could have shown a difference and the test did not (p, or
  the interval reaching inside the threshold: the note says which);
- ``not testable``: the repetitions are too few for any p below 0.05 (one against one,
  two against two, three against three ...); the note says how many would do;
- ``not comparable``: one run has no successful repetition there, or no such test or point;
- ``above the limit`` / ``below the wire's minimum``: a run's figure is beyond what the wire
  allows (a rate above its goodput limit, a median round trip shorter than both frames'
  serialization): not a measurement of the card, never judged.

A latency test (``Config.round_trips``: sockperf, iperf 2's bounce-back) gives two rows per
test and point, its p50 and its p99 round trip. Where both runs kept every round trip in
time order (sockperf's full log, ``per_sample``), the row is the shift of the pooled
percentile, with its interval and p from a block bootstrap over time slices (round trips
next to each other are correlated; ``roundtrips.compare_percentile``, docs/comparison.md);
else over the repetitions' own percentile as a rate's
(us; the resolution is the tool's: sockperf's 0.001 us, the bounce-back histogram's bin);
a test with a latency probe beside its load gives, beside its throughput row, the probe's
p50 and p99 under load the same way. The threshold and the test are the throughput's.

Each run's selected figure (its profile's ``select``: best, median ...) is kept beside the
medians (``a_bps``, ``b_bps``), but the word never comes from it.

Before the table, everything that differs between the runs (``differences.py``); the
differences a row's figure depends on are marked in its ``differs`` column.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass, field

from nicbench.report.configs import MBIT, Config, Index, fmt, mbit, point_label, tools_with
from nicbench.results import roundtrips
from nicbench.config.profile import Role
from nicbench.report.differences import Difference, RunDifferences, run_differences
from nicbench.report.latency import below_floor, blocks_of, floor_words
from nicbench.report.loaded import is_loaded
from nicbench.report.model import Entry, MethodWarning, Table
from nicbench.report.netpipe import plateau, samples
from nicbench.report.resolution import round_trip_resolution_us, sample_resolution_bps
from nicbench.judging.words import (ABOVE_LIMIT, BELOW_FLOOR, INCONCLUSIVE, MIN_CHANGE_PCT,
                                    NOT_COMPARABLE, UNTESTABLE, WITHIN, Word, decide)
from nicbench.judging.stats import (ALPHA, NAME, SETTLE_MAX, SHIFT_NAME, bh_adjust, mann_whitney_p, method,
                                   repetitions_needed, repetitions_to_settle, shift_interval,
                                   smallest_p, testable)
from nicbench.tools.driver import Shape

THROUGHPUT = "throughput"
# A round-trip row: (figure name, the Latency field, whose round trips: the test's own or
# its probe's beside the load).
ROUND_TRIPS = (("p50 round trip", "p50_us", False), ("p99 round trip", "p99_us", False))
UNDER_LOAD = (("probe p50 under load", "p50_us", True),
              ("probe p99 under load", "p99_us", True))

CSV_COLUMNS = ["adapter", "adapter_id", "test", "point", "a_run", "b_run", "n_a", "n_b",
               "a_median_bps", "b_median_bps", "a_select", "b_select", "a_bps", "b_bps",
               "shift_bps", "change_pct", "ci_low_bps", "ci_high_bps", "ci_low_pct",
               "ci_high_pct", "threshold_pct", "resolution_bps", "p_value", "p_adjusted",
               "p_method", "verdict", "differs", "note", "figure", "a_median_us",
               "b_median_us", "a_us", "b_us", "shift_us", "ci_low_us", "ci_high_us",
               "resolution_us", "settle_repetitions", "interval_widened"]


@dataclass
class Comparison:
    a: Entry
    b: Entry
    test: str
    point: str
    mtu: int
    tool: str = ""
    figure: str = THROUGHPUT    # or a round trip's ("p99 round trip"): ROUND_TRIPS
    a_select: str = ""          # each run's selection rule: "best of 15"
    b_select: str = ""
    a_value: float | None = None       # the selected figures, Mbit/s (a round trip: us)
    b_value: float | None = None
    a_median: float | None = None      # Mbit/s
    b_median: float | None = None
    a_n: int = 0
    b_n: int = 0
    shift: float | None = None         # Hodges-Lehmann B - A, Mbit/s
    ci_low: float | None = None        # Mbit/s; None: unbounded (or not tested)
    ci_high: float | None = None
    threshold: float | None = None     # Mbit/s
    resolution: float = 0.0            # Mbit/s
    p: float | None = None
    p_adjusted: float | None = None
    p_method: str = ""
    verdict: Word = NOT_COMPARABLE
    note: str = ""
    # the interval the word is judged on: the 95 % interval, widened by the printed
    # resolution either side where it is fully tied (one value); None: unbounded
    judged_low: float | None = None
    judged_high: float | None = None
    widened: bool = False
    settle: int | None = None   # inconclusive: repetitions per run likely to settle it
    # that estimate from the repetitions' spread, whatever the word (``fill``)
    settle_estimate: int | None = field(default=None, repr=False)
    differs: list[str] = field(default_factory=list)
    above_limit: bool = False    # a run's figure is beyond the wire's limit: never judged

    @property
    def lower_better(self) -> bool:
        """A round trip: lower is better, and the words say so."""
        return self.figure != THROUGHPUT

    @property
    def unit(self) -> str:
        return "us" if self.lower_better else "Mbit/s"

    def pct(self, value: float | None) -> float | None:
        if value is None or not self.a_median:
            return None
        return 100.0 * value / self.a_median

    @property
    def words(self) -> str:
        """The word as the table prints it: "within ±1.00 %" names its threshold."""
        if self.verdict is WITHIN:
            return f"within ±{_pct_text(self.pct(self.threshold))} %"
        return str(self.verdict)

    @property
    def change_pct(self) -> float | None:
        return self.pct(self.shift)

    @property
    def testable(self) -> bool:
        return self.p is not None and not self.above_limit and testable(self.a_n, self.b_n)


def pairs(ix: Index) -> list[tuple[Entry, Entry]]:
    """(A, B) entry pairs: each adapter's entry in the first run that has it, with its
    entry in every later run."""
    by_adapter: dict[str, list[Entry]] = defaultdict(list)
    for e in ix.entries:
        by_adapter[e.adapter].append(e)
    out = []
    for entries in by_adapter.values():
        runs = sorted({e.run_index for e in entries})
        if len(runs) < 2:
            continue
        first = [e for e in entries if e.run_index == runs[0]]
        for e in entries:
            if e.run_index == runs[0]:
                continue
            same_pair = [a for a in first if a.pair == e.pair]
            a = same_pair[0] if same_pair else first[0]
            out.append((a, e))
    return out


def run_pairs(ix: Index) -> dict[tuple[int, int], list[tuple[Entry, Entry]]]:
    """The entry pairs of each comparison (run A index, run B index)."""
    out: dict[tuple[int, int], list[tuple[Entry, Entry]]] = defaultdict(list)
    for a, b in pairs(ix):
        out[(a.run_index, b.run_index)].append((a, b))
    return dict(sorted(out.items()))


def _selected(c: Config) -> float | None:
    if c.tool in tools_with(Shape.CURVE):
        return plateau(c)
    return mbit(c.row.selected_bps)


def _rule(c: Config) -> str:
    what = f"{c.rule} of {c.planned}"
    return f"plateau, {what}" if c.tool in tools_with(Shape.CURVE) else what


def differences(ix: Index) -> list[RunDifferences]:
    """What differs between the runs of each comparison."""
    out = []
    for (ia, ib), entry_pairs in run_pairs(ix).items():
        keys = {e.key for ab in entry_pairs for e in ab}
        tests = sorted({c.test for c in ix.configs if c.entry.key in keys})
        out.append(run_differences(ix.runs[ia], ix.runs[ib], entry_pairs, tests))
    return out


def compare(ix: Index, min_change_pct: float = MIN_CHANGE_PCT,
            diffs: list[RunDifferences] | None = None) -> list[Comparison]:
    diffs = differences(ix) if diffs is None else diffs
    marks: dict[tuple[int, int], list[Difference]] = {
        (d.a.index, d.b.index): d.differences for d in diffs}
    out = []
    for (ia, ib), entry_pairs in run_pairs(ix).items():
        rows = []
        for a, b in entry_pairs:
            keys: dict[tuple[str, str, str], int] = {}
            for c in ix.configs:
                if c.entry.key in (a.key, b.key):
                    for fig in _figures(c):
                        keys.setdefault((c.test, c.point, fig), c.mtu)
            ordered = sorted(keys.items(), key=lambda kv: (_test_rank(ix, a, b, kv[0][0]),
                                                           kv[0][0], kv[1], kv[0][1],
                                                           _FIGS.index(kv[0][2])))
            for (test, point, fig), mtu in ordered:
                ca = ix.get(a.run_index, a.pair, point, test)
                cb = ix.get(b.run_index, b.pair, point, test)
                row = (_measure(a, b, test, point, mtu, ca, cb, min_change_pct)
                       if fig == THROUGHPUT else
                       _measure_round_trips(a, b, test, point, mtu, ca, cb, fig,
                                            min_change_pct))
                row.differs = list(dict.fromkeys(    # one mark for several hosts
                    d.mark for d in marks.get((ia, ib), [])
                    if d.covers(a, b, row.tool, test, point)))
                rows.append(row)
        judge(rows)
        out += rows
    return out


# The rule in two sentences: the report's how-to-read and docs/comparison.md say it so.
HOW_TO_READ = (f"Faster or slower (a round trip: lower or higher latency) only where the "
               f"whole 95 % interval of the shift lies beyond the threshold (--min-change "
               f"% of A's median, at least the tool's printed resolution) and the adjusted "
               f"p is below {ALPHA:g}; within ±threshold only where the whole interval "
               f"lies inside it. Anything else is inconclusive, with about how many "
               f"repetitions per run would likely settle it (a fully tied interval is "
               f"widened by the printed resolution first).")

_FIGS = [THROUGHPUT] + [name for name, _, _ in ROUND_TRIPS + UNDER_LOAD]


def _figures(c: Config) -> list[str]:
    """The rows a configuration gives: a rate's throughput; a latency test's p50 and p99
    round trip; a loaded test's throughput and its probe's p50 and p99 under load."""
    if c.round_trips:
        return [name for name, _, _ in ROUND_TRIPS]
    if is_loaded(c):
        return [THROUGHPUT] + [name for name, _, _ in UNDER_LOAD]
    return [THROUGHPUT]


def _round_trips(c: Config, field_name: str, probe: bool) -> list[float]:
    """One percentile (us) of each successful repetition: its own round trips, or its
    probe's beside the load."""
    out = []
    for r in c.ok:
        lats = [b.latency for b in r.beside if b.role is Role.PROBE] if probe else [r.latency]
        out += [getattr(lat, field_name) for lat in lats[:1] if lat is not None]
    return out


def _measure_round_trips(a: Entry, b: Entry, test: str, point: str, mtu: int,
                         ca: Config | None, cb: Config | None, fig: str,
                         min_change_pct: float) -> Comparison:
    """A round-trip row: the same statistic and threshold as a rate's, over the
    repetitions' own percentile, read the other way round (lower is better)."""
    _, field_name, probe = next(f for f in ROUND_TRIPS + UNDER_LOAD if f[0] == fig)
    comp = Comparison(a=a, b=b, test=test, point=point, mtu=mtu, figure=fig)
    if ca is None or cb is None:
        missing = a if ca is None else b
        comp.note = f"not measured in run {missing.run_label} (no such test or point)"
        return comp
    sa, sb = _round_trips(ca, field_name, probe), _round_trips(cb, field_name, probe)
    comp.tool = ca.tool
    comp.a_select = _pooled_words(ca, probe)
    comp.b_select = _pooled_words(cb, probe)
    if not probe:
        comp.a_value, comp.b_value = getattr(ca.row, field_name), getattr(cb.row, field_name)
    comp.a_n, comp.b_n = len(sa), len(sb)
    if not sa or not sb:
        failed = ca if not sa else cb
        comp.note = f"run {failed.entry.run_label}: {failed.word} {failed.counts}"
        return comp
    tool = ca.tool if not probe else next(
        (x.tool for r in ca.ok for x in r.beside if x.role is Role.PROBE), ca.tool)
    resolution = round_trip_resolution_us(tool, ca.ok + cb.ok)
    if not probe and _bootstrapped(comp, ca, cb, field_name, resolution, min_change_pct):
        pass
    else:
        fill(comp, sa, sb, resolution, min_change_pct)
    below = [c for c in (ca, cb) if not probe and below_floor(c)]
    if below:
        comp.above_limit = True
        comp.verdict = BELOW_FLOOR
        comp.note = "; ".join(f"run {c.entry.run_label}: "
                              f"{floor_words(c).removesuffix('; not ranked')}" for c in below) \
            + ": not a measurement of the card, not judged"
    return comp


def _pooled_words(c: Config, probe: bool) -> str:
    """How a run's round-trip figure was taken: "pooled round trips of 3 repetitions ..."."""
    if not probe and c.row.pooled is not None:
        return c.row.pooled.words
    return f"pooled round trips of {c.planned}" if not probe else f"pooled probe of {c.planned}"


def _bootstrapped(comp: Comparison, ca: Config, cb: Config, field_name: str,
                  resolution: float, min_change_pct: float) -> bool:
    """A round-trip row from the runs' pooled round trips where both kept them in time
    order: the shift of the pooled percentile B - A, its interval and p by a block
    bootstrap over time slices (``roundtrips.compare_percentile``: neighbouring round
    trips are not independent, slices of ``SLICE_S`` nearly are). False (the caller
    falls back to the repetitions' own percentiles) where either side has too few slices
    or round trips."""
    q = next(q for name, q, _ in roundtrips.QUANTILES if name == field_name)
    a, b = blocks_of(ca), blocks_of(cb)
    shift = roundtrips.compare_percentile(a, b, q) if a and b else None
    if shift is None:
        return False
    comp.a_n, comp.b_n = shift.a_blocks, shift.b_blocks
    comp.a_median, comp.b_median = shift.a_us, shift.b_us
    comp.resolution = resolution
    comp.threshold = max(min_change_pct / 100.0 * abs(shift.a_us), resolution)
    comp.p, comp.shift = shift.p, shift.shift_us
    comp.ci_low, comp.ci_high = shift.ci_low_us, shift.ci_high_us
    comp.p_method = (f"block bootstrap of the pooled round trips ({roundtrips.BOOTSTRAP} "
                     f"resamples of {shift.a_blocks} and {shift.b_blocks} "
                     f"{roundtrips.SLICE_S:g} s slices)")
    return True


def _test_rank(ix: Index, a: Entry, b: Entry, test: str) -> int:
    for e in (a, b):
        c = next((c for c in ix.configs if c.entry.key == e.key and c.test == test), None)
        if c is not None:
            return ix.test_order(c)
    return 0


def _measure(a: Entry, b: Entry, test: str, point: str, mtu: int, ca: Config | None,
             cb: Config | None, min_change_pct: float) -> Comparison:
    """A row's figures and statistic; the word waits for the adjustment of the p-values."""
    comp = Comparison(a=a, b=b, test=test, point=point, mtu=mtu)
    if ca is None or cb is None:
        missing = a if ca is None else b
        comp.note = f"not measured in run {missing.run_label} (no such test or point)"
        return comp
    sa, sb = samples(ca), samples(cb)
    comp.tool = ca.tool
    comp.a_select, comp.b_select = _rule(ca), _rule(cb)
    comp.a_value, comp.b_value = _selected(ca), _selected(cb)
    comp.a_n, comp.b_n = len(sa), len(sb)
    if not sa or not sb:
        failed = ca if not sa else cb
        comp.note = f"run {failed.entry.run_label}: {failed.word} {failed.counts}"
        return comp
    resolution = max(sample_resolution_bps(ca.ok), sample_resolution_bps(cb.ok)) / MBIT
    fill(comp, sa, sb, resolution, min_change_pct)
    over = [(c, v) for c, v in ((ca, comp.a_value), (cb, comp.b_value)) if c.above_limit(v)]
    if over:
        comp.above_limit = True
        comp.verdict = ABOVE_LIMIT
        comp.note = "; ".join(
            f"run {c.entry.run_label}: {v:.1f} Mbit/s is above the wire's limit of "
            f"{(c.limit_bps or 0) / MBIT:.1f} at this MTU" for c, v in over) + \
            ": not a measurement of the card, not judged"
    return comp


def fill(comp: Comparison, sa: list[float], sb: list[float], resolution: float,
         min_change_pct: float = MIN_CHANGE_PCT) -> Comparison:
    """The row's statistic from the repetitions of both runs (Mbit/s) and the resolution
    the tool printed them at; the word waits for :func:`judge`."""
    comp.a_n, comp.b_n = len(sa), len(sb)
    comp.a_median, comp.b_median = statistics.median(sa), statistics.median(sb)
    comp.resolution = resolution
    comp.threshold = max(min_change_pct / 100.0 * abs(comp.a_median), comp.resolution)
    comp.p = mann_whitney_p(sa, sb)
    comp.p_method = method(sa, sb)
    shift = shift_interval(sa, sb)
    comp.shift = shift.estimate
    if testable(len(sa), len(sb)):
        comp.ci_low, comp.ci_high = shift.low, shift.high
    low, high = comp.ci_low, comp.ci_high
    if low is not None and low == high:           # fully tied: judged widened (decide)
        low, high = low - resolution, (high or 0.0) + resolution
    comp.settle_estimate = repetitions_to_settle(sa, sb, shift.estimate, comp.threshold,
                                                 resolution, (low, high))
    return comp


def judge(rows: list[Comparison]) -> None:
    """The words of the rows of one comparison, once their p-values are adjusted."""
    _adjust(rows)
    for row in rows:
        _word(row)


def _adjust(rows: list[Comparison]) -> None:
    """Benjamini-Hochberg across the rows of one comparison that can be tested; a row whose
    sizes cannot reach p < 0.05 cannot be a discovery and is left out of the count."""
    tested = [r for r in rows if r.testable]
    for r, adj in zip(tested, bh_adjust([r.p for r in tested if r.p is not None]),
                      strict=True):
        r.p_adjusted = adj


def _word(c: Comparison) -> None:
    if c.p is None or c.shift is None or c.threshold is None or c.above_limit:
        return                      # not comparable or above the limit: note already set
    if not c.testable:
        floor = smallest_p(c.a_n, c.b_n)
        each, b_only = repetitions_needed(c.a_n)
        c.verdict = UNTESTABLE
        why = (f"the smallest p possible is {floor:.2g}" if floor >= ALPHA else
               "a run of one repetition says nothing of its spread")
        c.note = (f"{c.a_n} against {c.b_n} repetitions cannot reach p < {ALPHA:g} ({why}): "
                  f"it takes at least {each} in each run"
                  + (f", or {b_only} in run {c.b.run_label} against run {c.a.run_label}'s "
                     f"{c.a_n}" if b_only and b_only != each else ""))
        return
    assert c.p_adjusted is not None
    d = decide(c.shift, c.ci_low, c.ci_high, c.threshold, c.resolution, c.p_adjusted,
               c.lower_better)
    c.verdict, c.judged_low, c.judged_high, c.widened = d.word, d.low, d.high, d.widened
    threshold = _pct_text(c.pct(c.threshold))
    widened = (f" (every figure tied: widened by the printed resolution, "
               f"{_pct_text(c.pct(c.resolution))} %)" if d.widened else "")
    if d.word is WITHIN:
        c.note = f"the 95 % interval {_ci_text(c)} lies inside ±{threshold} %{widened}"
        return
    if d.word is not INCONCLUSIVE:
        return
    c.settle = c.settle_estimate
    where = ("the 95 % interval " + _ci_text(c) + widened +
             f" reaches across the threshold of ±{threshold} %")
    if c.p_adjusted >= ALPHA > c.p:
        where += (f"; p {c.p:.2g} alone, {c.p_adjusted:.2g} adjusted for the rows of this "
                  "comparison")
    elif c.p_adjusted < ALPHA:
        where = f"the runs differ (adjusted p {c.p_adjusted:.2g}) but " + where
    settle = ("more repetitions are unlikely to settle it: the shift sits on the threshold"
              if c.settle is None else
              f"more than {SETTLE_MAX} repetitions in each run would be needed to settle "
              "it: the runs' spread is too wide for this threshold"
              if c.settle > SETTLE_MAX else
              f"about {c.settle} repetitions in each run would likely settle it")
    c.note = f"{where}; {settle}"


def _pct_text(v: float | None) -> str:
    return "" if v is None else f"{v:.2f}"


def _ci_text(c: Comparison) -> str:
    lo, hi = ((c.pct(c.judged_low), c.pct(c.judged_high)) if c.widened else
              (c.pct(c.ci_low), c.pct(c.ci_high)))
    return (f"[{'-inf' if lo is None else f'{lo:+.2f}'}, "
            f"{'+inf' if hi is None else f'{hi:+.2f}'}] %")


def comparison_table(comps: list[Comparison]) -> Table:
    t = Table(id="comparison", family="comparison", title="Each adapter, test and point",
              columns=["adapter", "test", "point", "figure", "A", "B", "n A/B", "A median",
                       "B median", "shift", "change %", "95 % interval",
                       "threshold %", "p", "p adjusted", "verdict", "differs", "note"],
              caption=(f"Each adapter in a later run against the first run that has it, "
                       f"on all the stored repetitions. Shift: {SHIFT_NAME}; change: the "
                       f"shift as % of A's median; a throughput in Mbit/s, a round trip "
                       f"(each repetition's own p50 or p99) in us. p: {NAME}; adjusted by Benjamini-Hochberg "
                       "across the testable rows of each comparison. "
                       + HOW_TO_READ + " Not testable when the repetitions are too few "
                       "for p < 0.05 (or one run has one); not comparable when a run has no "
                       "successful repetition there; above the limit (never judged) when a "
                       "run's figure is beyond what the wire carries at that MTU, below the "
                       "wire's minimum when a median round trip is shorter than the wire "
                       "allows. Each run's selected figure is in comparison.csv "
                       "(a_bps, b_bps); 'differs' names a difference between the runs "
                       "the row's figure depends on."))
    for c in comps:
        t.rows.append([c.a.adapter_label, c.test, point_label(c.point, c.mtu),
                       f"{c.figure}, {c.unit}", c.a.run_label,
                       c.b.run_label, f"{c.a_n}/{c.b_n}", fmt(c.a_median), fmt(c.b_median),
                       f"{c.shift:+.1f} {c.unit}" if c.shift is not None else "",
                       f"{c.change_pct:+.2f}" if c.change_pct is not None else "",
                       _ci_text(c) if c.testable else "",
                       _pct_text(c.pct(c.threshold)),
                       f"{c.p:.3g}" if c.p is not None else "",
                       f"{c.p_adjusted:.3g}" if c.p_adjusted is not None else "",
                       c.words, "; ".join(c.differs), c.note])
        t.row_entries.append(c.b.key)
        bps = _bps if not c.lower_better else _none
        us = _us if c.lower_better else _none
        t.csv_rows.append([c.a.adapter_label, c.a.adapter, c.test, c.point, c.a.run_label,
                           c.b.run_label, c.a_n, c.b_n, bps(c.a_median), bps(c.b_median),
                           c.a_select, c.b_select, bps(c.a_value), bps(c.b_value),
                           bps(c.shift), _round(c.change_pct), bps(c.ci_low),
                           bps(c.ci_high), _round(c.pct(c.ci_low)),
                           _round(c.pct(c.ci_high)), _round(c.pct(c.threshold)),
                           bps(c.resolution) if c.threshold is not None else None,
                           c.p, c.p_adjusted, c.p_method, str(c.verdict),
                           "; ".join(c.differs),
                           c.note, c.figure, us(c.a_median), us(c.b_median), us(c.a_value),
                           us(c.b_value), us(c.shift), us(c.ci_low), us(c.ci_high),
                           us(c.resolution) if c.threshold is not None else None,
                           c.settle, "yes" if c.widened else ""])
    t.csv_columns = list(CSV_COLUMNS)
    return t


def differences_table(diffs: list[RunDifferences]) -> Table:
    """Every difference between the compared runs, one line each (and what was the same)."""
    t = Table(id="comparison-differences", family="comparison-differences",
              title="What differs between the runs",
              columns=["runs", "group", "what", "A", "B", "figures that depend on it"])
    for rd in diffs:
        runs = f"{rd.a.label} and {rd.b.label}"
        for d in rd.differences:
            t.rows.append([runs, d.group, d.what + (f" ({d.detail})" if d.detail else ""),
                           d.a, d.b, d.depends])
        for w in rd.warnings():
            if not w.difference:
                t.rows.append([runs, "", w.what, w.text, "", ""])
    return t


def warnings(diffs: list[RunDifferences]) -> list[MethodWarning]:
    return [w for rd in diffs for w in rd.warnings()]


def _bps(mbit_value: float | None) -> object:
    return None if mbit_value is None else round(mbit_value * MBIT, 1)


def _us(value: float | None) -> object:
    return None if value is None else round(value, 3)


def _none(value: float | None) -> object:
    return None


def _round(value: float | None, digits: int = 4) -> object:
    return None if value is None else round(value, digits)
