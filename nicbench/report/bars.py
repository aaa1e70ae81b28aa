"""Speed, CPU and cost charts of the rate tools (iperf 2, iperf3, NTttcp), and the heatmaps.

Speed: one chart per tool and protocol (per test where a profile has two of one tool),
small multiples per tuning point: at each MTU a ranking, horizontal bars sorted fastest
first, the entries of one adapter (runs of a comparison) kept side by side. The bar is the
configuration's selected value (the profile's ``select``, as summary.csv has it); the
whisker spans the repetitions that succeeded, drawn in the ink that shows on the bar; the
label says ``n ok/n`` and, when some did not measure, how many failed and were not run. A
configuration that did not measure is a gap with the word of what happened
(``Failure.word``). The axis ends near 1.1 x the highest limit or value, so a jumbo-frame
gain of a few percent is visible and nothing is cut.

Reference marks and flags: where the link's rate is known (``theory.link_rate``), each bar
carries the link's best goodput at its MTU (``theory.goodput_bps``); a value above it by more
than the tool's printed resolution and timing error (``Config.above_limit``) is flagged, with a note saying by how much and, for the lab's
emulated links, why (the token bucket lets a burst through without per-frame
serialization).

CPU: the CPU load of both hosts, the median over every successful repetition of the
configuration (``Config.cpu_records``: its cost, not that of its fastest repetitions, the
quiet-machine ones), whiskers over all repetitions, on an axis that stops at 100 %;
the tool's own figure, where it prints one, as a marker. Cost: speed against the CPU of
the busier host, one dot per adapter at each point.

Heatmap: adapters by points, each cell the selected value, coloured on one scale (lowest to
highest selected value); the compact view of 50 adapters.

Ranks and colours: a ranking's order is the named value of its caption (the selected value,
netPIPE's plateau); a value beyond the link's limit (``Config.above_limit``) is not a
measurement of the card, so it is flagged, placed after the ranked ones and never ranked,
and a heatmap leaves it out of its colour scale.
"""

from __future__ import annotations

import re

from collections import defaultdict
from collections.abc import Callable, Iterable

from nicbench.report.colours import PUBLISHED, ink_on, scale
from nicbench.report.configs import (MBIT, Config, Group, Index, chart_title, cpu_figure,
                                     fmt, mbit, slug, sorted_groups, tool_title, tools_with)
from nicbench.report.model import (ChartKind, Bar, BarPanel, BarSeries, BarStatus, Cell, Dot, Entry,
                                   Figure, HeatPanel, LegendItem, Row, ScatterPanel)
from nicbench.results.records import CpuPart
from nicbench.tools.registry import TOOLS, display_name
from nicbench.tools.driver import Shape

AXIS_HEADROOM = 1.1      # speed axes end near 1.1 x the highest limit or value

TBF_EXPLANATION = (
    "The lab emulates links with a token bucket (tc tbf): a burst up to the bucket's size "
    "leaves at memory speed, with no per-frame serialization on a wire, so short "
    "messages and the start of a transfer can show rates no real Ethernet link carries. "
    "These values are an artefact of the emulation, kept and flagged rather than hidden.")
REAL_EXPLANATION = (
    "No Ethernet link of this rate can carry this much: check the link rate (the "
    "inventory, or --link-rate) and the tool's raw output.")

Value = Callable[[Config], float | None]


def row_of(e: Entry) -> Row:
    return Row(key=e.key, label=e.label, colour=e.colour, marker=e.marker, entry=e.key)


def selected(c: Config) -> float | None:
    return mbit(c.row.selected_bps)


def explanation(e: Entry) -> str:
    return TBF_EXPLANATION if e.emulated else REAL_EXPLANATION


def flag_text(e: Entry, glabel: str, what: str, value: float, limit: float) -> str:
    over = 100.0 * (value / limit - 1.0)
    text = (f"{e.label}, {glabel}: {what} {value:.1f} Mbit/s is {over:.1f} % above "
            f"the link's goodput limit of {limit:.1f} Mbit/s")
    rate = e.rate_bps / MBIT if e.rate_bps else None
    if rate and value > rate:
        text += f", and above the line rate itself ({rate:g} Mbit/s)"
    return text


def ranked_value(c: Config, value: Value) -> float | None:
    """``value`` of a configuration where it can rank: None when there is none or it is
    above the link's limit (``Config.above_limit``)."""
    v = value(c)
    return None if v is None or c.above_limit(v) else v


