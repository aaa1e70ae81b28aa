"""A campaign's night against the nights before it: the changes its runs start.

For the morning summary: the history of a campaign directory is its sibling nights (the
campaign directories beside it, the last :data:`MAX_NIGHTS` of them up to this one), or
a results store's runs when one is given (any source ``frame()`` reads). A change whose
first run after it is one of this night's runs is this night's news, worded as a person
says it: ``"gbe tcp MTU 9000: -4.1 % [-4.6, -3.6] since 2026-11-20, gbe driver_version
3.2 -> 3.3"`` (the change with its 95 % interval, the night, what changed).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nicbench.history.model import Change, Direction, Series

MAX_NIGHTS = 60


@dataclass(frozen=True)
class NightChange:
    """A change of one series that starts at one of this night's runs."""

    series: Series
    change: Change
    nights: int                  # how many runs the series' history holds

    @property
    def regression(self) -> bool:
        return self.change.direction is Direction.REGRESSION

    def line(self) -> str:
        s, c = self.series, self.change
        where = f"MTU {s.mtu}" if s.point == f"mtu{s.mtu}" else f"{s.point} (MTU {s.mtu})"
        if s.figure.lower_better:
            where += f" {s.figure}"
        setup = ", ".join(condensed(c.setup_changes)) or "no setup difference recorded"
        return (f"{s.adapter} {s.test} {where}: {c.interval_text()} since "
                f"{c.started_at:%Y-%m-%d}, {setup}")


def condensed(changes: tuple[str, ...] | list[str]) -> list[str]:
    """Setup differences said once where both hosts of a pair say the same ("nb-a gbe
    driver_version 1.0 -> 1.1" and "nb-b gbe ..." -> "gbe driver_version 1.0 -> 1.1")."""
    rest = [c.split(" ", 1)[1] if " " in c else c for c in changes]
    out: list[str] = []
    for full, tail in zip(changes, rest, strict=True):
        text = tail if rest.count(tail) > 1 else full
        if text not in out:
            out.append(text)
    return out


def night_changes(series: list[Series], run_ids: set[str]) -> list[NightChange]:
    """The changes of ``series`` whose first run after them is one of ``run_ids``:
    regressions first, the largest first."""
    found = [NightChange(s, c, len(s.nights)) for s in series for c in s.changes
             if c.run_id in run_ids]
    return sorted(found, key=lambda n: (not n.regression, -abs(n.change.change_pct)))


def sibling_nights(directory: str | Path) -> list[Path]:
    """The directories beside ``directory`` of the same campaign (by its name: reports/
    holds every campaign's nights) that started no later than it, the last MAX_NIGHTS of
    them, oldest first (``directory`` last). A sibling that does not read as a campaign
    is not history."""
    from nicbench.errors import NicbenchError
    from nicbench.results.campaign import CampaignState, is_campaign

    here = Path(directory)
    mine = CampaignState.read(here)
    nights = []
    for d in sorted(here.parent.iterdir()):
        if d.is_dir() and is_campaign(d) and d.resolve() != here.resolve():
            try:
                other = CampaignState.read(d)
            except NicbenchError:
                continue
            if other.name == mine.name and other.started_at <= mine.started_at:
                nights.append((other.started_at, d))
    return [*[d for _, d in sorted(nights)][-(MAX_NIGHTS - 1):], here]


def campaign_nights(run_dirs: list[str | Path], last: int) -> Any:
    """The history of runs that belong to campaigns: each campaign's own nights beside it
    (its last ``last``), as one source; None when no run given is a campaign's or there
    is no earlier night."""
    from nicbench.results.campaign import is_campaign
    from nicbench.results.dataframe import DirSource

    campaigns = dict.fromkeys(Path(d).resolve().parent for d in run_dirs)
    nights: list[Path] = []
    for c in campaigns:
        if is_campaign(c):
            nights += sibling_nights(c)[-last:]
    return DirSource(nights) if len(nights) > len(campaigns) else None


def campaign_changes(directory: str | Path, source: Any = None) -> list[NightChange]:
    """The changes this campaign's night starts against its history: ``source`` (a results
    store) or else the sibling nights (nothing without an earlier night)."""
    import pandas as pd

    from nicbench.history import of_frame
    from nicbench.results.columns import Col
    from nicbench.results.dataframe import DirSource, source_of

    mine = DirSource([directory])
    run_ids = {d.run_id for d in mine.dirs if d.load_manifest() is not None}
    if not run_ids:
        return []
    if source is None:
        nights = sibling_nights(directory)
        if len(nights) < 2:
            return []
        source = DirSource(nights)
    src = source_of(source)
    adapters = sorted({r.adapter for d in mine.dirs for r in d.trials()})
    # one adapter at a time: a store of a year's nights is read only where it matters
    frames = [src.trial_frame(adapter=a) for a in adapters]
    df = pd.concat(frames, ignore_index=True) if frames else src.trial_frame()
    df = df[df[Col.ADAPTER].isin(adapters)]
    return night_changes(of_frame(df, src, MAX_NIGHTS), run_ids)
