"""From results directories to the report's data: entries, figure models, tables, failures.

One function per chart family, each returning models (``model.py``) that say exactly what
the chart shows; nothing here draws.

Entries and their names
    An entry is an adapter on one pair in one run, named by the trials' ``adapter_label``
    ("model (driver version)"). When several entries share a label -- the same card and
    driver in two runs (two nights), or on two pairs of one run -- each gets a suffix in
    brackets: the run id when the runs differ (the directory name if the run ids are the
    same too), the pair name when the pairs differ. Colours follow the entries' order
    (directories as given, then pairs in run order) and are the same in every chart.

Bars
    The bar is the configuration's selected value (best, mean or median of the
    repetitions, per the profile's ``select``, as summary.csv has it); the whisker spans
    the repetitions that succeeded (min..max); ``n_ok/n`` counts them against the planned
    repetitions (failed and given-up ones included). A UDP search has no whisker: its bar
    is the rate the search found. A configuration that was refused or failed is a gap
    with a word saying why; the table of failures has the full reason.

Reference lines and flags
    Where the link's rate is known (``theory.link_rate``), each bar carries the link's best
    goodput at its MTU (``theory.goodput_bps``) and a value more than ``FLAG_MARGIN`` above
    it is flagged, with a note saying by how much and, for the lab's emulated links, why
    (the token bucket lets a burst through without per-frame serialization).
"""

from __future__ import annotations

import re
import statistics
import time
from collections import Counter, defaultdict
from typing import Iterable

from nicbench.config.fields import parse_size
from nicbench.results.policy import summarize
from nicbench.report.load import Run
from nicbench.report.model import (Bar, BarPanel, Entry, Failure, Figure, Group, LinePanel,
                                   Reference, Report, Series, Table)
from nicbench.report.theory import (FLAG_MARGIN, goodput_bps, goodput_formula, link_rate,
                                    timestamps_on)
from nicbench.tools.params import resolve

MBIT = 1e6
KBYTE = 1024                  # netio's KByte, and the -l tables'
CURVE_TOOLS = ("netpipe",)    # tools whose result is a curve: not in the speed bar charts
SIZE_TOOLS = ("netio",)       # tools whose result is a per-size table

# Colour per entry, in entry order: matplotlib's tab10 without its grey (grey is for the
# reference lines), then the lighter tab20 shades for reports with many entries.
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5",
           "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5"]
