"""The report's History section: each adapter's figure over the runs, its changes marked.

Built from ``nicbench.history`` series (the runs of the report, or a results store's
history of the same adapters): one figure per adapter, a panel per test and point with
at least :data:`MIN_RUNS` runs (its last :data:`LAST_RUNS`), each run's selected figure (the profile's statistic of
its n repetitions) as a point, the levels the detector grouped them into as a dashed
step, every change point as a marker, and under the chart each change explained: the
shift with its 95 % interval and the setup facts that differ around it.
A table lists every change with the same words. Fewer runs than that: no section (two
runs are the comparison's, "Run against run").
"""

from __future__ import annotations

import re

from nicbench.history.model import RULE, Change, Series
from nicbench.report.colours import adapter_colour, adapter_marker
from nicbench.report.configs import point_label
from nicbench.report.load import Run
from nicbench.report.model import ChartKind, Curve, Figure, LinePanel, Reference, Table

MIN_RUNS = 3
LAST_RUNS = 30          # the runs a trend shows (and judges): a month of nights
MBIT = 1e6
LEVEL_COLOUR = "#8c8c8c"
CHANGE_COLOUR = "#b42318"
TABLE_COLUMNS = ["adapter", "test", "point", "run", "date", "before Mbit/s", "after Mbit/s",
                 "change %", "95 % interval %", "setup differences"]


def of_runs(runs: list[Run]) -> list[Series]:
    """The history the report's own runs make: none (and nothing read into pandas) unless
    some adapter is in at least MIN_RUNS of them."""
    from collections import Counter

    count = Counter(a for r in runs for a in {rec.adapter for rec in r.records})
    if not count or max(count.values()) < MIN_RUNS:
        return []
    from nicbench.history import of_frame
    from nicbench.results.dataframe import DirSource

    src = DirSource.loaded((r.path, r.manifest, r.records) for r in runs)
    return of_frame(src.trial_frame(), src, LAST_RUNS)


def shown(series: list[Series]) -> list[Series]:
    """The rate series long enough for a trend: at least MIN_RUNS runs with a figure
    (round-trip series are ``nicbench history``'s: these charts are in Mbit/s)."""
    return [s for s in series if not s.figure.lower_better
            and sum(n.value_bps is not None for n in s.nights) >= MIN_RUNS]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "x"


def change_words(c: Change, night_no: int | None = None) -> str:
    """One change as a sentence for the charts' notes."""
    where = f"run {night_no} " if night_no is not None else ""
    setup = "; ".join(c.setup_changes) if c.setup_changes else "no setup difference recorded"
    return (f"{where}({c.run_id}, {c.started_at:%Y-%m-%d}): {c.interval_text()} "
            f"({c.before_bps / MBIT:.1f} -> {c.after_bps / MBIT:.1f} Mbit/s, the levels "
            f"of the runs before and after); setup: {setup}")


