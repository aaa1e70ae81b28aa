"""Per-configuration summaries of a run: the rows of summary.csv and of every table.

A configuration is (pair, point, test). Repetitions give best/median/mean/min/max/stdev
of the throughput of the trials that succeeded; a UDP search gives the rate it found
(sweep: the highest rate received; bisect: the rate received at the highest offered rate
that passes the loss criterion). The profile's rules (``select``, the search's
``loss_pct``) come from the :class:`~nicbench.config.profile.Profile` the run was made
with. CPU columns are means over successful trials: ``local`` is the sending host (where
the client runs), ``remote`` the receiving host.
"""

from __future__ import annotations

import csv
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, fields
from enum import StrEnum
from pathlib import Path
from typing import Any

from nicbench.config.profile import DEFAULT_LOSS_PCT, Profile, UntilStable
from nicbench.textfile import open_new
from nicbench.results.policy import (Better, figure, first_stop, interval, passes,
                                     stopping_statistic, summarize)
from nicbench.results.records import Failure, Kind, Status, TrialRecord, current

# The percentiles a latency row keeps (Latency's fields, as SummaryRow's columns).
LATENCY_FIELDS = ("p50_us", "p90_us", "p99_us", "p999_us", "max_us")


class RowStatus(StrEnum):
    """How much of a configuration was measured (summary.csv's ``status``)."""

    OK = "ok"                   # every repetition
    PARTIAL = "partial"         # some failed or were given up, some measured
    FAILED = "failed"           # none measured
    SKIPPED = "skipped"         # not run: its point could not be applied


@dataclass
class SummaryRow:
    pair: str
    adapter: str
    adapter_label: str
    tool: str
    test: str
    protocol: str
    point: str
    mtu: int
    status: RowStatus
    n_ok: int
    n_failed: int
    select: str                   # best | mean | median | udp-sweep | udp-bisect | frame-search
    selected_bps: float | None
    best_bps: float | None
    median_bps: float | None
    mean_bps: float | None
    min_bps: float | None
    max_bps: float | None
    stdev_bps: float | None
    cpu_local_pct: float | None
    cpu_remote_pct: float | None
    cpu_tool_pct: float | None
    reason: str | None
    failure: Failure | None = None   # the first failure's kind, when status is not ok
    # Repetitions until stable: how many ran and why they stopped ("stable at 0.41 % after
    # 6", "max reached (30) at 2.30 % spread"); empty for a fixed count.
    stopped: str | None = None
    # A latency test (round trips, lower is better; empty for a rate): each percentile is
    # the ``select`` statistic over the successful repetitions' own percentiles (best:
    # the lowest), the median's spread over them, the round trips they counted, and the
    # repetition whose median is the selected one (its CDF is the one a report draws).
    p50_us: float | None = None
    p90_us: float | None = None
    p99_us: float | None = None
    p999_us: float | None = None
    max_us: float | None = None
    p50_min_us: float | None = None
    p50_max_us: float | None = None
    p50_stdev_us: float | None = None
    latency_samples: int | None = None
    latency_repetition: int | None = None

    @property
    def search(self) -> bool:
        return self.select.startswith("udp-") or self.select == "frame-search"


COLUMNS = [f.name for f in fields(SummaryRow)]