LINESTYLES = ["-", "--", "-.", ":"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
TOOL_NAMES = {"iperf2": "iperf 2", "iperf3": "iperf3", "netpipe": "netPIPE",
              "ntttcp": "NTttcp", "netio": "netio"}

TBF_EXPLANATION = (
    "The lab emulates links with a token bucket (tc tbf): a burst up to the bucket's size "
    "leaves at memory speed, with no per-frame serialization on a wire, so short "
    "messages and the start of a transfer can show rates no real Ethernet link carries. "
    "These values are an artefact of the emulation, kept and flagged rather than hidden.")
REAL_EXPLANATION = (
    "No Ethernet link of this rate can carry this much: check the link rate (the "
    "inventory, or --link-rate) and the tool's raw output.")


# -- entries ----------------------------------------------------------------------------
def build_entries(runs: list[Run], rates: dict[str, float]) -> list[Entry]:
    entries: list[Entry] = []
    for i, run in enumerate(runs):
        order = list(run.manifest.get("pairs") or [])
        for r in run.records:
            if r["pair"] not in order:
                order.append(r["pair"])
        for pair in order:
            first = next((r for r in run.records if r["pair"] == pair), None)
            if first is None:
                continue
            adapter = run.adapter(first["adapter"])
            rate, source = link_rate(pair, adapter, rates)
            entries.append(Entry(
                key=f"{i}/{pair}", run_index=i, run_id=run.run_id, run_name=run.name,
                pair=pair, adapter=first["adapter"],
                adapter_label=first.get("adapter_label") or first["adapter"],
                rate_bps=rate, rate_source=source, emulated=bool(adapter.get("emulated"))))
    _name_entries(entries)
    for j, e in enumerate(entries):
        e.colour = PALETTE[j % len(PALETTE)]
    return entries


def _name_entries(entries: list[Entry]) -> None:
    by_label: dict[str, list[Entry]] = defaultdict(list)
    for e in entries:
        by_label[e.adapter_label].append(e)
    for label, same in by_label.items():
        if len(same) == 1:
            same[0].label = label
            continue
        several_runs = len({e.run_index for e in same}) > 1
        ids_unique = len({e.run_id for e in same}) == len({e.run_index for e in same})
        names_unique = len({e.run_name for e in same}) == len({e.run_index for e in same})
        for e in same:
            parts = []
            if several_runs:
                if ids_unique:
                    parts.append(f"run {e.run_id}")
                elif names_unique:
                    parts.append(e.run_name)
                else:
                    parts.append(f"#{e.run_index + 1} {e.run_name}")
            if sum(1 for o in same if o.run_index == e.run_index) > 1:
                parts.append(f"pair {e.pair}")
            e.label = f"{label} [{', '.join(parts)}]"


# -- helpers ----------------------------------------------------------------------------
def point_label(point: str, mtu: int) -> str:
    if point == f"mtu{mtu}":
        return f"MTU {mtu}"
    m = re.fullmatch(r"frame(\d+)", point)
    if m:
        return f"frame {m.group(1)} (MTU {mtu})"
    return f"{point} (MTU {mtu})"


def _group(point: str, mtu: int) -> Group:
    return Group(key=f"{mtu}:{point}", label=point_label(point, mtu), mtu=mtu)


def _sorted_groups(groups: Iterable[Group]) -> list[Group]:
    unique = {g.key: g for g in groups}
    return sorted(unique.values(), key=lambda g: (g.mtu, g.key))


def _mbit(bps: float | None) -> float | None:
    return None if bps is None or bps != bps else bps / MBIT


def _fmt(value: float | None, digits: int = 1) -> str:
    return "" if value is None or value != value else f"{value:.{digits}f}"


def _select(values: list[float], rule: str) -> float | None:
    """The engine's selection (best | mean | median) of a curve point's or a size's values;
    any other rule (a UDP search's) takes the best."""
    return summarize(values).selected(rule if rule in ("mean", "median") else "best")


def _slug(*parts: str) -> str:
    text = "-".join(p for p in parts if p)
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def tool_title(tool: str, protocol: str) -> str:
    return f"{TOOL_NAMES.get(tool, tool)} {protocol.upper()}"


class Index:
    """The runs' records and summary rows, looked up by configuration."""

    def __init__(self, runs: list[Run], entries: list[Entry]):
        self.runs = runs
        self.entries = entries
        self.entry_of = {(e.run_index, e.pair): e for e in entries}
        self.records: dict[tuple, list[dict]] = defaultdict(list)
        for i, run in enumerate(runs):
            for r in run.records:
                self.records[(i, r["pair"], r["point"], r["test"])].append(r)
        self.rows: list[tuple[int, dict]] = [(i, row) for i, run in enumerate(runs)
                                             for row in run.summary]

    def entry(self, run_index: int, pair: str) -> Entry:
        return self.entry_of[(run_index, pair)]

    def recs(self, run_index: int, row: dict) -> list[dict]:
        return self.records[(run_index, row["pair"], row["point"], row["test"])]

    def ok(self, run_index: int, row: dict) -> list[dict]:
        return [r for r in self.recs(run_index, row)
                if r["status"] == "ok" and r.get("throughput_bps") is not None]

    def planned(self, run_index: int, row: dict) -> int:
        recs = self.recs(run_index, row)
        if any(r["kind"] == "udp-search" for r in recs):
            return sum(1 for r in recs if r["kind"] == "udp-search")
        not_run = sum(int(r.get("not_run") or 0)
                      for r in recs if r["kind"] == "given-up")
        reps = sum(1 for r in recs if r["kind"] == "repetition")
        if reps == 0 and any(r["kind"] == "skipped" for r in recs):
            spec = self.runs[run_index].test_spec(row["test"])
            profile = self.runs[run_index].profile
            return int(spec.get("repetitions") or profile.get("repetitions") or 0)
        return reps + not_run

    def limit(self, run_index: int, row: dict, mtu: int | None = None) -> float | None:
        e = self.entry(run_index, row["pair"])
        if not e.rate_bps:
            return None
        run = self.runs[run_index]
        ts = timestamps_on(run.profile, run.point_spec(row["point"]))
        return goodput_bps(e.rate_bps, mtu or row["mtu"], row["protocol"], ts)

    def chart_keys(self, tools: Iterable[str] | None = None) -> dict[tuple, list[tuple[int, dict]]]:
        """Rows by chart: one chart per (tool, protocol), split by test name where a
        profile has two tests with the same tool and protocol."""
        wanted = set(tools) if tools is not None else None
        per_run: dict[tuple, set] = defaultdict(set)
        for i, row in self.rows:
            per_run[(i, row["tool"], row["protocol"])].add(row["test"])
        charts: dict[tuple, list[tuple[int, dict]]] = defaultdict(list)
        for i, row in self.rows:
            if wanted is not None and row["tool"] not in wanted:
                continue
            split = len(per_run[(i, row["tool"], row["protocol"])]) > 1
            key = (row["tool"], row["protocol"], row["test"] if split else "")
            charts[key].append((i, row))
        # tools in a fixed order; tests of one tool in the order the profiles list them
        return dict(sorted(charts.items(), key=lambda kv: _tool_order(kv[0])[0]))


def _tool_order(key: tuple) -> tuple:
    order = list(TOOL_NAMES)
    tool = key[0]
    return (order.index(tool) if tool in order else len(order), key)


def _test_order(ix: Index, run_index: int, row: dict) -> int:
    names = [t.get("name") for t in ix.runs[run_index].profile.get("tests") or []]
    return names.index(row["test"]) if row["test"] in names else len(names)


def _gap_word(row: dict, recs: list[dict]) -> str:
    if row["status"] == "skipped":
        if any(r.get("kernel_message") for r in recs) or \
                "MTU" in (row.get("reason") or ""):
            return "refused"
        return "skipped"
    reason = " ".join(r.get("reason") or "" for r in recs if r["status"] != "ok").lower()
    if "timeout" in reason or "timed out" in reason:
        return "timed out"
    if "stalled" in reason or "dead" in reason:
        return "stalled"
    return "failed"


def _flag_text(entry: Entry, group_label: str, what: str, value: float, limit: float,
               rate_mbit: float | None) -> str:
    over = 100.0 * (value / limit - 1.0)
    text = (f"{entry.label}, {group_label}: {what} {value:.1f} Mbit/s is {over:.1f} % above "
            f"the link's goodput limit of {limit:.1f} Mbit/s")
    if rate_mbit and value > rate_mbit:
        text += f", and above the line rate itself ({rate_mbit:g} Mbit/s)"
    return text


# -- speed and CPU bar charts -------------------------------------------------------------
def speed_figures(ix: Index) -> list[Figure]:
    exclude = set(CURVE_TOOLS) | set(SIZE_TOOLS)
    tools = {row["tool"] for _, row in ix.rows} - exclude
    figures = []
    for (tool, protocol, test), rows in ix.chart_keys(tools).items():
        title = f"{tool_title(tool, protocol)} throughput" + (f": test {test}" if test else "")
        fig_id = _slug("speed", tool, protocol, test)
        panel, notes = _throughput_panel(ix, rows, title)
        rules = sorted({row["select"] for _, row in rows})
        figures.append(Figure(
            id=fig_id, family="speed", title=title,
            caption=_bar_caption(rules, protocol, ix, rows),
            panels=[panel], entries=panel.entries, notes=notes))
    return figures


def _bar_caption(rules: list[str], protocol: str, ix: Index, rows) -> str:
    sel = ", ".join(r.replace("udp-", "UDP search ") for r in rules)
    text = (f"Bars: the selected value ({sel}); whiskers: lowest to highest repetition that "
            "succeeded; n = repetitions that succeeded / planned.")
    if any(ix.entry(i, row["pair"]).rate_bps for i, row in rows):
        ts = {timestamps_on(ix.runs[i].profile, ix.runs[i].point_spec(row["point"]))
              for i, row in rows}
        formulas = ", ".join(sorted(goodput_formula(protocol, t) for t in ts))
        text += (f" Dashed segments: the link's best {protocol.upper()} goodput, {formulas}, "
                 f"R the line rate; values more than {FLAG_MARGIN:.0%} above it are hatched "
                 "and listed below.")
    return text


def _throughput_panel(ix: Index, rows: list[tuple[int, dict]], title: str,
                      ylabel: str = "throughput, Mbit/s") -> tuple[BarPanel, list[str]]:
    groups = _sorted_groups(_group(row["point"], row["mtu"]) for _, row in rows)
    glabel = {g.key: g.label for g in groups}
    entries = _entry_order(ix, rows)
    bars, notes, explain = [], [], set()
    for i, row in rows:
        e = ix.entry(i, row["pair"])
        recs = ix.recs(i, row)
        gkey = _group(row["point"], row["mtu"]).key
        search = str(row.get("select") or "").startswith("udp-")
        n = ix.planned(i, row)
        value = _mbit(row.get("selected_bps"))
        bar = Bar(entry=e.key, group=gkey, value=value, n_ok=int(row["n_ok"]), n=n,
                  status=row["status"])
        if not search and value is not None:
            bar.lo, bar.hi = _mbit(row.get("min_bps")), _mbit(row.get("max_bps"))
        limit_bps = ix.limit(i, row)
        if limit_bps:
            bar.limit = limit_bps / MBIT
            bar.line_rate = e.rate_bps / MBIT
        if value is None:
            bar.gap = _gap_word(row, recs)
            bar.text = bar.gap if row["status"] == "skipped" else f"{bar.gap} (0/{n})"
        else:
            bar.text = f"{value:.1f} ({bar.n_ok}/{n})" if not search else \
                f"{value:.1f} (search, {n} trials)"
            top = max(v for v in (value, bar.hi) if v is not None)
            if bar.limit and top > bar.limit * (1 + FLAG_MARGIN):
                what = "best repetition" if top != value else "value"
                bar.flag = _flag_text(e, glabel[gkey], what, top, bar.limit, bar.line_rate)
                bar.text = "! " + bar.text
                notes.append(bar.flag + ".")
                explain.add(TBF_EXPLANATION if e.emulated else REAL_EXPLANATION)
        bars.append(bar)
    limit_label = "theoretical goodput of the link" if any(b.limit for b in bars) else ""
    panel = BarPanel(title=title, ylabel=ylabel, groups=groups, entries=entries, bars=bars,
                     limit_label=limit_label)
    return panel, notes + sorted(explain)


def _entry_order(ix: Index, rows) -> list[str]:
    keys = {ix.entry(i, row["pair"]).key for i, row in rows}
    return [e.key for e in ix.entries if e.key in keys]


def cpu_figures(ix: Index) -> list[Figure]:
    figures = []
    shared = _shared_hosts(ix.runs)
    for (tool, protocol, test), rows in ix.chart_keys().items():
        title = f"CPU load during {tool_title(tool, protocol)}" + (f": test {test}" if test else "")
        panels = [
            _cpu_panel(ix, rows, "sending host", "cpu_sender_pct",
                       "sender, % busy (/proc/stat)"),
            _cpu_panel(ix, rows, "receiving host", "cpu_receiver_pct",
                       "receiver, % busy (/proc/stat)")]
        tool_panel = _cpu_panel(ix, rows, f"{TOOL_NAMES.get(tool, tool)}'s own figure",
                                "cpu_tool_pct", "% (as the tool reports it)")
        notes = []
        if any(b.value is not None for b in tool_panel.bars):
            panels.append(tool_panel)
            notes.append(_tool_cpu_source(ix, rows, tool))
        if not any(b.value is not None for p in panels for b in p.bars):
            continue
        if shared:
            notes.append(shared)
        entries = _entry_order(ix, rows)
        figures.append(Figure(
            id=_slug("cpu", tool, protocol, test), family="cpu", title=title,
            caption=("Bars: mean CPU load over the repetitions that succeeded; whiskers: "
                     "lowest to highest. /proc/stat: share of all CPUs busy on the host "
                     "while the sender ran."),
            panels=panels, entries=entries, notes=notes))
    return figures


def _shared_hosts(runs: list[Run]) -> str:
    for run in runs:
        hosts = run.manifest.get("hosts") or {}
        seen: dict[tuple, list[str]] = defaultdict(list)
        for name, facts in hosts.items():
            if facts.get("hostname"):
                seen[(facts.get("hostname"), facts.get("kernel"))].append(name)
        for (hostname, _), names in seen.items():
            if len(names) > 1:
                return (f"Hosts {', '.join(sorted(names))} report the same machine "
                        f"(hostname '{hostname}', same kernel): in the lab the hosts are "
                        "namespaces of one machine, so sender and receiver /proc/stat are "
                        "the same CPUs and the two panels show the same load.")
    return ""


def _tool_cpu_source(ix: Index, rows, tool: str) -> str:
    sides, bases = set(), set()
    for i, row in rows:
        for r in ix.ok(i, row):
            extra = r.get("extra") or {}
            if r.get("cpu_tool_pct") is not None:
                if extra.get("side"):
                    sides.add(str(extra["side"]))
                if extra.get("cpu_pct_basis"):
                    bases.add(str(extra["cpu_pct_basis"]))
    text = f"Tool's own figure: the CPU load {TOOL_NAMES.get(tool, tool)} itself printed"
    if tool == "iperf3":
        text += " (cpu_utilization_percent host_total: the iperf3 process's own CPU time"
        text += f", on the {'/'.join(sorted(sides))} side)" if sides else ")"
    elif bases:
        text += f" ({'; '.join(sorted(bases))})"
    elif sides:
        text += f" ({'/'.join(sorted(sides))} side)"
    return text + ", not /proc/stat."


def _cpu_panel(ix: Index, rows, title: str, field: str, ylabel: str) -> BarPanel:
    groups = _sorted_groups(_group(row["point"], row["mtu"]) for _, row in rows)
    bars = []
    for i, row in rows:
        e = ix.entry(i, row["pair"])
        values = [r[field] for r in ix.ok(i, row) if r.get(field) is not None]
        bar = Bar(entry=e.key, group=_group(row["point"], row["mtu"]).key,
                  value=statistics.fmean(values) if values else None,
                  lo=min(values) if values else None, hi=max(values) if values else None,
                  n_ok=len(values), n=ix.planned(i, row), status=row["status"])
        if bar.value is None:
            bar.gap = _gap_word(row, ix.recs(i, row)) if row["status"] != "ok" else "no data"
            bar.text = bar.gap
        else:
            bar.text = f"{bar.value:.1f} ({bar.n_ok}/{bar.n})"
        bars.append(bar)
    top = max((b.hi or b.value or 0 for b in bars), default=0)
    return BarPanel(title=title, ylabel=ylabel, groups=groups, entries=_entry_order(ix, rows),
                    bars=bars, ymax=max(100.0, top) * 1.3)


# -- netPIPE ----------------------------------------------------------------------------
def _netpipe_curve(ix: Index, i: int, row: dict) -> list[tuple[float, float]]:
    per_size: dict[int, list[float]] = defaultdict(list)
    for r in ix.ok(i, row):
        for p in r.get("points") or []:
            if p.get("throughput_bps") is not None and p.get("size_bytes"):
                per_size[int(p["size_bytes"])].append(float(p["throughput_bps"]))
    rule = row.get("select") or "best"
    return [(float(s), _select(v, rule) / MBIT) for s, v in sorted(per_size.items())]


def netpipe_figures(ix: Index) -> tuple[list[Figure], list[Table]]:
    figures: list[Figure] = []
    tables: list[Table] = []
    charts = ix.chart_keys(CURVE_TOOLS)
    for (tool, protocol, test), rows in charts.items():
        suffix = f": test {test}" if test else ""
        curves = {}
        for i, row in rows:
            pts = _netpipe_curve(ix, i, row)
            if pts:
                curves[(i, row["pair"], _group(row["point"], row["mtu"]).key)] = (row, pts)
        groups = _sorted_groups(_group(row["point"], row["mtu"]) for _, row in rows)
        style = {g.key: (LINESTYLES[k % len(LINESTYLES)], MARKERS[k % len(MARKERS)])
                 for k, g in enumerate(groups)}
        # one chart per adapter, a curve per MTU
        for e in ix.entries:
            mine = [(g, curves[(e.run_index, e.pair, g.key)]) for g in groups
                    if (e.run_index, e.pair, g.key) in curves]
            if not mine:
                continue
            series, refs, notes = [], [], []
            for g, (row, pts) in mine:
                limit = ix.limit(e.run_index, row)
                flagged = [(x, y) for x, y in pts
                           if limit and y > limit / MBIT * (1 + FLAG_MARGIN)]
                series.append(Series(label=g.label, entry=e.key, points=pts,
                                     linestyle=style[g.key][0], marker=style[g.key][1],
                                     flagged=flagged))
                if limit:
                    refs.append(Reference(limit / MBIT, f"goodput limit, {g.label}: "
                                          f"{limit / MBIT:.1f}", style[g.key][0]))
                if flagged:
                    notes.append(_curve_flag(e, g.label, flagged, limit / MBIT))
            if e.rate_bps:
                refs.append(Reference(e.rate_bps / MBIT,
                                      f"line rate {e.rate_bps / MBIT:g} Mbit/s", ":"))
            if notes:
                notes.append(TBF_EXPLANATION if e.emulated else REAL_EXPLANATION)
            panel = LinePanel(title=f"{e.label}", xlabel="block size, bytes (log scale)",
                              ylabel="throughput, Mbit/s", series=series, references=refs)
            figures.append(Figure(
                id=_slug("netpipe", test, "adapter", str(e.run_index), e.pair),
                family="netpipe-adapter",
                title=f"{tool_title(tool, protocol)} throughput by block size, "
                      f"one curve per MTU: {e.label}{suffix}",
                caption=_curve_caption(rows[0][1].get("select")),
                panels=[panel], entries=[e.key], notes=notes))
        # one chart per MTU, a curve per adapter
        for g in groups:
            mine = [(e, curves[(e.run_index, e.pair, g.key)]) for e in ix.entries
                    if (e.run_index, e.pair, g.key) in curves]
            if not mine:
                continue
            series, notes, explain = [], [], []
            limits: dict[float, str] = {}
            for k, (e, (row, pts)) in enumerate(mine):
                limit = ix.limit(e.run_index, row)
                flagged = [(x, y) for x, y in pts
                           if limit and y > limit / MBIT * (1 + FLAG_MARGIN)]
                series.append(Series(label=e.label, entry=e.key, points=pts,
                                     linestyle="-", marker=MARKERS[k % len(MARKERS)],
                                     flagged=flagged))
                if limit:
                    limits.setdefault(round(limit / MBIT, 3),
                                      f"goodput limit of a {e.rate_bps / MBIT:g} Mbit/s link: "
                                      f"{limit / MBIT:.1f}")
                if flagged:
                    notes.append(_curve_flag(e, g.label, flagged, limit / MBIT))
                    explain.append(TBF_EXPLANATION if e.emulated else REAL_EXPLANATION)
            refs = [Reference(y, label, LINESTYLES[k % len(LINESTYLES)])
                    for k, (y, label) in enumerate(sorted(limits.items(), reverse=True))]
            panel = LinePanel(title=g.label, xlabel="block size, bytes (log scale)",
                              ylabel="throughput, Mbit/s", series=series, references=refs)
            figures.append(Figure(
                id=_slug("netpipe", test, "mtu", str(g.mtu), g.key.split(":", 1)[1]),
                family="netpipe-mtu",
                title=f"{tool_title(tool, protocol)} throughput by block size at "
                      f"{g.label}, one curve per adapter{suffix}",
                caption=_curve_caption(rows[0][1].get("select")),
                panels=[panel], entries=[e.key for e, _ in mine],
                notes=notes + list(dict.fromkeys(explain))))
        # peak per adapter and MTU
        title = f"{tool_title(tool, protocol)} peak throughput{suffix}"
        panel, notes = _throughput_panel(ix, rows, title, "peak throughput, Mbit/s")
        figures.append(Figure(
            id=_slug("netpipe", test, "peak"), family="netpipe-peak", title=title,
            caption=("Bars: the highest throughput of the curve (the selected repetition's "
                     "peak); whiskers: the peaks of the repetitions; dashed segments: the "
                     "link's goodput limit where the rate is known."),
            panels=[panel], entries=panel.entries, notes=notes))
        tables.append(_peak_table(ix, rows, curves, _slug("netpipe", test, "peak"), title))
    return figures, tables


def _curve_caption(rule: str | None) -> str:
    how = {"mean": "mean", "median": "median"}.get(rule or "best", "best")
    return (f"Throughput per block size ({how} over the repetitions that succeeded); "
            "grey lines: the link's goodput limit and line rate where the rate is known; "
            "× marks points above the goodput limit.")


def _curve_flag(e: Entry, glabel: str, flagged: list[tuple[float, float]],
                limit: float) -> str:
    sizes = [int(x) for x, _ in flagged]
    peak_x, peak_y = max(flagged, key=lambda p: p[1])
    return (f"{e.label}, {glabel}: {len(flagged)} block sizes from {min(sizes)} to "
            f"{max(sizes)} bytes are above the link's goodput limit of {limit:.1f} Mbit/s "
            f"(highest {peak_y:.1f} Mbit/s at {int(peak_x)} bytes"
            + (f", above the line rate {e.rate_bps / MBIT:g} Mbit/s" if e.rate_bps and
               peak_y > e.rate_bps / MBIT else "") + ").")


def _peak_table(ix: Index, rows, curves, table_id: str, title: str) -> Table:
    t = Table(id=table_id, family="netpipe-peak", title=title + " (table)",
              columns=["adapter", "point", "peak Mbit/s", "at block size, bytes",
                       "n", "goodput limit Mbit/s", "above the limit"])
    for i, row in sorted(rows, key=lambda ir: (_group(ir[1]["point"], ir[1]["mtu"]).mtu,
                                               ix.entries.index(ix.entry(ir[0], ir[1]["pair"])))):
        e = ix.entry(i, row["pair"])
        pts = curves.get((i, row["pair"], _group(row["point"], row["mtu"]).key), (None, []))[1]
        at = max(pts, key=lambda p: p[1])[0] if pts else None
        limit = ix.limit(i, row)
        peak = _mbit(row.get("selected_bps"))
        above = ""
        if peak is not None and limit and peak > limit / MBIT * (1 + FLAG_MARGIN):
            above = f"+{100 * (peak / (limit / MBIT) - 1):.1f} %"
        t.rows.append([e.label, point_label(row["point"], row["mtu"]),
                       _fmt(peak) or row["status"], int(at) if at else "",
                       f"{row['n_ok']}/{ix.planned(i, row)}",
                       _fmt(limit / MBIT if limit else None), above])
        t.row_entries.append(e.key)
    return t


# -- tables -----------------------------------------------------------------------------
def summary_table(ix: Index) -> Table:
    t = Table(id="summary", family="summary", title="Every configuration",
              columns=["adapter", "test", "tool", "point", "status", "n", "select",
                       "selected Mbit/s", "median", "min", "max", "stdev", "goodput limit",
                       "CPU sender %", "CPU receiver %", "tool CPU %", "above the limit"],
              caption="One row per configuration (adapter, point, test) of every run; "
                      "throughput in Mbit/s; CPU is the mean over the repetitions that "
                      "succeeded.")
    order = {e.key: k for k, e in enumerate(ix.entries)}
    for i, row in sorted(ix.rows, key=lambda ir: (
            _tool_order((ir[1]["tool"],))[0], _test_order(ix, *ir), ir[1]["test"],
            ir[1]["mtu"], order[ix.entry(ir[0], ir[1]["pair"]).key])):
        e = ix.entry(i, row["pair"])
        limit = ix.limit(i, row)
        top = max((v for v in (row.get("selected_bps"), row.get("max_bps"))
                   if v is not None and v == v), default=None)
        flag = ""
        if top is not None and limit and top > limit * (1 + FLAG_MARGIN):
            flag = f"+{100 * (top / limit - 1):.1f} %"
        t.rows.append([e.label, row["test"], tool_title(row["tool"], row["protocol"]),
                       point_label(row["point"], row["mtu"]), row["status"],
                       f"{row['n_ok']}/{ix.planned(i, row)}", row["select"],
                       _fmt(_mbit(row.get("selected_bps"))), _fmt(_mbit(row.get("median_bps"))),
                       _fmt(_mbit(row.get("min_bps"))), _fmt(_mbit(row.get("max_bps"))),
                       _fmt(_mbit(row.get("stdev_bps")), 2),
                       _fmt(_mbit(limit)), _fmt(row.get("cpu_local_pct")),
                       _fmt(row.get("cpu_remote_pct")), _fmt(row.get("cpu_tool_pct")), flag])
        t.row_entries.append(e.key)
    return t


def netio_tables(ix: Index) -> list[Table]:
    """netio's method: per client machine, a row per adapter, KB/s at each packet size,
    then the client's CPU load."""
    tables = []
    groups: dict[tuple, list[tuple[int, dict]]] = defaultdict(list)
    for i, row in ix.rows:
        if row["tool"] != "netio":
            continue
        client = next((r.get("hosts", {}).get("sender") for r in ix.recs(i, row)
                       if (r.get("hosts") or {}).get("sender")), "?")
        groups[(row["test"], row["protocol"], row["mtu"], row["point"], client)].append((i, row))
    for (test, protocol, mtu, point, client), rows in sorted(groups.items(),
                                                              key=lambda kv: str(kv[0])):
        sizes = sorted({int(p["size_bytes"]) for i, row in rows for r in ix.ok(i, row)
                        for p in r.get("points") or [] if p.get("size_bytes")})
        has_rx = any(p.get("rx_bps") is not None for i, row in rows for r in ix.ok(i, row)
                     for p in r.get("points") or [])
        columns = ["adapter"]
        for s in sizes:
            columns.append(f"{_size_label(s)} Tx KB/s")
            if has_rx:
                columns.append(f"{_size_label(s)} Rx KB/s")
        columns += ["n", "CPU % (client, /proc/stat)", "CPU % (tool)"]
        t = Table(id=_slug("netio", test, point, client), family="netio",
                  title=f"netio {protocol.upper()}, client {client}, "
                        f"{point_label(point, mtu)}: test {test}",
                  columns=columns,
                  caption="KB/s = 1024 bytes per second, as netio prints it; each cell is "
                          "the selected value (per the profile's select, the netio method "
                          "averages) of the repetitions that succeeded.")
        for i, row in rows:
            e = ix.entry(i, row["pair"])
            rule = row["select"]
            cells: list = [e.label]
            oks = ix.ok(i, row)
            for s in sizes:
                for key in ("tx_bps", "rx_bps") if has_rx else ("tx_bps",):
                    v = _select(_size_values(oks, s, key), rule)
                    cells.append(_fmt(v / 8 / KBYTE if v is not None else None, 0)
                                 or row["status"])
            cpu = [r["cpu_sender_pct"] for r in oks if r.get("cpu_sender_pct") is not None]
            tcpu = [r["cpu_tool_pct"] for r in oks if r.get("cpu_tool_pct") is not None]
            cells += [f"{row['n_ok']}/{ix.planned(i, row)}",
                      _fmt(statistics.fmean(cpu) if cpu else None),
                      _fmt(statistics.fmean(tcpu) if tcpu else None)]
            t.rows.append(cells)
            t.row_entries.append(e.key)
        tables.append(t)
    return tables


def _size_values(records: list[dict], size: int, key: str) -> list[float]:
    """One size's Tx (or Rx) rates over the repetitions; a point's Tx is its throughput."""
    vals = []
    for r in records:
        for p in r.get("points") or []:
            if int(p.get("size_bytes") or 0) != size:
                continue
            v = p.get(key)
            if v is None and key == "tx_bps":
                v = p.get("throughput_bps")
            if v is not None:
                vals.append(float(v))
    return vals


def _size_label(size: int) -> str:
    if size % (1024 * 1024) == 0:
        return f"{size // (1024 * 1024)}M"
    if size % 1024 == 0:
        return f"{size // 1024}K"
    return str(size)


def length_tables(ix: Index) -> list[Table]:
    """iperf tests run at several -l sizes: a netio-style table (KB/s per size, then CPU)."""
    families: dict[tuple, list[tuple[int, dict, int]]] = defaultdict(list)
    for i, row in ix.rows:
        if row["tool"] not in ("iperf2", "iperf3"):
            continue
        run = ix.runs[i]
        spec = run.test_spec(row["test"])
        params = dict(spec.get("params") or {})
        point = run.point_spec(row["point"])
        try:
            resolved = resolve(params, point.get("vars") or {})
        except KeyError:
            continue
        if resolved.get("length") is None:
            continue
        try:
            length = parse_size(resolved["length"])
        except ValueError:
            continue
        rest = tuple(sorted((k, str(v)) for k, v in resolved.items() if k != "length"))
        families[(row["tool"], row["protocol"], rest)].append((i, row, length))
    tables = []
    for (tool, protocol, rest), items in sorted(families.items(), key=lambda kv: str(kv[0])):
        lengths = sorted({length for _, _, length in items})
        if len(lengths) < 2:
            continue
        rows: dict[tuple, dict] = {}
        for i, row, length in items:
            e = ix.entry(i, row["pair"])
            cell = rows.setdefault((ix.entries.index(e), row["mtu"], row["point"]),
                                   {"entry": e, "row": row, "by": {}, "cpu": [], "cpur": []})
            cell["by"][length] = row
            if row.get("cpu_local_pct") is not None:
                cell["cpu"].append(row["cpu_local_pct"])
            if row.get("cpu_remote_pct") is not None:
                cell["cpur"].append(row["cpu_remote_pct"])
        params = ", ".join(f"{k}={v}" for k, v in rest)
        t = Table(id=_slug("length", tool, protocol, *(f"{k}{v}" for k, v in rest)),
                  family="iperf-length",
                  title=f"{tool_title(tool, protocol)} at several -l sizes"
                        + (f" ({params})" if params else ""),
                  columns=["adapter", "point"] + [f"-l {_size_label(s)} KB/s" for s in lengths]
                  + ["CPU % sender", "CPU % receiver"],
                  caption="KB/s = 1024 bytes per second of the selected value of each test, "
                          "netio-style; CPU: mean over the sizes' tests (/proc/stat).")
        for (_, mtu, point), cell in sorted(rows.items()):
            cells = [cell["entry"].label, point_label(point, mtu)]
            for s in lengths:
                r = cell["by"].get(s)
                if r is None:
                    cells.append("")
                    continue
                v = r.get("selected_bps")
                cells.append(_fmt(v / 8 / KBYTE, 0) if v is not None and v == v
                             else r["status"])
            cells += [_fmt(statistics.fmean(cell["cpu"]) if cell["cpu"] else None),
                      _fmt(statistics.fmean(cell["cpur"]) if cell["cpur"] else None)]
            t.rows.append(cells)
            t.row_entries.append(cell["entry"].key)
        tables.append(t)
    return tables


def failures(ix: Index) -> list[Failure]:
    out = []
    order = {e.key: k for k, e in enumerate(ix.entries)}
    for i, row in sorted(ix.rows, key=lambda ir: (order[ix.entry(ir[0], ir[1]["pair"]).key],
                                                  ir[1]["mtu"], _test_order(ix, *ir))):
        recs = ix.recs(i, row)
        bad = [r for r in recs if r["status"] != "ok" or r["kind"] == "given-up"]
        if row["status"] == "ok" and not bad:
            continue
        reasons = Counter((r.get("reason") or "no reason recorded") for r in bad)
        kernel = next((r.get("kernel_message") for r in bad if r.get("kernel_message")),
                      None)
        out.append(Failure(entry=ix.entry(i, row["pair"]).key, test=row["test"],
                           tool=row["tool"], point=row["point"], mtu=row["mtu"],
                           status=row["status"], n_ok=int(row["n_ok"]),
                           n=ix.planned(i, row), reasons=reasons.most_common(),
                           kernel_message=kernel))
    return out


def failures_table(ix: Index, fails: list[Failure]) -> Table:
    t = Table(id="failures", family="failures", title="Failed and skipped configurations",
              columns=["adapter", "point", "test", "status", "n ok", "reason"])
    by_key = {e.key: e for e in ix.entries}
    for f in fails:
        e = by_key[f.entry]
        reason = "; ".join(f"{r}" + (f" (×{c})" if c > 1 else "") for r, c in f.reasons)
        t.rows.append([e.label, point_label(f.point, f.mtu), f.test, f.status,
                       f"{f.n_ok}/{f.n}", reason])
        t.row_entries.append(e.key)
    return t


def entries_table(entries: list[Entry]) -> Table:
    t = Table(id="entries", family="entries", title="Adapters in this report",
              columns=["colour", "adapter (chart label)", "adapter id", "pair", "run",
                       "directory", "line rate", "rate from"])
    for e in entries:
        t.rows.append([e.colour, e.label, e.adapter, e.pair, e.run_id, e.run_name,
                       f"{e.rate_bps / MBIT:g} Mbit/s" if e.rate_bps else "unknown",
                       e.rate_source])
        t.row_entries.append(e.key)
    return t


# -- setup ------------------------------------------------------------------------------
def _when(ts) -> str:
    if not isinstance(ts, (int, float)):
        return ""
    return time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(ts))


