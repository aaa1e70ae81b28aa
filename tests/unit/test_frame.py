"""nicbench.results.dataframe: the trial frame of results directories or of a store, its
columns and dtypes (the contract the store shares), filters, the setup joined in."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import nicbench.results
from nicbench.errors import UsageError
from nicbench.results.dataframe import CATEGORIES, TRIAL_COLUMNS, DirSource
from nicbench.results.manifest import Manifest
from nicbench.results.records import Kind, Status, current
from nicbench.results.setup import SETUP_COLUMNS, setup_facts
from nicbench.results.rundir import RunDir

from nights import night

DATA = Path(__file__).resolve().parents[1] / "report" / "data"
RUN_A, RUN_B = DATA / "run-a", DATA / "run-b"


def _dtype_ok(series: pd.Series, want: str) -> bool:
    got = series.dtype
    if want == "string":
        return isinstance(got, pd.StringDtype)
    if want == "Int64":
        return isinstance(got, pd.Int64Dtype)
    if want == "category":
        return isinstance(got, pd.CategoricalDtype) and \
            tuple(got.categories) == CATEGORIES[str(series.name)]
    return str(got) == want


def test_the_frame_has_exactly_the_contracts_columns_and_dtypes():
    df = nicbench.results.frame([RUN_A, RUN_B])
    names = [n for n, _ in TRIAL_COLUMNS] + [n for n, _ in SETUP_COLUMNS]
    assert list(df.columns) == names
    for name, dtype in (*TRIAL_COLUMNS, *SETUP_COLUMNS):
        assert _dtype_ok(df[name], dtype), f"{name}: {df[name].dtype}, not {dtype}"
    assert CATEGORIES["kind"] == tuple(k.value for k in Kind)
    assert CATEGORIES["status"] == tuple(s.value for s in Status)
    # a row per record that stands, nothing else
    stands = [r for d in (RUN_A, RUN_B) for r in current(RunDir(d).records())]
    assert len(df) == len(stands)
    assert sorted(df["trial_id"].tolist()) == sorted(r.trial_id for r in stands)
    ok = df[df["status"] == "ok"]
    assert ok["throughput_bps"].notna().all()
    assert df["throughput_bps"].sum() == pytest.approx(
        sum(r.throughput_bps or 0.0 for r in stands))
    # the run's start from its manifest, in UTC
    a = Manifest.read(RUN_A / "manifest.json")
    first = df[df["run_id"] == a.run_id]["run_started_at"].iloc[0]
    assert first.timestamp() == pytest.approx(a.started_at, abs=1e-6)
    assert str(first.tz) == "UTC"
    # setup joined from the manifest: the sender's interface and both kernels
    row = df[(df["run_id"] == a.run_id) & (df["pair"] == "gbe")].iloc[0]
    assert (row["driver"], row["driver_version"]) == ("veth", "1.0")
    assert row["sender_kernel"] == a.hosts["nbr-b"].kernel
    assert row["offloads"].startswith("generic-receive-offload=off,")
    assert df["campaign"].isna().all()


def test_frame_is_the_module_and_the_function():
    import nicbench.results.dataframe as module

    assert nicbench.results.dataframe is module
    assert module.TRIAL_COLUMNS[0] == ("run_id", "string")
    assert len(nicbench.results.frame(RUN_A, setup=False).columns) == len(TRIAL_COLUMNS)


def test_filters_and_since():
    df = nicbench.results.frame([RUN_A, RUN_B], adapter="lab-gbe", test="iperf3-tcp",
                                point="mtu9000")
    assert set(df["adapter"]) == {"lab-gbe"} and set(df["point"]) == {"mtu9000"}
    assert set(df["test"]) == {"iperf3-tcp"} and df["run_id"].nunique() == 2
    b = Manifest.read(RUN_B / "manifest.json")
    later = nicbench.results.frame([RUN_A, RUN_B], since=b.started_at - 1)
    assert set(later["run_id"]) == {b.run_id}
    assert nicbench.results.frame([RUN_A], since="2099-01-01").empty
    assert list(nicbench.results.frame([RUN_A], since="2099-01-01").columns)[:3] == \
        ["run_id", "run_started_at", "profile"]


class Store:
    """What the store helper's Store offers frame(): trial_frame and manifests (the
    directories' own source stands in for its tables)."""

    def __init__(self, dirs):
        self.inner = DirSource(dirs)
        self.asked: list[dict] = []

    def trial_frame(self, **kw):
        self.asked.append(kw)
        return self.inner.trial_frame(**kw)

    def manifests(self, run_ids):
        return self.inner.manifests(run_ids)


def test_a_store_is_read_through_its_trial_frame_and_manifests():
    store = Store([RUN_A, RUN_B])
    df = nicbench.results.frame(store, adapter="lab-stall")
    assert store.asked == [{"adapter": "lab-stall", "test": None, "point": None,
                            "since": None}]
    assert set(df["adapter"]) == {"lab-stall"}
    assert df["driver"].notna().all()
    assert df.equals(nicbench.results.frame([RUN_A, RUN_B], adapter="lab-stall"))


def test_a_folder_of_nights_and_bad_input(tmp_path):
    nights = tmp_path / "nights"
    nights.mkdir()
    for i, rate in enumerate((930e6, 931e6)):
        night(nights / f"n{i}", f"2026-11-0{i + 1}", {"gbe": [rate, rate]})
    df = nicbench.results.frame(nights)
    assert sorted(set(df["run_id"])) == ["20261101-030000", "20261102-030000"]
    assert str(df["run_started_at"].min()) == "2026-11-01 03:00:00+00:00"
    with pytest.raises(UsageError, match="no such results directory"):
        nicbench.results.frame(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="not a results directory, a campaign"):
        nicbench.results.frame(tmp_path / "empty")
    with pytest.raises(UsageError, match="not a date"):
        nicbench.results.frame(nights, since="last week")


def test_setup_facts_name_what_the_manifest_recorded():
    m = Manifest.read(RUN_A / "manifest.json")
    facts = setup_facts(m, "gbe")
    assert facts["profile"] == m.profile.name
    assert facts["gbe sender"] == "nbr-b" and facts["gbe receiver"] == "nbr-a"
    assert facts["nbr-a gbe driver_version"] == "1.0"
    assert facts["nbr-a gbe driver"] == "veth"
    assert facts["nbr-b iperf3 version"] == "3.12"
    assert facts["nbr-a kernel"] == m.hosts["nbr-a"].kernel
    assert facts["nbr-a gbe offloads"].split(",") == sorted(
        f"{k}={'on' if v else 'off'}" for k, v in m.interfaces["gbe/nbr-a"].offloads.items())
    assert all(isinstance(v, str) for v in facts.values())
    assert not any(k.startswith("nbr-a nojumbo") for k in facts)
