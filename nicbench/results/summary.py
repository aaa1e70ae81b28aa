"""Per-configuration summaries of a run: the rows of summary.csv and of every table.

A configuration is (pair, point, test). Repetitions give best/median/mean/min/max/stdev
of the throughput of the trials that succeeded; a UDP search gives the rate it found
(sweep: the highest rate received; bisect: the rate received at the highest offered rate
within the loss criterion). CPU columns are means over successful trials: ``local`` is
the sending host (where the client runs), ``remote`` the receiving host.
"""

from __future__ import annotations

import statistics
from typing import Iterable

import pandas as pd

from nicbench.execution.policy import summarize
from nicbench.execution.udpsearch import within_loss

COLUMNS = ["pair", "adapter", "adapter_label", "tool", "test", "protocol", "point", "mtu",
           "status", "n_ok", "n_failed", "select", "selected_bps", "best_bps", "median_bps",
           "mean_bps", "min_bps", "max_bps", "stdev_bps", "cpu_local_pct", "cpu_remote_pct",
           "cpu_tool_pct", "reason"]


def _mean(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.fmean(vals) if vals else None


def summary_rows(records: list[dict], select_for: dict[str, str] | None = None,
                 loss_for: dict[str, float] | None = None) -> list[dict]:
    select_for = select_for or {}
    loss_for = loss_for or {}
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        groups.setdefault((r["pair"], r["point"], r["test"]), []).append(r)
    rows = []
    for (pair, point, test), recs in groups.items():
        first = recs[0]
        ok = [r for r in recs if r["status"] == "ok" and r.get("throughput_bps") is not None]
        failed = [r for r in recs if r["status"] == "failed"]
        skipped = [r for r in recs if r["kind"] == "skipped"]
        given_up = [r for r in recs if r["kind"] == "given-up"]
        rule = select_for.get(test, "best")
        s = summarize([r["throughput_bps"] for r in ok])
        stats = dict(best_bps=s.best, median_bps=s.median, mean_bps=s.mean, min_bps=s.min,
                     max_bps=s.max, stdev_bps=s.stdev)
        if any(r["kind"] == "udp-search" for r in recs):
            # The search's answer is its best: sweep, the most received (s.best); bisect,
            # what arrived at the highest offered rate within the loss criterion.
            method = first.get("extra", {}).get("search_method")
            if method == "bisect":
                crit = loss_for.get(test, 0.1)
                top = max((r for r in ok if within_loss(r["status"], r.get("udp"),
                                                        r["throughput_bps"],
                                                        r.get("offered_bps"), crit)),
                          key=lambda r: r["offered_bps"], default=None)
                stats["best_bps"] = top["throughput_bps"] if top else None
            selected = stats["best_bps"]
            rule = f"udp-{method or 'search'}"
        else:
            selected = s.selected(rule)
        if skipped:
            status = "skipped"
        elif not ok:
            status = "failed"
        elif failed or given_up:
            status = "partial"
        else:
            status = "ok"
        reason = (skipped or given_up or failed or [{}])[0].get("reason") \
            if status != "ok" else None
        rows.append(dict(pair=pair, adapter=first["adapter"],
                         adapter_label=first.get("adapter_label", first["adapter"]),
                         tool=first["tool"], test=test, protocol=first["protocol"],
                         point=point, mtu=first["mtu"], status=status, n_ok=len(ok),
                         n_failed=len(failed), select=rule, selected_bps=selected, **stats,
                         cpu_local_pct=_mean(r.get("cpu_sender_pct") for r in ok),
                         cpu_remote_pct=_mean(r.get("cpu_receiver_pct") for r in ok),
                         cpu_tool_pct=_mean(r.get("cpu_tool_pct") for r in ok),
                         reason=reason))
    return rows


def summary_frame(records: list[dict], profile=None) -> pd.DataFrame:
    select_for, loss_for = {}, {}
    if profile is not None:
        for t in profile.tests:
            select_for[t.name] = profile.select_for(t)
            if t.udp_search:
                loss_for[t.name] = t.udp_search.loss_pct
    return pd.DataFrame(summary_rows(records, select_for, loss_for), columns=COLUMNS)


def write_summary(run_dir, profile=None) -> pd.DataFrame:
    frame = summary_frame(list(run_dir.records()), profile)
    frame.to_csv(run_dir.summary_file, index=False)
    return frame
