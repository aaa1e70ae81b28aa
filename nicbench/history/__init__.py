"""A lab's memory: each adapter's figure night after night, and where it changed, and why.

::

    series = nicbench.history.history(["reports/campaigns"], adapter="lab-gbe")
    for s in series:
        print(s.adapter, s.test, s.point, [n.value_bps for n in s.nights])
        for c in s.changes:
            print(c.run_id, c.interval_text(), c.setup_changes)

``history(source, ...)`` reads a results store or results directories (anything
``results.frame`` reads), one :class:`~nicbench.history.model.Series` per adapter, test
and point (``series.py``), with its changes found by the levels rule (``detect.py``:
each night one sample, the spread between nights from the series, the comparison's
threshold). ``regressions.py`` finds the changes of a campaign's night against the
nights before it, for the morning summary.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from nicbench.results.dataframe import SourceLike, TrialSource

from nicbench.history.model import RULE, RULE_KIND, Change, Direction, Flag, Night, Series

__all__ = ["DEFAULT_LAST", "RULE", "RULE_KIND", "Change", "Direction", "Flag", "Night", "Series",
           "history", "latest", "of_frame"]


# The runs of a series judged and shown by default: four months of nights (the search
# for levels grows with the square of the runs).
DEFAULT_LAST = 120


def of_frame(df: pd.DataFrame, source: TrialSource, last: int | None = DEFAULT_LAST) -> list[Series]:
    """The series of a trial frame ``df`` read from ``source`` (its manifests), each of
    its last ``last`` runs (None: all)."""
    from nicbench.history.series import build
    from nicbench.results.columns import Col

    run_ids = sorted(set(df[Col.RUN_ID].dropna().unique().tolist())) if len(df) else []
    return build(df, source.manifests(run_ids) if run_ids else {}, last)


def history(source: SourceLike, *, adapter: str | None = None, test: str | None = None,
            point: str | None = None, since: datetime | date | str | None = None,
            last: int | None = DEFAULT_LAST) -> list[Series]:
    """Every series of ``source`` (a results store, or results directories), filtered,
    each of its last ``last`` runs (None: all of them)."""
    from nicbench.results.dataframe import source_of, utc

    src = source_of(source)
    df = src.trial_frame(adapter=adapter, test=test, point=point, since=utc(since))
    return of_frame(df, src, last)


def latest(source: SourceLike, adapters: list[str], last: int = DEFAULT_LAST) -> list[Series]:
    """The series of each of ``adapters`` in ``source``, each of its last ``last`` runs:
    as ``history(source, adapter=a, last=last)`` for each, but from a results store in
    one query of only those runs (``Store.latest_frame``), their manifests alone read."""
    from nicbench.results.dataframe import source_of

    src = source_of(source)
    pick = getattr(src, "latest_frame", None)
    if pick is None:
        return [s for a in adapters for s in history(src, adapter=a, last=last)]
    return of_frame(pick(adapters, last), src, last)
