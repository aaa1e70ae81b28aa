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
from dataclasses import dataclass, field, fields
from enum import StrEnum
from pathlib import Path
from typing import Any

from nicbench.config.profile import DEFAULT_LOSS_PCT, Profile, UntilStable
from nicbench.display import csv_cell
from nicbench.textfile import replacing
from nicbench.results.policy import (Better, figure, first_stop, interval, passes,
                                     stopping_statistic, summarize)
from nicbench.results import roundtrips
from nicbench.results.records import CpuPart, Failure, Kind, Status, TrialRecord, current
from nicbench.results.roundtrips import Pooled

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
    # A latency test (round trips, lower is better; empty for a rate): each percentile of
    # all the successful repetitions' round trips pooled (results/roundtrips.py; empty
    # where too few round trips lie beyond it; from a histogram its bin's upper edge), the
    # spread of the repetitions' own p50, the round trips pooled, and the repetition
    # whose median is nearest the pooled one (its CDF is the one a report draws).
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
    # How the round trips were pooled (roundtrips.Pooled.source: full log, histogram,
    # summaries), each printed percentile's 95 % order-statistics interval and its lower
    # bin edge where from a histogram, and the repetitions' own p99 range.
    latency_source: str | None = None
    p50_low_us: float | None = None
    p50_ci_low_us: float | None = None
    p50_ci_high_us: float | None = None
    p99_low_us: float | None = None
    p99_ci_low_us: float | None = None
    p99_ci_high_us: float | None = None
    p999_low_us: float | None = None
    p999_ci_low_us: float | None = None
    p999_ci_high_us: float | None = None
    p99_min_us: float | None = None
    p99_max_us: float | None = None
    # The pooled percentiles themselves (not a CSV column): the report's cells.
    pooled: Pooled | None = field(default=None, repr=False, compare=False)

    @property
    def search(self) -> bool:
        return self.select.startswith("udp-") or self.select == "frame-search"


COLUMNS = [f.name for f in fields(SummaryRow) if f.name != "pooled"]
_COLUMN_SET = frozenset(COLUMNS)


def _mean(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.fmean(vals) if vals else None


def summary_rows(records: Iterable[TrialRecord], profile: Profile | None = None,
                 run_path: Path | None = None) -> list[SummaryRow]:
    """One row per configuration. ``run_path``: the run's directory, where a latency
    test's kept round trips are read from (without it, or without them, its percentiles
    are the median of the repetitions' own: ``roundtrips.from_summaries``)."""
    groups: dict[tuple[str, str, str], list[TrialRecord]] = {}
    for r in current(records):
        groups.setdefault((r.pair, r.point, r.test), []).append(r)
    return [_row(recs, profile, run_path) for recs in groups.values()]


def _row(recs: list[TrialRecord], profile: Profile | None,
         run_path: Path | None = None) -> SummaryRow:
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
        cpu_local_pct=_mean(CpuPart.SENDER_BUSY.of(r) for r in ok),
        cpu_remote_pct=_mean(CpuPart.RECEIVER_BUSY.of(r) for r in ok),
        cpu_tool_pct=_mean(r.cpu_tool_pct for r in ok),
        reason=why.reason if why else None, failure=why.failure if why else None,
        stopped=_stopped(recs, profile.repetition_policy(spec)
                         if profile is not None and spec is not None else None, rule),
        **_latency_columns(ok, run_path))


def _latency_columns(ok: list[TrialRecord], run_path: Path | None) -> dict[str, Any]:
    """A latency row's columns (none for a rate): each percentile of the repetitions'
    round trips pooled (``roundtrips.py``), never one repetition's figure standing for
    the configuration; and which repetition a CDF draws (the one whose own median is
    nearest the pooled one; the earlier on a tie)."""
    reps = [(r, r.latency) for r in ok if r.latency is not None]
    if not reps:
        return {}
    pooled = latency_pool(reps, run_path)
    cols: dict[str, Any] = {"pooled": pooled, "latency_source": pooled.source,
                            "max_us": max(lat.max_us for _, lat in reps),
                            "latency_samples": pooled.n}
    for name, _, label in roundtrips.QUANTILES:
        pc = pooled[label]
        cols[name] = pc.value
        key = name.removesuffix("_us")
        if f"{key}_ci_low_us" in _COLUMN_SET:
            cols[f"{key}_ci_low_us"], cols[f"{key}_ci_high_us"] = pc.ci_low, pc.ci_high
            cols[f"{key}_low_us"] = pc.low if pc.binned else None
    p50 = summarize([lat.p50_us for _, lat in reps], Better.LOWER)
    p99 = [lat.p99_us for _, lat in reps if lat.samples >= roundtrips.needed(0.99)]
    target = pooled["p50"].value if pooled["p50"].value is not None else (p50.median or 0.0)
    chosen, _ = min(reps, key=lambda pair: (abs(pair[1].p50_us - target),
                                            pair[0].repetition or 0))
    low, high = p50.min, p50.max
    if pooled.source == "histogram" and pooled["p50"].reps_low is not None:
        # a repetition's own median is a bin too: the range spans the bins' edges
        low, high = pooled["p50"].reps_low, pooled["p50"].reps_high
    cols.update(p50_min_us=low, p50_max_us=high, p50_stdev_us=p50.stdev,
                p99_min_us=min(p99, default=None), p99_max_us=max(p99, default=None),
                latency_repetition=chosen.repetition)
    return cols


def latency_pool(reps: list[tuple[TrialRecord, Any]], run_path: Path | None,
                 raw_of: Any = None) -> Pooled:
    """The repetitions' round trips pooled: from the round trips they kept under
    ``run_path`` where every one kept them, else from their own summaries. ``raw_of``
    (record -> (tool, raw files)) picks another tool's files, a probe's beside a load."""
    parts: list[roundtrips.Trips] = []
    if run_path is not None:
        for r, _ in reps:
            tool, raw = raw_of(r) if raw_of is not None else (r.tool, r.raw)
            trips = roundtrips.kept(run_path, raw, tool)
            if trips is None:
                parts = []
                break
            parts.append(trips)
    pooled = roundtrips.pooled(parts, [(lat.samples, lat.mean_us) for _, lat in reps]) \
        if parts else None
    if pooled is None:
        pooled = roundtrips.from_summaries(
            [(lat.samples, {n: getattr(lat, n) for n, _, _ in roundtrips.QUANTILES})
             for _, lat in reps])
    assert pooled is not None
    return pooled


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


def write_csv(path: str | Path, columns: list[str], rows: Iterable[Iterable[object]]) -> None:
    # a temporary file renamed when complete: never written through a link, never cut
    with replacing(path, newline="") as fh:     # short by Ctrl-C
        out = csv.writer(fh)
        out.writerow(columns)
        for row in rows:
            out.writerow([csv_cell(v) for v in row])


def write_summary(run_dir, profile: Profile | None = None) -> list[SummaryRow]:
    rows = summary_rows(run_dir.records(), profile, Path(run_dir.path))
    write_csv(run_dir.summary_file, COLUMNS,
              ([getattr(r, c) for c in COLUMNS] for r in rows))
    return rows
