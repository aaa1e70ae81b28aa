"""The report's tables: adapters, every configuration, netio-style tables per packet size.

- ``entries_table``: each adapter's colour, marker, run and where its line rate came from;
- ``summary_table``: one row per configuration, the engine's figures (summary.csv) with
  the limit and the CPU of the repetitions shown (their median);
- ``netio_tables``: netio's method (Arnold, 2002): per client machine a row per adapter,
  KB/s at each packet size, then the client's CPU load;
- ``length_tables``: iperf tests run at several ``-l`` sizes, laid out the same way.
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from nicbench.config.fields import parse_size
from nicbench.report.bars import limit_cells
from nicbench.report.configs import (MBIT, Config, Index, fmt, mbit, point_label, slug,
                                     tool_title, tools_with)
from nicbench.report.latency import below_floor, cell, floor_words, latency_ok
from nicbench.report.model import Entry, Table
from nicbench.results.records import CpuPart
from nicbench.results.policy import summarize
from nicbench.tools.params import resolve
from nicbench.tools.registry import TOOLS, takes
from nicbench.tools.driver import Shape

KBYTE = 1024                  # netio's KByte, and the -l tables'


def entries_table(entries: list[Entry]) -> Table:
    t = Table(id="entries", family="entries", title="Adapters in this report",
              columns=["colour", "adapter (chart label)", "adapter id", "pair", "run",
                       "run id", "directory", "line rate", "rate from"])
    for e in entries:
        t.rows.append([e.colour, e.label, e.adapter, e.pair, e.run_label, e.run_id,
                       e.run_name, f"{e.rate_bps / MBIT:g} Mbit/s" if e.rate_bps else "unknown",
                       e.rate_source])
        t.row_entries.append(e.key)
    return t


def summary_table(ix: Index) -> Table:
    t = Table(id="summary", family="summary", title="Every configuration",
              columns=["adapter", "test", "tool", "point", "status", "n", "select",
                       "selected", "median", "min", "max", "stdev", "goodput limit",
                       "CPU sender %", "CPU receiver %", "tool CPU %", "beyond the wire"],
              caption="One row per configuration (adapter, point, test) of every run, as "
                      "the engine summarised it (summary.csv): throughput in Mbit/s; CPU: "
                      "the median over the repetitions within the tool's printed resolution "
                      "of the selected value; for netPIPE the selected "
                      "value is its burst maximum (the plateau is in the netPIPE section). "
                      "A latency test (round trips, lower is better) gives its p50 and p99 "
                      "in us (each by select over the repetitions' own) and the round trips "
                      "they counted, then the spread of the repetitions' p50s; no goodput "
                      "limit applies to it, the wire's minimum round trip does.")
    tools = list(TOOLS)
    for c in sorted(ix.configs, key=lambda c: (
            tools.index(c.tool) if c.tool in tools else len(tools), ix.test_order(c), c.test,
            c.mtu, ix.order[c.entry.key])):
        row = c.row
        limit, flag = limit_cells(c)
        figures = [fmt(mbit(row.selected_bps)), fmt(mbit(row.median_bps)),
                   fmt(mbit(row.min_bps)), fmt(mbit(row.max_bps)),
                   fmt(mbit(row.stdev_bps), 2)]
        if c.round_trips:
            figures, limit, flag = _round_trip_cells(c)
        t.rows.append([c.entry.label, c.test, tool_title(c.tool, row.protocol),
                       point_label(c.point, c.mtu), row.status, c.counts, row.select,
                       *figures, limit,
                       fmt(c.shown_cpu(CpuPart.SENDER_BUSY)),
                       fmt(c.shown_cpu(CpuPart.RECEIVER_BUSY)),
                       fmt(c.shown_cpu(CpuPart.TOOL_OWN)), flag])
        t.row_entries.append(c.entry.key)
    return t


def _round_trip_cells(c: Config) -> tuple[list[str], str, str]:
    """A latency row's figures (p50 and p99 with the round trips counted, then the
    spread of the repetitions' p50s, us), no goodput limit, and the wire's minimum."""
    row = c.row
    if row.p50_us is None:
        return ["", "", "", "", ""], "", ""
    p50s = [r.latency.p50_us for r in latency_ok(c) if r.latency is not None]
    selected = (f"p50 {cell(c, 'p50')} us, p99 {cell(c, 'p99')}"
                f"{' us' if row.p99_us is not None else ''} "
                f"(n = {row.latency_samples or 0:,} round trips pooled)")
    cells = [selected, f"p50 {statistics.median(p50s):.1f} us" if p50s else "",
             f"{fmt(row.p50_min_us)} us", f"{fmt(row.p50_max_us)} us",
             f"{fmt(row.p50_stdev_us, 2)} us"]
    flag = floor_words(c) if below_floor(c) else ""
    return cells, "", flag


def _select(values: list[float], rule: str) -> float | None:
    return summarize(values).selected(rule if rule in ("mean", "median") else "best")


def size_label(size: int) -> str:
    if size % (1024 * 1024) == 0:
        return f"{size // (1024 * 1024)}M"
    if size % 1024 == 0:
        return f"{size // 1024}K"
    return str(size)


def _size_values(c: Config, size: int, tx: bool) -> list[float]:
    """One size's Tx (or Rx) rates over the repetitions; a point's Tx is its throughput."""
    vals = []
    for r in c.ok:
        for p in r.points:
            if p.size_bytes != size:
                continue
            v = p.tx_bps if tx else p.rx_bps
            if v is None and tx:
                v = p.throughput_bps
            if v is not None:
                vals.append(float(v))
    return vals


def netio_tables(ix: Index) -> list[Table]:
    """netio's method: per client machine, a row per adapter, KB/s at each packet size,
    then the client's CPU load."""
    tables = []
    groups: dict[tuple[str, str, int, str, str], list[Config]] = defaultdict(list)
    for c in ix.configs:
        if c.tool not in tools_with(Shape.SIZES):
            continue
        client = next((r.hosts["sender"] for r in c.records if r.hosts.get("sender")), "?")
        groups[(c.test, c.row.protocol, c.mtu, c.point, client)].append(c)
    for (test, protocol, mtu, point, client), configs in sorted(groups.items(),
                                                                key=lambda kv: str(kv[0])):
        sizes = sorted({p.size_bytes for c in configs for r in c.ok
                        for p in r.points if p.size_bytes})
        has_rx = any(p.rx_bps is not None for c in configs for r in c.ok for p in r.points)
        columns = ["adapter"]
        for s in sizes:
            columns.append(f"{size_label(s)} Tx KB/s")
            if has_rx:
                columns.append(f"{size_label(s)} Rx KB/s")
        columns += ["n", "CPU % (client, /proc/stat)", "CPU % (tool)"]
        t = Table(id=slug("netio", test, point, client), family="netio",
                  title=f"netio {protocol.upper()}, client {client}, "
                        f"{point_label(point, mtu)}: test {test}",
                  columns=columns,
                  caption="KB/s = 1024 bytes per second, as netio prints it; each cell is "
                          "the selected value (per the profile's select, the netio method "
                          "averages) of the repetitions that succeeded.")
        for c in configs:
            cells: list[object] = [c.entry.label]
            for s in sizes:
                for tx in (True, False) if has_rx else (True,):
                    v = _select(_size_values(c, s, tx), c.rule)
                    cells.append(fmt(v / 8 / KBYTE if v is not None else None, 0)
                                 or c.row.status)
            cpu = c.cpu_values(CpuPart.SENDER_BUSY)
            tcpu = c.cpu_values(CpuPart.TOOL_OWN)
            cells += [c.counts, fmt(statistics.fmean(cpu) if cpu else None),
                      fmt(statistics.fmean(tcpu) if tcpu else None)]
            t.rows.append(cells)
            t.row_entries.append(c.entry.key)
        tables.append(t)
    return tables


