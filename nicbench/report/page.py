"""The report's files: report.html, tables/*.csv (every table and every figure's data).

The page is one self-contained HTML file: inline CSS, no script, no network resource; it
references only the figures beside it (figures/*.svg, figures/*.png) and the CSV files
(tables/*.csv) by relative path. Every piece of text that comes from results (labels,
reasons, commands, host facts) is escaped with ``html.escape``.
"""

from __future__ import annotations

import csv
import html
import json
import os
import time
from pathlib import Path
from typing import Any, Iterable

from nicbench import __version__
from nicbench.report.build import point_label
from nicbench.report.model import BarPanel, Figure, LinePanel, Report, Table
from nicbench.report.theory import FLAG_MARGIN

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
 margin:0 auto;max-width:1200px;padding:1em 2em;color:#222;line-height:1.45}
h1{margin-bottom:.2em} h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
h3{margin-top:1.6em}
nav#toc{background:#f6f6f6;border:1px solid #ddd;padding:.5em 1.5em;margin:1em 0}
nav#toc ol{margin:.3em 0} nav#toc li{margin:.1em 0}
figure{margin:1.5em 0;padding:0} figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:.9em;color:#444;margin-top:.3em}
ul.notes{font-size:.88em;color:#5a3d00;background:#fff8e6;border-left:3px solid #e0a000;
 padding:.4em .6em .4em 1.8em;margin:.4em 0}
