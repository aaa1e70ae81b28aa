"""The verdict: which card is fastest, at what frame size, at what CPU cost.

As the reviews' conclusions did, per adapter and method (a test of the profile): the best
figure it reached and the point where it reached it, that figure as a share of the wire's
limit at that point, the CPU load of both hosts in the repetition that gave it, the speed
per CPU % of the busier host, and what could not be measured and why. Per method a
ranking sentence names the order.

The figure is the configuration's selected value (the profile's ``select``), except for
netPIPE, whose figure is the sustained plateau of its curve (``netpipe.plateau``), not a
small message's burst.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable

from nicbench.report.bars import busier_cpu, selected
from nicbench.report.configs import MBIT, Config, Index, chart_title, fmt, mbit, tools_with
from nicbench.report.model import Entry, Sentence, Table
from nicbench.report.netpipe import plateau
from nicbench.report.theory import FLAG_MARGIN

SENTENCE_NAMES = 6        # a ranking sentence names this many adapters, then the slowest

CSV_COLUMNS = ["adapter", "adapter_id", "run", "test", "tool", "rank", "point",
               "selected_bps", "figure", "limit_bps", "limit_pct", "cpu_sender_pct",
               "cpu_receiver_pct", "cpu_statistic", "mbit_per_cpu_pct", "gain_pct",
               "status", "not_measured"]


@dataclass
class Gap:
    """A point where an adapter did not measure in full."""

    point: str               # "MTU 9000"
    word: str                # "refused"; "" when some repetitions measured
    counts: str              # "0/15 (15 not run)"

    def __str__(self) -> str:
        return f"{self.point}: {self.word + ' ' if self.word else ''}{self.counts}"


@dataclass
class Verdict:
    entry: Entry
    method: tuple[str, str, str]          # (tool, protocol, test) of the chart
    test: str                             # the profile's test name
    best: Config | None                   # the configuration of the best figure
    value: float | None                   # Mbit/s
    figure: str                           # what the figure is: "best of 15", "plateau"
    status: str                           # ok | partial | not measured
    gaps: list[Gap]
    gain_pct: float | None = None         # best against the smallest point's figure
    smallest: str = ""                    # that point ("MTU 1500")
    rank: int | None = None

    @property
    def missing(self) -> list[str]:
        return [str(g) for g in self.gaps]

    @property
    def limit(self) -> float | None:
        return mbit(self.best.limit_bps) if self.best is not None else None

    @property
    def limit_pct(self) -> float | None:
        if self.value is None or not self.limit:
            return None
        return 100.0 * self.value / self.limit

    def cpu(self, field_name: str) -> float | None:
        return self.best.shown_cpu(field_name) if self.best is not None else None

    @property
    def per_cpu(self) -> float | None:
        cpu = busier_cpu(self.best) if self.best is not None else None
        if self.value is None or not cpu:
            return None
        return self.value / cpu


def figure_of(tool: str) -> tuple[str, Callable[[Config], float | None]]:
    if tool in tools_with("curve"):
        return "plateau", plateau
    return "selected", selected


def verdicts(ix: Index) -> dict[tuple[str, str, str], list[Verdict]]:
    out: dict[tuple[str, str, str], list[Verdict]] = {}
    for method, configs in ix.charts().items():
        kind, value = figure_of(method[0])
        rows = []
        for e in ix.entries_of(configs):
            mine = sorted((c for c in configs if c.entry.key == e.key), key=lambda c: c.mtu)
            vals = [(value(c), c) for c in mine]
            measured = [(v, c) for v, c in vals if v is not None]
            best_v, best_c = max(measured, key=lambda vc: vc[0]) if measured else (None, None)
            gaps = [Gap(c.group.label, c.word, c.counts) if v is None
                    else Gap(c.group.label, "", c.counts) for v, c in vals
                    if v is None or c.failed or c.not_run]
            status = "not measured" if best_c is None else ("partial" if gaps else "ok")
            what = "plateau" if kind == "plateau" else (
                best_c.rule + (f" of {best_c.planned}" if not best_c.search else "")
                if best_c is not None else "")
            gain, smallest = None, ""
            if best_c is not None and best_v is not None and measured \
                    and measured[0][1] is not best_c and measured[0][0]:
                gain = 100.0 * (best_v / measured[0][0] - 1.0)
                smallest = measured[0][1].group.label
            rows.append(Verdict(entry=e, method=method, test=(best_c or mine[0]).test,
                                best=best_c, value=best_v, figure=what, status=status,
                                gaps=gaps, gain_pct=gain, smallest=smallest))
        ranked = sorted(rows, key=lambda v: (v.value is None, -(v.value or 0.0),
                                             ix.order[v.entry.key]))
        for k, v in enumerate(ranked, 1):
            v.rank = k if v.value is not None else None
        out[method] = ranked
    return out


def _name(v: Verdict) -> str:
    return f"{v.entry.label} {v.value:.1f} at {v.best.group.label}" if v.best else \
        v.entry.label


def sentence(method: tuple[str, str, str], rows: list[Verdict]) -> Sentence:
    """"iperf3 TCP: X fastest, 990.0 Mbit/s at MTU 9000 (100.0 % of the wire's limit;
    CPU 48 % sending, 47 % receiving; +5.2 % over MTU 1500). Then Y 985.0 at MTU 6000, ...
    Gaps: Z refused at MTU 6000, 9000."."""
    title = chart_title(*method)
    ranked = [v for v in rows if v.value is not None]
    if not ranked:
        return Sentence(title, f"{title}: nothing was measured.")
    top = ranked[0]
    text = f"{title}: {top.entry.label} fastest, {top.value:.1f} Mbit/s"
    if top.best is not None:
        text += f" at {top.best.group.label}"
    bits = []
    if top.limit_pct is not None:
        over = ""
        if top.limit_pct > 100 * (1 + FLAG_MARGIN):
            over = (", above it: the lab's token bucket lets bursts through, see the notes "
                    "of its chart" if top.entry.emulated else
                    ", above it: check the link rate and the raw output")
        bits.append(f"{top.limit_pct:.1f} % of the wire's limit{over}")
    snd, rcv = top.cpu("cpu_sender_pct"), top.cpu("cpu_receiver_pct")
    if snd is not None or rcv is not None:
        bits.append(f"CPU {fmt(snd, 0) or '?'} % sending, {fmt(rcv, 0) or '?'} % receiving")
    if top.gain_pct is not None and top.smallest:
        bits.append(f"{top.gain_pct:+.1f} % over {top.smallest}")
    if bits:
        text += f" ({'; '.join(bits)})"
    text += "."
    rest = ranked[1:]
    if rest:
        shown = rest[:SENTENCE_NAMES - 1]
        names = [_name(v) for v in shown]
        if len(rest) > len(shown):
            names.append(f"{len(rest) - len(shown)} more; slowest {_name(rest[-1])}")
        text += " Then " + ", ".join(names) + "."
    gaps = [v for v in rows if v.gaps and any(g.word for g in v.gaps)]
    if gaps:
        listed = "; ".join(f"{v.entry.label} {_words(v)}" for v in gaps[:SENTENCE_NAMES])
        more = f"; {len(gaps) - SENTENCE_NAMES} more" if len(gaps) > SENTENCE_NAMES else ""
        text += f" Not measured: {listed}{more}."
    return Sentence(title, text)


