"""Latency under load: the same latency probe alone and beside a load, side by side per
adapter, with the increase, the responsiveness score and the load's throughput.

A loaded test is a test whose trials ran a latency probe beside their load
(``tests[].beside``, role probe, its round trips in ``RoleResult.latency``). Its idle
figures are those of the test of the same run, pair and point that ran that same probe
alone: the test whose own tool, protocol and params are the probe's (``idle_of``). Both
are from the same run; without such a test the row says so and has no increase.

Figures, per configuration, over its repetitions that succeeded (named in the table):

* p50 and p99 round trip: the percentile of all the repetitions' round trips pooled
  (``results/roundtrips.py``; iperf 2's bounce-back keeps a histogram of 100 us bins, so
  its percentile is the bin's upper edge, the bin in the table's notes), p99 only from
  1,000 round trips on; with no kept output, the median of the repetitions' own (µs,
  shown in ms);
* the increase: loaded minus idle, of those figures;
* the responsiveness score in round trips per minute (RPM), per repetition, then the
  median: draft-ietf-ippm-responsiveness-08, section 5.3.1 ("Aggregating the
  Measurements"), computes it as 60000 / TM, TM the single-sided trimmed mean of the
  probes' round trips in ms at TMP = 95 % (section 5.2, "Test Parameters"). The draft
  averages the score of foreign probes (on connections of their own: TCP handshake and
  an HTTP request) and self probes (on the load's connections); the probe here is one
  request/response on a connection of its own (the draft's foreign ``http_f``), so every
  term is its own TM: RPM = 60000 / TM(probe). From a histogram TM is an upper bound (each
  round trip at its bin's upper edge, never above iperf's exact mean), so the RPM a lower
  bound. The loaded score is the draft's
  "responsiveness under working conditions"; the idle one is shown beside it;
* the loaded throughput: the load's figure, the trial's throughput as every throughput
  figure is (its configuration's selected value), with its share of the wire's limit: a
  card that keeps its latency low by not filling the link shows it there. A throughput
  beyond the limit (``Config.above_limit``) is flagged and never ranked, as in the
  throughput verdict; a load under ``FILLED_PCT`` of the limit was not working
  conditions (the draft measures once the goodput has saturated): shown, not ranked.
  A load in both directions at once (iperf3 ``bidir: true``) has two figures, forward
  (client to server: the trial's throughput) and reverse, each the median over the
  repetitions the selected figure is taken over (``streams.figures_of``, as the streams
  section shows them); each is held to the one-way goodput limit (a full-duplex link
  carries its rate each way at once): the load filled the link only if both did, and a
  direction above its limit is flagged as a one-way figure is;
* a round trip shorter than the wire allows (the idle or loaded p50 below
  ``theory.round_trip_floor_us`` for the probe's messages at the adapter's line rate) is
  not such a card's figure: flagged, never ranked, as in the latency verdict.

The verdict's "smallest increase under load" ranks by the p99 increase (the statistic
and the repetitions are named in it), smallest first; equal increases keep the report's
entry order with consecutive ranks, as the throughput verdict's ties do.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from nicbench.config.profile import Role
from nicbench.report.configs import Config, Index, fmt, mbit, slug, sorted_groups
from nicbench.report.model import (ChartKind, Bar, BarPanel, BarSeries, BarStatus, Figure, LegendItem, Row,
                                   Sentence, Table)
from nicbench.report.streams import figures_of
from nicbench.physics.link import round_trip_floor_us
from nicbench.report.verdict import SMALLEST_INCREASE, csv_row
from nicbench.results.records import Kind
from nicbench.results.roundtrips import Pooled
from nicbench.results.summary import latency_pool
from nicbench.tools.base import Latency
from nicbench.tools.registry import display_name

MS = 1000.0
RPM_US = 60e6            # round trips per minute from a round trip in us
SENTENCE_NAMES = 6
# Working conditions: the load carries at least this share of the wire's goodput limit.
# Below it the latency was not measured on a full link (the draft measures only once the
# goodput has saturated, section 5.4): shown, never ranked, so that a card cannot come
# first by not filling the link. Measured on the lab: at 91-94 % of the limit the sender
# (its CPU, on a busy machine), not the link, was the bottleneck and the probe's p50 stayed
# at 0.08-0.1 ms; at 95-98 % the link's queue stood (p50 4.6-6.2 ms on Gigabit, 4.9 ms on
# Fast Ethernet).
FILLED_PCT = 95.0


@dataclass(frozen=True)
class Rtt:
    """One side (idle or loaded) of a row: its repetitions' round trips pooled."""

    p50_us: float
    p99_us: float | None         # None: too few round trips for a p99 (pooled.p99 says)
    rpm: float | None
    repetitions: tuple[int, ...]
    samples: int                 # round trips over those repetitions
    pooled: Pooled | None = None

    def p99_words(self) -> str:
        """"5.20 ms" or "needs 1,000 round trips (has 800)"."""
        if self.p99_us is not None:
            return f"{self.p99_us / MS:.2f} ms"
        return self.pooled["p99"].figure() if self.pooled is not None else "no p99"


