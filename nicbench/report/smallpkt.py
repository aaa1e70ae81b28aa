"""The small-packet rate in the report: frames per second against frame size per adapter
with the line-rate curve, a table of NDR and PDR, and the verdict's "highest small-packet
rate".

Figures come from :func:`nicbench.results.framerate.frame_rates` over each run's current
records (the one definition of a search's outcome). The line rate for a frame size is
rate / ((frame + 20) x 8) (RFC 2544; ``nicbench.physics.ethernet``); a rate above it beyond
what its count and the tool's timing allow (one frame over the trial's duration, and the
tool's ``TIMING_ERROR_S`` over it: ``results.framerate.error_pps``, the rule of every
physical bound) was not carried by that link: it is drawn flagged,
shown in the table with "!", and never ranked, as a throughput above the wire's limit is
not (``verdict.py``). Each rate is a full-length trial's (``confirm_s``), shown with its
bracket, the lowest rate that failed above it, and the confirmation's loss; a figure of
a run stored before confirmations is shown as not confirmed and never ranked.

The verdict ranks the adapters by their NDR at the smallest frame size every one of them
was searched at (64 bytes when they all were): the received frame rate of the trial with
the highest offered rate that lost no frame (RFC 2544's throughput), the trial named. At
small frames the sender's CPU is often the limit, so, as the verdict does with CPU figures
(``NOISY_OTHER_POINTS``), an NDR whose trial ran while the sender was busy with other work
(its ``cpu_sender_other_pct`` above 10 points) is shown but not ranked: it measured the
machine, not the card.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nicbench.report.configs import NOISY_OTHER_POINTS, Index
from nicbench.report.model import (ChartKind, Curve, Entry, Figure, LegendItem, LinePanel, Panel, Sentence,
                                   Table)
from nicbench.report.verdict import (ABOVE_LAB, ABOVE_REAL, HIGHEST_SMALL_PACKET, assign_ranks,
                                     SENTENCE_NAMES, csv_row)
from nicbench.results.framerate import FrameRate, frame_rates
from nicbench.physics.ethernet import WIRE_EXTRA, Bound

LINE_COLOUR = "#777777"
KPPS = 1e3


@dataclass(frozen=True)
class Measured:
    entry: Entry
    rate: FrameRate


def measured(ix: Index) -> list[Measured]:
    """Every (entry, frame size, bound) of the runs' small-packet searches."""
    out = []
    for run in ix.runs:
        pdr = {t.name: t.frame_search.pdr_loss_pct for t in run.profile.tests
               if t.frame_search} if run.profile is not None else {}
        for rate in frame_rates(run.records, pdr):
            entry = ix.entry_of.get((run.index, rate.pair))
            if entry is not None:
                out.append(Measured(entry, rate))
    return sorted(out, key=lambda m: (ix.order[m.entry.key], m.rate.point, m.rate.test,
                                      m.rate.frame_bytes, list(Bound).index(m.rate.bound)))


def _groups(ms: list[Measured]) -> dict[tuple[str, str, str], list[Measured]]:
    groups: dict[tuple[str, str, str], list[Measured]] = {}
    for m in ms:
        groups.setdefault((m.entry.key, m.rate.point, m.rate.test), []).append(m)
    return groups


