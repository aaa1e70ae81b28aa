"""From the trial frame to series of nights and their change points, vectorized.

One night per run: the run's selected figure of a configuration, by the profile's own
``select`` rule (best, mean or median of the successful repetitions, as
``results/policy.Summary.selected`` takes it; a UDP search's best received rate), with
the repetitions' spread and count, computed for every series at once by pandas (no
object per trial). A repetition beyond a physical bound (above the link's goodput limit
by more than the report's margin, ``physics/link.py``; above any link,
``results/plausible.MAX_BPS``) is counted as flagged and left out of what the detector
judges. The change points come from ``detect.splits`` over each night's remaining
repetitions, and each is explained by the setup facts that differ between the run before
it and the run after it (``results/setup.setup_facts``, plus the point's MTU).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from nicbench.history.detect import moved, shortest, splits
from nicbench.history.model import Change, Direction, Figure, Flag, Night, Series
from nicbench.results.columns import Col
from nicbench.results.plausible import MAX_BPS
from nicbench.results.records import Kind, Status
from nicbench.results.setup import setup_facts

if TYPE_CHECKING:
    from nicbench.results.manifest import Manifest

KEYS = [Col.ADAPTER, Col.TEST, Col.POINT, "figure"]
MEASURED = (Kind.REPETITION.value, Kind.UDP_SEARCH.value)


def measured(df: pd.DataFrame) -> pd.DataFrame:
    """The successful measurements of a trial frame."""
    return df[df[Col.KIND].isin(MEASURED) & (df[Col.STATUS] == Status.OK.value)
              & df[Col.THROUGHPUT_BPS].notna()]


ROUND_TRIPS = {Figure.P50: Col.LATENCY_P50_US, Figure.P99: Col.LATENCY_P99_US}


def figures(df: pd.DataFrame) -> pd.DataFrame:
    """The trial frame as one row per trial and figure it holds (column ``figure``, its
    value in ``throughput_bps``, a round trip's in us): each figure its own series."""
    ok = df[Col.KIND].isin(MEASURED) & (df[Col.STATUS] == Status.OK.value)
    parts = [df[ok & df[Col.THROUGHPUT_BPS].notna()].assign(figure=Figure.THROUGHPUT.value)]
    for fig, column in ROUND_TRIPS.items():
        if column in df.columns:
            rows = df[ok & df[column].notna()]
            parts.append(rows.assign(throughput_bps=rows[column], figure=fig.value))
    return pd.concat([p for p in parts if len(p)] or parts[:1], ignore_index=True)


def _limit(manifest: Manifest | None, pair: str, point: str, protocol: str,
           mtu: int) -> float:
    if manifest is None:
        return np.nan
    inv_pair = next((p for p in manifest.inventory.pairs if p.name == pair), None)
    adapter = next((a for a in manifest.inventory.adapters
                    if inv_pair is not None and a.id == inv_pair.adapter), None)
    if adapter is None:
        return np.nan
    # the report's own line rate (the inventory's link_rate, else the rate its
    # description names) and margin: a night is flagged where its bar would be
    from nicbench.physics.link import goodput_bps, link_rate, timestamps_on

    rate, _ = link_rate(pair, adapter, {})
    if rate is None:
        return np.nan           # no line rate recorded: no bound but MAX_BPS
    profile = manifest.profile
    stamps = timestamps_on(profile, profile.point(point))
    return goodput_bps(rate, int(mtu), protocol, stamps)


def _without_frame_searches(ok: pd.DataFrame, manifests: Mapping[str, Manifest]
                            ) -> pd.DataFrame:
    """``ok`` without the probes of frame-rate searches: their figure is an NDR or PDR
    per frame size, and the trial frame does not say a probe's frame size or bound, so
    its probes' rates would make one series of every size and bound (the best probe's
    throughput), which means nothing. Left out until the frame carries them."""
    searches = {(run_id, t.name) for run_id, m in manifests.items()
                for t in m.profile.tests if t.frame_search}
    if not searches or ok.empty:
        return ok
    pairs = pd.Series(list(zip(ok[Col.RUN_ID], ok[Col.TEST], strict=True)), index=ok.index)
    return ok[~pairs.isin(searches)]


def _rules(nights: pd.DataFrame, manifests: Mapping[str, Manifest]
           ) -> dict[tuple[str, str], str]:
    """(run_id, test) -> the profile's select rule (best without a manifest)."""
    rules = {}
    for run_id, test in nights[[Col.RUN_ID, Col.TEST]].drop_duplicates().itertuples(
            index=False, name=None):
        m = manifests.get(run_id)
        spec = m.profile.test(test) if m is not None else None
        rules[(run_id, test)] = m.profile.select_for(spec) \
            if m is not None and spec is not None else "best"
    return rules


def _nights(ok: pd.DataFrame, last: int | None) -> tuple[pd.DataFrame, np.ndarray]:
    """One row per night (adapter, test, point, run) with its statistics, oldest first in
    each series, at most the ``last`` runs of each; and each trial's night (its row in
    that table, -1 for a night left out). Grouped by integer codes: no object per trial."""
    codes = ok.groupby([*KEYS, Col.RUN_ID], sort=False, observed=True).ngroup().to_numpy()
    by = ok.groupby(codes, sort=True)
    table = pd.concat([
        by[Col.THROUGHPUT_BPS].agg(["max", "mean", "median", "std", "min", "count"]),
        by[[*KEYS, Col.RUN_ID, Col.RUN_STARTED_AT, Col.PAIR, Col.MTU, Col.TOOL, Col.PROTOCOL,
            Col.ADAPTER_LABEL, Col.KIND]].first()], axis=1)
    table = table.sort_values([*KEYS, Col.RUN_STARTED_AT, Col.RUN_ID], kind="stable")
    if last is not None:
        newest = table.groupby(KEYS, sort=False, observed=True).cumcount(ascending=False)
        table = table[newest.to_numpy() < last]
    row_of = np.full(len(codes) and int(codes.max()) + 1, -1, dtype="int64")
    row_of[table.index.to_numpy()] = np.arange(len(table))
    return table.reset_index(drop=True), row_of[codes]


def _judged(values: np.ndarray, night: np.ndarray, bad: np.ndarray,
            n_nights: int) -> list[np.ndarray]:
    """Each night's values within the bounds, in trial order (the detector's samples)."""
    keep = (night >= 0) & ~bad
    v, k = values[keep], night[keep]
    order = np.argsort(k, kind="stable")
    counts = np.bincount(k, minlength=n_nights)
    return np.split(v[order], np.cumsum(counts)[:-1])


def build(df: pd.DataFrame, manifests: Mapping[str, Manifest],
          last: int | None = None) -> list[Series]:
    """Every (adapter, test, point, figure) series of the trial frame ``df`` (at most its
    ``last`` runs), with its changes."""
    ok = _without_frame_searches(figures(df), manifests)
    if ok.empty:
        return []
    table, night = _nights(ok, last)
    rate = table["figure"].to_numpy() == Figure.THROUGHPUT.value
    limits = np.array([_limit(manifests.get(r), p, pt, pr, m) if is_rate else np.nan
                       for is_rate, (r, p, pt, pr, m) in zip(rate, table[
                           [Col.RUN_ID, Col.PAIR, Col.POINT, Col.PROTOCOL, Col.MTU]].itertuples(
                           index=False, name=None), strict=True)], dtype="float64")
    values = ok[Col.THROUGHPUT_BPS].to_numpy(dtype="float64")
    impossible = (values > MAX_BPS) & (ok["figure"].to_numpy() == Figure.THROUGHPUT.value)
    above = np.zeros(len(values), dtype=bool)
    if len(limits) and not np.isnan(limits).all():
        # flagged where the report flags a bar: more than its margin above the limit
        from nicbench.physics.link import FLAG_MARGIN

        bound = np.where(night >= 0, limits[np.maximum(night, 0)], np.nan)
        above = values > np.nan_to_num(bound, nan=np.inf) * (1 + FLAG_MARGIN)
    counted = night >= 0
    n = len(table)
    table["_flag"] = np.bincount(night[counted], (impossible | above)[counted], n)
    table["_impossible"] = np.bincount(night[counted], impossible[counted], n)
    table["_limit"] = limits
    samples = _judged(values, night, impossible | above, n)
    rules = _rules(table, manifests)
    facts: dict[tuple[str, str], dict[str, str]] = {}
    out: list[Series] = []
    judged: dict[tuple[str, str, str, str], list[tuple[int, np.ndarray]]] = {}
    for i, row in enumerate(table.to_dict("records")):
        key = (row[Col.ADAPTER], row[Col.TEST], row[Col.POINT], row["figure"])
        if not out or out[-1].key != key:
            out.append(Series(adapter=key[0], adapter_label=row[Col.ADAPTER_LABEL],
                              test=key[1], tool=row[Col.TOOL], point=key[2], nights=[],
                              figure=Figure(key[3])))
            judged[key] = []
        series = out[-1]
        series.adapter_label = row[Col.ADAPTER_LABEL]     # the latest run's words
        k = len(series.nights)
        series.nights.append(
            _night(row, rules, _facts(facts, manifests, row[Col.RUN_ID], row[Col.PAIR])))
        judged[key].append((k, samples[i]))
    for series in out:
        series.changes = changes(series, [(k, v) for k, v in judged[series.key] if len(v)])
    return out


def _night(row: dict[Any, Any], rules: dict[tuple[str, str], str],
           setup: dict[str, str]) -> Night:
    """One run's night of a series from its row of statistics."""
    rule = "best" if row[Col.KIND] == Kind.UDP_SEARCH.value \
        else rules[(row[Col.RUN_ID], row[Col.TEST])]
    if Figure(row["figure"]).lower_better and rule == "best":
        # a round trip's night is the median of its repetitions' own percentiles: the
        # lowest of each percentile taken apart is biased low (issue 30), and the pooled
        # round trips the report reads are raw files a store does not keep
        rule = "median"
    flagged = int(row["_flag"])
    flag = None if not flagged else (
        Flag.IMPOSSIBLE if row["_impossible"] else Flag.ABOVE_LINE_RATE)
    n = int(row["count"])
    best = row["min"] if Figure(row["figure"]).lower_better else row["max"]
    return Night(
        run_id=row[Col.RUN_ID], started_at=row[Col.RUN_STARTED_AT].to_pydatetime(warn=False),
        pair=row[Col.PAIR], mtu=int(row[Col.MTU]), select=rule,
        value_bps=float({"mean": row["mean"], "median": row["median"]}.get(rule, best)),
        n=n, stdev_bps=_num(row["std"]) if n > 1 else 0.0, min_bps=float(row["min"]),
        max_bps=float(row["max"]), flagged=flagged, flag=flag,
        limit_bps=_num(row["_limit"]), tool=row[Col.TOOL], setup=setup)


def _num(value: Any) -> float | None:
    return None if value is None or value != value else float(value)


def _facts(cache: dict[tuple[str, str], dict[str, str]], manifests: Mapping[str, Manifest],
           run_id: str, pair: str) -> dict[str, str]:
    if (run_id, pair) not in cache:
        m = manifests.get(run_id)
        cache[(run_id, pair)] = setup_facts(m, pair) if m is not None else {}
    return cache[(run_id, pair)]


def night_figure(values: np.ndarray, rule: str, lower_better: bool = False
                 ) -> tuple[float, float]:
    """A night's figure by its ``rule`` over ``values`` (best: the highest, of round
    trips the lowest) and its standard error from its own repetitions (the median's by
    the normal approximation, 1.25 s / sqrt(n); 0 from one repetition: the
    night-to-night spread then carries it)."""
    n = len(values)
    fig = float(np.mean(values) if rule == "mean" else
                np.median(values) if rule == "median" else
                np.min(values) if lower_better else np.max(values))
    if n < 2:
        return fig, 0.0
    se = float(np.std(values, ddof=1)) / n ** 0.5
    return fig, se * (1.2533 if rule == "median" else 1.0)


def changes(series: Series, judged: list[tuple[int, np.ndarray]]) -> list[Change]:
    """The changes of ``series`` (``detect.splits``) over ``judged``: (index of a night,
    its repetitions within the physical bounds) of the nights that have any, oldest
    first. A change found one night off a night whose setup changed is moved to it where
    the rule still holds there; each is explained by the setup facts that differ anywhere
    from the night before the last of the old level to the night after the first of the
    new."""
    if len(judged) < 2:
        return []
    nights = [series.nights[k] for k, _ in judged]
    lower = series.figure.lower_better
    figs = [night_figure(v, nights[i].select, lower) for i, (_, v) in enumerate(judged)]
    ys, ses = [f for f, _ in figs], [e for _, e in figs]
    found = splits(ys, ses)
    if not found:
        return []
    differs = [bool(setup_changes(nights[i - 1], nights[i], series.tool)) if i else False
               for i in range(len(nights))]
    cuts = [_snapped(sp.at, differs, [x.at for x in found]) for sp in found]
    if cuts != [sp.at for sp in found]:
        again = moved(ys, ses, cuts)
        if len(again) == len(found):
            found = again
    out = []
    for sp in found:
        before, after = nights[sp.at - 1], nights[sp.at]
        base = sp.before_mean or 1.0
        pct = 100.0 * (sp.after_mean - sp.before_mean) / base
        out.append(Change(
            run_id=after.run_id, started_at=after.started_at, before_run_id=before.run_id,
            before_bps=sp.before_mean, after_bps=sp.after_mean, change_pct=pct,
            low_pct=100.0 * sp.low / base, high_pct=100.0 * sp.high / base,
            threshold_pct=100.0 * sp.threshold / base, night_spread_pct=100.0 * sp.tau / base,
            nights_before=sp.nights_before, nights_after=sp.nights_after,
            direction=Direction.REGRESSION if (pct > 0 if lower else pct < 0)
            else Direction.PROGRESSION,
            setup_changes=tuple(_around(nights, sp.at, series.tool))))
    return out


def _snapped(at: int, differs: list[bool], cuts: list[int]) -> int:
    """``at``, or the one night next to it whose setup changed where ``at``'s did not
    (never onto another change, never shortening a level below its fewest nights
    but the newest)."""
    if differs[at]:
        return at
    near = [k for k in (at - 1, at + 1) if 0 < k < len(differs) and differs[k]]
    if len(near) != 1:
        return at
    k, least = near[0], shortest(len(differs))
    others = [c for c in cuts if c != at]
    lo = max([c for c in others if c < at], default=0)
    hi = min([c for c in others if c > at], default=None)
    if k - lo < least or (hi is not None and hi - k < least) or k == len(differs):
        return at
    return k


def _around(nights: list[Night], at: int, tool: str) -> list[str]:
    """The setup differences from night ``at - 2`` to ``at + 1`` (the change's night
    +-1), each night to the next; one off the change's own night says which night."""
    out: list[str] = []
    for i in range(max(1, at - 1), min(len(nights), at + 2)):
        for line in setup_changes(nights[i - 1], nights[i], tool):
            text = line if i == at else f"{line} (at {nights[i].run_id})"
            if text not in out:
                out.append(text)
    return out


def setup_changes(before: Night, after: Night, tool: str | None = None) -> list[str]:
    """What differs between two nights' setups: ``"<fact> <before> -> <after>"``, in the
    facts' order ("(none)" where one night has no such fact), the measuring tool and the
    point's MTU included. The versions of tools that measured neither night (nor
    ``tool``) are left out: they did not make these figures."""
    a = {**before.setup, "tool": before.tool, "mtu": str(before.mtu)}
    b = {**after.setup, "tool": after.tool, "mtu": str(after.mtu)}
    return [f"{k} {a.get(k, '(none)')} -> {b.get(k, '(none)')}"
            for k in dict.fromkeys([*a, *b])
            if a.get(k) != b.get(k) and not _other_tool(k, tool, before.tool, after.tool)]


def _other_tool(key: str, *tools: str | None) -> bool:
    """A host's version of a tool that measured neither night."""
    words = key.split(" ")
    return len(words) == 3 and words[2] == "version" and words[1] not in tools
