"""From runs to the report's data: the chart families, tables, verdict and comparison.

Each family lives in its own module and returns models (``model.py``) that say exactly
what a chart or table shows; nothing here draws:

    configs.py     entries (names, colours) and configurations, built once
    verdict.py     the verdict: best figure per adapter and method, ranking sentences
    loaded.py      latency under load: idle and loaded round trips, increase, RPM
    compare.py     run against run: pairs, the shift and the test on the repetitions, words
    differences.py what differs between compared runs (hosts, cards, tools, method)
    bars.py        speed rankings, heatmaps, CPU and cost charts of the rate tools
    netpipe.py     netPIPE curves per adapter and per MTU, and the plateau
    streams.py     throughput against parallel streams, and both directions at once
    smallpkt.py    frames/s against frame size, NDR/PDR table, highest small-packet rate
    latency.py     round-trip percentiles, a CDF, and the lowest-tail-latency verdict
    tables.py      adapters, every configuration, netio-style tables
    failures.py    what did not measure, and why
    setup.py       hosts, versions, commands
    reference.py   published figures (--reference)
"""

from __future__ import annotations

import time

from nicbench.history.model import Series
from nicbench.report import (bars, compare, glance, history, latency, loaded, netpipe, smallpkt,
                             streams, tables, verdict)
from nicbench.report.configs import Index, build_entries
from nicbench.report.failures import failures, failures_table
from nicbench.report.load import Run
from nicbench.report.model import Report, Table
from nicbench.report.reference import ReferenceFile, reference_figures
from nicbench.report.setup import setup_of


def build(runs: list[Run], rates: dict[str, float] | None = None,
          reference: ReferenceFile | None = None,
          min_change_pct: float = compare.MIN_CHANGE_PCT,
          trend: list[Series] | None = None) -> Report:
    """The report's models. ``trend``: the history of these adapters (a results store's);
    None: the history the runs themselves make (a section only with 3 runs or more)."""
    entries = build_entries(runs, rates or {})
    ix = Index(runs, entries)
    verdicts = verdict.verdicts(ix)
    table_list: list[Table] = [glance.ranking_table(m, rows) for m, rows in verdicts.items()]
    small_sentences, small_verdict = smallpkt.verdict(ix)
    table_list += small_verdict
    lat_sentences, lat_verdicts = latency.verdict(ix)
    table_list += lat_verdicts
    under_load = loaded.loaded_rows(ix)
    # every verdict row family in one verdict.csv, each row naming its own
    table_list.append(Table(id="verdict", family="verdict-csv", title="verdict",
                            columns=list(verdict.CSV_COLUMNS),
                            rows=verdict.verdict_csv_rows(verdicts)
                            + latency.verdict_csv_rows(ix)
                            + [row for test, rows in under_load.items()
                               for row in loaded.verdict_csv_rows(test, rows)]
                            + smallpkt.verdict_csv_rows(ix)))
    warnings = []
    comparison = len(runs) > 1
    if comparison:
        diffs = compare.differences(ix)
        table_list.append(compare.comparison_table(compare.compare(ix, min_change_pct,
                                                                   diffs)))
        table_list.append(compare.differences_table(diffs))
        warnings = compare.warnings(diffs)
    figures = (bars.speed_figures(ix) + bars.heatmap_figures(ix) + bars.cpu_figures(ix)
               + bars.cost_figures(ix))
    np_figures, np_tables = netpipe.netpipe_figures(ix)
    figures += np_figures
    st_figures, st_tables = streams.streams_figures(ix)
    figures += st_figures + smallpkt.figures(ix)
    lat_figures, lat_tables = latency.figures(ix)
    figures += lat_figures
    table_list += lat_tables
    if reference is not None:
        ref_figures, ref_table = reference_figures(ix, reference)
        figures += ref_figures
        table_list.append(ref_table)
    series = history.of_runs(runs) if trend is None else trend
    if history.shown(series):
        figures += history.history_figures(series)
        table_list.append(history.history_table(series))
    for test, rows in under_load.items():
        table_list.append(loaded.verdict_table(test, rows))
        table_list.append(loaded.loaded_table(test, rows))
        figures.append(loaded.loaded_figure(test, rows))
    first_screen = glance.glance(verdicts, small_verdict + lat_verdicts + [
        t for t in table_list if t.family == "verdict-loaded"])
    fails = failures(ix)
    table_list += ([tables.entries_table(entries), tables.summary_table(ix), *tables.netio_tables(ix), *tables.length_tables(ix), *np_tables, *st_tables, *smallpkt.table(ix), failures_table(ix, fails)])
    notes = []
    if any(e.label != e.adapter_label for e in entries):
        notes.append("The same adapter appears more than once; each is told apart by a "
                     "suffix in brackets: the run's label (A, B, ... or --label) when it "
                     "comes from several runs, the pair when one run tested it on several "
                     "pairs. Its entries are drawn in shades of its colour.")
    return Report(entries=entries, figures=figures, tables=table_list, failures=fails,
                  setup=setup_of(ix),
                  verdict=[verdict.sentence(m, rows) for m, rows in verdicts.items()]
                  + small_sentences + lat_sentences
                  + [loaded.sentence(t, rows) for t, rows in under_load.items()],
                  warnings=warnings, notes=notes, created_at=time.time(),
                  comparison=comparison, glance=first_screen,
                  cpu_note=bars.cpu_note(ix, figures))
