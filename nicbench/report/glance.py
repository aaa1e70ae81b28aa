"""The verdict as a reviewer reads it in a minute: presentation only, from the verdict's
rows (``verdict.py`` decides every figure, rank and word; nothing here judges).

- ``glance``: the first screen: per method one row (the fastest card, its figure and
  share of the limit, where, the busier host's CPU where the CPU can rank, the card with
  the most Mbit/s per CPU %), then one short line per card that did not measure somewhere.
- ``ranking_table``: each method's ranking, short enough to show every column at
  1280 px: the CPU's repetitions and IQR go to a hover and to the CSV (which keeps every
  column of ``verdict.verdict_table``), each reason a figure is not ranked becomes a
  lettered footnote, written once per table.
"""

from __future__ import annotations

from nicbench.report.configs import chart_title, fmt
from nicbench.report.model import Glance, GlanceRow, Table
from nicbench.results.records import CpuPart
from nicbench.report.verdict import Verdict, place, verdict_table
from nicbench.report.verdict import _points  # "MTU 6000, 9000": the verdict's words

COLUMNS = ["#", "adapter", "Mbit/s", "at", "figure", "% of limit", "CPU send %",
           "CPU recv %", "Mbit/s per CPU %", "CPU #", "vs smallest", "not measured"]
MARKS = "abcdefghijklmnopqrstuvwxyz"


def _mark(notes: dict[str, str], reason: str) -> str:
    """The footnote letter of ``reason`` (a new one the first time it is seen)."""
    if reason not in notes:
        notes[reason] = MARKS[len(notes) % len(MARKS)]
    return notes[reason]


def gap_words(v: Verdict) -> str:
    """"stalled at MTU 9000; path check failed at MTU 16000"."""
    by_word: dict[str, list[str]] = {}
    for g in v.gaps:
        if g.word:
            by_word.setdefault(g.word, []).append(g.point)
    return "; ".join(f"{w} at {_points(p)}" for w, p in by_word.items())


def _cpu_hover(v: Verdict) -> str:
    reps = v.repetitions
    if not reps:
        return ""
    figs = [f for f in (v.cpu_figure(CpuPart.SENDER_BUSY), v.cpu_figure(CpuPart.RECEIVER_BUSY))
            if f.median is not None]
    over = (f"repetition {reps[0]}" if len(reps) == 1 else
            "median over repetitions " + ", ".join(str(r) for r in reps))
    iqr = " / ".join(fmt(f.iqr, 0) or "?" for f in figs)
    return over + (f"; IQR {iqr} points" if len(reps) > 1 and figs else "")


def _rank(rank: int | None, tied: bool) -> int | str:
    """A rank as the tables print it: "2 (tied)" where it is shared."""
    if not rank:
        return ""
    return f"{rank} (tied)" if tied else rank


def ranking_table(method: tuple[str, str, str], rows: list[Verdict]) -> Table:
    """A method's ranking with short columns; the full table is its CSV."""
    full = verdict_table(method, rows)
    t = Table(id=full.id, family="verdict", title=full.title, columns=list(COLUMNS),
              csv_columns=full.columns, csv_rows=full.rows)
    notes: dict[str, str] = {}
    for v in rows:
        c = v.shown
        if v.value is not None:
            figure = fmt(v.value)
        elif v.above:
            figure = f"{fmt(v.shown_value)} !{_mark(notes, v.above_words)}"
        else:
            figure = "—"
        snd, rcv = v.cpu_figure(CpuPart.SENDER_BUSY), v.cpu_figure(CpuPart.RECEIVER_BUSY)
        per = fmt(v.per_cpu)
        if per and v.cpu_noise:
            per += f" {_mark(notes, 'not ranked by CPU: ' + v.cpu_noise)}"
        missing = [gap_words(v)] if gap_words(v) else []
        if v.not_ranked:
            missing.append(f"not ranked {_mark(notes, v.not_ranked)}")
        if v.best is not None and v.above:
            points = _points([place(c) for c, _ in v.above])
            missing.append(f"above the limit at {points} "
                           f"{_mark(notes, v.above_words)}")
        pct = v.limit_pct
        t.rows.append([_rank(v.rank, v.tied), v.entry.label, figure, place(c) if c else "", v.figure,
                       fmt(pct) if pct is not None else "", fmt(snd.median, 0),
                       fmt(rcv.median, 0), per, _rank(v.cpu_rank, v.cpu_tied),
                       f"{v.gain_pct:+.1f} %" + (f" vs {v.smallest.removeprefix('MTU ')}"
                                                 if v.smallest.startswith("MTU ") else "")
                       if v.gain_pct is not None else "",
                       "; ".join(missing)])
        hover = _cpu_hover(v)
        t.hover.append(["", "", "", "", "", "", hover, hover, hover, "",
                        f"over {v.smallest}" if v.smallest else "", ""])
        t.row_entries.append(v.entry.key)
    t.notes = [f"{m}: {reason}" for reason, m in notes.items()]
    return t


