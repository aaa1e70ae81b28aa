"""Entries and configurations: what every chart family reads, built once per report.

Entries and their names
    An entry is an adapter on one pair in one run, named by the trials' ``adapter_label``
    ("model (driver version)"). When several entries share a label -- the same card in two
    runs (a comparison: two drivers, two nights), or on two pairs of one run -- each gets
    a suffix in brackets: the run's short label ("A", or ``--label A=driver-7.1``) when
    the runs differ, the pair's name when the pairs differ. An adapter's colour and marker
    come from its inventory id (``colours.py``): the same card keeps them in every report,
    and its entries in later runs are shades of that colour.

Configurations
    A configuration is (run, pair, point, test): its records, the engine's summary row,
    the profile's test and point. It knows what the charts need once: the repetitions
    planned (``Profile.repetitions_for``), how many failed and were not run, the word for a
    gap (``Failure.word`` of what happened), the repetition(s) whose value is shown (the
    CPU of that repetition goes with it), and the link's goodput limit at its MTU.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from collections.abc import Iterable

from nicbench.config.profile import Point, TestSpec
from nicbench.report.colours import adapter_colour, adapter_marker, shade
from nicbench.report.load import Run
from nicbench.report.model import Entry
from nicbench.report.resolution import sample_resolution_bps
from nicbench.physics.link import goodput_bps, link_rate, timestamps_on
from nicbench.results.plausible import above_bound, bound_allowance, timing_error_s
from nicbench.results.policy import Better, better_of
from nicbench.results.records import CpuPart, Failure, Kind, Status, TrialRecord
from nicbench.results.summary import SummaryRow
from nicbench.tools.registry import TOOLS, display_name
from nicbench.tools.driver import Shape

MBIT = 1e6

# What a gap says when several failures happened: the event, not its aftermath (given up,
# not run), and the configuration-level refusal before any trial's failure.
_AFTERMATH = (Failure.GIVEN_UP, Failure.NOT_RUN)


def tools_with(result: Shape) -> tuple[str, ...]:
    """The tools whose result is of shape ``result``."""
    return tuple(name for name, tool in TOOLS.items() if tool.result is result)


def tool_title(tool: str, protocol: str) -> str:
    return f"{display_name(tool)} {protocol.upper()}"


def point_label(point: str, mtu: int) -> str:
    if point == f"mtu{mtu}":
        return f"MTU {mtu}"
    m = re.fullmatch(r"frame(\d+)", point)
    if m:
        return f"frame {m.group(1)} (MTU {mtu})"
    return f"{point} (MTU {mtu})"


def mbit(bps: float | None) -> float | None:
    return None if bps is None or bps != bps else bps / MBIT


def fmt(value: float | None, digits: int = 1) -> str:
    return "" if value is None or value != value else f"{value:.{digits}f}"


# A CPU figure whose repetitions spread over more than this many points (IQR, in % of
# all cores) cannot rank adapters by their CPU cost.
NOISY_IQR_POINTS = 10.0
# Nor can one taken while the host was busy with something else: the median, over the
# same repetitions, of the load beside the tool and its network work
# (the record's ``cpu``, each host's ``other``) above this many points.
NOISY_OTHER_POINTS = 10.0


@dataclass(frozen=True)
class CpuFigure:
    """A CPU load over several repetitions: their median, their interquartile range (None
    with fewer than two values) and how many there were."""

    median: float | None
    iqr: float | None
    n: int

    @property
    def noisy(self) -> bool:
        """Too spread to rank on: IQR above ``NOISY_IQR_POINTS``, or unknown (one value)."""
        return self.iqr is None or self.iqr > NOISY_IQR_POINTS


def cpu_figure(values: Iterable[float | None]) -> CpuFigure:
    vals = sorted(v for v in values if v is not None and v == v)
    if not vals:
        return CpuFigure(None, None, 0)
    iqr = None
    if len(vals) > 1:
        q1, _, q3 = statistics.quantiles(vals, n=4, method="inclusive")
        iqr = q3 - q1
    return CpuFigure(statistics.median(vals), iqr, len(vals))



def slug(*parts: str) -> str:
    text = "-".join(p for p in parts if p)
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


@dataclass(frozen=True)
class Group:
    """A tuning point on a chart: an MTU or a frame size."""

    key: str
    label: str
    mtu: int


def group_of(point: str, mtu: int) -> Group:
    return Group(key=f"{mtu}:{point}", label=point_label(point, mtu), mtu=mtu)


def sorted_groups(groups: Iterable[Group]) -> list[Group]:
    unique = {g.key: g for g in groups}
    return sorted(unique.values(), key=lambda g: (g.mtu, g.key))


# -- entries ----------------------------------------------------------------------------
def build_entries(runs: list[Run], rates: dict[str, float]) -> list[Entry]:
    entries: list[Entry] = []
    for run in runs:
        order = list(run.manifest.pairs) if run.manifest is not None else []
        firsts: dict[str, TrialRecord] = {}
        for r in run.records:
            firsts.setdefault(r.pair, r)
            if r.pair not in order:
                order.append(r.pair)
        for pair in order:
            first = firsts.get(pair)
            if first is None:
                continue
            adapter = run.adapter(first.adapter)
            rate, source = link_rate(pair, adapter, rates)
            entries.append(Entry(
                key=f"{run.index}/{pair}", run_index=run.index, run_label=run.label,
                run_id=run.run_id, run_name=run.name, pair=pair, adapter=first.adapter,
                adapter_label=first.adapter_label or first.adapter,
                rate_bps=rate, rate_source=source,
                emulated=bool(adapter.emulated) if adapter else False))
    _name_entries(entries)
    _colour_entries(entries)
    return entries


def _name_entries(entries: list[Entry]) -> None:
    by_label: dict[str, list[Entry]] = defaultdict(list)
    for e in entries:
        by_label[e.adapter_label].append(e)
    for label, same in by_label.items():
        several_runs = len({e.run_index for e in same}) > 1
        for e in same:
            parts = []
            if several_runs:
                parts.append(e.run_label)
            if sum(1 for o in same if o.run_index == e.run_index) > 1:
                parts.append(f"pair {e.pair}")
            e.label = f"{label} [{', '.join(parts)}]" if parts else label


def _colour_entries(entries: list[Entry]) -> None:
    """The adapter's colour for its first entry, shades of it for the others (later runs,
    other pairs)."""
    seen: Counter[str] = Counter()
    for e in entries:
        e.base_colour = adapter_colour(e.adapter)
        e.colour = shade(e.base_colour, seen[e.adapter])
        e.marker = adapter_marker(e.adapter)
        seen[e.adapter] += 1


# -- configurations ---------------------------------------------------------------------
@dataclass
class Config:
    """One (run, pair, point, test) with everything a chart or table says about it."""

    run: Run
    entry: Entry
    row: SummaryRow
    records: list[TrialRecord]
    test_spec: TestSpec | None = None
    point_spec: Point | None = None
    _limit: float | None = field(default=None, repr=False)

    @property
    def tool(self) -> str:
        return self.row.tool

    @property
    def test(self) -> str:
        return self.row.test

    @property
    def point(self) -> str:
        return self.row.point

    @property
    def mtu(self) -> int:
        return self.row.mtu

    @property
    def group(self) -> Group:
        return group_of(self.row.point, self.row.mtu)

    @cached_property
    def ok(self) -> list[TrialRecord]:
        return [r for r in self.records if r.ok]

    @cached_property
    def failed(self) -> int:
        return sum(1 for r in self.records if r.status is Status.FAILED)

    @cached_property
    def latency_only(self) -> bool:
        """A latency test of its own (round trips, no rate): not a throughput figure."""
        return (any(r.latency is not None for r in self.ok)
                and all(r.throughput_bps is None for r in self.ok))

    @cached_property
    def round_trips(self) -> bool:
        """Its figure is a round trip, lower is better (``policy.better_of``, by the test:
        sockperf, or iperf 2 in bounce-back mode), or, a test nicbench cannot place, its
        repetitions measured round trips and no rate."""
        params = self.test_spec.params if self.test_spec is not None else None
        return better_of(self.tool, params) is Better.LOWER or self.latency_only

    @cached_property
    def search(self) -> bool:
        return any(r.kind is Kind.UDP_SEARCH for r in self.records)

    @cached_property
    def planned(self) -> int:
        """Repetitions planned: run, failed and not run alike (a UDP search: the rates it
        tried)."""
        if self.search:
            return sum(1 for r in self.records if r.kind is Kind.UDP_SEARCH)
        reps = sum(1 for r in self.records if r.kind is Kind.REPETITION)
        if reps == 0 and any(r.kind is Kind.SKIPPED for r in self.records):
            if self.run.profile is not None and self.test_spec is not None:
                return self.run.profile.repetitions_for(self.test_spec)
            return sum(r.not_run or 1 for r in self.records if r.kind is Kind.SKIPPED)
        return reps + self.not_run_given_up

    @cached_property
    def not_run_given_up(self) -> int:
        return sum(r.not_run or 0 for r in self.records if r.kind is Kind.GIVEN_UP)

    @cached_property
    def not_run(self) -> int:
        """Repetitions planned that never ran (given up, or the whole point skipped)."""
        if any(r.kind is Kind.SKIPPED for r in self.records) and not self.ok and \
                not self.failed:
            return self.planned
        return self.not_run_given_up

    @cached_property
    def failure(self) -> Failure | None:
        """What happened to a configuration that did not measure in full: the skipped
        record's failure (a refusal, a path that did not carry the MTU), else the most
        frequent failure of its trials; giving up is what followed, not the event."""
        bad = [r.failure for r in self.records
               if r.failure is not None and r.status is not Status.OK]
        if not bad:
            return None
        skipped = [r.failure for r in self.records
                   if r.kind is Kind.SKIPPED and r.failure is not None]
        if skipped:
            return skipped[0]
        events = [f for f in bad if f not in _AFTERMATH] or bad
        counts = Counter(events)
        return max(counts, key=lambda f: (counts[f], -events.index(f)))

    @property
    def word(self) -> str:
        """The gap's word: ``Failure.word`` of what happened, the same for the same event
        whatever the tool."""
        f = self.failure
        return f.word if f is not None else ("no data" if not self.ok else "")

    @property
    def counts(self) -> str:
        """``n ok/n`` and, when some did not measure, how many failed and were not run:
        "0/15 (3 failed, 12 not run)"."""
        text = f"{len(self.ok)}/{self.planned}"
        parts = []
        if self.failed:
            parts.append(f"{self.failed} failed")
        if self.not_run:
            parts.append(f"{self.not_run} not run")
        return text + (f" ({', '.join(parts)})" if parts else "")

    @property
    def rule(self) -> str:
        return self.row.select

    @cached_property
    def resolution_bps(self) -> float:
        """The resolution the tool printed the throughput with (``report/resolution.py``,
        from each tool's output format), the coarsest of the repetitions'."""
        return sample_resolution_bps(self.ok)

    @cached_property
    def shown(self) -> list[TrialRecord]:
        """The repetitions the selected figure stands for: those whose throughput is within
        the tool's printed resolution of the selected value (every one tied for the best,
        not one of them; those around the median), every one for a mean, the trial a UDP
        search found its rate in; for round trips, the repetition whose median round trip is
        the selected one (``latency_repetition``, the one the CDF draws)."""
        ok = sorted(self.ok, key=lambda r: (r.throughput_bps or 0.0, r.repetition or 0))
        if not ok:
            return []
        if self.rule == "mean":
            return ok
        if self.round_trips:
            chosen = [r for r in ok if r.repetition == self.row.latency_repetition]
            return chosen or ok[-1:]
        if self.search:
            hit = [r for r in ok if r.throughput_bps == self.row.selected_bps]
            return hit[:1] or ok[-1:]
        target = self.row.selected_bps
        if target is None:
            target = statistics.median(r.throughput_bps or 0.0 for r in ok) \
                if self.rule == "median" else ok[-1].throughput_bps
        res = self.resolution_bps
        near = [r for r in ok if r.throughput_bps is not None and target is not None
                and abs(r.throughput_bps - target) <= res * (1 + 1e-9)]
        if near:
            return sorted(near, key=lambda r: r.repetition or 0)
        if self.rule != "median":
            return ok[-1:]
        mid = len(ok) // 2      # an even count of exact figures: the two middle ones
        return ok[mid:mid + 1] if len(ok) % 2 else ok[mid - 1:mid + 1]

    @cached_property
    def cpu_records(self) -> list[TrialRecord]:
        """The repetitions the CPU figures are taken over: every successful repetition of
        the configuration, the CPU cost of the configuration and not of its luckiest
        repetitions (the fastest are the quiet-machine ones); a UDP search's, the trial
        it found its rate in (its other trials ran at other rates)."""
        if self.search:
            return self.shown
        return sorted(self.ok, key=lambda r: r.repetition or 0)

    @property
    def cpu_repetitions(self) -> list[int]:
        """The repetition numbers the CPU figures are taken over."""
        return [r.repetition for r in self.cpu_records if r.repetition is not None]

    @property
    def statistic(self) -> str:
        """Which repetitions the CPU figures are taken over, and how, in words."""
        n = len(self.cpu_records)
        if self.search:
            return "the trial at the rate found"
        if n == 1:
            return "the one successful repetition"
        return f"median over all {n} successful repetitions"

    def shown_cpu(self, part: CpuPart) -> float | None:
        """A CPU figure (a host's busy, the tool's own): the median over the repetitions
        the CPU figures are taken over (``cpu_records``)."""
        return self.cpu_figure(part).median

    def cpu_figure(self, part: CpuPart) -> CpuFigure:
        """Median and IQR of a CPU figure over the repetitions of ``cpu_records``."""
        return cpu_figure([part.of(r) for r in self.cpu_records])

    def cpu_values(self, part: CpuPart) -> list[float]:
        return [v for v in (part.of(r) for r in self.ok) if v is not None]

    @property
    def limit_bps(self) -> float | None:
        """The link's best goodput at this MTU (None without a known line rate)."""
        return self._limit

    @cached_property
    def timed_s(self) -> float | None:
        """The time a figure of this configuration is measured over, s: a rate tool's
        duration as it timed it (the repetitions' median ``duration_s``, else the test's
        ``duration_s`` parameter); netPIPE's, one timed trial of each block size
        (``tools.netpipe.TRIAL_S``). None when unknown."""
        if self.tool in tools_with(Shape.CURVE):
            from nicbench.tools.netpipe import TRIAL_S

            return TRIAL_S
        durations = [r.duration_s for r in self.ok if r.duration_s]
        if durations:
            return statistics.median(durations)
        params = self.test_spec.params if self.test_spec is not None else {}
        value = params.get("duration_s") if isinstance(params, dict) else None
        return float(value) if isinstance(value, (int, float)) and value > 0 else None

    @property
    def allowance_bps(self) -> float | None:
        """How far above the limit a figure of this configuration may read and still be
        the limit: the tool's printed resolution plus its timing error over ``timed_s``
        (``results.plausible.bound_allowance``, the tool's ``TIMING_ERROR_S``)."""
        if not self._limit:
            return None
        return bound_allowance(self._limit, self.resolution_bps, timing_error_s(self.tool),
                               self.timed_s)

    def above_limit(self, value_mbit: float | None) -> bool:
        """Whether a figure of this configuration (Mbit/s) exceeds the link's goodput
        limit by more than ``allowance_bps``: not a measurement of the card, never
        ranked."""
        return above_bound(None if value_mbit is None else value_mbit * MBIT, self._limit,
                           self.resolution_bps, timing_error_s(self.tool), self.timed_s)

    def compute_limit(self) -> None:
        if not self.entry.rate_bps:
            return
        ts = timestamps_on(self.run.profile, self.point_spec)
        self._limit = goodput_bps(self.entry.rate_bps, self.row.mtu, self.row.protocol, ts)

    @property
    def reasons(self) -> list[tuple[str, int]]:
        bad = [r for r in self.records if r.status is not Status.OK or r.kind is Kind.GIVEN_UP]
        return Counter((r.reason or "no reason recorded") for r in bad).most_common()

    @property
    def kernel_message(self) -> str | None:
        return next((r.kernel_message for r in self.records if r.kernel_message), None)