def _words(v: Verdict) -> str:
    """The gaps of one adapter in a few words: "refused at MTU 6000, 9000, 16000"."""
    by_word: dict[str, list[str]] = {}
    for g in v.gaps:
        if g.word:
            by_word.setdefault(g.word, []).append(g.point)
    return ", ".join(f"{w} at {_points(points)}" for w, points in by_word.items())


def _points(points: list[str]) -> str:
    if len(points) > 1 and all(p.startswith("MTU ") for p in points):
        return "MTU " + ", ".join(p.removeprefix("MTU ") for p in points)
    return ", ".join(points)


def verdict_table(method: tuple[str, str, str], rows: list[Verdict]) -> Table:
    title = chart_title(*method)
    t = Table(id="verdict-" + "-".join(p for p in method if p), family="verdict",
              title=title,
              columns=["rank", "adapter", "best Mbit/s", "at", "figure", "% of limit",
                       "CPU sender %", "CPU receiver %", "Mbit/s per CPU %",
                       "vs smallest point", "not measured"])
    for v in rows:
        pct = v.limit_pct
        flag = " !" if pct is not None and pct > 100 * (1 + FLAG_MARGIN) else ""
        t.rows.append([v.rank or "", v.entry.label, fmt(v.value) or "not measured",
                       v.best.group.label if v.best else "", v.figure,
                       (fmt(pct) + flag) if pct is not None else "",
                       fmt(v.cpu("cpu_sender_pct"), 0), fmt(v.cpu("cpu_receiver_pct"), 0),
                       fmt(v.per_cpu),
                       f"{v.gain_pct:+.1f} % over {v.smallest}" if v.gain_pct is not None
                       else "",
                       "; ".join(v.missing)])
        t.row_entries.append(v.entry.key)
    return t


def verdict_csv_rows(all_rows: dict[tuple[str, str, str], list[Verdict]]) -> list[list[object]]:
    out: list[list[object]] = []
    for method, rows in all_rows.items():
        for v in rows:
            c = v.best
            out.append([
                v.entry.label, v.entry.adapter, v.entry.run_label, v.test, method[0], v.rank,
                c.point if c else "", _num(v.value * MBIT if v.value is not None else None),
                v.figure, _num(c.limit_bps if c else None), _num(v.limit_pct, 2),
                _num(v.cpu("cpu_sender_pct"), 2), _num(v.cpu("cpu_receiver_pct"), 2),
                c.statistic if c else "", _num(v.per_cpu, 3), _num(v.gain_pct, 2),
                v.status, "; ".join(v.missing)])
    return out


def _num(value: float | None, digits: int = 1) -> object:
    return "" if value is None else round(value, digits)
