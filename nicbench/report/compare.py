"""Comparison of runs: the same adapter in two runs (two drivers, two nights, two labs).

Entries are paired by the adapter's inventory id (and, where one run tested that adapter
on several pairs, by the pair's name). Each later run is compared with the first run that
has the adapter ("A"), configuration by configuration (test and point of the same name):

- the figure of each run (the selected value when both runs select the same way, else the
  median of each, and the table says which), the change in Mbit/s and %;
- the p-value of the two-sided Mann-Whitney U test on the stored repetitions
  (``stats.py``), and a verdict: ``faster`` or ``slower`` when p < 0.05 (the direction of
  the medians), ``within noise`` otherwise, ``not comparable`` when one run has no
  successful repetition there (or no such test or point at all).

Before the table, every way the runs differ in method is named: the selection rule,
repetitions, the test's parameters, kernels, drivers, offloads and tool versions; a
difference between best of 2 and median of 3 is drawn in the same chart, and the reader
must know it.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass

from nicbench.report.configs import MBIT, Config, Index, fmt, mbit, point_label, tools_with
from nicbench.report.load import Run
from nicbench.report.model import Entry, Table, MethodWarning
from nicbench.report.netpipe import plateau, plateau_of
from nicbench.report.stats import ALPHA, NAME, mann_whitney_p, method, smallest_p
from nicbench.results.facts import InterfaceFacts

CSV_COLUMNS = ["adapter", "adapter_id", "test", "point", "a_run", "b_run", "statistic",
               "a_bps", "b_bps", "change_bps", "change_pct", "a_n", "b_n", "p_value",
               "significance_test", "verdict", "note"]


@dataclass
class Comparison:
    a: Entry
    b: Entry
    test: str
    point: str
    mtu: int
    statistic: str
    a_value: float | None        # Mbit/s
    b_value: float | None
    a_n: int
    b_n: int
    p: float | None
    verdict: str
    note: str = ""

    @property
    def change(self) -> float | None:
        if self.a_value is None or self.b_value is None:
            return None
        return self.b_value - self.a_value

    @property
    def change_pct(self) -> float | None:
        if self.change is None or not self.a_value:
            return None
        return 100.0 * self.change / self.a_value


def pairs(ix: Index) -> list[tuple[Entry, Entry]]:
    """(A, B) entry pairs: each adapter's entry in the first run that has it, with its
    entry in every later run."""
    by_adapter: dict[str, list[Entry]] = defaultdict(list)
    for e in ix.entries:
        by_adapter[e.adapter].append(e)
    out = []
    for entries in by_adapter.values():
        runs = sorted({e.run_index for e in entries})
        if len(runs) < 2:
            continue
        first = [e for e in entries if e.run_index == runs[0]]
        for e in entries:
            if e.run_index == runs[0]:
                continue
            same_pair = [a for a in first if a.pair == e.pair]
            a = same_pair[0] if same_pair else first[0]
            out.append((a, e))
    return out


def _samples(c: Config | None) -> list[float]:
    """The repetitions' figures in Mbit/s: throughput, or a netPIPE run's plateau."""
    if c is None:
        return []
    if c.tool in tools_with("curve"):
        return [v / MBIT for v in (plateau_of(r) for r in c.ok) if v is not None]
    return [r.throughput_bps / MBIT for r in c.ok if r.throughput_bps is not None]


def _figure(c: Config, same_rule: bool) -> float | None:
    if c.tool in tools_with("curve"):
        if same_rule:
            return plateau(c)
        vals = _samples(c)
        return statistics.median(vals) if vals else None
    if same_rule:
        return mbit(c.row.selected_bps)
    return mbit(c.row.median_bps)


def compare(ix: Index) -> list[Comparison]:
    out = []
    for a, b in pairs(ix):
        keys: dict[tuple[str, str], int] = {}
        for c in ix.configs:
            if c.entry.key in (a.key, b.key):
                keys.setdefault((c.test, c.point), c.mtu)
        ordered = sorted(keys.items(), key=lambda kv: (_test_rank(ix, a, b, kv[0][0]),
                                                       kv[1], kv[0][1]))
        for (test, point), mtu in ordered:
            ca = ix.get(a.run_index, a.pair, point, test)
            cb = ix.get(b.run_index, b.pair, point, test)
            out.append(_compare_one(a, b, test, point, mtu, ca, cb))
    return out


def _test_rank(ix: Index, a: Entry, b: Entry, test: str) -> int:
    for e in (a, b):
        c = next((c for c in ix.configs if c.entry.key == e.key and c.test == test), None)
        if c is not None:
            return ix.test_order(c)
    return 0


def _compare_one(a: Entry, b: Entry, test: str, point: str, mtu: int, ca: Config | None,
                 cb: Config | None) -> Comparison:
    same_rule = ca is not None and cb is not None and ca.rule == cb.rule
    if ca is not None and cb is not None:
        stat = ca.rule if same_rule else "median (the runs select differently)"
        if ca.tool in tools_with("curve"):
            stat = "plateau" + ("" if same_rule else ", median of the repetitions")
    else:
        stat = ""
    sa, sb = _samples(ca), _samples(cb)
    va = _figure(ca, same_rule) if ca is not None else None
    vb = _figure(cb, same_rule) if cb is not None else None
    comp = Comparison(a=a, b=b, test=test, point=point, mtu=mtu, statistic=stat,
                      a_value=va, b_value=vb, a_n=len(sa), b_n=len(sb), p=None,
                      verdict="not comparable")
    if ca is None or cb is None:
        missing = a if ca is None else b
        comp.note = f"not measured in run {missing.run_label} (no such test or point)"
        return comp
    if not sa or not sb:
        failed = ca if not sa else cb
        comp.note = f"run {failed.entry.run_label}: {failed.word} {failed.counts}"
        return comp
    comp.p = mann_whitney_p(sa, sb)
    if comp.p is not None and comp.p < ALPHA:
        comp.verdict = "faster" if statistics.median(sb) > statistics.median(sa) else "slower"
    else:
        comp.verdict = "within noise"
        floor = smallest_p(len(sa), len(sb))
        if floor >= ALPHA:
            comp.note = (f"{len(sa)} and {len(sb)} repetitions cannot show a difference: "
                         f"the smallest p possible is {floor:.2g}")
    if method(len(sa), len(sb)) != "exact":
        comp.note = (comp.note + "; " if comp.note else "") + "p by normal approximation"
    return comp


def comparison_table(comps: list[Comparison]) -> Table:
    t = Table(id="comparison", family="comparison", title="Each adapter, test and point",
              columns=["adapter", "test", "point", "A", "B", "figure", "A Mbit/s",
                       "B Mbit/s", "change Mbit/s", "change %", "n A/B", "p", "verdict",
                       "note"],
              caption=(f"Each adapter in a later run against the first run that has it. "
                       f"p: {NAME}; faster or slower when p < {ALPHA:g} (direction of the "
                       "medians), else within noise; not comparable when a run has no "
                       "successful repetition there."))
    for c in comps:
        t.rows.append([c.a.adapter_label, c.test, point_label(c.point, c.mtu), c.a.run_label,
                       c.b.run_label, c.statistic, fmt(c.a_value), fmt(c.b_value),
                       f"{c.change:+.1f}" if c.change is not None else "",
                       f"{c.change_pct:+.2f}" if c.change_pct is not None else "",
                       f"{c.a_n}/{c.b_n}", f"{c.p:.3g}" if c.p is not None else "",
                       c.verdict, c.note])
        t.row_entries.append(c.b.key)
        t.csv_rows.append([c.a.adapter_label, c.a.adapter, c.test, c.point, c.a.run_label,
                           c.b.run_label, c.statistic, _bps(c.a_value), _bps(c.b_value),
                           _bps(c.change), _round(c.change_pct, 3), c.a_n, c.b_n,
                           _round(c.p, 6), NAME if c.p is not None else "", c.verdict, c.note])
    t.csv_columns = list(CSV_COLUMNS)
    return t


def _bps(mbit_value: float | None) -> object:
    return "" if mbit_value is None else round(mbit_value * MBIT, 1)


def _round(value: float | None, digits: int) -> object:
    return "" if value is None else round(value, digits)


# -- method differences -----------------------------------------------------------------
def method_warnings(ix: Index) -> list[MethodWarning]:
    """Every way two compared runs differ in method, once per pair of runs."""
    out: list[MethodWarning] = []
    run_pairs: dict[tuple[int, int], list[tuple[Entry, Entry]]] = defaultdict(list)
    for a, b in pairs(ix):
        run_pairs[(a.run_index, b.run_index)].append((a, b))
    for (ia, ib), entry_pairs in sorted(run_pairs.items()):
        ra, rb = ix.runs[ia], ix.runs[ib]
        who = f"runs {ra.label} and {rb.label}"
        tests = sorted({c.test for c in ix.configs
                        if c.entry.key in {e.key for ab in entry_pairs for e in ab}})
        out += _profile_differences(ra, rb, tests, who)
        out += _host_differences(ra, rb, who)
        for a, b in entry_pairs:
            out += _interface_differences(ra, rb, a, b, who)
        out += _tool_differences(ra, rb, who)
    return out


def _profile_differences(ra: Run, rb: Run, tests: list[str], who: str) -> list[MethodWarning]:
    out = []
    pa, pb = ra.profile, rb.profile
    if pa is None or pb is None:
        missing = ra if pa is None else rb
        return [MethodWarning("method", f"{who}: run {missing.label} has no manifest, so its "
                                  "method (selection, repetitions, versions) is unknown")]
    for test in tests:
        ta, tb = pa.test(test), pb.test(test)
        if ta is None or tb is None:
            continue
        sa, sb = pa.select_for(ta), pb.select_for(tb)
        na, nb = pa.repetitions_for(ta), pb.repetitions_for(tb)
        if sa != sb and (na, nb) != (1, 1):     # one run each: nothing was selected
            out.append(MethodWarning("selection rule",
                               f"{who} select differently in {test}: {ra.label} keeps the "
                               f"{sa} of {na}, {rb.label} the {sb} of {nb}; the charts draw "
                               "each run's own selection side by side, the comparison table "
                               "compares the medians"))
        if na != nb:
            out.append(MethodWarning("repetitions", f"{who} ran {test} {na} and {nb} times: the "
                                              "spread and a best-of are not alike"))
        if ta.params != tb.params:
            out.append(MethodWarning("parameters", f"{who} ran {test} with different parameters: "
                                             f"{dict(ta.params)} against {dict(tb.params)}"))
    return out


def _kernels(run: Run) -> set[str]:
    if run.manifest is None:
        return set()
    return {f.kernel for f in run.manifest.hosts.values() if f.kernel}


def _host_differences(ra: Run, rb: Run, who: str) -> list[MethodWarning]:
    ka, kb = _kernels(ra), _kernels(rb)
    if ka and kb and ka != kb:
        return [MethodWarning("kernel", f"{who} ran on different kernels: "
                                  f"{', '.join(sorted(ka))} against {', '.join(sorted(kb))}")]
    return []


def _iface(run: Run, pair: str) -> list[InterfaceFacts]:
    if run.manifest is None:
        return []
    return [f for k, f in sorted(run.manifest.interfaces.items()) if k.split("/")[0] == pair]


def _interface_differences(ra: Run, rb: Run, a: Entry, b: Entry, who: str) -> list[MethodWarning]:
    out: list[MethodWarning] = []
    fa, fb = _iface(ra, a.pair), _iface(rb, b.pair)
    if not fa or not fb:
        return out
    da = {f"{f.driver} {f.driver_version or ''}".strip() for f in fa}
    db = {f"{f.driver} {f.driver_version or ''}".strip() for f in fb}
    if da != db or a.adapter_label != b.adapter_label:
        out.append(MethodWarning("driver", f"{a.adapter_label} / {b.adapter_label}: drivers "
                                     f"{', '.join(sorted(da))} in {ra.label} against "
                                     f"{', '.join(sorted(db))} in {rb.label}"))
    oa, ob = [f.offloads_on for f in fa], [f.offloads_on for f in fb]
    if oa != ob:
        on_a = {k for o in oa for k in o}
        on_b = {k for o in ob for k in o}
        diff = sorted(on_a ^ on_b)
        out.append(MethodWarning("offloads", f"{a.adapter_label}: offloads differ between "
                                       f"{ra.label} and {rb.label} ({', '.join(diff) or 'per host'})"))
    return out




def _versions(run: Run) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for r in run.records:
        if r.version:
            out[r.tool].add(str(r.version))
    return out


def _tool_differences(ra: Run, rb: Run, who: str) -> list[MethodWarning]:
    out = []
    va, vb = _versions(ra), _versions(rb)
    for tool in sorted(set(va) & set(vb)):
        if va[tool] != vb[tool]:
            out.append(MethodWarning("tool versions",
                               f"{who}: {tool} {'/'.join(sorted(va[tool]))} against "
                               f"{'/'.join(sorted(vb[tool]))}"))
    return out
