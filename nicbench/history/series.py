"""From the trial frame to series of nights and their change points, vectorized.

One night per run: the run's selected figure of a configuration, by the profile's own
``select`` rule (best, mean or median of the successful repetitions, as
``results/policy.Summary.selected`` takes it; a UDP search's best received rate), with
the repetitions' spread and count, computed for every series at once by pandas (no
object per trial). A repetition beyond a physical bound (above the link's goodput limit
by more than the report's margin, ``report/theory.py``; above any link,
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

from nicbench.history.detect import splits
from nicbench.history.model import Change, Direction, Flag, Night, Series
from nicbench.results.plausible import MAX_BPS
from nicbench.results.records import Kind, Status
from nicbench.results.setup import setup_facts

if TYPE_CHECKING:
    from nicbench.results.manifest import Manifest

KEYS = ["adapter", "test", "point"]
MEASURED = (Kind.REPETITION.value, Kind.UDP_SEARCH.value)


def measured(df: pd.DataFrame) -> pd.DataFrame:
    """The successful measurements of a trial frame, oldest run first."""
    ok = df[df["kind"].isin(MEASURED) & (df["status"] == Status.OK.value)
            & df["throughput_bps"].notna()]
    return ok.sort_values(["adapter", "test", "point", "run_started_at", "run_id",
                           "repetition"], kind="stable")


def _limits(ok: pd.DataFrame, manifests: Mapping[str, Manifest]) -> np.ndarray:
    """The goodput limit of each row's link at its MTU (NaN where no line rate is
    known)."""
    cols = ["run_id", "pair", "point", "protocol", "mtu"]
    keys = ok[cols].drop_duplicates()
    found: dict[tuple[Any, ...], float] = {}
    for key in keys.itertuples(index=False, name=None):
        found[key] = _limit(manifests.get(key[0]), *key[1:])
    index = list(ok[cols].itertuples(index=False, name=None)) if found else []
    return np.array([found.get(k, np.nan) for k in index], dtype="float64")


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
    from nicbench.report.theory import goodput_bps, link_rate, timestamps_on

    rate, _ = link_rate(pair, adapter, {})
    if rate is None:
        return np.nan           # no line rate recorded: no bound but MAX_BPS
    profile = manifest.profile
    stamps = timestamps_on(profile, profile.point(point))
    return goodput_bps(rate, int(mtu), protocol, stamps)


def _rules(ok: pd.DataFrame, manifests: Mapping[str, Manifest]) -> dict[tuple[str, str], str]:
    """(run_id, test) -> the profile's select rule (best without a manifest)."""
    rules = {}
    for run_id, test in ok[["run_id", "test"]].drop_duplicates().itertuples(
            index=False, name=None):
        m = manifests.get(run_id)
        spec = m.profile.test(test) if m is not None else None
        rules[(run_id, test)] = m.profile.select_for(spec) \
            if m is not None and spec is not None else "best"
    return rules


def build(df: pd.DataFrame, manifests: Mapping[str, Manifest]) -> list[Series]:
    """Every (adapter, test, point) series of the trial frame ``df``, with its changes."""
    ok = measured(df)
    if ok.empty:
        return []
    limit = _limits(ok, manifests)
    values = ok["throughput_bps"].to_numpy(dtype="float64")
    impossible = values > MAX_BPS
    above = np.zeros(len(values), dtype=bool)
    if not np.isnan(limit).all():
        # flagged where the report flags a bar: more than its margin above the limit
        from nicbench.report.theory import FLAG_MARGIN

        above = values > np.nan_to_num(limit, nan=np.inf) * (1 + FLAG_MARGIN)
    ok = ok.assign(_flag=impossible | above, _impossible=impossible, _limit=limit)
    keys = [*KEYS, "run_id"]
    grouped = ok.groupby(keys, sort=False, observed=True)
    table = pd.concat([
        grouped["throughput_bps"].agg(["max", "mean", "median", "std", "min", "count"]),
        grouped[["run_started_at", "pair", "mtu", "tool", "adapter_label", "kind",
                 "_limit"]].first(),
        grouped[["_flag", "_impossible"]].sum()], axis=1).reset_index()
    samples = _samples(ok[~ok["_flag"]], keys)
    rules = _rules(ok, manifests)
    facts: dict[tuple[str, str], dict[str, str]] = {}
    out: list[Series] = []
    series_of: dict[tuple[str, str, str], Series] = {}
    for row in table.to_dict("records"):
        night = _night(row, rules, _facts(facts, manifests, row["run_id"], row["pair"]))
        key = (row["adapter"], row["test"], row["point"])
        series = series_of.get(key)
        if series is None:
            series = Series(adapter=key[0], adapter_label=row["adapter_label"],
                            test=key[1], tool=row["tool"], point=key[2], nights=[])
            series_of[key] = series
            out.append(series)
        series.adapter_label = row["adapter_label"]     # the latest run's words
        series.nights.append(night)
    for series in out:
        series.changes = changes(series, samples)
    return out