def glance(verdicts: dict[tuple[str, str, str], list[Verdict]]) -> Glance:
    """The first screen of the rate tools' verdict from its rows (the other families'
    rows are their ranking tables' first ranked row: :func:`other_row`)."""
    out = Glance()
    noisy = False
    for method, rows in verdicts.items():
        link = verdict_table(method, []).id
        row = GlanceRow(method=chart_title(*method), link=link)
        ranked = [v for v in rows if v.value is not None and v.rank is not None]
        if ranked:
            top = ranked[0]
            firsts = [v for v in ranked if v.rank == top.rank]
            row.fastest = " = ".join(v.entry.label for v in firsts) + (
                " (tied)" if len(firsts) > 1 else "")
            row.fastest_key = top.entry.key
            row.figure = f"{fmt(top.value)} Mbit/s"
            row.limit_pct = fmt(top.limit_pct) if top.limit_pct is not None else ""
            row.at = place(top.best) if top.best is not None else ""
            busier = top.busier
            if busier is not None and busier.median is not None:
                if top.cpu_noise:
                    row.cpu_note = top.cpu_noise
                    noisy = True
                else:
                    row.cpu = f"{busier.median:.0f} %"
        cheap = [v for v in rows if v.cpu_rank == 1]
        if cheap and sum(v.cpu_rank is not None for v in rows) > 1:   # as the verdict says
            row.cheapest = " = ".join(v.entry.label for v in cheap) + (
                " (tied)" if len(cheap) > 1 else "")
            row.cheapest_key = cheap[0].entry.key
            row.cheapest_figure = f"{fmt(cheap[0].per_cpu)} Mbit/s per CPU %"
        out.rows.append(row)
        for why in dict.fromkeys(v.not_ranked for v in rows if v.not_ranked):
            out.notes.append(f"{chart_title(*method)}: {why}.")
    if noisy:
        out.notes.append("— CPU: shown in the ranking only; too noisy to rank on here "
                         "(hover for why).")
    if any(r.fastest and not r.cheapest for r in out.rows[:len(verdicts)]):
        out.notes.append("No cheapest card where fewer than two cards' CPU figures rank.")
    out.unmeasured = _unmeasured(verdicts)
    return out


def other_row(t: Table) -> GlanceRow:
    """A verdict table of another family: its first ranked row, its first figure."""
    row = GlanceRow(method=t.title, link=t.id)
    try:
        label = t.columns.index("adapter")
    except ValueError:
        return row
    value = next((k for k, c in enumerate(t.columns)
                  if k > label and c not in ("frame (B)", "at")), None)
    at = t.columns.index("at") if "at" in t.columns else None
    for r, key in zip(t.rows, t.row_entries or [None] * len(t.rows), strict=False):
        if str(r[0]) == "1":
            row.fastest, row.fastest_key = str(r[label]), key
            if value is not None:
                row.figure = f"{r[value]} {t.columns[value]}"
            if at is not None:
                row.at = str(r[at])
            break
    return row


def _unmeasured(verdicts: dict[tuple[str, str, str], list[Verdict]]
                ) -> list[tuple[str, str, str]]:
    """One line per card: what it did not measure, the methods named only where they
    differ; a figure above the wire's limit is named as not ranked."""
    per: dict[str, tuple[str, dict[str, list[str]]]] = {}
    n_methods = len(verdicts)
    for method, rows in verdicts.items():
        name = chart_title(*method)
        for v in rows:
            words = gap_words(v)
            what = [w for w in words.split("; ") if w]
            if v.above:
                what.append(f"above the limit at {_points([place(c) for c, _ in v.above])}"
                            ", not ranked")
            if v.value is None and not v.above and not what:
                what.append("nothing measured")
            for w in what:
                per.setdefault(v.entry.key, (v.entry.label, {}))[1].setdefault(
                    w, []).append(name)
    out = []
    for key, (label, whats) in per.items():
        parts = [w if len(methods) == n_methods else f"{w} ({', '.join(methods)})"
                 for w, methods in whats.items()]
        out.append((key, label, "; ".join(parts)))
    return out