def ranking_order(ix: Index, configs: list[Config], value: Value) -> list[Entry]:
    """Entries fastest first by ``value``; the entries of one adapter (its runs in a
    comparison) side by side, in run order, placed by their best within the link's limit;
    then adapters with values only above the limit (not ranked); gaps last."""
    best: dict[str, float] = defaultdict(lambda: -1.0)
    above: set[str] = set()
    for c in configs:
        v = value(c)
        if v is not None and c.above_limit(v):
            above.add(c.entry.adapter)
        elif v is not None:
            best[c.entry.adapter] = max(best[c.entry.adapter], v)
    entries = ix.entries_of(configs)
    return sorted(entries, key=lambda e: (-best[e.adapter], e.adapter not in above,
                                          e.adapter, e.run_index, ix.order[e.key]))


def axis_max(values: Iterable[float | None]) -> float:
    top = max((v for v in values if v is not None), default=0.0)
    return top * AXIS_HEADROOM if top > 0 else 1.0


def ranking_panel(ix: Index, configs: list[Config], group: Group, value: Value,
                  xlabel: str, whiskers: bool = True) -> tuple[BarPanel, list[str], set[str]]:
    """One point's ranking: a bar per entry that has the configuration."""
    mine = [c for c in configs if c.group.key == group.key]
    by_entry = {c.entry.key: c for c in mine}
    bars: list[Bar] = []
    notes: list[str] = []
    explain: set[str] = set()
    rows = [row_of(e) for e in ranking_order(ix, mine, value)]
    for row in rows:
        c = by_entry[row.key]
        e = c.entry
        v = value(c)
        bar = Bar(row=e.key, value=v, n_ok=len(c.ok), n=c.planned,
                  status=BarStatus.of(c.row.status), fill=e.colour, whisker=ink_on(e.colour))
        if whiskers and v is not None and not c.search and len(c.ok) > 1:
            vals = [r.throughput_bps / MBIT for r in c.ok if r.throughput_bps is not None]
            bar.lo, bar.hi = min(vals), max(vals)
        if c.limit_bps:
            bar.limit = c.limit_bps / MBIT
            bar.line_rate = (e.rate_bps or 0) / MBIT
        if v is None:
            bar.gap = c.word
            bar.text = f"{c.word} {c.counts}"
        else:
            bar.text = (f"{v:.1f} · search, {c.planned} trials" if c.search
                        else f"{v:.1f} · {c.counts}")
            top = max(x for x in (v, bar.hi) if x is not None)
            if bar.limit and c.above_limit(top):
                what = "best repetition" if top != v else "value"
                bar.flag = flag_text(e, group.label, what, top, bar.limit)
                bar.text = "! " + bar.text + (", not ranked" if c.above_limit(v) else "")
                notes.append(bar.flag + ".")
                explain.add(explanation(e))
        bars.append(bar)
    panel = BarPanel(title=group.label, xlabel=xlabel, rows=rows, bars=bars, xmax=0.0,
                     limit_label="goodput limit" if any(b.limit for b in bars) else "",
                     sorted_by="fastest first; above the limit after, not ranked")
    return panel, notes, explain


def set_axis(panels: list[BarPanel]) -> None:
    """One axis for every panel of a figure: 1.1 x the highest limit, value or whisker."""
    top = axis_max([x for p in panels for b in p.bars for x in (b.value, b.hi, b.limit)])
    for p in panels:
        p.xmax = top


def bar_legend(panels: list[BarPanel]) -> list[LegendItem]:
    items = []
    bars = [b for p in panels for b in p.bars]
    if any(b.limit for b in bars):
        items.append(LegendItem("the link's goodput limit at that MTU", "#000000", "limit"))
    if any(b.lo is not None for b in bars):
        items.append(LegendItem("lowest to highest repetition", "#000000", "whisker"))
    if any(b.flag for b in bars):
        items.append(LegendItem("above the limit (! in the label; see the notes)",
                                "#000000", "flag"))
    if any(b.status is BarStatus.PUBLISHED for b in bars):
        items.append(LegendItem("published figure (--reference)", PUBLISHED, "bar"))
    return items


def speed_caption(configs: list[Config], protocol: str) -> str:
    rules = sorted({c.rule for c in configs})
    sel = ", ".join(r.replace("udp-", "UDP search ") for r in rules)
    reps = sorted({c.planned for c in configs if not c.search})
    of = f" of {'/'.join(str(n) for n in reps)}" if reps else ""
    text = (f"The selected value ({sel}{of} repetitions) of each adapter at each point, "
            "fastest first; whisker: lowest to highest repetition; n ok/n.")
    if any(c.limit_bps for c in configs):
        text += f" Black mark: the link's {protocol.upper()} goodput limit."
    return text