def _night(row: dict[Any, Any], rules: dict[tuple[str, str], str],
           setup: dict[str, str]) -> Night:
    """One run's night of a series from its row of statistics."""
    rule = "best" if row["kind"] == Kind.UDP_SEARCH.value \
        else rules[(row["run_id"], row["test"])]
    flagged = int(row["_flag"])
    flag = None if not flagged else (
        Flag.IMPOSSIBLE if row["_impossible"] else Flag.ABOVE_LINE_RATE)
    n = int(row["count"])
    return Night(
        run_id=row["run_id"], started_at=row["run_started_at"].to_pydatetime(warn=False),
        pair=row["pair"], mtu=int(row["mtu"]), select=rule,
        value_bps=float({"mean": row["mean"], "median": row["median"]}.get(rule, row["max"])),
        n=n, stdev_bps=_num(row["std"]) if n > 1 else 0.0, min_bps=float(row["min"]),
        max_bps=float(row["max"]), flagged=flagged, flag=flag,
        limit_bps=_num(row["_limit"]), setup=setup)


def _num(value: Any) -> float | None:
    return None if value is None or value != value else float(value)


def _facts(cache: dict[tuple[str, str], dict[str, str]], manifests: Mapping[str, Manifest],
           run_id: str, pair: str) -> dict[str, str]:
    if (run_id, pair) not in cache:
        m = manifests.get(run_id)
        cache[(run_id, pair)] = setup_facts(m, pair) if m is not None else {}
    return cache[(run_id, pair)]


def _samples(rows: pd.DataFrame, keys: list[str]) -> dict[tuple[Any, ...], np.ndarray]:
    """The values of each (adapter, test, point, run_id) group of ``rows`` (sorted so that
    each group is one stretch of rows)."""
    if rows.empty:
        return {}
    labels = list(rows[keys].itertuples(index=False, name=None))
    values = rows["throughput_bps"].to_numpy(dtype="float64")
    starts = [0] + [i for i in range(1, len(labels)) if labels[i] != labels[i - 1]]
    bounds = [*starts[1:], len(labels)]
    return {labels[a]: values[a:b] for a, b in zip(starts, bounds, strict=True)}


def changes(series: Series, samples: Mapping[tuple[Any, ...], np.ndarray]) -> list[Change]:
    """The change points of ``series``: jumpavg over the nights that have repetitions
    within the physical bounds, each explained by the setup facts that differ."""
    judged = [(i, samples[(*series.key, n.run_id)]) for i, n in enumerate(series.nights)
              if (*series.key, n.run_id) in samples]
    out = []
    for split in splits([values for _, values in judged]):
        before = series.nights[judged[split.at - 1][0]]
        after = series.nights[judged[split.at][0]]
        pct = 100.0 * (split.after_mean - split.before_mean) / split.before_mean \
            if split.before_mean else 0.0
        out.append(Change(
            run_id=after.run_id, started_at=after.started_at, before_run_id=before.run_id,
            before_bps=split.before_mean, after_bps=split.after_mean, change_pct=pct,
            score=split.score,
            direction=Direction.REGRESSION if pct < 0 else Direction.PROGRESSION,
            setup_changes=tuple(setup_changes(before, after, series.tool))))
    return out


def setup_changes(before: Night, after: Night, tool: str | None = None) -> list[str]:
    """What differs between two nights' setups: ``"<fact> <before> -> <after>"``, in the
    facts' order ("(none)" where one night has no such fact). With ``tool``, the versions
    of other tools on the hosts are left out: they did not measure this series."""
    a = {**before.setup, "mtu": str(before.mtu)}
    b = {**after.setup, "mtu": str(after.mtu)}
    return [f"{k} {a.get(k, '(none)')} -> {b.get(k, '(none)')}"
            for k in dict.fromkeys([*a, *b])
            if a.get(k) != b.get(k) and not _other_tool(k, tool)]


def _other_tool(key: str, tool: str | None) -> bool:
    words = key.split(" ")
    return tool is not None and len(words) == 3 and words[2] == "version" \
        and words[1] != tool
