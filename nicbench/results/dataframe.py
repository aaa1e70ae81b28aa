"""Trials as one tidy pandas DataFrame: a row per stored trial that stands, typed columns.

::

    import nicbench.results
    df = nicbench.results.frame(["reports/night-1", "reports/night-2"])   # or a store
    ok = df[df.status == "ok"]
    ok.groupby(["adapter", "point", "run_started_at"]).throughput_bps.median()

``frame(source, *, adapter=None, test=None, point=None, since=None, setup=True)`` reads
``source``: results directories (a run's directory, a campaign directory standing for its
runs, or a directory holding such directories, e.g. a folder of nights), or a results
store: anything with ``trial_frame(...)`` and ``manifests(run_ids)`` (duck-typed; the
store's own ``Store`` is one, and so is :class:`DirSource` here). The columns are
:data:`TRIAL_COLUMNS`, the one definition of them, in that order and with those dtypes;
with ``setup`` the setup columns of ``results/setup.py`` (kernels, driver, driver
version, firmware, offloads) are joined on (run_id, pair) from each run's manifest.

The records are those that stand (``records.current``: a resume's superseded attempts
are left out), read with the same checks as ``nicbench report`` (one clear line naming
the file and line of anything that is not a trial record). pandas is imported only when
a frame is made: importing this module costs nothing of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, UTC
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from nicbench.errors import UsageError
from nicbench.results import columns
from nicbench.results.columns import Col
from nicbench.results.records import TrialRecord, current

if TYPE_CHECKING:
    import pandas as pd

    from nicbench.results.manifest import Manifest

# The trial frame's columns, in order, with their pandas dtypes ("string": the nullable
# StringDtype; "category": Kind / Status values in declaration order), derived from the
# one declaration of the trial's columns (results/columns.py), as the store's are.
TRIAL_COLUMNS: tuple[tuple[str, str], ...] = columns.frame_columns()
CATEGORIES: dict[str, tuple[str, ...]] = columns.categories()
_RECORD_NAMES = tuple(c.name.value for c in columns.RECORD_COLUMNS)
_RECORD_VALUES = columns.record_getter(columns.RECORD_COLUMNS)
_RUN_NAMES = tuple(c.name.value for c in columns.RUN_COLUMNS)
_RUN_VALUES = columns.record_getter(columns.RUN_COLUMNS)


def dtypes() -> dict[str, Any]:
    """Column -> the pandas dtype object (categories made exact)."""
    import pandas as pd

    out: dict[str, Any] = {}
    for name, dtype in TRIAL_COLUMNS:
        out[name] = pd.CategoricalDtype(list(CATEGORIES[name]), ordered=False) \
            if dtype == "category" else dtype
    return out


class TrialSource(Protocol):
    """What ``frame()`` and ``nicbench history`` read: a results store, or directories."""

    def trial_frame(self, *, adapter: str | None = None, test: str | None = None,
                    point: str | None = None, since: datetime | None = None,
                    run_ids: Sequence[str] | None = None) -> pd.DataFrame: ...

    def manifests(self, run_ids: Sequence[str]) -> dict[str, Manifest]: ...


def utc(when: datetime | date | str | float | None) -> datetime | None:
    """A time as an aware UTC datetime (naive: taken as UTC; a date: its midnight; text:
    ISO 8601, "2026-11-20" or "2026-11-20T03:00"). A UsageError for text that is not."""
    if when is None:
        return None
    if isinstance(when, (int, float)):
        return datetime.fromtimestamp(when, UTC)
    if isinstance(when, str):
        try:
            when = datetime.fromisoformat(when.strip())
        except ValueError:
            raise UsageError(f"{when!r}: not a date: give YYYY-MM-DD or an ISO 8601 time "
                             "(2026-11-20, 2026-11-20T03:00)") from None
    if not isinstance(when, datetime):
        when = datetime(when.year, when.month, when.day)
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


# -- directories ---------------------------------------------------------------------------
@dataclass
class _Dir:
    path: Path
    campaign: str | None
    manifest: Manifest | None = None
    read: bool = False
    records: list[TrialRecord] | None = None

    @property
    def started_at(self) -> float:
        if self.manifest is not None:
            return self.manifest.started_at
        recs = self.trials()
        return min((r.started_at for r in recs), default=0.0)

    @property
    def run_id(self) -> str:
        if self.manifest is not None:
            return self.manifest.run_id
        return next((r.run_id for r in self.trials() if r.run_id), self.path.name)

    def load_manifest(self) -> Manifest | None:
        from nicbench.results.manifest import Manifest

        if not self.read:
            self.read = True
            file = self.path / "manifest.json"
            self.manifest = Manifest.read(file) if file.is_file() else None
        return self.manifest

    def trials(self) -> list[TrialRecord]:
        from nicbench.results.rundir import RunDir

        if self.records is None:
            self.records = current(RunDir(self.path).records(strict=True,
                                                             manifest=self.load_manifest()))
        return self.records


def expand(dirs: Iterable[str | Path]) -> list[tuple[Path, str | None]]:
    """(run directory, campaign name or None) of each directory given: a run's own, a
    campaign's runs (``campaign.run_dirs``), or those of the campaigns and runs directly
    inside a directory that is neither (a folder of nights), in name order."""
    from nicbench.results.campaign import CampaignState, is_campaign, run_dirs

    out: list[tuple[Path, str | None]] = []
    for given in dirs:
        d = Path(given)
        if not d.is_dir():
            raise UsageError(f"{d}: no such results directory")
        if is_campaign(d):
            name = CampaignState.read(d).name
            out += [(r, name) for r in run_dirs(d)]
        elif (d / "trials.jsonl").exists() or (d / "manifest.json").exists():
            out.append((d, None))
        else:
            inner = sorted(c for c in d.iterdir() if c.is_dir() and (
                is_campaign(c) or (c / "trials.jsonl").exists()))
            if not inner:
                raise UsageError(f"{d}: not a results directory, a campaign directory or a "
                                 "directory of them (no trials.jsonl, no campaign.json)")
            out += expand(inner)
    seen: set[Path] = set()
    unique = []
    for path, campaign in out:
        real = path.resolve()
        if real not in seen:
            seen.add(real)
            unique.append((path, campaign))
    return unique


class DirSource:
    """Results directories as a trial source (what a store gives, read from the files).
    Each directory is read once, when first asked for."""

    def __init__(self, dirs: Iterable[str | Path]):
        self.dirs = [_Dir(path, campaign) for path, campaign in expand(dirs)]

    @classmethod
    def loaded(cls, runs: Iterable[tuple[Path, Manifest | None, list[TrialRecord]]]
               ) -> DirSource:
        """Runs already read (the report's): (directory, manifest, the records that
        stand); the campaign of a run directory inside a campaign directory is named."""
        from nicbench.results.campaign import CampaignState, is_campaign

        src = cls([])
        for path, manifest, records in runs:
            parent = Path(path).resolve().parent
            campaign = CampaignState.read(parent).name if is_campaign(parent) else None
            src.dirs.append(_Dir(Path(path), campaign, manifest, True, list(records)))
        return src

    def _selected(self, since: datetime | None,
                  run_ids: Sequence[str] | None) -> list[_Dir]:
        t0 = utc(since).timestamp() if since is not None else None  # type: ignore[union-attr]
        out = []
        for d in self.dirs:
            d.load_manifest()
            if t0 is not None and d.started_at < t0:
                continue
            if run_ids is not None and d.run_id not in run_ids:
                continue
            out.append(d)
        return out

    def trial_frame(self, *, adapter: str | None = None, test: str | None = None,
                    point: str | None = None, since: datetime | None = None,
                    run_ids: Sequence[str] | None = None) -> pd.DataFrame:
        cols: dict[str, list[Any]] = {name: [] for name, _ in TRIAL_COLUMNS}
        for d in self._selected(since, run_ids):
            run = columns.RunInfo(d.started_at, d.manifest.profile.name
                                  if d.manifest is not None else None, d.campaign)
            for r in d.trials():
                if (adapter is not None and r.adapter != adapter) or \
                        (test is not None and r.test != test) or \
                        (point is not None and r.point != point):
                    continue
                _add(cols, r, run)
        return typed(cols)

    def manifests(self, run_ids: Sequence[str]) -> dict[str, Manifest]:
        wanted = set(run_ids)
        out = {}
        for d in self.dirs:
            m = d.load_manifest()
            if m is not None and m.run_id in wanted:
                out[m.run_id] = m
        return out

    def runs(self) -> pd.DataFrame:
        import pandas as pd

        rows = [(d.run_id, d.started_at, d.manifest.profile.name if d.manifest else None,
                 d.campaign, len(d.trials())) for d in self._selected(None, None)]
        return pd.DataFrame({
            Col.RUN_ID.value: pd.array([r[0] for r in rows], dtype="string"),
            Col.RUN_STARTED_AT.value: _times([r[1] for r in rows]),
            Col.PROFILE.value: pd.array([r[2] for r in rows], dtype="string"),
            Col.CAMPAIGN.value: pd.array([r[3] for r in rows], dtype="string"),
            "trials": pd.array([r[4] for r in rows], dtype="Int64")})


def _add(cols: dict[str, list[Any]], r: TrialRecord, run: columns.RunInfo) -> None:
    for name, value in zip(_RECORD_NAMES, _RECORD_VALUES(r), strict=True):
        cols[name].append(value)
    for name, value in zip(_RUN_NAMES, _RUN_VALUES(run), strict=True):
        cols[name].append(value)


def _times(seconds: list[float | None]) -> Any:
    import numpy as np
    import pandas as pd

    values = np.array([np.nan if s is None else s for s in seconds], dtype="float64")
    return pd.to_datetime(values, unit="s", utc=True).astype("datetime64[ns, UTC]")


def typed(cols: dict[str, list[Any]]) -> pd.DataFrame:
    """The trial frame of column lists (None: missing), each column its dtype."""
    import numpy as np
    import pandas as pd

    kinds = dtypes()
    data: dict[str, Any] = {}
    for name, dtype in TRIAL_COLUMNS:
        values = cols.get(name, [])
        if dtype == "float64":
            data[name] = np.array([np.nan if v is None else v for v in values], "float64")
        elif dtype.startswith("datetime64"):
            data[name] = _times(values)
        elif dtype == "category":
            data[name] = pd.Categorical(values, dtype=kinds[name])
        else:
            data[name] = pd.array(values, dtype=_nullable(dtype))
    return pd.DataFrame(data)


def _nullable(dtype: str) -> Any:
    import pandas as pd

    return pd.Int64Dtype() if dtype == "Int64" else pd.StringDtype()


def empty() -> pd.DataFrame:
    """A trial frame without rows (every column and dtype)."""
    return typed({})


# -- the frame -----------------------------------------------------------------------------
# What the frame and history read: a results store (or any TrialSource), a results
# directory, or several.
SourceLike = TrialSource | str | Path | Iterable[str | Path]


def source_of(source: SourceLike) -> TrialSource:
    """A store (anything with ``trial_frame`` and ``manifests``) as it is; a directory or
    a list of them as a :class:`DirSource`."""
    if hasattr(source, "trial_frame") and hasattr(source, "manifests"):
        return cast("TrialSource", source)
    if isinstance(source, (str, Path)):
        return DirSource([source])
    if isinstance(source, Iterable):
        dirs = list(source)
        if not dirs:
            raise UsageError("give at least one results directory")
        if all(isinstance(d, (str, Path)) for d in dirs):
            return DirSource(dirs)
    raise UsageError(f"{source!r}: not a results store nor results directories")


def frame(source: SourceLike, *, adapter: str | None = None, test: str | None = None,
          point: str | None = None, since: datetime | date | str | None = None,
          setup: bool = True) -> pd.DataFrame:
    """The trial frame of ``source`` (see the module), filtered by adapter, test, point
    and the runs started at or after ``since``; with ``setup``, the setup columns
    joined on (run_id, pair)."""
    src = source_of(source)
    df = src.trial_frame(adapter=adapter, test=test, point=point, since=utc(since))
    return with_setup(df, src) if setup else df


def setup_frame(manifests: dict[str, Manifest], keys: Iterable[tuple[str, str]]
                ) -> pd.DataFrame:
    """The setup columns of each (run_id, pair), from the runs' manifests."""
    import pandas as pd

    from nicbench.results.setup import SETUP_COLUMNS, setup_columns

    rows: dict[str, list[Any]] = {Col.RUN_ID.value: [], Col.PAIR.value: []}
    rows.update({name: [] for name, _ in SETUP_COLUMNS})
    for run_id, pair in keys:
        m = manifests.get(run_id)
        values = setup_columns(m, pair) if m is not None else {}
        rows[Col.RUN_ID].append(run_id)
        rows[Col.PAIR].append(pair)
        for name, _ in SETUP_COLUMNS:
            rows[name].append(values.get(name))
    return pd.DataFrame({name: pd.array(values, dtype="string")
                         for name, values in rows.items()})


_SETUP_KEYS = [Col.RUN_ID.value, Col.PAIR.value]     # what the setup columns are joined on


def with_setup(df: pd.DataFrame, source: TrialSource) -> pd.DataFrame:
    """``df`` with the setup columns joined on (run_id, pair), row order kept."""
    keys = df[_SETUP_KEYS].drop_duplicates()
    pairs = list(zip(keys[Col.RUN_ID].tolist(), keys[Col.PAIR].tolist(), strict=True))
    manifests = source.manifests(sorted({k for k, _ in pairs})) if pairs else {}
    setup = setup_frame(manifests, pairs)
    out = df.merge(setup, on=_SETUP_KEYS, how="left", sort=False)
    out.index = df.index
    return out