# -- speed ------------------------------------------------------------------------------
def speed_figures(ix: Index) -> list[Figure]:
    figures = []
    for (tool, protocol, test), configs in ix.charts(Shape.RATE, own_sections=False).items():
        title = f"{chart_title(tool, protocol, test)}: throughput"
        groups = sorted_groups(c.group for c in configs)
        panels, notes, explain = [], [], set()
        for g in groups:
            p, n, x = ranking_panel(ix, configs, g, selected, "throughput, Mbit/s")
            panels.append(p)
            notes += n
            explain |= x
        set_axis(panels)
        figures.append(Figure(
            id=slug("speed", tool, protocol, test), family=ChartKind.SPEED, title=title,
            caption=speed_caption(configs, protocol), panels=list(panels),
            entries=[e.key for e in ix.entries_of(configs)], legend=bar_legend(panels),
            notes=notes + sorted(explain)))
    return figures


# -- heatmaps ---------------------------------------------------------------------------
def heatmap(ix: Index, configs: list[Config], value: Value, fig_id: str, title: str,
            caption: str, unit: str = "Mbit/s") -> Figure:
    groups = sorted_groups(c.group for c in configs)
    entries = ranking_order(ix, configs, value)
    by = {(c.entry.key, c.group.key): c for c in configs}
    measured = [v for v in (ranked_value(c, value) for c in configs) if v is not None]
    vmin, vmax = (min(measured), max(measured)) if measured else (0.0, 1.0)
    cells: list[list[Cell]] = []
    for e in entries:
        line = []
        for g in groups:
            c = by.get((e.key, g.key))
            v = value(c) if c is not None else None
            if c is None:
                line.append(Cell(None, "", "#ffffff", "#777777", gap="not in the profile"))
            elif v is None:
                line.append(Cell(None, c.word, "#f2f2f2", "#444444", gap=c.word))
            elif c.above_limit(v):
                # not a measurement of the card: off the scale, flagged, not ranked
                line.append(Cell(v, f"! {v:.0f}", "#ffffff", "#444444"))
            else:
                fill = scale((v - vmin) / (vmax - vmin) if vmax > vmin else 1.0)
                line.append(Cell(v, f"{v:.0f}", fill, ink_on(fill)))
        cells.append(line)
    panel = HeatPanel(title="", rows=[row_of(e) for e in entries],
                      columns=[g.label for g in groups], cells=cells, vmin=vmin, vmax=vmax,
                      unit=unit)
    return Figure(id=fig_id, family=ChartKind.HEATMAP, title=title, caption=caption, panels=[panel],
                  entries=[e.key for e in entries])


def heatmap_figures(ix: Index) -> list[Figure]:
    figures = []
    for (tool, protocol, test), configs in ix.charts(Shape.RATE, own_sections=False).items():
        figures.append(heatmap(
            ix, configs, selected, slug("heatmap", tool, protocol, test),
            f"{chart_title(tool, protocol, test)}: every adapter at every point",
            "The selected value in Mbit/s, one row per adapter (fastest first at its best "
            "point), one column per point, dark (lowest) to light (highest)."))
    return figures


# -- CPU --------------------------------------------------------------------------------
CPU_SERIES = [BarSeries("sender", "sending host"), BarSeries("receiver", "receiving host",
                                                             opacity=0.5)]
TOOLS_SERIES = BarSeries("tools", "the tools' own processes, both hosts", opacity=0.25)


def tools_share(r) -> float | None:
    """The share of all cores the tools' own processes took on both hosts over the
    trial (the record's cpu: each host's tool share), where read."""
    parts = [CpuPart.SENDER_TOOL.of(r), CpuPart.RECEIVER_TOOL.of(r)]
    return None if all(p is None for p in parts) else sum(p or 0.0 for p in parts)


