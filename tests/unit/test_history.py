"""nicbench history over real runs (the engine on fake hosts, each trial the lab's
captured iperf3 JSON at a rate the test chooses): a step is found at the run it starts,
with the setup difference behind it; noise alone is no change; a figure beyond the
link's goodput limit is flagged and not judged; each night's figure is the run's own
selected figure; a campaign's morning summary lists what its night changed."""

from __future__ import annotations

import statistics

import json
import re
from pathlib import Path

import numpy as np
import pytest

from nights import campaign_night, night, real_nights

from nicbench.history import Direction, Flag, history
from nicbench.history.regressions import campaign_changes, condensed
from nicbench.results.manifest import Manifest
from nicbench.results.rundir import RunDir
from nicbench.results.summary import summary_rows

DATA = Path(__file__).resolve().parents[1] / "report" / "data"
GBE = 930e6                   # below the 1 Gbit/s link's 941.5 Mbit/s goodput at MTU 1500


def nights(tmp_path: Path, levels: list[float], *, seed: int, rsd: float = 0.003,
           night_rsd: float = 0.0, reps: int = 5,
           drivers: list[str] | None = None) -> list[Path]:
    """A run per level (a night each, from 2026-11-01), its repetitions drawn around the
    level (``rsd`` within a night, ``night_rsd`` between nights), seeded."""
    rng = np.random.default_rng(seed)
    out = []
    for i, level in enumerate(levels):
        mean = level * (1 + rng.normal(0, night_rsd))
        rates = list(mean * (1 + rng.normal(0, rsd, reps)))
        out.append(night(tmp_path / f"night-{i + 1:02d}", f"2026-11-{i + 1:02d}",
                         {"gbe": rates}, driver_version=(drivers or [])[i]
                         if drivers else "1.0"))
    return out


def test_a_step_is_found_at_its_run_with_the_driver_change_behind_it(tmp_path):
    levels = [GBE] * 6 + [GBE * 0.96] * 4
    drivers = ["1.0"] * 6 + ["1.1"] * 4
    dirs = nights(tmp_path, levels, seed=11, drivers=drivers)
    [series] = history(dirs)
    assert (series.adapter, series.test, series.point) == ("gbe", "tcp", "mtu1500")
    assert [n.run_id for n in series.nights] == [f"202611{d:02d}-030000" for d in range(1, 11)]
    [change] = series.changes
    assert change.run_id == "20261107-030000"
    assert change.before_run_id == "20261106-030000"
    assert change.direction is Direction.REGRESSION
    assert change.change_pct == pytest.approx(-4.0, abs=0.5)
    assert change.before_bps == pytest.approx(GBE, rel=0.005)
    assert change.after_bps == pytest.approx(GBE * 0.96, rel=0.005)
    assert change.low_pct <= change.change_pct <= change.high_pct < -change.threshold_pct
    assert set(change.setup_changes) == {"nb-a gbe driver_version 1.0 -> 1.1",
                                         "nb-b gbe driver_version 1.0 -> 1.1"}
    assert condensed(change.setup_changes) == ["gbe driver_version 1.0 -> 1.1"]
    assert all(n.flag is None and n.n == 5 for n in series.nights)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_flat_noisy_series_has_no_change(tmp_path, seed):
    # 0.5 % within a night and 0.3 % between nights: as a quiet lab link looks
    dirs = nights(tmp_path, [GBE] * 12, seed=seed, rsd=0.005, night_rsd=0.003)
    [series] = history(dirs)
    assert len(series.nights) == 12
    values = [n.value_bps for n in series.nights]
    assert max(values) - min(values) > 0.002 * GBE        # the noise is there
    assert series.changes == []


def test_three_runs_the_third_slowed_is_a_change_at_the_third(tmp_path):
    dirs = nights(tmp_path, [GBE, GBE, GBE * 0.9], seed=5, reps=3)
    [series] = history(dirs)
    [change] = series.changes
    assert change.run_id == "20261103-030000"
    assert change.change_pct == pytest.approx(-10, abs=0.7)
    assert change.setup_changes == ()        # nothing recorded changed: said as such