class Index:
    """The runs' configurations, looked up by (run, pair, point, test) and by chart."""

    def __init__(self, runs: list[Run], entries: list[Entry]):
        self.runs = runs
        self.entries = entries
        self.entry_of = {(e.run_index, e.pair): e for e in entries}
        records: dict[tuple[int, str, str, str], list[TrialRecord]] = defaultdict(list)
        for run in runs:
            for r in run.records:
                records[(run.index, r.pair, r.point, r.test)].append(r)
        self.configs: list[Config] = []
        for run in runs:
            for row in run.summary:
                spec = run.test_spec(row.test)
                if spec is not None and spec.frame_search is not None:
                    continue      # frames/s per frame size: report/smallpkt.py's
                c = Config(run=run, entry=self.entry_of[(run.index, row.pair)], row=row,
                           records=records[(run.index, row.pair, row.point, row.test)],
                           test_spec=run.test_spec(row.test),
                           point_spec=run.point_spec(row.point))
                c.compute_limit()
                self.configs.append(c)
        self._by_key = {(c.run.index, c.row.pair, c.row.point, c.row.test): c
                        for c in self.configs}
        self.order = {e.key: k for k, e in enumerate(entries)}

    def get(self, run_index: int, pair: str, point: str, test: str) -> Config | None:
        return self._by_key.get((run_index, pair, point, test))

    def test_order(self, c: Config) -> int:
        names = [t.name for t in c.run.profile.tests] if c.run.profile else []
        return names.index(c.test) if c.test in names else len(names)

    def charts(self, result: Shape | None = None, own_sections: bool = True
               ) -> dict[tuple[str, str, str], list[Config]]:
        """Configurations by chart: one chart per (tool, protocol), split by test name
        where a profile has two tests with the same tool and protocol; only tools whose
        result is drawn as ``result`` when given; a test whose figure is a round trip
        (``Config.round_trips``: sockperf, iperf 2's bounce-back) only in
        ``charts(Shape.LATENCY)``, whatever its tool. Tools in the registry's order."""
        per_run: dict[tuple[int, str, str], set[str]] = defaultdict(set)
        for c in self.configs:
            per_run[(c.run.index, c.tool, c.row.protocol)].add(c.test)
        wanted = tools_with(result) if result is not None else None
        charts: dict[tuple[str, str, str], list[Config]] = defaultdict(list)
        for c in self.configs:
            if c.round_trips != (result is Shape.LATENCY) or (
                    result not in (None, Shape.LATENCY) and c.tool not in (wanted or ())):
                continue
            split = len(per_run[(c.run.index, c.tool, c.row.protocol)]) > 1
            charts[(c.tool, c.row.protocol, c.test if split else "")].append(c)
        tools = list(TOOLS)

        def order(key: tuple[str, str, str]) -> tuple[int, int, tuple[str, str, str]]:
            first = charts[key][0]
            return (tools.index(key[0]) if key[0] in tools else len(tools),
                    self.test_order(first), key)
        if not own_sections:
            # A swept test (the streams section draws it) or one with a probe beside it
            # (latency under load): left to its own section where others remain, so a
            # report of both kinds (profiles/modern.yaml) ranks each figure once.
            rest = [k for k in charts if not all(_own_section(c) for c in charts[k])]
            charts = defaultdict(list, {k: charts[k] for k in rest}) if rest else charts
        return {k: charts[k] for k in sorted(charts, key=order)}

    def entries_of(self, configs: Iterable[Config]) -> list[Entry]:
        keys = {c.entry.key for c in configs}
        return [e for e in self.entries if e.key in keys]


def _own_section(c: Config) -> bool:
    spec = c.test_spec
    return spec is not None and (spec.swept is not None or bool(spec.beside))


def chart_title(tool: str, protocol: str, test: str) -> str:
    return tool_title(tool, protocol) + (f": test {test}" if test else "")