def _panel(s: Series) -> tuple[LinePanel, list[str]]:
    colour, mark = adapter_colour(s.adapter), adapter_marker(s.adapter)
    nights = [n for n in s.nights if n.value_bps is not None]
    xs = {n.run_id: float(i) for i, n in enumerate(nights, start=1)}
    points = [(xs[n.run_id], (n.value_bps or 0.0) / MBIT) for n in nights]
    titles = [f"run {i} {n.run_id} ({n.started_at:%Y-%m-%d}): {(n.value_bps or 0) / MBIT:.1f}"
              f" Mbit/s, {n.select} of n={n.n}"
              + (f", {n.flagged} above the line rate (not judged)" if n.flagged else "")
              for i, n in enumerate(nights, start=1)]
    flagged = [p for p, n in zip(points, nights, strict=True) if n.flagged]
    curves = [Curve(label=f"{s.adapter_label}: {s.tool} ({nights[-1].select})",
                    colour=colour, marker=mark, points=points, flagged=flagged,
                    titles=titles)]
    level: list[tuple[float, float]] = []
    changes = [c for c in s.changes if c.run_id in xs]
    if changes:
        start = 1.0
        for c in changes:
            x = xs[c.run_id] - 0.5
            level += [(start, c.before_bps / MBIT), (x, c.before_bps / MBIT)]
            start = x
        level += [(start, changes[-1].after_bps / MBIT), (float(len(nights)),
                                                          changes[-1].after_bps / MBIT)]
        curves.append(Curve(label="levels", colour=LEVEL_COLOUR,
                            marker="none", points=level, dash="2 3"))
        curves.append(Curve(label="change point", colour=CHANGE_COLOUR,
                            marker="triangle-down" if changes[0].change_pct < 0
                            else "triangle",
                            points=[(xs[c.run_id], c.after_bps / MBIT) for c in changes],
                            line=False,
                            titles=[change_words(c, int(xs[c.run_id])) for c in changes]))
    limits = {n.limit_bps for n in nights if n.limit_bps}
    refs = [Reference(y=min(limits) / MBIT, label="the link's goodput limit")] if limits \
        else []
    title = f"{s.test}, {point_label(s.point, s.mtu)}"
    notes = [f"{title}: change at {change_words(c, int(xs[c.run_id]))}" for c in changes]
    ys = [y for _, y in points] + [r.y for r in refs] + [y for _, y in level]
    hi, lo = max(ys), min(ys)
    span = max(hi - lo, 0.02 * hi, 1e-9)
    # the axis spans the figures (a 4 % step on an axis from 0 is a hair): the caption
    # says where it starts
    return LinePanel(title=title, xlabel="run, oldest first", ylabel="Mbit/s",
                     curves=curves, references=refs, xlog=False, ymax=hi + 0.15 * span,
                     ymin=max(0.0, lo - 1.0 * span)), notes


def history_figures(series: list[Series]) -> list[Figure]:
    """One figure per adapter of the series long enough for a trend."""
    by_adapter: dict[str, list[Series]] = {}
    for s in shown(series):
        by_adapter.setdefault(s.adapter, []).append(s)
    figures = []
    for adapter, group in by_adapter.items():
        panels, notes = [], []
        for s in group:
            panel, said = _panel(s)
            panels.append(panel)
            notes += said
        runs = max(len(s.nights) for s in group)
        select = sorted({n.select for s in group for n in s.nights})
        ns = sorted({n.n for s in group for n in s.nights})
        n_text = f"n = {ns[0]}" if len(ns) == 1 else f"n = {ns[0]} to {ns[-1]}"
        figures.append(Figure(
            id=f"history-{_slug(adapter)}", family=ChartKind.HISTORY,
            title=f"{group[0].adapter_label}: history over {runs} runs",
            caption=(f"Each point is one run's figure: the {' or '.join(select)} of its "
                     f"successful repetitions ({n_text}), as the run's profile selects it. "
                     "The dashed steps are the levels; a red marker is the first run after "
                     f"a change, explained below; {RULE}. A run above the "
                     "link's goodput limit (the dashed line) is not judged. The y axis spans the "
                     "figures, not from 0."),
            panels=list(panels), entries=[], columns=2 if len(panels) > 1 else 1,
            notes=notes))
    return figures


def history_table(series: list[Series]) -> Table:
    rows: list[list[object]] = []
    for s in shown(series):
        for c in s.changes:
            rows.append([s.adapter, s.test, s.point, c.run_id, f"{c.started_at:%Y-%m-%d}",
                         round(c.before_bps / MBIT, 1), round(c.after_bps / MBIT, 1),
                         f"{c.change_pct:+.1f}",
                         f"[{c.low_pct:+.1f}, {c.high_pct:+.1f}]",
                         "; ".join(c.setup_changes) or "-"])
    return Table(id="history-changes", family="history", title="Changes in the history",
                 columns=TABLE_COLUMNS, rows=rows,
                 caption="Every change point found, with the setup facts that differ "
                         "between the run before it and the run after it.")