@dataclass
class LoadedRow:
    config: Config                  # the loaded test's configuration
    probe: str                      # "iperf 2" (its tool's display name)
    idle_test: str | None
    idle: Rtt | None
    loaded: Rtt | None
    throughput_mbit: float | None   # the load's selected figure
    limit_pct: float | None
    above: bool = False             # a direction of the load above the wire's limit
    rank: int | None = None
    notes: list[str] = field(default_factory=list)
    bidir: bool = False             # the load ran both ways at once (iperf3 --bidir)
    reverse_mbit: float | None = None   # its reverse direction (server to client)
    reverse_pct: float | None = None
    floor_us: float | None = None   # the wire's shortest round trip for the probe's messages

    @property
    def unfilled(self) -> bool:
        """The load carried less than ``FILLED_PCT`` of the wire's limit (known): for a
        load both ways, either direction did (or the reverse's rate is not known)."""
        if self.limit_pct is not None and self.limit_pct < FILLED_PCT:
            return True
        return self.bidir and self.limit_pct is not None and (
            self.reverse_pct is None or self.reverse_pct < FILLED_PCT)

    @property
    def below_floor(self) -> bool:
        """An idle or loaded median round trip shorter than the wire allows."""
        return bool(self.floor_us) and any(
            side is not None and side.p50_us < (self.floor_us or 0.0)
            for side in (self.idle, self.loaded))

    @property
    def fill_words(self) -> str:
        """"91.2 %" or, both ways, "forward 97.0 %, reverse 60.1 %"."""
        if not self.bidir:
            return f"{self.limit_pct:.1f} %" if self.limit_pct is not None else "?"
        rev = f"{self.reverse_pct:.1f} %" if self.reverse_pct is not None else "not known"
        fwd = f"{self.limit_pct:.1f} %" if self.limit_pct is not None else "?"
        return f"forward {fwd}, reverse {rev}"

    @property
    def p50_increase_us(self) -> float | None:
        if self.idle is None or self.loaded is None:
            return None
        return self.loaded.p50_us - self.idle.p50_us

    @property
    def p99_increase_us(self) -> float | None:
        if self.idle is None or self.loaded is None or self.idle.p99_us is None \
                or self.loaded.p99_us is None:
            return None
        return self.loaded.p99_us - self.idle.p99_us


def _probe_latencies(c: Config) -> list[tuple[int, Latency]]:
    """(repetition, the probe's round trips) of the loaded test's successful trials."""
    out = []
    for r in c.ok:
        if r.kind is not Kind.REPETITION:
            continue
        lat = next((b.latency for b in r.beside
                    if b.role is Role.PROBE and b.latency is not None), None)
        if lat is not None:
            out.append((r.repetition or 0, lat))
    return out