def test_a_night_above_the_line_rate_is_flagged_and_not_judged(tmp_path):
    # 990 Mbit/s cannot cross a 1 Gbit/s link at MTU 1500 (941.5 Mbit/s of goodput)
    dirs = nights(tmp_path, [GBE] * 4 + [990e6] + [GBE] * 4, seed=7)
    [series] = history(dirs)
    odd = series.nights[4]
    assert odd.flag is Flag.ABOVE_LINE_RATE and odd.flagged == 5
    assert odd.limit_bps == pytest.approx(941.5e6, rel=0.001)
    assert odd.value_bps == pytest.approx(990e6, rel=0.01)    # shown, as the report does
    assert all(n.flag is None for k, n in enumerate(series.nights) if k != 4)
    assert series.changes == []
    # the same night at a figure the link can carry is a change
    (tmp_path / "b").mkdir()
    dirs = nights(tmp_path / "b", [GBE] * 4 + [GBE * 0.9] * 4, seed=7)
    assert len(history(dirs)[0].changes) == 1


def test_a_nights_figure_is_the_runs_own_selected_figure():
    """best in run A's profile, median in run B's: as summary.csv selects them."""
    found = {s.key[:3]: s for s in history([DATA / "run-a", DATA / "run-b"])}
    for run_dir in (DATA / "run-a", DATA / "run-b"):
        m = Manifest.read(run_dir / "manifest.json")
        for row in summary_rows(RunDir(run_dir).records(), m.profile):
            if row.selected_bps is None:
                continue
            n = next(n for n in found[(row.adapter, row.test, row.point)].nights
                     if n.run_id == m.run_id)
            assert n.value_bps == pytest.approx(row.selected_bps), row
            assert (n.select, n.n) == (row.select, row.n_ok)
            assert n.min_bps == pytest.approx(row.min_bps)
            assert n.max_bps == pytest.approx(row.max_bps)
    selects = {n.select for s in found.values() for n in s.nights}
    assert selects == {"best", "median"}


def test_json_of_a_series(tmp_path):
    dirs = nights(tmp_path, [GBE] * 3 + [GBE * 0.95] * 2, seed=9,
                  drivers=["1.0"] * 3 + ["2.0"] * 2)
    [series] = history(dirs, since="2026-11-02")
    data = json.loads(json.dumps(series.to_json()))
    assert [r["run_id"] for r in data["runs"]] == [f"202611{d:02d}-030000"
                                                  for d in range(2, 6)]
    assert set(data["runs"][0]) >= {"run_id", "started_at", "value_bps", "n", "stdev_bps",
                                    "setup"}
    [change] = data["changes"]
    assert set(change) >= {"run_id", "before_bps", "after_bps", "change_pct",
                           "interval_pct", "threshold_pct", "setup_changes"}
    assert change["rule"] == "levels-t-interval"
    assert change["threshold_pct"] == pytest.approx(1.0)
    low, high = change["interval_pct"]
    assert low <= change["change_pct"] <= high < -1.0
    assert "nb-a gbe driver_version 1.0 -> 2.0" in change["setup_changes"]


def test_the_morning_summary_lists_what_the_night_changed(tmp_path):
    """Four nights, each a campaign beside the others; the last one's driver is new and
    its figure 4 % lower: its summary.md and index.html say so, the earlier ones nothing."""
    root = tmp_path / "nights"
    root.mkdir()
    rng = np.random.default_rng(21)
    # another campaign's night beside them (every campaign's nights share reports/), low
    # and on the new driver: not this campaign's history
    campaign_night(root / "night-0-other", "20261031-030000",
                   {"gbe": list(GBE * 0.9 * (1 + rng.normal(0, 0.003, 4)))},
                   driver_version="3.3", name="other")
    runners = []
    for i in range(4):
        level = GBE if i < 3 else GBE * 0.96
        runners.append(campaign_night(root / f"night-{i + 1}", f"2026110{i + 1}-030000",
                                      {"gbe": list(level * (1 + rng.normal(0, 0.003, 4)))},
                                      driver_version="3.2" if i < 3 else "3.3"))
    assert all(r.morning.history == [] for r in runners[:3])
    [line] = runners[3].morning.history
    said = re.fullmatch(r"gbe tcp MTU 1500: (-\d\.\d) % \[-\d\.\d, -\d\.\d\] since "
                        r"\d{4}-\d\d-\d\d, "
                        r"gbe driver_version 3\.2 -> 3\.3", line)
    assert said is not None, line
    assert float(said.group(1)) == pytest.approx(-4, abs=0.6)
    summary = (root / "night-4" / "summary.md").read_text()
    assert f"- {line}" in summary and "Against history" in summary
    index = (root / "night-4" / "index.html").read_text()
    assert "<h2>Against history</h2>" in index and line.replace(">", "&gt;") in index
    assert "Against history" not in (root / "night-3" / "summary.md").read_text()
    [found] = campaign_changes(root / "night-4")
    assert found.regression and found.nights == 4