def length_tables(ix: Index) -> list[Table]:
    """A rate tool's tests run at several message lengths (iperf's -l): a netio-style table
    (KB/s per size, then CPU)."""
    families: dict[tuple[str, str, tuple[tuple[str, str], ...]],
                   list[tuple[Config, int]]] = defaultdict(list)
    for c in ix.configs:
        if c.tool not in tools_with(Shape.RATE) or not takes(c.tool, "length") \
                or c.test_spec is None:
            continue
        point_vars = c.point_spec.vars if c.point_spec is not None else {}
        try:
            resolved = resolve(dict(c.test_spec.params), point_vars)
        except KeyError:
            continue
        if resolved.get("length") is None:
            continue
        try:
            length = parse_size(resolved["length"])
        except ValueError:
            continue
        rest = tuple(sorted((k, str(v)) for k, v in resolved.items() if k != "length"))
        families[(c.tool, c.row.protocol, rest)].append((c, length))
    tables = []
    for (tool, protocol, rest), items in sorted(families.items(), key=lambda kv: str(kv[0])):
        lengths = sorted({length for _, length in items})
        if len(lengths) < 2:
            continue
        rows: dict[tuple[int, int, str], dict[int, Config]] = defaultdict(dict)
        for c, length in items:
            rows[(ix.order[c.entry.key], c.mtu, c.point)][length] = c
        params = ", ".join(f"{k}={v}" for k, v in rest)
        t = Table(id=slug("length", tool, protocol, *(f"{k}{v}" for k, v in rest)),
                  family="iperf-length",
                  title=f"{tool_title(tool, protocol)} at several -l sizes"
                        + (f" ({params})" if params else ""),
                  columns=["adapter", "point"] + [f"-l {size_label(s)} KB/s" for s in lengths]
                  + ["CPU % sender", "CPU % receiver"],
                  caption="KB/s = 1024 bytes per second of the selected value of each test, "
                          "netio-style; CPU: mean over the sizes' tests of the median CPU of "
                          "every successful repetition (/proc/stat).")
        for (_, mtu, point), by_len in sorted(rows.items()):
            first = next(iter(by_len.values()))
            cells: list[object] = [first.entry.label, point_label(point, mtu)]
            for s in lengths:
                one = by_len.get(s)
                if one is None:
                    cells.append("")
                    continue
                v = one.row.selected_bps
                cells.append(fmt(v / 8 / KBYTE, 0) if v is not None and v == v
                             else one.row.status)
            snd = [v for v in (c.shown_cpu(CpuPart.SENDER_BUSY) for c in by_len.values())
                   if v is not None]
            rcv = [v for v in (c.shown_cpu(CpuPart.RECEIVER_BUSY) for c in by_len.values())
                   if v is not None]
            cells += [fmt(statistics.fmean(snd) if snd else None),
                      fmt(statistics.fmean(rcv) if rcv else None)]
            t.rows.append(cells)
            t.row_entries.append(first.entry.key)
        tables.append(t)
    return tables