def _own_latencies(c: Config) -> list[tuple[int, Latency]]:
    return [(r.repetition or 0, r.latency) for r in c.ok
            if r.kind is Kind.REPETITION and r.latency is not None]


def rtt(pairs: list[tuple[int, Latency]], c: Config | None = None,
        probe: bool = False) -> Rtt | None:
    """One side's figures: its repetitions' round trips pooled, read from the run's raw
    files (``c``: the configuration whose trials they are; ``probe``: the probe's beside
    the load, else the test's own)."""
    if not pairs:
        return None
    lats = [lat for _, lat in pairs]
    rpms = [RPM_US / lat.trimmed_mean_us for lat in lats if lat.trimmed_mean_us]
    pooled = _pooled(c, probe) if c is not None else None
    p50 = pooled["p50"].value if pooled is not None else None
    p99 = pooled["p99"].value if pooled is not None else None
    return Rtt(p50_us=p50 if p50 is not None else statistics.median(lat.p50_us for lat in lats),
               p99_us=p99 if pooled is not None else statistics.median(
                   lat.p99_us for lat in lats),
               rpm=statistics.median(rpms) if rpms else None,
               repetitions=tuple(sorted(rep for rep, _ in pairs)),
               samples=sum(lat.samples for lat in lats), pooled=pooled)


def _pooled(c: Config, probe: bool) -> Pooled | None:
    if not probe:
        return c.row.pooled
    reps = []
    for r in c.ok:
        b = next((b for b in r.beside if b.role is Role.PROBE and b.latency is not None), None)
        if r.kind is Kind.REPETITION and b is not None:
            reps.append((r, b.latency))

    def raw_of(r):
        b = next(b for b in r.beside if b.role is Role.PROBE)
        return b.tool, b.raw
    return latency_pool(reps, c.run.path, raw_of) if reps else None


def is_loaded(c: Config) -> bool:
    return any(b.role is Role.PROBE and b.latency is not None
               for r in c.records for b in r.beside)


def idle_of(ix: Index, c: Config) -> Config | None:
    """The test of the same run, pair and point that ran the loaded test's probe alone:
    its own tool, protocol and params are the probe's."""
    spec = c.test_spec
    probe = next((b for b in spec.beside if b.role is Role.PROBE), None) if spec else None
    if probe is None:
        return None
    for other in ix.configs:
        t = other.test_spec
        if (other.run is c.run and other.row.pair == c.row.pair and other.point == c.point
                and t is not None and not t.beside and t.tool == probe.tool
                and t.protocol == probe.protocol and dict(t.params) == dict(probe.params)):
            return other
    return None