def setup_of(ix: Index) -> list[dict]:
    out = []
    for i, run in enumerate(ix.runs):
        m = run.manifest
        profile = run.profile
        entries = [e for e in ix.entries if e.run_index == i]
        pairs = {p.get("name"): p for p in (run.inventory.get("pairs") or [])}
        versions: dict[str, set] = defaultdict(set)
        for r in run.records:
            if r.get("version"):
                versions[r["tool"]].add(str(r["version"]))
        commands: dict[tuple, list[dict]] = defaultdict(list)
        for r in run.records:
            if r.get("commands"):
                commands[(r["pair"], r["point"], r["test"])].append(r)
        cmd_rows = []
        for (pair, point, test), recs in commands.items():
            first = recs[0]
            distinct = {(c.get("server"), c.get("client"))
                        for c in (r["commands"] for r in recs)}
            cmd_rows.append({
                "entry": ix.entry(i, pair).label, "point": point_label(point, first["mtu"]),
                "test": test, "server": first["commands"].get("server", ""),
                "client": first["commands"].get("client", ""),
                "hosts": first.get("hosts") or {},
                "trials": len(recs), "variants": len(distinct)})
        started = [r.get("started_at") for r in run.records if r.get("started_at")]
        ended = [r.get("ended_at") for r in run.records if r.get("ended_at")]
        out.append({
            "index": i, "run_id": run.run_id, "dir": str(run.path), "name": run.name,
            "profile": profile.get("name") or "", "profile_file": m.get("profile_file") or "",
            "source": profile.get("source") or "",
            "description": (profile.get("description") or "").strip(),
            "select": profile.get("select") or "", "repetitions": profile.get("repetitions"),
            "nicbench_version": m.get("nicbench_version") or "",
            "inventory_file": m.get("inventory_file") or "",
            "started": _when(m.get("started_at") or (min(started) if started else None)),
            "ended": _when(m.get("ended_at") or (max(ended) if ended else None)),
            "resumed": [_when(t) for t in m.get("resumed_at") or []],
            "hosts": m.get("hosts") or {}, "tools": m.get("tools") or {},
            "record_versions": {k: sorted(v) for k, v in versions.items()},
            "interfaces": m.get("interfaces") or {},
            "adapters": [dict(run.adapter(e.adapter), entry=e.label,
                              pair=pairs.get(e.pair, {})) for e in entries],
            "tests": profile.get("tests") or [], "points": profile.get("points") or [],
            "sysctl": profile.get("sysctl") or {},
            "restore_problems": m.get("restore_problems") or [],
            "commands": cmd_rows, "no_manifest": not m,
            "torn_lines": run.skipped_lines,
        })
    return out


# -- the whole report ---------------------------------------------------------------------
def build(runs: list[Run], rates: dict[str, float] | None = None) -> Report:
    entries = build_entries(runs, rates or {})
    ix = Index(runs, entries)
    figures = speed_figures(ix) + cpu_figures(ix)
    np_figures, np_tables = netpipe_figures(ix)
    figures += np_figures
    fails = failures(ix)
    tables = ([entries_table(entries), summary_table(ix)] + netio_tables(ix)
              + length_tables(ix) + np_tables + [failures_table(ix, fails)])
    notes = []
    dup = [e for e in entries if e.label != e.adapter_label]
    if dup:
        notes.append("The same adapter appears more than once; each is told apart by a "
                     "suffix in brackets: the run id when it comes from different runs "
                     "(the directory name when the run ids are equal too), the pair when "
                     "one run tested it on several pairs.")
    return Report(entries=entries, figures=figures, tables=tables, failures=fails,
                  setup=setup_of(ix), notes=notes, created_at=time.time())