def cpu_figures(ix: Index) -> list[Figure]:
    figures = []
    for (tool, protocol, test), configs in ix.charts(own_sections=False).items():
        if tool in tools_with(Shape.LATENCY) or not any(
                c.cpu_values(CpuPart.SENDER_BUSY) or c.cpu_values(CpuPart.RECEIVER_BUSY)
                for c in configs):
            continue
        groups = sorted_groups(c.group for c in configs)
        order = ranking_order(ix, configs, selected)
        panels = []
        tool_cpu = False
        over: list[str] = []
        # the tools' own share (their processes on both hosts), where the trials record it:
        # on one shared machine the only CPU figure that is the transfer's, beside the
        # machine's load (which the verdict ranks by, where its spread allows)
        own = any(tools_share(r) is not None for c in configs for r in c.ok)
        sides: list[tuple[str, CpuPart | None]] = [
            ("sender", CpuPart.SENDER_BUSY), ("receiver", CpuPart.RECEIVER_BUSY)] + (
            [("tools", None)] if own else [])
        for g in groups:
            by = {c.entry.key: c for c in configs if c.group.key == g.key}
            rows = [row_of(e) for e in order if e.key in by]
            bars = []
            for row in rows:
                c = by[row.key]
                for series, part in sides:
                    if part is not None:
                        v = c.shown_cpu(part)
                        vals = c.cpu_values(part)
                    else:
                        v = cpu_figure([tools_share(r) for r in c.shown]).median
                        vals = [x for x in (tools_share(r) for r in c.ok) if x is not None]
                    bar = Bar(row=row.key, series=series, value=v, n_ok=len(vals),
                              n=c.planned, status=BarStatus.of(c.row.status), fill=c.entry.colour,
                              whisker=ink_on(c.entry.colour))
                    if v is None:
                        bar.gap = c.word or "no data"
                        bar.text = bar.gap if series == "sender" else ""
                    else:
                        if len(vals) > 1:
                            bar.lo, bar.hi = min(vals), max(vals)
                        bar.text = f"{v:.0f} %"
                        if series == "sender":
                            mark = c.shown_cpu(CpuPart.TOOL_OWN)
                            if mark is not None:
                                tool_cpu = True
                                bar.mark = min(mark, 100.0)
                                if mark > 100:
                                    over.append(f"{c.entry.label}, {g.label}: "
                                                f"{display_name(tool)}'s own figure "
                                                f"{mark:.0f} % (drawn at 100 %)")
                    bars.append(bar)
            panels.append(BarPanel(title=g.label, xlabel="CPU busy, % of all cores",
                                   rows=rows, bars=bars, xmax=100.0,
                                   series=list(CPU_SERIES) + ([TOOLS_SERIES] if own else [])))
        legend = [LegendItem("sending host (/proc/stat)", "#555555", "bar"),
                  LegendItem("receiving host (/proc/stat)", "#aaaaaa", "bar")]
        if own:
            legend.append(LegendItem(TOOLS_SERIES.label + " (does not rank)", "#dddddd",
                                     "bar"))
        legend.append(LegendItem("lowest to highest repetition", "#000000", "whisker"))
        notes = []
        kinds = sorted({re.sub(r"(over (all )?the|over all) \d+ ", r"\1 ", c.statistic)
                        for c in configs if c.ok})
        if kinds:
            notes.append(f"CPU taken over: {'; '.join(kinds)}.")
        if tool_cpu:
            legend.append(LegendItem(f"{display_name(tool)}'s own CPU figure", "#000000",
                                     "diamond"))
            notes.append(tool_cpu_source(configs, tool))
        notes += over
        figures.append(Figure(
            id=slug("cpu", tool, protocol, test), family=ChartKind.CPU,
            title=f"{chart_title(tool, protocol, test)}: CPU load",
            caption=("Both hosts' CPU (/proc/stat, % of all cores) at the speed chart's "
                     "figure, rows in its order; whisker: lowest to highest repetition."),
            panels=list(panels), entries=[e.key for e in order], legend=legend,
            notes=notes))
    return figures


def cost_figures(ix: Index) -> list[Figure]:
    """Speed against CPU: what each adapter's figure costs the busier host."""
    figures = []
    for (tool, protocol, test), configs in ix.charts(Shape.RATE, own_sections=False).items():
        groups = sorted_groups(c.group for c in configs)
        panels = []
        for g in groups:
            dots = []
            for c in configs:
                if c.group.key != g.key:
                    continue
                v, cpu = selected(c), busier_cpu(c)
                if v is None or cpu is None:
                    continue
                dots.append(Dot(x=cpu, y=v, colour=c.entry.colour, marker=c.entry.marker,
                                label=c.entry.label, entry=c.entry.key))
            panels.append(ScatterPanel(title=g.label, xlabel="CPU of the busier host, %",
                                       ylabel="Mbit/s", dots=dots, xmax=100.0, ymax=0.0))
        if not any(p.dots for p in panels):
            continue
        top = axis_max([d.y for p in panels for d in p.dots]
                       + [(c.limit_bps or 0) / MBIT for c in configs])
        for p in panels:
            p.ymax = top
        keys = {d.entry for p in panels for d in p.dots}
        figures.append(Figure(
            id=slug("cost", tool, protocol, test), family=ChartKind.COST,
            title=f"{chart_title(tool, protocol, test)}: speed against CPU",
            caption=("Each dot is an adapter at one point: its selected speed against the "
                     "busier host's CPU. Up and to the left is fast and cheap."),
            panels=list(panels), entries=[e.key for e in ix.entries if e.key in keys],
            columns=2 if len(panels) > 1 else 1,
            legend=[LegendItem(e.label, e.colour, e.marker) for e in ix.entries
                    if e.key in keys] if len(keys) <= 12 else []))
    return figures


