"""The morning summary of a campaign: ``DIR/summary.md`` (short enough to paste into a
mail) and ``DIR/index.html`` (the same, linking every run's report and files).

One campaign-wide table, a row per adapter (pair), a column per method (run) and test:
the highest value the run selected for that test over its points (best, mean or median
of the repetitions, as the profile says) and at which point; then, per adapter and
method, how many configurations were measured, the status, and for anything not
measured the reason, grouped (``refused at mtu6000, mtu9000 (iperf3-tcp): ...``). A
test's values stay in their own column: a netPIPE peak and an iperf rate are not the
same measure, and one "best" over both would show the larger, not the better.

A configuration the driver or kernel refused (``Failure.REFUSED``) is a result, as the
reviews printed it: it counts as measured. Everything else that gave no value (a stall,
a timeout, a lost host, a run that never got to it) does not, and makes the campaign's
exit status 1.

Every path on the page and in the file is relative to the campaign directory, and no
absolute local path appears: the directory can be copied, served or mailed as it is.
"""

from __future__ import annotations

import html
import time
from contextlib import suppress
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import assert_never

from nicbench.errors import NicbenchError
from nicbench.results.campaign import CampaignState, CampaignStateName, RunState, RunStateName
from nicbench.durations import duration
from nicbench.results.records import Failure
from nicbench.results.snapshot import read_run
from nicbench.results.summary import RowStatus, SummaryRow, summary_rows
from nicbench.textfile import write_atomic

SUMMARY_MD = "summary.md"
INDEX_HTML = "index.html"


class CellStatus(StrEnum):
    OK = "ok"
    INCOMPLETE = "incomplete"
    NOT_MEASURED = "not measured"
    NOT_RUN = "not run"


@dataclass
class Cell:
    """One adapter under one method."""

    run: str
    pair: str
    adapter: str
    status: CellStatus
    configs: int                # configurations planned (points x tests)
    measured: int               # with a value (ok or partial)
    refused: int                # refused by the driver or kernel (a result, no value)
    best: dict[str, tuple[float, str]] = field(default_factory=dict)  # test -> (bps, point)
    tests: list[str] = field(default_factory=list)     # the method's tests, in order
    reasons: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.status is CellStatus.OK


@dataclass
class Morning:
    """What the summary says, built from campaign.json and the run directories."""

    state: CampaignState
    cells: list[Cell]
    problems: list[str]         # settings not put back, hosts lost, runs that failed
    # Changes this night starts against the nights before it (nicbench.history's words,
    # regressions first); empty without history.
    history: list[str] = field(default_factory=list)

    @property
    def everything_measured(self) -> bool:
        return (self.state.state is CampaignStateName.FINISHED and not self.problems
                and all(c.complete for c in self.cells)
                and all(r.state is RunStateName.DONE for r in self.state.runs))


def gather(directory: str | Path, state: CampaignState,
           history: Sequence[str] = ()) -> Morning:
    directory = Path(directory)
    cells: list[Cell] = []
    problems: list[str] = []
    for run in state.runs:
        cells += _cells(directory, run, problems)
        if run.state is RunStateName.FAILED:
            problems.append(f"run {run.name} failed: {run.error}")
        for p in run.restore_problems:
            problems.append(f"run {run.name}: not put back: {p} (nicbench restore "
                            f"{run.name})")
        for host, why in run.lost_hosts.items():
            problems.append(f"run {run.name}: host {host} lost: {why}")
        for pair, why in run.unmeasured.items():
            problems.append(f"run {run.name}: pair {pair} could not be measured: {why}")
    return Morning(state, cells, problems, list(history))


def _cells(directory: Path, run: RunState, problems: list[str]) -> list[Cell]:
    snap = read_run(directory / run.name)
    problems += [f"run {run.name}: not read: {line}" for line in snap.unread]
    profile = snap.profile
    labels: dict[str, str] = {}
    if snap.manifest is not None:
        inventory = snap.manifest.inventory
        with suppress(NicbenchError):    # a hand-edited manifest: the records' labels
            for inv_pair in inventory.pairs:
                labels[inv_pair.name] = inventory.adapter(inv_pair.adapter).label
    for pair, recs in snap.by_pair.items():
        labels.setdefault(pair, recs[0].adapter_label)
    n_configs = profile.configurations_per_pair if profile else 0
    out = []
    for pair in run.pairs:
        recs = snap.by_pair.get(pair, [])
        rows = summary_rows(recs, profile)
        cell = _cell(run, pair, labels.get(pair, pair), rows, max(n_configs, len(rows)))
        cell.tests = [t.name for t in profile.tests] if profile else \
            list(dict.fromkeys(r.test for r in rows))
        out.append(cell)
    return out


