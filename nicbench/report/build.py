"""From runs to the report's data: each family's figures, tables and verdict, and the
comparison, adapters, failures and setup around them.

The families are ``families/`` (one module each, listed in page order in
``families/__init__.py``); they return models (``model.py``) that say exactly what a chart
or table shows, built by the modules below; nothing here draws:

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
from nicbench.report import compare, tables
from nicbench.report.configs import Index, build_entries
from nicbench.report.failures import failures, failures_table
from nicbench.report.families import FAMILIES
from nicbench.report.family import Context, Part, glance_of, page_section
from nicbench.report.load import Run
from nicbench.report.model import Entry, Figure, Report, Table
from nicbench.report.reference import ReferenceFile
from nicbench.report.setup import setup_of
from nicbench.report.verdict import CSV_COLUMNS


def build(runs: list[Run], rates: dict[str, float] | None = None,
          reference: ReferenceFile | None = None,
          min_change_pct: float = compare.MIN_CHANGE_PCT,
          trend: list[Series] | None = None) -> Report:
    """The report's models: each family's (``families.FAMILIES``, in page order), then what
    frames them (the comparison, adapters, every configuration, failures, setup).
    ``trend``: the history of these adapters (a results store's); None: the history the
    runs themselves make (a section only with 3 runs or more)."""
    entries = build_entries(runs, rates or {})
    ix = Index(runs, entries)
    ctx = Context(ix, reference=reference, trend=trend)
    parts = [Part(fam, ctx, fam.figures(ctx), fam.tables(ctx), fam.verdict(ctx))
             for fam in FAMILIES]
    verdicts = [p.verdict for p in parts]
    rankings = [t for v in verdicts for t in v.tables]
    figures = [f for p in parts for f in p.figures]
    table_list: list[Table] = list(rankings)
    # every family's verdict rows in one verdict.csv, each row naming its own
    table_list.append(Table(id="verdict", family="verdict-csv", title="verdict",
                            columns=list(CSV_COLUMNS),
                            rows=[row for v in verdicts for row in v.csv_rows]))
    warnings = []
    comparison = len(runs) > 1
    if comparison:
        diffs = compare.differences(ix)
        table_list.append(compare.comparison_table(compare.compare(ix, min_change_pct,
                                                                   diffs)))
        table_list.append(compare.differences_table(diffs))
        warnings = compare.warnings(diffs)
    table_list += [t for p in parts for t in p.tables]
    fails = failures(ix)
    table_list += [tables.entries_table(entries), tables.summary_table(ix),
                   failures_table(ix, fails)]
    notes = []
    if any(e.label != e.adapter_label for e in entries):
        notes.append("The same adapter appears more than once; each is told apart by a "
                     "suffix in brackets: the run's label (A, B, ... or --label) when it "
                     "comes from several runs, the pair when one run tested it on several "
                     "pairs. Its entries are drawn in shades of its colour.")
    return Report(entries=entries, figures=figures, tables=table_list, failures=fails,
                  setup=setup_of(ix), verdict=[s for v in verdicts for s in v.sentences],
                  warnings=warnings, notes=notes, created_at=time.time(),
                  comparison=comparison, glance=glance_of(verdicts), rankings=rankings,
                  sections=[page_section(p) for p in parts],
                  publication=[f for p in parts if p.family.publishes for f in p.figures])


def publication_figures(runs: list[Run], rates: dict[str, float] | None = None
                        ) -> tuple[list[Entry], list[Figure]]:
    """The entries of ``runs`` and the figures of the families that publish, asked of
    them alone: no verdict, no comparison, no history (``nicbench figures``)."""
    entries = build_entries(runs, rates or {})
    ctx = Context(Index(runs, entries))
    return entries, [f for fam in FAMILIES if fam.publishes for f in fam.figures(ctx)]