table{border-collapse:collapse;font-size:.85em;margin:.6em 0 1.2em}
th,td{border:1px solid #ddd;padding:.2em .5em;vertical-align:top;text-align:left}
th{background:#f2f2f2} td:first-child{white-space:nowrap} td.num{text-align:right;font-variant-numeric:tabular-nums}
tbody tr:nth-child(even){background:#fafafa}
.sw{display:inline-block;width:.9em;height:.9em;border:1px solid #999;margin-right:.35em;
 vertical-align:-.1em}
code,.cmd{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:.92em}
td.cmd{white-space:pre-wrap;word-break:break-all;max-width:38em}
dl.kv{display:grid;grid-template-columns:max-content auto;gap:.15em 1em;font-size:.92em}
dl.kv dt{font-weight:600} dl.kv dd{margin:0}
.fail{color:#8a1c1c} .muted{color:#777}
.scroll{overflow-x:auto}
"""


def e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


# -- CSV ----------------------------------------------------------------------------------
def write_tables(report: Report, out: Path) -> None:
    tdir = out / "tables"
    tdir.mkdir(parents=True, exist_ok=True)
    for t in report.tables:
        path = tdir / f"{t.id}.csv"
        _write_csv(path, t.columns, t.rows)
        t.files["csv"] = f"tables/{path.name}"
    for f in report.figures:
        path = tdir / f"figure-{f.id}.csv"
        cols, rows = figure_rows(report, f)
        _write_csv(path, cols, rows)
        f.files["csv"] = f"tables/{path.name}"


def _write_csv(path: Path, columns: list[str], rows: Iterable[list]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(columns)
        for r in rows:
            w.writerow(["" if c is None else c for c in r])


def figure_rows(report: Report, fig: Figure) -> tuple[list[str], list[list]]:
    """A figure's data, long format: what each bar or curve point shows."""
    label = {en.key: en.label for en in report.entries}
    if all(isinstance(p, BarPanel) for p in fig.panels):
        cols = ["panel", "adapter", "point", "value", "whisker_min", "whisker_max", "n_ok",
                "n", "status", "gap", "limit", "line_rate", "flag"]
        rows = []
        for p in fig.panels:
            glabel = {g.key: g.label for g in p.groups}
            for b in p.bars:
                rows.append([p.title, label[b.entry], glabel[b.group], b.value, b.lo, b.hi,
                             b.n_ok, b.n, b.status, b.gap, b.limit, b.line_rate, b.flag])
        return cols, rows
    cols = ["panel", "curve", "adapter", "block_size_bytes", "mbit_s", "above_limit"]
    rows = []
    for p in fig.panels:
        if not isinstance(p, LinePanel):
            continue
        for s in p.series:
            flagged = set(s.flagged)
            for x, y in s.points:
                rows.append([p.title, s.label, label[s.entry], int(x), y,
                             "yes" if (x, y) in flagged else ""])
    return cols, rows


# -- HTML ---------------------------------------------------------------------------------
SECTIONS = [
    ("overview", "Overview"),
    ("throughput", "Throughput per adapter and MTU"),
    ("cpu", "CPU load"),
    ("netpipe", "netPIPE: throughput by block size"),
    ("size-tables", "Tables by packet size (netio method)"),
    ("summary", "Every configuration"),
    ("failures", "Failed and skipped configurations"),
    ("setup", "Setup: hosts, versions, commands"),
    ("method", "How to read this report"),
]


def write_page(report: Report, out: Path) -> Path:
    page = out / "report.html"
    tmp = page.with_suffix(".html.tmp")
    tmp.write_text(render_page(report), encoding="utf-8")
    os.replace(tmp, page)
    return page


def render_page(report: Report) -> str:
    counter = {"fig": 0}
    parts = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{e(report.title)}</title>", f"<style>{CSS}</style>", "</head>", "<body>",
        f"<h1>{e(report.title)}</h1>",
        f'<p class="muted">{e(_runs_line(report))}. Made by nicbench {e(__version__)} on '
        f"{e(time.strftime('%Y-%m-%d %H:%M:%S %Z', time.localtime(report.created_at)))}.</p>",
        _toc(report),
        _overview(report),
        _section("throughput", report, _figures(report, ["speed"], counter,
                 "No throughput measurements (iperf, NTttcp) in these runs.")),
        _section("cpu", report, _figures(report, ["cpu"], counter,
                 "No CPU figures in these runs.")),
        _netpipe(report, counter),
        _size_tables(report),
        _section("summary", report, "".join(_table(t, heading=False)
                                            for t in report.tables_of("summary"))),
        _failures(report),
        _setup(report),
        _method(report),
        "</body>", "</html>", "",
    ]
    return "\n".join(parts)


def _runs_line(report: Report) -> str:
    runs = [s for s in report.setup]
    names = ", ".join(f"{s['name']} (run {s['run_id']}, profile {s['profile'] or '?'})"
                      for s in runs)
    return f"{len(runs)} results director{'y' if len(runs) == 1 else 'ies'}: {names}"


def _toc(report: Report) -> str:
    items = []
    for sid, title in SECTIONS:
        sub = ""
        if sid in ("throughput", "cpu"):
            family = "speed" if sid == "throughput" else "cpu"
            figs = report.figures_of(family)
            if figs:
                sub = "<ol>" + "".join(f'<li><a href="#fig-{e(f.id)}">{e(f.title)}</a></li>'
                                       for f in figs) + "</ol>"
        items.append(f'<li><a href="#{sid}">{e(title)}</a>{sub}</li>')
    return f'<nav id="toc"><h2>Contents</h2><ol>{"".join(items)}</ol></nav>'


def _section(sid: str, report: Report, body: str) -> str:
    title = dict(SECTIONS)[sid]
    return f'<section id="{sid}"><h2>{e(title)}</h2>{body}</section>'


def _swatch(colour: str) -> str:
    return f'<span class="sw" style="background:{e(colour)}"></span>'


def _figures(report: Report, families: list[str], counter: dict, empty: str) -> str:
    figs = [f for f in report.figures if f.family in families]
    if not figs:
        return f'<p class="muted">{e(empty)}</p>'
    return "".join(_figure(f, counter) for f in figs)


def _figure(fig: Figure, counter: dict) -> str:
    counter["fig"] += 1
    links = " · ".join(f'<a href="{e(fig.files[k])}">{name}</a>'
                       for k, name in (("png", "PNG"), ("svg", "SVG"), ("csv", "data (CSV)"))
                       if k in fig.files)
    notes = ""
    if fig.notes:
        notes = '<ul class="notes">' + "".join(f"<li>{e(n)}</li>" for n in fig.notes) + "</ul>"
    src = fig.files.get("svg") or fig.files.get("png", "")
    size = (f' width="{fig.size_px[0]}" height="{fig.size_px[1]}"' if fig.size_px[0] else "")
    return (f'<figure id="fig-{e(fig.id)}" data-family="{e(fig.family)}">'
            f'<img src="{e(src)}" alt="{e(fig.title)}"{size}>'
            f"<figcaption><b>Figure {counter['fig']}.</b> {e(fig.title)}. {e(fig.caption)} "
            f"{links}</figcaption>{notes}</figure>")


def _table(t: Table, swatches: dict[str, str] | None = None, heading: bool = True) -> str:
    head = f"<h3>{e(t.title)}</h3>" if heading else ""
    cap = f"<p class=\"muted\">{e(t.caption)}</p>" if t.caption else ""
    link = f' <a href="{e(t.files["csv"])}">CSV</a>' if "csv" in t.files else ""
    rows = []
    for k, r in enumerate(t.rows):
        cells = []
        for j, c in enumerate(r):
            text = e(c)
            if j == 0 and t.id == "entries":
                cells.append(f"<td>{_swatch(str(c))}</td>")
                continue
            if j == 0 and swatches and k < len(t.row_entries) and t.row_entries[k] in swatches:
                text = _swatch(swatches[t.row_entries[k]]) + text
            cls = ' class="num"' if _numeric(c) else ""
            cells.append(f"<td{cls}>{text}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    notes = ""
    if t.notes:
        notes = '<ul class="notes">' + "".join(f"<li>{e(n)}</li>" for n in t.notes) + "</ul>"
    return (f'{head}{cap}<div class="scroll"><table id="table-{e(t.id)}"><thead><tr>'
            + "".join(f"<th>{e(c)}</th>" for c in t.columns)
            + "</tr></thead><tbody>" + "".join(rows) + f"</tbody></table></div>"
            f'<p class="muted">{link.strip()}</p>{notes}')


def _numeric(value: Any) -> bool:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return True
    try:
        float(str(value))
        return True
    except ValueError:
        return False


def _overview(report: Report) -> str:
    body = ["<p>Each adapter (a card with its driver, on one pair of hosts, in one run) has "
            "one colour in every chart:</p>"]
    for t in report.tables_of("entries"):
        body.append(_table(t, None, heading=False))
    for n in report.notes:
        body.append(f"<p>{e(n)}</p>")
    flagged_figs = [f for f in report.figures if _flag_count(f)]
    flagged = sum(_flag_count(f) for f in report.figures)
    if report.failures or flagged:
        body.append("<p>At a glance: ")
        bits = []
        if report.failures:
            bits.append(f'<a href="#failures">{len(report.failures)} configuration(s) '
                        "failed or were skipped</a>")
        if flagged:
            bits.append(f"{flagged} bar(s) or curve(s) in {len(flagged_figs)} chart(s) are "
                        "above the link's theoretical limit and flagged where they appear "
                        f'(first: <a href="#fig-{e(flagged_figs[0].id)}">'
                        f"{e(flagged_figs[0].title)}</a>)")
        body.append("; ".join(bits) + ".</p>")
    return _section("overview", report, "".join(body))


def _flag_count(fig: Figure) -> int:
    n = 0
    for p in fig.panels:
        if isinstance(p, BarPanel):
            n += sum(1 for b in p.bars if b.flag)
        elif isinstance(p, LinePanel):
            n += sum(1 for s in p.series if s.flagged)
    return n


def _netpipe(report: Report, counter: dict) -> str:
    body = []
    groups = [("netpipe-adapter", "Per adapter, one curve per MTU"),
              ("netpipe-mtu", "Per MTU, one curve per adapter"),
              ("netpipe-peak", "Peak netPIPE throughput per adapter and MTU")]
    sw = {en.key: en.colour for en in report.entries}
    for family, title in groups:
        figs = report.figures_of(family)
        if not figs:
            continue
        body.append(f'<h3 id="{family}">{e(title)}</h3>')
        body.extend(_figure(f, counter) for f in figs)
        if family == "netpipe-peak":
            body.extend(_table(t, sw) for t in report.tables_of("netpipe-peak"))
    if not body:
        body.append('<p class="muted">No netPIPE results in these runs.</p>')
    return _section("netpipe", report, "".join(body))


def _size_tables(report: Report) -> str:
    sw = {en.key: en.colour for en in report.entries}
    body = []
    netio = report.tables_of("netio")
    length = report.tables_of("iperf-length")
    if netio:
        body.append("<p>netio's method (Arnold, 2002): per client machine, one row per "
                    "adapter, throughput at each packet size in KB/s, then the client's CPU "
                    "load.</p>")
        body.extend(_table(t, sw) for t in netio)
    if length:
        body.append("<p>iperf tests run at several buffer lengths (<code>-l</code>), laid out "
                    "the same way.</p>")
        body.extend(_table(t, sw) for t in length)
    if not body:
        body.append('<p class="muted">No netio results and no iperf test run at several '
                    "-l sizes in these runs.</p>")
    return _section("size-tables", report, "".join(body))


def _failures(report: Report) -> str:
    if not report.failures:
        return _section("failures", report,
                        "<p>Every configuration gave all its measurements.</p>")
    rows = []
    for f in report.failures:
        en = report.entry(f.entry)
        reasons = "".join(
            f"<li><code>{e(r)}</code>" + (f" <span class=\"muted\">(×{c})</span>" if c > 1 else "")
            + "</li>" for r, c in f.reasons)
        kernel = (f"<br>kernel: <code class=\"fail\">{e(f.kernel_message)}</code>"
                  if f.kernel_message else "")
        rows.append(f"<tr><td>{_swatch(en.colour)}{e(en.label)}</td>"
                    f"<td>{e(point_label(f.point, f.mtu))}</td><td>{e(f.test)}</td>"
                    f'<td class="fail">{e(f.status)}</td><td class="num">{f.n_ok}/{f.n}</td>'
                    f"<td><ul style=\"margin:0;padding-left:1.1em\">{reasons}</ul>{kernel}</td></tr>")
    csv_link = "".join(f'<p class="muted"><a href="{e(t.files["csv"])}">CSV</a></p>'
                       for t in report.tables_of("failures") if "csv" in t.files)
    body = ("<p>A configuration the hardware refused, or whose trials failed, is a gap in the "
            "charts; here is why, in the words of the kernel or the tool.</p>"
            '<div class="scroll"><table id="table-failures-detail"><thead><tr><th>adapter</th>'
            "<th>point</th><th>test</th><th>status</th><th>n ok</th><th>reason</th></tr>"
            "</thead><tbody>" + "".join(rows) + "</tbody></table></div>" + csv_link)
    return _section("failures", report, body)


def _kv(pairs: list[tuple[str, Any]]) -> str:
    return '<dl class="kv">' + "".join(f"<dt>{e(k)}</dt><dd>{e(v)}</dd>" for k, v in pairs
                                       if v not in (None, "", [], {})) + "</dl>"


def _plain_table(columns: list[str], rows: list[list[Any]], cmd_cols: tuple[int, ...] = ()) -> str:
    out = ['<div class="scroll"><table><thead><tr>']
    out += [f"<th>{e(c)}</th>" for c in columns]
    out.append("</tr></thead><tbody>")
    for r in rows:
        out.append("<tr>" + "".join(
            f'<td class="cmd">{e(c)}</td>' if j in cmd_cols else
            f'<td{" class=num" if isinstance(c, (int, float)) else ""}>{e(c)}</td>'
            for j, c in enumerate(r)) + "</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def _setup(report: Report) -> str:
    body = []
    for s in report.setup:
        body.append(f'<h3 id="setup-{s["index"]}">{e(s["name"])}: run {e(s["run_id"])}</h3>')
        if s["no_manifest"]:
            body.append('<p class="fail">This directory has no manifest.json: hosts, versions '
                        "and the profile are unknown; what follows comes from the trials.</p>")
        if s["torn_lines"]:
            body.append(f'<p class="fail">trials.jsonl ended in a torn line (line '
                        f'{e(s["torn_lines"][0])}), skipped: the run stopped mid-write.</p>')
        body.append(_kv([
            ("directory", s["dir"]), ("profile", f"{s['profile']} ({s['profile_file']})"
                                      if s["profile_file"] else s["profile"]),
            ("method source", s["source"]), ("description", s["description"]),
            ("repetitions / select", f"{s['repetitions']} / {s['select']}"
             if s["repetitions"] else ""),
            ("inventory", s["inventory_file"]), ("nicbench", s["nicbench_version"]),
            ("started", s["started"]), ("ended", s["ended"]),
            ("resumed", ", ".join(s["resumed"])),
            ("profile sysctl", json.dumps(s["sysctl"]) if s["sysctl"] else ""),
        ]))
        if s["hosts"]:
            body.append("<h4>Hosts</h4>")
            tools = s["tools"]
            body.append(_plain_table(
                ["host", "os", "kernel", "CPU", "CPUs", "hostname", "tool versions"],
                [[h, f.get("os"), f.get("kernel"), f.get("cpu_model"), f.get("cpus"),
                  f.get("hostname"),
                  ", ".join(f"{t}={v or 'not installed'}" for t, v in (tools.get(h) or {}).items())]
                 for h, f in s["hosts"].items()]))
        if s["record_versions"]:
            body.append("<p>Tool versions the trials' own output reported: "
                        + e(", ".join(f"{t} {'/'.join(v)}" for t, v in
                                      s["record_versions"].items())) + ".</p>")
        if s["adapters"]:
            body.append("<h4>Adapters and pairs</h4>")
            rows = []
            for a in s["adapters"]:
                drv = a.get("driver") or {}
                pair = a.get("pair") or {}
                sides = "; ".join(
                    f"{side}: {(pair.get(side) or {}).get('host')} "
                    f"{(pair.get(side) or {}).get('interface')} "
                    f"{(pair.get(side) or {}).get('address')}"
                    for side in ("a", "b") if pair.get(side))
                rows.append([a.get("entry"), a.get("vendor"), a.get("model"), a.get("chipset"),
                             a.get("bus"), f"{drv.get('name', '')} {drv.get('version') or ''}".strip(),
                             "yes" if a.get("emulated") else "no",
                             sides + (f" (receiver {pair.get('receiver')})" if pair else ""),
                             a.get("notes")])
            body.append(_plain_table(["adapter", "vendor", "model", "chipset", "bus", "driver",
                                      "emulated", "pair", "notes"], rows))
        if s["interfaces"]:
            body.append("<h4>Test interfaces (as found before the run)</h4>")
            rows = []
            for name, f in s["interfaces"].items():
                offl = f.get("offloads") or {}
                rows.append([name, f.get("kind") or "", f.get("driver"),
                             f.get("driver_version"), f.get("firmware") or "",
                             f.get("bus_info") or "", f.get("mtu"), f.get("max_mtu"),
                             ", ".join(k for k, v in offl.items() if v) or "none"])
            body.append(_plain_table(["pair/host", "kind", "driver", "driver version",
                                      "firmware", "bus", "MTU", "max MTU", "offloads on"], rows))
        if s["tests"]:
            body.append("<h4>Tests and points of the profile</h4>")
            body.append(_plain_table(
                ["test", "tool", "protocol", "params", "repetitions", "select", "timeout s",
                 "UDP search"],
                [[t.get("name"), t.get("tool"), t.get("protocol"),
                  json.dumps(t.get("params") or {}), t.get("repetitions") or s["repetitions"],
                  t.get("select") or s["select"], t.get("timeout_s") or "",
                  json.dumps(t["udp_search"]) if t.get("udp_search") else ""]
                 for t in s["tests"]]))
            body.append(_plain_table(
                ["point", "MTU", "frame size", "sysctl", "registry", "vars"],
                [[p.get("label") or "", p.get("mtu") or "", p.get("frame_size") or "",
                  json.dumps(p.get("sysctl") or {}), json.dumps(p.get("registry") or {}),
                  json.dumps(p.get("vars") or {})] for p in s["points"]]))
        if s["commands"]:
            body.append("<h4>Commands run</h4><p class=\"muted\">The first trial's commands of "
                        "each configuration, exactly as run; 'variants' counts the distinct "
                        "command lines of its trials (a UDP search changes the rate, netPIPE "
                        "its output file).</p>")
            body.append(_plain_table(
                ["adapter", "point", "test", "receiver (server)", "sender (client)",
                 "trials", "variants"],
                [[c["entry"], c["point"], c["test"],
                  f"{c['hosts'].get('receiver', '')}$ {c['server']}",
                  f"{c['hosts'].get('sender', '')}$ {c['client']}", c["trials"], c["variants"]]
                 for c in s["commands"]], cmd_cols=(3, 4)))
        if s["restore_problems"]:
            body.append("<h4>Settings not restored</h4><ul>" + "".join(
                f"<li class=\"fail\">{e(p)}</li>" for p in s["restore_problems"]) + "</ul>")
    return _section("setup", report, "".join(body))


def _method(report: Report) -> str:
    items = [
        "Throughput is in Mbit/s (10<sup>6</sup> bit/s) and, in the netio-style tables, KB/s "
        "(1024 bytes per second, as netio prints it).",
        "A bar is the configuration's selected value (the profile's <code>select</code>: best, "
        "mean or median of the repetitions, as in the review the profile follows); its "
        "whisker runs from the lowest to the highest repetition that succeeded; "
        "<code>n ok/n</code> counts those against the repetitions planned (failed and "
        "given-up ones included). A UDP search's bar is the rate it found; its n counts the "
        "rates it tried.",
        "Every value is traceable: the CSV beside each figure holds what it shows, and each "
        "results directory's trials.jsonl and raw/ hold every sample with its command.",
        "<span id=\"method-flags\"></span>The reference segment over a bar is the best "
        "goodput of the link at that MTU: R × (MTU − 52) / (MTU + 38) for TCP with "
        "timestamps (− 40 without, − 28 for UDP), R the link's line rate, 38 the bytes each "
        "frame costs on the wire besides the IP packet (Ethernet header 14, FCS 4, preamble "
        "8, inter-frame gap 12): 941.5 Mbit/s at MTU 1500 and 990.0 at 9000 on Gigabit "
        f"Ethernet. A value more than {FLAG_MARGIN:.0%} above it is hatched in the chart and "
        "listed under it (closer is the tools' rounding: iperf 2 prints whole Mbit/s).",
        "The line rate is taken from <code>--link-rate NAME=RATE</code> when given, else "
        "from the inventory adapter's <code>link_rate</code> recorded in the run's manifest, "
        "else from the rate the adapter's description names (results of older inventories); "
        "the table of adapters says which. Without a rate there is no reference line and no "
        "flag.",
        "CPU load: /proc/stat of the sending and of the receiving host, busy share of all "
        "CPUs while the sender ran, mean over the repetitions that succeeded; a tool's own "
        "CPU figure is shown apart and labelled with where it comes from.",
        "A gap in a chart is a configuration that was refused (the kernel would not set the "
        "MTU), failed (the link stalled, the tool timed out or reported an error) or was not "
        "run; the word in the gap says which, the failures section says why.",
    ]
    if any(en.rate_bps is None for en in report.entries):
        items.append("Some adapters have no known line rate: their bars have no reference "
                     "segment.")
    body = "<ul>" + "".join(f"<li>{i}</li>" for i in items) + "</ul>"
    return _section("method", report, body)