def _cell(run: RunState, pair: str, adapter: str, rows: list[SummaryRow],
          n_configs: int) -> Cell:
    valued = [r for r in rows if r.status in (RowStatus.OK, RowStatus.PARTIAL)]
    refused = [r for r in rows
               if r.status is RowStatus.SKIPPED and r.failure is Failure.REFUSED]
    missing = n_configs - len(rows)
    cell = Cell(run=run.name, pair=pair, adapter=adapter, status=CellStatus.OK,
                configs=n_configs,
                measured=len(valued), refused=len(refused))
    for r in valued:
        if r.selected_bps is not None and (r.test not in cell.best or
                                           r.selected_bps > cell.best[r.test][0]):
            cell.best[r.test] = (r.selected_bps, r.point)
    # grouped reasons: one line per kind of failure, its points and tests, the first
    # reason as the example (a refusal at three MTUs is one line, not nine)
    groups: dict[str, list[SummaryRow]] = {}
    for r in rows:
        if r.status is RowStatus.OK:
            continue
        word = r.failure.word if r.failure is not None else str(r.status)
        groups.setdefault(f"partly {word}" if r.status is RowStatus.PARTIAL else word,
                          []).append(r)
    all_tests = list(dict.fromkeys(r.test for r in rows))
    for word, group in groups.items():
        points = ", ".join(dict.fromkeys(r.point for r in group))
        tests = list(dict.fromkeys(r.test for r in group))
        which = "all tests" if len(all_tests) > 1 and tests == all_tests else ", ".join(tests)
        why = _short(group[0].reason)
        cell.reasons.append(f"{word} at {points} ({which})" + (f": {why}" if why else ""))
    if missing > 0:
        cell.reasons.append(f"{missing} of {n_configs} configurations not run"
                            + (" (the campaign stopped first)"
                               if run.state is not RunStateName.DONE else ""))
    unvalued = n_configs - len(valued) - len(refused)
    if not rows:
        cell.status = CellStatus.NOT_RUN
    elif len(valued) == 0 and len(refused) < n_configs:
        cell.status = CellStatus.NOT_MEASURED
    elif unvalued > 0 or any(r.status is RowStatus.PARTIAL for r in rows):
        cell.status = CellStatus.INCOMPLETE
    return cell