def test_setup_changes_name_the_tool_and_mtu_and_only_the_tools_that_measured():
    from datetime import UTC, datetime

    from nicbench.history.model import Night
    from nicbench.history.series import setup_changes

    def n(tool: str, mtu: int, setup: dict[str, str]) -> Night:
        return Night(run_id="r", started_at=datetime(2026, 11, 1, tzinfo=UTC),
                     pair="gbe", mtu=mtu, select="best", value_bps=1.0, n=1,
                     stdev_bps=0.0, min_bps=1.0, max_bps=1.0, tool=tool, setup=setup)

    a = n("iperf2", 1500, {"h iperf2 version": "2.1.8", "h iperf3 version": "3.12",
                           "h netpipe version": "3.7", "h kernel": "6.1"})
    b = n("iperf3", 9000, {"h iperf2 version": "2.1.9", "h iperf3 version": "3.16",
                           "h kernel": "6.1"})
    assert setup_changes(a, b, "iperf2") == [
        "h iperf2 version 2.1.8 -> 2.1.9", "h iperf3 version 3.12 -> 3.16",
        "tool iperf2 -> iperf3", "mtu 1500 -> 9000"]


def test_the_runs_of_a_directory_source(tmp_path):
    from nicbench.results.dataframe import DirSource

    dirs = nights(tmp_path, [GBE, GBE], seed=1, reps=2)
    runs = DirSource(dirs).runs()
    assert runs["run_id"].tolist() == ["20261101-030000", "20261102-030000"]
    assert runs["trials"].tolist() == [2, 2] and runs["profile"].tolist() == ["nightly"] * 2
    assert str(runs["run_started_at"].dtype) == "datetime64[ns, UTC]"


def test_sixty_nights_of_a_real_run_two_planted_changes_found_and_named(tmp_path):
    """60 nights made from the roundup's real repetitions (tests/report/data/roundup:
    24 rate series of 15 repetitions each), 0.5 % night-to-night variation, and gbe's
    iperf3 at MTU 9000 planted 4 % lower from night 21 with a driver change, 2 % lower
    again from night 41 with a firmware change: both found within one night with their
    setup change named; of the other series (stable, 16 asked for) at most one says a
    change."""
    key = ("lab-gbe", "iperf3-tcp", "mtu9000")
    level = [1.0] * 20 + [0.96] * 20 + [0.96 * 0.98] * 20
    driver = {"gbe": {"driver_version": "1.1"}}
    facts = [{}] * 20 + [driver] * 20 + [{"gbe": {**driver["gbe"], "firmware": "2.0"}}] * 20
    dirs = real_nights(tmp_path, 60, seed=29, levels={key: level}, facts=facts)
    found = {s.key[:3]: s for s in history(dirs)}
    assert len(found) == 24 and all(len(s.nights) == 60 for s in found.values())
    planted = found[key]
    days = [n.run_id for n in planted.nights]
    first, second = planted.changes
    assert abs(days.index(first.run_id) - 20) <= 1 and abs(days.index(second.run_id) - 40) <= 1
    assert first.change_pct == pytest.approx(-4, abs=0.5)
    assert second.change_pct == pytest.approx(-2, abs=0.5)
    assert "gbe driver_version 1.0 -> 1.1" in condensed(first.setup_changes)
    assert "gbe firmware (none) -> 2.0" in condensed(second.setup_changes)
    for c in (first, second):
        assert c.low_pct <= c.change_pct <= c.high_pct < -c.threshold_pct
        assert c.night_spread_pct > 0.2        # the night-to-night variation, estimated
    alarms = [k for k, s in found.items() if k != key and s.changes]
    assert len(alarms) <= 1, [(k, [c.interval_text() for c in found[k].changes])
                              for k in alarms]