def figures(ix: Index) -> list[Figure]:
    """One chart: a panel per adapter (and point, test), frames/s against frame size."""
    ms = measured(ix)
    if not ms:
        return []
    groups = _groups(ms)
    several = len({(p, t) for _, p, t in groups}) > 1
    panels: list[Panel] = [_panel(group, several) for group in groups.values()]
    flagged = [m for m in ms if m.rate.above_line]
    notes = [f"{m.entry.label} {m.rate.frame_bytes} B {m.rate.bound.value.upper()}: "
             f"{m.rate.received_pps:,.0f} frames/s is above the line rate "
             f"{int(m.rate.line_pps):,}; " + (ABOVE_LAB if m.entry.emulated else ABOVE_REAL)
             for m in flagged]
    return [Figure(
        id="smallpkt", family=ChartKind.SMALLPKT, title="Frames per second against frame size",
        caption="The highest offered frame rate at which a full-length trial lost no frame "
                "(NDR, RFC 2544's throughput) and lost at most the PDR's share, received "
                f"frames per second, beside the line rate rate / ((frame + {WIRE_EXTRA}) × 8)"
                " for the adapter's link rate (preamble 8 and gap 12 bytes counted); "
                "brackets in the table.",
        panels=panels, entries=list(dict.fromkeys(m.entry.key for m in ms)),
        legend=[LegendItem("NDR (0 % loss)", "#333333", "line"),
                LegendItem("PDR", "#333333", "line", dash="4 3"),
                LegendItem("line rate", LINE_COLOUR, "line", dash="6 3")],
        notes=notes, columns=2 if len(panels) > 1 else 1)]


def _panel(group: list[Measured], several: bool) -> LinePanel:
    e, first = group[0].entry, group[0].rate
    curves = []
    for bound, dash in ((Bound.NDR, ""), (Bound.PDR, "4 3")):
        mine = [m.rate for m in group if m.rate.bound is bound and m.rate.received_pps]
        pts = [(float(r.frame_bytes), (r.received_pps or 0.0) / KPPS) for r in mine]
        curves.append(Curve(
            label=f"{bound.value.upper()} ({mine[0].loss_limit_pct:g} % loss)" if mine
            else bound.value.upper(), colour=e.colour, marker=e.marker, points=pts,
            dash=dash, entry=e.key,
            flagged=[(float(r.frame_bytes), (r.received_pps or 0.0) / KPPS)
                     for r in mine if r.above_line]))
    line = sorted({(float(m.rate.frame_bytes), m.rate.line_pps / KPPS) for m in group})
    curves.append(Curve(label="line rate", colour=LINE_COLOUR, marker="plus", points=line,
                        dash="6 3"))
    title = e.label + (f", {first.point}, {first.test}" if several else "")
    ymax = max(y for c in curves for _, y in c.points) * 1.08
    return LinePanel(title=title, xlabel="frame size (bytes)",
                     ylabel="thousand frames per second", curves=curves, ymax=ymax,
                     yunit="thousand frames/s")


COLUMNS = ["adapter", "point", "frame (B)", "line rate (frames/s)", "NDR (frames/s)",
           "NDR Mbit/s", "NDR % of line", "NDR bracket (frames/s)", "NDR confirmation",
           "PDR (frames/s)", "PDR Mbit/s", "PDR % of line", "PDR bracket (frames/s)",
           "PDR confirmation", "PDR loss limit %", "trials", "sender CPU % at NDR",
           "NDR trial"]


def table(ix: Index) -> list[Table]:
    ms = measured(ix)
    if not ms:
        return []
    rows: list[list[object]] = []
    keys: list[str | None] = []
    by_frame: dict[tuple[str, str, str, int], dict[Bound, FrameRate]] = {}
    entries: dict[tuple[str, str, str, int], Entry] = {}
    for m in ms:
        k = (m.entry.key, m.rate.point, m.rate.test, m.rate.frame_bytes)
        by_frame.setdefault(k, {})[m.rate.bound] = m.rate
        entries[k] = m.entry
    for k, both in by_frame.items():
        ndr, pdr = both[Bound.NDR], both[Bound.PDR]
        rows.append([entries[k].label, ndr.point, ndr.frame_bytes, int(ndr.line_pps),
                     *_figures(ndr), *_figures(pdr), pdr.loss_limit_pct, ndr.trials,
                     "" if ndr.cpu_sender_pct is None else round(ndr.cpu_sender_pct, 1),
                     ndr.trial_id or ""])
        keys.append(entries[k].key)
    return [Table(id="smallpkt", family=ChartKind.SMALLPKT, title="Small-packet rate: NDR and PDR",
                  columns=COLUMNS, rows=rows, row_entries=keys,
                  caption="Received frames per second of the full-length trial with the "
                          "highest offered rate within each loss limit; its bracket: that "
                          "offered rate to the lowest that failed above it (+ the search's "
                          "last step; \"line\": none above), and the full-length trial's "
                          "duration and loss; Mbit/s of frames (header and FCS, no "
                          "preamble or gap); \"!\" marks a rate above the line rate for "
                          "its frame size beyond its measurement error (impossible on that"
                          " link; not ranked).")]