def _short(reason: str | None, limit: int = 120) -> str:
    text = " ".join((reason or "").split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _when(t: float | None) -> str:
    return "-" if t is None else time.strftime("%Y-%m-%d %H:%M", time.localtime(t))


def _took(state: CampaignState) -> str:
    if state.ended_at is None:
        return ""
    return f" ({duration(state.ended_at - state.started_at)})"


def headline(m: Morning) -> str:
    s = m.state
    todo = [c for c in m.cells if not c.complete]
    if s.state is CampaignStateName.INTERRUPTED:
        what = "interrupted"
    elif m.everything_measured:
        what = "everything measured"
    else:
        what = f"{len(todo)} of {len(m.cells)} adapter x method not fully measured" \
            if todo else f"{len(m.problems)} problems"
    return f"nicbench campaign {s.name}: {what}"


def write(directory: str | Path, state: CampaignState,
          history: Sequence[str] = ()) -> tuple[Path, Path, Morning]:
    """Write DIR/summary.md and DIR/index.html; returns their paths and what they say.
    ``history``: the lines of what changed against the nights before (listed as given)."""
    directory = Path(directory)
    m = gather(directory, state, history)
    md = directory / SUMMARY_MD
    page = directory / INDEX_HTML
    _atomic(md, markdown(m))
    _atomic(page, index_html(m))
    return md, page, m


def write_index(directory: str | Path, m: Morning) -> Path:
    """Rewrite DIR/index.html only (summary.md may have been sent already), from what
    :func:`write` gathered: ``m.state`` is the campaign's state, changed since."""
    page = Path(directory) / INDEX_HTML
    _atomic(page, index_html(m))
    return page


def _atomic(path: Path, text: str) -> None:
    from nicbench.results.rundir import write_error

    try:
        write_atomic(path, text)
    except OSError as exc:
        raise write_error(path.parent, exc) from exc


def columns(m: Morning) -> list[tuple[str, str]]:
    """(run, test) of every column, runs in their order, each run's tests in its order."""
    cols: list[tuple[str, str]] = []
    for run in m.state.runs:
        tests = next((c.tests for c in m.cells if c.run == run.name and c.tests), [])
        cols += [(run.name, t) for t in tests]
    return cols


def matrix(m: Morning) -> tuple[list[tuple[str, str]],
                                list[tuple[str, str, list[str], list[Cell | None]]]]:
    """The columns, and per pair: its adapter, a value per column and its cell per run
    (None where the run does not measure that pair)."""
    cols = columns(m)
    rows: dict[str, tuple[str, dict[str, Cell]]] = {}
    for c in m.cells:
        rows.setdefault(c.pair, (c.adapter, {}))[1][c.run] = c
    out = []
    for pair, (adapter, cells) in rows.items():
        values = [_value(cells.get(run), test) for run, test in cols]
        out.append((pair, adapter, values, [cells.get(r.name) for r in m.state.runs]))
    return cols, out


def _value(c: Cell | None, test: str) -> str:
    if c is None:
        return ""
    got = c.best.get(test)
    text = "-" if got is None else f"{got[0] / 1e6:.1f} {got[1]}"
    return text + ("" if c.complete else " *")


def markdown(m: Morning) -> str:
    """The summary to paste into a mail: a few lines, the matrix, what was not measured."""
    s = m.state
    lines = [f"# {headline(m)}", ""]
    shard = f", shard {s.shard}" if s.shard else ""
    host = s.controller.get("host")
    lines.append(f"{s.state.capitalize()}: {_when(s.started_at)} to {_when(s.ended_at)}"
                 f"{_took(s)}, up to {s.parallel} pairs at once{shard}"
                 + (f", controller {host}" if host else "")
                 + f"; campaign file {Path(s.file).name}.")
    lines += ["", "Runs:"]
    for run in s.runs:
        report = f"report {run.report}" if run.report else (
            f"no report ({run.report_error})" if run.report_error else f"directory {run.name}/")
        lines.append(f"- {run.name} ({run.profile}): {run.state}, {report}"
                     + (f": {run.error}" if run.error else ""))
    cols, rows = matrix(m)
    lines += ["", "Best selected value per adapter, method and test, Mbit/s, and where "
              "(* not everything measured, see below):", "",
              "| adapter | pair | " + " | ".join(_md(f"{r} {t}") for r, t in cols) + " |",
              "|---|---|" + "---|" * len(cols)]
    for pair, adapter, values, _ in rows:
        lines.append(f"| {_md(adapter)} | {_md(pair)} | "
                     + " | ".join(_md(v) for v in values) + " |")
    if m.history:
        lines += ["", "Against history (changes that start this night):", ""]
        lines += [f"- {h}" for h in m.history]
    todo = [(c, why) for c in m.cells for why in c.reasons]
    if todo:
        lines += ["", "Not measured (a refusal by the driver is a result, not a failure):", ""]
        lines += [f"- {c.pair} {c.run}: {why}" for c, why in todo]
    if m.problems:
        lines += ["", "Problems:", ""] + [f"- {p}" for p in m.problems]
    lines += ["", "Details and every run's report: index.html in the campaign directory."]
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


_STYLE = """
body { font-family: sans-serif; margin: 2em; max-width: 80em; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
td.num { text-align: right; white-space: nowrap; }
.ok { color: #1a7f37; } .bad { color: #b42318; } .warn { color: #9a6700; }
"""


def index_html(m: Morning) -> str:
    s = m.state
    e = html.escape
    parts = ["<!DOCTYPE html>", "<html lang=\"en\"><head><meta charset=\"utf-8\">",
             f"<title>{e(headline(m))}</title><style>{_STYLE}</style></head><body>",
             f"<h1>{e(headline(m))}</h1>",
             f"<p>{e(s.state)}: started {e(_when(s.started_at))}, ended "
             f"{e(_when(s.ended_at))}{e(_took(s))}; up to {s.parallel} pairs at once"
             + (f", shard {e(s.shard)}" if s.shard else "") + ". Campaign file "
             f"<code>{e(Path(s.file).name)}</code>; "
             "<a href=\"campaign.json\">campaign.json</a>, "
             "<a href=\"summary.md\">summary.md</a>.</p>",
             "<h2>Runs</h2>", "<table><tr><th>run</th><th>profile</th><th>state</th>"
             "<th>pairs</th><th>report</th><th>files</th></tr>"]
    for run in s.runs:
        href = _href(run.name)
        report = (f"<a href=\"{_href(run.report)}\">report</a>" if run.report
                  else e(run.report_error or "-"))
        cls = "ok" if run.state is RunStateName.DONE else "bad"
        parts.append(
            f"<tr><td>{e(run.name)}</td><td>{e(run.profile)}</td>"
            f"<td class=\"{cls}\">{e(run.state)}" + (f": {e(run.error)}" if run.error else "")
            + f"</td><td>{e(', '.join(run.pairs))}</td><td>{report}</td>"
            f"<td><a href=\"{href}/summary.csv\">summary.csv</a> "
            f"<a href=\"{href}/trials.jsonl\">trials.jsonl</a> "
            f"<a href=\"{href}/manifest.json\">manifest.json</a></td></tr>")
    cols, rows = matrix(m)
    parts += ["</table>", "<h2>Adapter &times; method</h2>",
              "<p>The best selected value of each method's test for each adapter over its "
              "points, Mbit/s, and at which point; * not everything measured (see below).</p>",
              "<table><tr><th>adapter</th><th>pair</th>"
              + "".join(f"<th>{e(r)}<br>{e(t)}</th>" for r, t in cols) + "</tr>"]
    by_run = {r.name: i for i, r in enumerate(s.runs)}
    for pair, adapter, values, cells in rows:
        parts.append(f"<tr><td>{e(adapter)}</td><td>{e(pair)}</td>" + "".join(
            f"<td class=\"num {_css(cells[by_run[r]])}\">{e(v)}</td>"
            for (r, _), v in zip(cols, values, strict=False)) + "</tr>")
    parts.append("</table>")
    if m.history:
        parts += ["<h2>Against history</h2>",
                  "<p>Changes that start this night, against the nights before it "
                  "(<code>nicbench history</code> shows each series).</p>", "<ul>"]
        parts += [f"<li>{e(h)}</li>" for h in m.history] + ["</ul>"]
    parts += ["<h2>Adapters and methods</h2>",
              "<table><tr><th>adapter</th><th>pair</th><th>method</th>"
              "<th>measured</th><th>status</th><th>not measured, and why</th></tr>"]
    for c in m.cells:
        cls = _css(c)
        measured = f"{c.measured}/{c.configs}" + (f" ({c.refused} refused)" if c.refused else "")
        reasons = "<br>".join(e(r) for r in c.reasons) or "-"
        parts.append(
            f"<tr><td>{e(c.adapter)}</td><td>{e(c.pair)}</td><td>{e(c.run)}</td>"
            f"<td class=\"num\">{e(measured)}</td><td class=\"{cls}\">{e(c.status)}</td>"
            f"<td>{reasons}</td></tr>")
    parts.append("</table>")
    if m.problems:
        parts += ["<h2>Problems</h2>", "<ul>"] + [f"<li>{e(p)}</li>" for p in m.problems] \
            + ["</ul>"]
    if s.on_finish is not None:
        o = s.on_finish
        parts.append(f"<p>on_finish <code>{e(Path(o.argv[0]).name)}</code>: "
                     + (f"exit {o.exit_status}" if o.exit_status is not None
                        else e(o.error or "not run")) + "</p>")
    parts.append("<p>Measured counts configurations (point &times; test) with a value; a "
                 "refusal by the driver is a result, not a failure.</p></body></html>")
    return "\n".join(parts) + "\n"


def _css(c: Cell | None) -> str:
    if c is None:
        return ""
    match c.status:
        case CellStatus.OK:
            return "ok"
        case CellStatus.INCOMPLETE:
            return "warn"
        case CellStatus.NOT_MEASURED | CellStatus.NOT_RUN:
            return "bad"
        case _:
            assert_never(c.status)


def _href(rel: str | None) -> str:
    from urllib.parse import quote

    return html.escape(quote(rel or "", safe="/"), quote=True)