def loaded_rows(ix: Index) -> dict[str, list[LoadedRow]]:
    """Per loaded test, one row per adapter and point, ranked by the p99 increase: each
    adapter once, at its point of smallest increase that can be ranked."""
    out: dict[str, list[LoadedRow]] = {}
    for c in ix.configs:
        if not is_loaded(c):
            continue
        idle_c = idle_of(ix, c)
        probe = next((b.tool for r in c.records for b in r.beside if b.role is Role.PROBE), "")
        value = mbit(c.row.selected_bps)
        limit = mbit(c.limit_bps)
        bidir = c.test_spec is not None and c.test_spec.params.get("bidir") is True
        reverse = figures_of(c, True).reverse if bidir else None
        probes = _probe_latencies(c)
        row = LoadedRow(config=c, probe=display_name(probe),
                        idle_test=idle_c.test if idle_c else None,
                        idle=rtt(_own_latencies(idle_c), idle_c) if idle_c else None,
                        loaded=rtt(probes, c, probe=True), throughput_mbit=value,
                        limit_pct=100.0 * value / limit if value is not None and limit else None,
                        above=c.above_limit(value) or c.above_limit(reverse), bidir=bidir,
                        reverse_mbit=reverse,
                        reverse_pct=100.0 * reverse / limit if reverse is not None and limit
                        else None,
                        floor_us=round_trip_floor_us(c.entry.rate_bps, probes[0][1].message_bytes,
                                                     "tcp")
                        if c.entry.rate_bps and probes else None)
        if idle_c is None:
            row.notes.append("no test of this run ran the same probe alone: no idle figures")
        out.setdefault(c.test, []).append(row)
    for rows in out.values():
        rankable = sorted((r for r in rows if r.p99_increase_us is not None and not r.above
                           and not r.unfilled and not r.below_floor),
                          key=lambda r: (r.p99_increase_us, ix.order[r.config.entry.key],
                                         r.config.mtu))
        # one rank per adapter, at its smallest increase (as the throughput verdict takes
        # an adapter's best point); its other points are shown, named, not ranked again
        first: dict[str, LoadedRow] = {}
        for r in rankable:
            first.setdefault(r.config.entry.key, r)
        for k, r in enumerate(first.values(), 1):
            r.rank = k
        for r in rankable:
            best = first[r.config.entry.key]
            if r is not best:
                r.notes.append(f"ranked at {best.config.group.label}, its smallest increase")
        rows.sort(key=lambda r: (r.rank is None, r.rank or 0, ix.order[r.config.entry.key]))
    return out


def _ms(us: float | None) -> float | str:
    """A cell in ms, a number (so the CSV keeps it one), or empty."""
    return "" if us is None else round(us / MS, 2)


def _whole(value: float | None) -> int | str:
    return "" if value is None else round(value)


def _reps(side: Rtt | None) -> str:
    return ", ".join(str(r) for r in side.repetitions) if side else ""


def loaded_table(test: str, rows: list[LoadedRow]) -> Table:
    t = Table(id=f"loaded-{test}", family=ChartKind.LOADED, title=f"Latency under load: test {test}",
              columns=["rank", "adapter", "point", "idle p50 ms", "idle p99 ms",
                       "loaded p50 ms", "loaded p99 ms", "p50 increase ms",
                       "p99 increase ms", "idle RPM", "loaded RPM", "load Mbit/s",
                       "% of limit", "reverse Mbit/s", "reverse % of limit",
                       "idle repetitions", "loaded repetitions", "idle round trips",
                       "loaded round trips", "notes"],
              caption=("The same probe alone (its own test, named in the notes) and beside "
                       "the load, in one run: p50 and p99 round trip of the repetitions "
                       "named, their round trips pooled (counted in the table; a p99 needs "
                       "1,000; a histogram's percentile is its bin's upper edge, the bin in "
                       "the notes); the increase "
                       "is loaded minus idle; RPM = 60000 / the 95 % trimmed mean of the "
                       "round trips in ms (draft-ietf-ippm-responsiveness-08 section 5.3.1; "
                       "from a histogram a lower bound), "
                       "median over the repetitions; the load's throughput is its selected "
                       "figure (a load both ways: forward, and reverse over the same "
                       "repetitions, each against the one-way limit). Ranked by the p99 "
                       "increase, smallest first."))
    for r in rows:
        c = r.config
        pct = fmt(r.limit_pct) + (" !" if r.above else "") if r.limit_pct is not None else ""
        notes = list(r.notes)
        if r.idle_test:
            notes.insert(0, f"idle: test {r.idle_test}")
        if r.above:
            notes.append("the load's figure is above the wire's limit by more than its "
                         "tool's printed resolution and timing error: not ranked")
        elif r.unfilled:
            notes.append(f"the load filled {r.fill_words} of the wire's limit, under "
                         f"{FILLED_PCT:g} %: not under working conditions, not ranked")
        elif r.limit_pct is None:
            notes.append("no link rate known: whether the load filled the link is not known")
        if r.below_floor:
            notes.append(_floor_words(r))
        notes += _bins(r)
        t.rows.append([r.rank or "", c.entry.label, c.group.label,
                       _ms(r.idle.p50_us if r.idle else None),
                       _p99_cell(r.idle),
                       _ms(r.loaded.p50_us if r.loaded else None),
                       _p99_cell(r.loaded),
                       _ms(r.p50_increase_us), _ms(r.p99_increase_us),
                       _whole(r.idle.rpm if r.idle else None),
                       _whole(r.loaded.rpm if r.loaded else None),
                       fmt(r.throughput_mbit), pct, fmt(r.reverse_mbit),
                       fmt(r.reverse_pct) if r.reverse_pct is not None else "",
                       _reps(r.idle), _reps(r.loaded),
                       r.idle.samples if r.idle else "", r.loaded.samples if r.loaded else "",
                       "; ".join(notes)])
        t.row_entries.append(c.entry.key)
    return t