def _figures(r: FrameRate) -> list[object]:
    if r.received_pps is None:
        failed = f"failed at {r.hi_pps:,}" if r.hi_pps is not None else ""
        return ["none confirmed" if r.full_trials else "none passed", "", "", failed, ""]
    flag = "! " if r.above_line else ""
    return [flag + f"{r.received_pps:,.0f}", round(r.mbit or 0.0, 2),
            round(r.line_pct or 0.0, 1), bracket(r), confirmation(r)]


def bracket(r: FrameRate) -> str:
    """The offered rate to the lowest failed above it, and that step as a share."""
    if r.offered_pps is None:
        return ""
    if r.hi_pps is None:
        return f"{r.offered_pps:,} to line"
    return f"{r.offered_pps:,} to {r.hi_pps:,} (+{r.bracket_pct or 0.0:.1f} %)"


def confirmation(r: FrameRate) -> str:
    if not r.confirmed:
        return "not confirmed (an older run's short trial)"
    return f"{r.duration_s or 0:.0f} s, {r.loss_pct or 0:g} % lost"


@dataclass
class Ranking:
    """The verdict's "highest small-packet rate" over one frame size: the ranked, those
    above the line rate, those measured while the sender was busy, those without a rate."""

    test: str
    frame: int
    ranked: list[Measured]
    above: list[Measured]
    busy: list[Measured]
    none: list[Measured]
    # (rank, tied) of each ranked row by id(): NDRs within one search step share a rank
    ranks: dict[int, tuple[int, bool]] = field(default_factory=dict)

    def rank_of(self, m: Measured) -> tuple[int, bool]:
        return self.ranks.get(id(m), (self.ranked.index(m) + 1, False))

    def rank_text(self, m: Measured) -> str:
        rank, tied = self.rank_of(m)
        return f"{rank} (tied)" if tied else str(rank)

    unconfirmed: list[Measured] = field(default_factory=list)

    @property
    def statistic(self) -> str:
        return (f"NDR at {self.frame}-byte frames: the received frames/s of the full-length "
                "trial with the highest offered rate that lost no frame (RFC 2544 "
                "throughput), bracketed by the search's trials at that size")


def _rankable(m: Measured) -> bool:
    return m.rate.received_pps is not None and not m.rate.above_line and not _busy(m.rate) \
        and m.rate.confirmed


def rankings(ix: Index) -> list[Ranking]:
    """Per small-packet test (a method, as in the throughput verdict), one row per adapter:
    its NDR frames/s at the smallest frame size all of them were searched at, the highest
    over its points that can be ranked (as the throughput verdict takes an adapter's best
    point), else what it has (above the line rate, the sender busy, no rate); ties keep
    the report's entry order with consecutive ranks, as the throughput verdict's do."""
    out = []
    ndr_all = [m for m in measured(ix) if m.rate.bound is Bound.NDR]
    for test in dict.fromkeys(m.rate.test for m in ndr_all):
        ndr = [m for m in ndr_all if m.rate.test == test]
        sizes = [{m.rate.frame_bytes for m in ndr if m.entry.key == e}
                 for e in dict.fromkeys(m.entry.key for m in ndr)]
        common = set.intersection(*sizes)
        frame = min(common) if common else min(m.rate.frame_bytes for m in ndr)
        at: list[Measured] = []
        for e in dict.fromkeys(m.entry.key for m in ndr):
            mine = [m for m in ndr if m.entry.key == e and m.rate.frame_bytes == frame]
            good = [m for m in mine if _rankable(m)]
            pick = max(good, key=lambda m: m.rate.received_pps or 0.0) if good else \
                next(iter(mine), None)
            if pick is not None:
                at.append(pick)
        ranked = sorted((m for m in at if _rankable(m)),
                        key=lambda m: -(m.rate.received_pps or 0.0))
        above = [m for m in at if m.rate.above_line]
        busy = [m for m in at if m.rate.received_pps is not None and not m.rate.above_line
                and _busy(m.rate)]
        none = [m for m in at if m.rate.received_pps is None]
        unconfirmed = [m for m in at if m.rate.received_pps is not None
                       and not m.rate.above_line and not _busy(m.rate)
                       and not m.rate.confirmed]
        out.append(Ranking(test, frame, ranked, above, busy, none, ranks=_ranks(ranked),
                           unconfirmed=unconfirmed))
    return out