def test_a_latency_test_is_one_series_per_percentile(tmp_path):
    """The real sockperf run (tests/report/data/latency): its median and 99th-percentile
    round trips are two series each, their nights the run's own selected figures (best:
    the lowest); 8 nights of it, each night's round trips moved by 0.5 % night to night
    and 25 % longer from night 5 with a driver change: the p50 series says a regression
    there, by its own figures (the p99's repetitions of one night spread from 44 to
    763 us: its own precision too poor to say as much)."""
    run = DATA / "latency"
    found = {s.key: s for s in history([run])}
    rows = {(r.adapter, r.test): r for r in summary_rows(RunDir(run).records())}
    for (adapter, test), row in rows.items():
        p50 = found[(adapter, test, "mtu1500", "p50 round trip")]
        p99 = found[(adapter, test, "mtu1500", "p99 round trip")]
        assert p50.figure.lower_better and p50.to_json()["unit"] == "us"
        # the median of the repetitions' own percentiles (never the lowest of each: the
        # store keeps each trial's percentiles, not its round trips)
        reps = [r.latency for r in RunDir(run).records() if r.ok and r.latency is not None
                and (r.adapter, r.test) == (adapter, test)]
        assert p50.nights[0].select == "median" and row.n_ok == len(reps)
        assert p50.nights[0].value_bps == pytest.approx(statistics.median(x.p50_us
                                                                          for x in reps))
        assert p99.nights[0].value_bps == pytest.approx(statistics.median(x.p99_us
                                                                          for x in reps))
    assert not any(s.figure.value == "throughput" for s in found.values())   # no rate
    rng = np.random.default_rng(3)
    manifest = json.loads((run / "manifest.json").read_text())
    lines = (run / "trials.jsonl").read_text().splitlines()
    dirs = []
    for i in range(8):
        d = tmp_path / f"night-{i}"
        d.mkdir()
        m = json.loads(json.dumps(manifest))
        m["run_id"], m["started_at"] = f"2026110{i + 1}-030000", manifest["started_at"] + i * 86400
        if i >= 4:
            for iface in m["interfaces"].values():
                iface["driver_version"] = "9.9"
        (d / "manifest.json").write_text(json.dumps(m))
        out = []
        for line in lines:
            rec = json.loads(line)
            rec["run_id"] = m["run_id"]
            if rec.get("latency"):
                f = 1 + rng.normal(0, 0.005)
                rec["latency"] = {k: (v * f * (1.25 if i >= 4 else 1)
                                      if k.endswith("_us") else v)
                                  for k, v in rec["latency"].items()}
            out.append(json.dumps(rec))
        (d / "trials.jsonl").write_text("\n".join(out) + "\n")
        dirs.append(d)
    found = {s.key: s for s in history(dirs)}
    udp = ("lab-gbe", "rtt-udp-64", "mtu1500")
    [change] = found[(*udp, "p50 round trip")].changes
    assert change.run_id == "20261105-030000" and change.direction is Direction.REGRESSION
    assert change.change_pct == pytest.approx(25, abs=3)
    assert any("driver_version" in c for c in change.setup_changes)
    p99 = found[(*udp, "p99 round trip")]
    assert [n.value_bps for n in p99.nights][4] > 1.2 * p99.nights[3].value_bps


def test_a_frame_rate_search_is_not_one_series_of_every_probe():
    """The real modern run's small-packet test (a frame-rate search: NDR and PDR at each
    frame size) made one series of every probe, sizes and bounds mixed, its figure the
    best probe's throughput; the trial frame does not say a probe's size or bound, so the
    search is left out of history rather than judged so."""
    run = DATA / "modern"
    searches = [t.name for t in Manifest.read(run / "manifest.json").profile.tests
                if t.frame_search]
    assert searches == ["smallpkt"]
    found = history([run])
    assert found and not any(s.test in searches for s in found)
    assert any(s.test == "tcp-streams1" for s in found)       # the rest as before