def _p99_cell(side: Rtt | None) -> float | str:
    """A p99 in ms, or the round trips it would need."""
    if side is None:
        return ""
    return _ms(side.p99_us) if side.p99_us is not None else side.p99_words()


def _bins(r: LoadedRow) -> list[str]:
    """The histogram bins behind a row's figures: "loaded p50 in 6100-6200 us"."""
    out = []
    for name, side in (("idle", r.idle), ("loaded", r.loaded)):
        if side is None or side.pooled is None:
            continue
        for label in ("p50", "p99"):
            pc = side.pooled[label]
            if pc.binned:
                out.append(f"{name} {label} in the bin {pc.figure()} us (n = {pc.n:,})")
    return out


def _floor_words(r: LoadedRow) -> str:
    where = "on this lab" if r.config.entry.emulated else "(check the link rate and the raw output)"
    sides = ", ".join(f"{name} p50 {side.p50_us:.1f} us" for name, side in
                      (("idle", r.idle), ("loaded", r.loaded))
                      if side is not None and side.p50_us < (r.floor_us or 0.0))
    return (f"{sides} below the wire's minimum round trip {r.floor_us or 0.0:.2f} us {where}; "
            "not ranked")


def statistic(r: LoadedRow) -> str:
    """The verdict's statistic of a row, with its repetitions."""
    if r.idle and r.loaded:
        return (f"p99 of the round trips of repetitions {_reps(r.loaded)} pooled "
                f"(n = {r.loaded.samples:,}) loaded minus repetitions "
                f"{_reps(r.idle)} idle (n = {r.idle.samples:,})")
    return "; ".join(r.notes)


def _signed(us: float | None) -> str:
    return "" if us is None else f"{us / MS:+.2f}"


def verdict_table(test: str, rows: list[LoadedRow]) -> Table:
    """The verdict's row family for this test: smallest increase under load."""
    t = Table(id=f"verdict-loaded-{test}", family="verdict-loaded",
              title=f"Smallest increase under load: test {test}",
              columns=["rank", "adapter", "p99 increase ms", "idle p99 ms", "loaded p99 ms",
                       "loaded RPM", "load Mbit/s", "% of limit", "statistic"])
    for r in rows:
        stat = statistic(r)
        if r.rank is None and r.below_floor:
            stat += "; " + _floor_words(r)
        t.rows.append([r.rank or "", r.config.entry.label, _ms(r.p99_increase_us),
                       _ms(r.idle.p99_us if r.idle else None),
                       _ms(r.loaded.p99_us if r.loaded else None),
                       _whole(r.loaded.rpm if r.loaded else None),
                       fmt(r.throughput_mbit) + (f" / {fmt(r.reverse_mbit)} reverse"
                                                 if r.bidir else ""),
                       (r.fill_words if r.bidir else fmt(r.limit_pct))
                       + (" !" if r.above else "") if r.limit_pct is not None else "", stat])
        t.row_entries.append(r.config.entry.key)
    return t