def busier_cpu(c: Config) -> float | None:
    vals = [v for v in (c.shown_cpu(CpuPart.SENDER_BUSY), c.shown_cpu(CpuPart.RECEIVER_BUSY))
            if v is not None]
    return max(vals) if vals else None


def cpu_note(ix: Index, figures: list[Figure]) -> str:
    """The CPU section's note, said once atop it: the hosts are one machine (when they
    are), and which CPU figure ranks."""
    text = shared_hosts(ix)
    if any(s.key == TOOLS_SERIES.key for f in figures for p in f.panels
           if isinstance(p, BarPanel) for s in p.series):
        text += (" " if text else "") + (
            "Each row's third, lightest bar is the tools' own processes on both hosts; "
            "the verdict's CPU cost (Mbit/s per CPU %) is the busier host's /proc/stat "
            "load, the first two bars, not it.")
    return text


def shared_hosts(ix: Index) -> str:
    for run in ix.runs:
        if run.manifest is None:
            continue
        seen: dict[tuple[object, object], list[str]] = defaultdict(list)
        for name, facts in run.manifest.hosts.items():
            if facts.hostname:
                seen[(facts.hostname, facts.kernel)].append(name)
        for (hostname, _), names in seen.items():
            if len(names) > 1:
                return (f"Hosts {', '.join(sorted(names))} report the same machine "
                        f"(hostname '{hostname}', same kernel): in the lab the hosts are "
                        "namespaces of one machine, so sender and receiver /proc/stat are "
                        "the same CPUs and the two bars show the same load. " + SHARED_CPU)
    return ""


# What the lab's CPU figures are, measured (issue 18): /proc/stat counts the whole
# machine, so on a machine shared with other work they say how busy it was, not what the
# transfer cost.
SHARED_CPU = (
    "That load is the whole machine's, whatever else runs on it: on the lab's 2-core "
    "machine, shared with other test runs, iperf 2 on the fe link (94 Mbit/s, MTU 1500, "
    "1 s runs, about 220 jiffies of CPU time per run, so 0.5 % resolution) read 97-100 % "
    "busy in /proc/stat while its own client and server processes took 6-14 jiffies (3-6 "
    "%); the rest were other users' processes. The 5-100 % swing of such figures over "
    "repetitions at the same speed is that other load, not the card. Each trial now also "
    "records the tools' own share and the rest of the machine's load over the same window "
    "(trials.jsonl's cpu: each host's tool and other); the verdict ranks by CPU only where "
    "the spread over the repetitions is narrow and the other load is at most 10 points.")


def tool_cpu_source(configs: list[Config], tool: str) -> str:
    sides, bases = set(), set()
    for c in configs:
        for r in c.ok:
            if r.cpu_tool_pct is not None:
                if r.extra.get("side"):
                    sides.add(str(r.extra["side"]))
                if r.extra.get("cpu_pct_basis"):
                    bases.add(str(r.extra["cpu_pct_basis"]))
    text = f"Diamond: the CPU load {display_name(tool)} itself printed"
    words = TOOLS[tool].cpu_words if tool in TOOLS else ""
    if words:                  # the tool's own words for its figure
        text += f" ({words}"
        text += f", on the {'/'.join(sorted(sides))} side)" if sides else ")"
    elif bases:
        text += f" ({'; '.join(sorted(bases))})"
    elif sides:
        text += f" ({'/'.join(sorted(sides))} side)"
    return text + ", not /proc/stat."


def limit_cells(c: Config) -> tuple[str, str]:
    """(limit in Mbit/s, how far the value is above it) for the tables."""
    limit = c.limit_bps
    top = max((v for v in (c.row.selected_bps, c.row.max_bps) if v is not None and v == v),
              default=None)
    flag = ""
    if top is not None and limit and c.above_limit(top / MBIT):
        flag = f"{100 * (top / limit - 1):.1f} % above"
    return fmt(mbit(limit)), flag


__all__ = ["cost_figures", "cpu_figures", "heatmap_figures", "speed_figures", "tool_title"]