def search_step_pps(m: Measured) -> float:
    """What a frame search cannot tell apart, frames/s: its bracket, from the figure to
    the lowest rate that failed above it (the search narrows it to ``resolution_pct`` of
    the figure); without one (a run stored before brackets), nothing."""
    r = m.rate
    if r.received_pps is None or r.hi_pps is None:
        return 0.0
    return max(0.0, r.hi_pps - r.received_pps)


def _ranks(ranked: list[Measured]) -> dict[int, tuple[int, bool]]:
    """Competition ranks (``verdict.assign_ranks``): two rates apart only where they differ
    by more than the wider of their brackets (two trials offered the same rate are one
    figure); otherwise tied."""
    out: dict[int, tuple[int, bool]] = {}

    def apart(upper: Measured, lower: Measured) -> bool:
        step = max(search_step_pps(upper), search_step_pps(lower))
        if upper.rate.offered_pps is not None and \
                upper.rate.offered_pps == lower.rate.offered_pps:
            return False
        return (upper.rate.received_pps or 0.0) - (lower.rate.received_pps or 0.0) > step

    def put(m: Measured, k: int, tied: bool) -> None:
        out[id(m)] = (k, tied)

    assign_ranks(ranked, apart, put)
    return out


def verdict_csv_rows(ix: Index) -> list[list[object]]:
    """verdict.csv's "highest small-packet rate" rows: the NDR in frames/s, its statistic,
    the line rate it is held to, and why a row is not ranked."""
    out = []
    pairs = [(rk, m) for rk in rankings(ix)
             for m in rk.ranked + rk.above + rk.busy + rk.unconfirmed + rk.none]
    for r, m in pairs:
        rate = m.rate
        why = ((ABOVE_LAB if m.entry.emulated else ABOVE_REAL) if m in r.above else
               f"the sender busy with other load ({rate.cpu_sender_other_pct:.0f} %); "
               "not ranked" if m in r.busy else
               "not confirmed by a full-length trial; not ranked" if m in r.unconfirmed
               else "")
        out.append(csv_row(
            adapter=m.entry.label, adapter_id=m.entry.adapter, run=m.entry.run_label,
            test=rate.test, tool=_tool(ix, m),
            rank=r.rank_of(m)[0] if m in r.ranked else "",
            tied="yes" if m in r.ranked and r.rank_of(m)[1] else "", point=rate.point,
            figure=f"NDR at {r.frame} B", status="ok" if rate.received_pps is not None
            else "not measured",
            not_measured="" if rate.received_pps is not None else "no rate without loss",
            above_limit=why if m in r.above else "", verdict_row=HIGHEST_SMALL_PACKET,
            value="" if rate.received_pps is None else round(rate.received_pps, 1),
            unit="frames/s", statistic=r.statistic + f" ({rate.trials} trials)",
            bound=round(rate.line_pps, 1), beyond_bound=why))
    return out


def _tool(ix: Index, m: Measured) -> str:
    spec = ix.runs[m.entry.run_index].test_spec(m.rate.test)
    return spec.tool if spec is not None else ""