def verdict_csv_rows(test: str, rows: list[LoadedRow]) -> list[list[object]]:
    """verdict.csv's "smallest increase under load" rows, in the table's order: the p99
    increase (us), its statistic, the load's share of the wire's limit (the bound it is
    held to) and why a row is not ranked."""
    out: list[list[object]] = []
    for r in rows:
        c = r.config
        why = list(r.notes) + ([_floor_words(r)] if r.below_floor else [])
        if r.above:
            why.append("the load's figure above the wire's limit; not ranked")
        elif r.unfilled:
            why.append(f"the load filled {r.fill_words} of the wire's limit, under "
                       f"{FILLED_PCT:g} %; not ranked")
        out.append(csv_row(
            adapter=c.entry.label, adapter_id=c.entry.adapter, run=c.entry.run_label,
            test=test, tool=c.tool, rank=r.rank or "", point=c.point,
            selected_bps=_bps(r.throughput_mbit), figure="p99 increase",
            limit_bps=_bps(mbit(c.limit_bps)),
            limit_pct="" if r.limit_pct is None else round(r.limit_pct, 2),
            above_limit="the load above the wire's limit" if r.above else "",
            status="ok" if r.rank is not None else "not ranked",
            verdict_row=SMALLEST_INCREASE,
            value="" if r.p99_increase_us is None else round(r.p99_increase_us, 3),
            unit="us", statistic=statistic(r),
            bound="" if r.floor_us is None else round(r.floor_us, 3),
            beyond_bound="; ".join(why) if r.rank is None else ""))
    return out


def _bps(value_mbit: float | None) -> object:
    return "" if value_mbit is None else round(value_mbit * 1e6, 1)


def _one(r: LoadedRow) -> str:
    bits = [f"idle {r.idle.p99_words()}, loaded {r.loaded.p99_words()}"
            if r.idle and r.loaded else ""]
    if r.loaded and r.loaded.rpm:
        bits.append(f"{r.loaded.rpm:.0f} RPM under load")
    if r.throughput_mbit is not None:
        share = f", {r.limit_pct:.1f} % of the limit" if r.limit_pct is not None else ""
        if r.bidir:
            share = (f" forward, {fmt(r.reverse_mbit) or '?'} reverse ({r.fill_words} of "
                     "the one-way limit)" if r.limit_pct is not None else " forward")
        bits.append(f"load {r.throughput_mbit:.1f} Mbit/s{share}")
    return f"{r.config.entry.label} {_signed(r.p99_increase_us)} ms ({'; '.join(b for b in bits if b)})"


def sentence(test: str, rows: list[LoadedRow]) -> Sentence:
    """"Smallest increase under load (test T: p99 round trip of the iperf 2 probe, median
    over the repetitions, loaded minus idle): X +5.10 ms (...). Then Y ..."."""
    title = f"Latency under load: test {test}"
    ranked = [r for r in rows if r.rank is not None]
    if ranked:
        head = (f"Smallest increase under load (test {test}: p99 round trip of the "
                f"{ranked[0].probe} probe, the repetitions' round trips pooled, loaded minus "
                "idle): ")
        text = head + _one(ranked[0]) + "."
        rest = ranked[1:SENTENCE_NAMES]
        if rest:
            text += " Then " + ", ".join(_one(r) for r in rest) + "."
    else:
        text = f"Smallest increase under load (test {test}): nothing ranked."
    above = [r for r in rows if r.above]
    if above:
        text += (" Not ranked, the load's figure above the wire's limit: "
                 + ", ".join(r.config.entry.label for r in above) + ".")
    unfilled = [r for r in rows if r.unfilled and not r.above]
    if unfilled:
        text += (f" Not ranked, the load under {FILLED_PCT:g} % of the wire's limit (not "
                 "under working conditions): " + ", ".join(
                     f"{r.config.entry.label} ({r.fill_words})" for r in unfilled) + ".")
    below = [r for r in rows if r.below_floor and not r.above and not r.unfilled]
    if below:
        text += (" Not ranked, a round trip below the wire's minimum: " + "; ".join(
            f"{r.config.entry.label} {_floor_words(r).removesuffix('; not ranked')}"
            for r in below) + ".")
    ranked_keys = {r.config.entry.key for r in ranked}
    unpaired = [r for r in rows if r.rank is None and not r.above and not r.unfilled
                and not r.below_floor and r.config.entry.key not in ranked_keys]
    if unpaired:
        text += (" Without idle figures: "
                 + ", ".join(r.config.entry.label for r in unpaired) + ".")
    return Sentence(title, text)