def _mean(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.fmean(vals) if vals else None


def summary_rows(records: Iterable[TrialRecord],
                 profile: Profile | None = None) -> list[SummaryRow]:
    groups: dict[tuple[str, str, str], list[TrialRecord]] = {}
    for r in current(records):
        groups.setdefault((r.pair, r.point, r.test), []).append(r)
    return [_row(recs, profile) for recs in groups.values()]


def _row(recs: list[TrialRecord], profile: Profile | None) -> SummaryRow:
    first = recs[0]
    spec = profile.test(first.test) if profile is not None else None
    ok = [r for r in recs if r.ok]
    failed = [r for r in recs if r.status is Status.FAILED]
    skipped = [r for r in recs if r.kind is Kind.SKIPPED]
    given_up = [r for r in recs if r.kind is Kind.GIVEN_UP]
    rule = profile.select_for(spec) if profile is not None and spec is not None else "best"
    s = summarize([r.throughput_bps for r in ok if r.throughput_bps is not None])
    best = s.best
    if spec is not None and spec.frame_search is not None:
        # A small-packet search has a rate per frame size and loss bound, not one:
        # results/framerate.py (the report's small-packet table), never a mixed figure.
        best = selected = None
        rule = "frame-search"
    elif any(r.kind is Kind.UDP_SEARCH for r in recs):
        # The search's answer is its best: sweep, the most received (s.best); bisect,
        # what arrived at the highest offered rate within the loss criterion.
        method = first.search_method or "search"
        if method == "bisect":
            crit = spec.udp_search.loss_pct if spec is not None and spec.udp_search \
                else DEFAULT_LOSS_PCT
            top = max((r for r in ok if passes(r, crit)), key=lambda r: r.offered_bps or 0,
                      default=None)
            best = top.throughput_bps if top else None
        selected = best
        rule = f"udp-{method}"
    else:
        selected = s.selected(rule)
    if skipped:
        status = RowStatus.SKIPPED
    elif not ok:
        status = RowStatus.FAILED
    elif failed or given_up:
        status = RowStatus.PARTIAL
    else:
        status = RowStatus.OK
    why = next(iter(skipped or given_up or failed), None) if status is not RowStatus.OK \
        else None
    return SummaryRow(
        pair=first.pair, adapter=first.adapter, adapter_label=first.adapter_label,
        tool=first.tool, test=first.test, protocol=first.protocol, point=first.point,
        mtu=first.mtu, status=status, n_ok=len(ok), n_failed=len(failed), select=rule,
        selected_bps=selected, best_bps=best, median_bps=s.median, mean_bps=s.mean,
        min_bps=s.min, max_bps=s.max, stdev_bps=s.stdev,
        cpu_local_pct=_mean(r.cpu_sender_pct for r in ok),
        cpu_remote_pct=_mean(r.cpu_receiver_pct for r in ok),
        cpu_tool_pct=_mean(r.cpu_tool_pct for r in ok),
        reason=why.reason if why else None, failure=why.failure if why else None,
        stopped=_stopped(recs, profile.repetition_policy(spec)
                         if profile is not None and spec is not None else None, rule),
        **_latency_columns(ok, rule))


def _latency_columns(ok: list[TrialRecord], rule: str) -> dict[str, Any]:
    """A latency row's columns (none for a rate): each percentile by the rule over the
    repetitions (round trips: best is the lowest), and which repetition is selected (the
    one whose median is nearest the selected median; the earlier on a tie)."""
    reps = [(r, r.latency) for r in ok if r.latency is not None]
    if not reps:
        return {}
    cols: dict[str, Any] = {
        name: summarize([getattr(lat, name) for _, lat in reps], Better.LOWER).selected(rule)
        for name in LATENCY_FIELDS}
    p50 = summarize([lat.p50_us for _, lat in reps], Better.LOWER)
    target = p50.selected(rule) or 0.0
    chosen, _ = min(reps, key=lambda pair: (abs(pair[1].p50_us - target),
                                            pair[0].repetition or 0))
    cols.update(p50_min_us=p50.min, p50_max_us=p50.max, p50_stdev_us=p50.stdev,
                latency_samples=sum(lat.samples for _, lat in reps),
                latency_repetition=chosen.repetition)
    return cols


def _stopped(recs: list[TrialRecord], policy: int | UntilStable | None,
             rule: str) -> str | None:
    """Why an until-stable test's repetitions stopped, replayed from its stored records by
    the engine's own rule."""
    if not isinstance(policy, UntilStable):
        return None
    reps = sorted((r for r in recs if r.kind is Kind.REPETITION),
                  key=lambda r: r.repetition or 0)
    stop = first_stop(reps, policy, rule)
    if stop is not None:
        return stop.words()
    ci = interval([v for r in reps if r.ok and (v := figure(r)) is not None],
                  stopping_statistic(rule))
    return f"not stable yet after {len(reps)}" + ("" if ci is None else f" ({ci.words()})")


# A cell a spreadsheet would run as a formula: = + - @ first (and tab / CR, which some
# programs strip before looking). Numbers are written as numbers and never start so.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> object:
    """A value as a CSV cell that no spreadsheet runs: text starting like a formula gets a
    leading apostrophe (OWASP's advice); None is an empty cell."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def write_csv(path: str | Path, columns: list[str], rows: Iterable[Iterable[object]]) -> None:
    with open_new(path, newline="") as fh:      # never written through a link
        out = csv.writer(fh)
        out.writerow(columns)
        for row in rows:
            out.writerow([csv_cell(v) for v in row])


def write_summary(run_dir, profile: Profile | None = None) -> list[SummaryRow]:
    rows = summary_rows(run_dir.records(), profile)
    write_csv(run_dir.summary_file, COLUMNS,
              ([getattr(r, c) for c in COLUMNS] for r in rows))
    return rows