def verdict(ix: Index) -> tuple[list[Sentence], list[Table]]:
    """The verdict's "highest small-packet rate", per small-packet test (:func:`rankings`)."""
    sentences: list[Sentence] = []
    tables: list[Table] = []
    all_r = rankings(ix)
    for r in all_r:
        s, t = _verdict_of(r, len(all_r) > 1)
        sentences.append(s)
        tables.append(t)
    return sentences, tables


def _verdict_of(r: Ranking, several: bool) -> tuple[Sentence, Table]:
    frame, ranked, above, busy, none = r.frame, r.ranked, r.above, r.busy, r.none
    statistic = r.statistic
    names = [f"{m.entry.label} {m.rate.received_pps:,.0f} frames/s "
             f"({m.rate.line_pct:.1f} % of line rate"
             + (f"; tied at rank {r.rank_of(m)[0]}: within one search step" if r.rank_of(m)[1]
                else "") + ")" for m in ranked]
    shown = names[:SENTENCE_NAMES] + ([f"... {names[-1]}"] if len(names) > SENTENCE_NAMES
                                      else [])
    of = f"test {r.test}, " if several else ""
    text = f"Highest small-packet rate ({of}{statistic}): " + (", ".join(shown) or "none ranked")
    if above:
        text += "; not ranked: " + ", ".join(
            f"{m.entry.label} ({(ABOVE_LAB if m.entry.emulated else ABOVE_REAL)})"
            for m in above)
    if busy:
        text += "; not ranked, the sender busy with other load: " + ", ".join(
            f"{m.entry.label} {m.rate.received_pps:,.0f} frames/s (other load "
            f"{m.rate.cpu_sender_other_pct:.0f} %)" for m in busy)
    if r.unconfirmed:
        text += "; not ranked, not confirmed at full length: " + ", ".join(
            m.entry.label for m in r.unconfirmed)
    if none:
        text += "; no rate without loss: " + ", ".join(m.entry.label for m in none)
    rows: list[list[object]] = [[r.rank_text(m) if r.rank_of(m)[1] else r.rank_of(m)[0],
             m.entry.label, frame,
             f"{m.rate.received_pps:,.0f}",
             int(m.rate.line_pps), round(m.rate.line_pct or 0.0, 1), m.rate.point,
             m.rate.trials, m.rate.trial_id or ""] for m in ranked]
    rows += [["", m.entry.label, frame, f"! {m.rate.received_pps:,.0f}",
              int(m.rate.line_pps), round(m.rate.line_pct or 0.0, 1), m.rate.point,
              m.rate.trials, m.rate.trial_id or ""] for m in above]
    rows += [["", m.entry.label, frame, f"{m.rate.received_pps:,.0f} (sender busy)",
              int(m.rate.line_pps), round(m.rate.line_pct or 0.0, 1), m.rate.point,
              m.rate.trials, m.rate.trial_id or ""] for m in busy]
    rows += [["", m.entry.label, frame, f"{m.rate.received_pps:,.0f} (not confirmed)",
              int(m.rate.line_pps), round(m.rate.line_pct or 0.0, 1), m.rate.point,
              m.rate.trials, m.rate.trial_id or ""] for m in r.unconfirmed]
    keys: list[str | None] = [m.entry.key for m in ranked + above + busy + r.unconfirmed]
    tab = Table(id="verdict-smallpkt" + (f"-{r.test}" if several else ""), family="verdict",
                title="highest small-packet rate" + (f": test {r.test}" if several else ""),
                columns=["rank", "adapter", "frame (B)", "NDR (frames/s)",
                         "line rate (frames/s)", "% of line rate", "point", "trials",
                         "NDR trial"],
                rows=rows, row_entries=keys, caption=statistic)
    return Sentence(method="small-packet rate" + (f": test {r.test}" if several else ""),
                    text=text), tab


def _busy(r: FrameRate) -> bool:
    return r.cpu_sender_other_pct is not None and r.cpu_sender_other_pct > NOISY_OTHER_POINTS