SERIES = [BarSeries("idle", "p99 alone"), BarSeries("loaded", "p99 beside the load",
                                                      opacity=0.5)]


def loaded_figure(test: str, rows: list[LoadedRow]) -> Figure:
    """Per point, one row per adapter in the table's order: its p99 round trip alone and
    beside the load (ms), the loaded bar labelled with its increase, RPM and the load."""
    panels = []
    for g in sorted_groups(r.config.group for r in rows):
        mine = [r for r in rows if r.config.group.key == g.key]
        bars = []
        for r in mine:
            e = r.config.entry
            for series, side in (("idle", r.idle), ("loaded", r.loaded)):
                bar = Bar(row=e.key, series=series, fill=e.colour,
                          value=side.p99_us / MS if side and side.p99_us is not None
                          else None,
                          n_ok=len(side.repetitions) if side else 0,
                          n=r.config.planned, status=BarStatus.of(r.config.row.status))
                if side is None:
                    bar.gap = "no idle test" if series == "idle" else "no data"
                    bar.text = bar.gap
                elif series == "idle":
                    bar.text = side.p99_words()
                    if side.p99_us is None:
                        bar.gap = bar.text
                else:
                    load = (f", load {r.throughput_mbit:.0f} Mbit/s"
                            if r.throughput_mbit is not None else "")
                    rpm = f", {side.rpm:.0f} RPM" if side.rpm else ""
                    bar.text = f"{side.p99_words()}{rpm}{load}"
                    if side.p99_us is None:
                        bar.gap = bar.text
                    if r.above:
                        bar.flag = "the load above the wire's limit"
                    elif r.below_floor:
                        bar.flag = "a round trip below the wire's minimum"
                bars.append(bar)
        top = max((b.value for b in bars if b.value is not None), default=1.0)
        panels.append(BarPanel(title=g.label, xlabel="p99 round trip, ms", bars=bars,
                               rows=[Row(key=r.config.entry.key, label=r.config.entry.label,
                                         colour=r.config.entry.colour,
                                         marker=r.config.entry.marker,
                                         entry=r.config.entry.key) for r in mine],
                               xmax=top * 1.15, series=list(SERIES),
                               sorted_by="smallest p99 increase first"))
    return Figure(
        id=slug("loaded", test), family=ChartKind.LOADED, title=f"Latency under load: test {test}",
        caption=("The p99 round trip of the same probe alone and beside the load, the median "
                 "over the repetitions of each; the loaded bar's label gives the score "
                 "(RPM, draft-ietf-ippm-responsiveness-08 section 5.3.1) and the load's "
                 "throughput. Adapters by the p99 increase, smallest first."),
        panels=list(panels), entries=[r.config.entry.key for r in rows],
        legend=[LegendItem("alone (idle)", "#555555", "bar"),
                LegendItem("beside the load", "#aaaaaa", "bar")],
        notes=[f"{r.config.entry.label}: the load's figure is above the wire's limit; not "
               "ranked" for r in rows if r.above]
        + [f"{r.config.entry.label}: the load filled {r.fill_words} of the wire's "
           f"limit, under {FILLED_PCT:g} %: not ranked" for r in rows
           if r.unfilled and not r.above]
        + [f"{r.config.entry.label}: {_floor_words(r)}" for r in rows
           if r.below_floor and not r.above and not r.unfilled])
