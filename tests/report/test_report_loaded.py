"""The report's latency-under-load part, on a real run of ``profiles/lab-loaded.yaml``
(``data/run-loaded``: gbe and nojumbo of a private lab, 2 repetitions, every raw file
kept, made on a busy shared machine; data/README.md): idle and loaded round trips side by
side per adapter from the same run, the increase, the score in round trips per minute, the
load's throughput, the verdict's "smallest increase under load", and the flag of a load
figure above the wire's limit."""

from __future__ import annotations

import json
import math
import re
import statistics
from pathlib import Path

import pytest

from nicbench.report.build import build
from nicbench.report.load import load_runs
from nicbench.results.records import TrialRecord

RUN = Path(__file__).parent / "data" / "run-loaded"


def _records() -> list[TrialRecord]:
    return [TrialRecord.from_dict(json.loads(line))
            for line in (RUN / "trials.jsonl").read_text().splitlines()]


def _bins(paths: list[str]) -> list[tuple[float, int]]:
    """(bin's upper edge clipped to the run's max, count) of the bounce-back histograms in
    ``paths`` (iperf 2.1.8: label k counts [(k-1) w, k w)), read here from the raw text."""
    out: dict[float, int] = {}
    for rel in paths:
        text = (RUN / rel).read_text()
        top = float(re.search(r"\d+=[\d.]+/[\d.]+/([\d.]+)/", text)[1]) * 1000
        bins = re.search(r"BB8\(f\)-PDF: bin\(w=100us\):cnt\(\d+\)=([\d:,]+)", text)[1]
        for part in bins.split(","):
            k, n = map(int, part.split(":"))
            edge = min(k * 100.0, top)
            out[edge] = out.get(edge, 0) + n
    return sorted(out.items())


def _pooled(paths: list[str], q: float) -> float:
    """The nearest-rank q-quantile's bin (its upper edge) of the pooled histograms, us."""
    bins = _bins(paths)
    rank = math.ceil(q * sum(n for _, n in bins))
    for edge, n in bins:
        rank -= n
        if rank <= 0:
            return edge
    raise AssertionError("rank beyond the histogram")


def _expected(pair: str) -> dict[str, float]:
    """The figures read from the raw files by hand: the two repetitions pooled."""
    recs = [r for r in _records() if r.pair == pair]
    idle = [r.latency for r in recs if r.test == "rtt-idle" and r.latency]
    idle_raw = [r.raw["client"] for r in recs if r.test == "rtt-idle"]
    probe = [b.latency for r in recs if r.test == "rtt-loaded" for b in r.beside if b.latency]
    probe_raw = [b.raw["client"] for r in recs if r.test == "rtt-loaded" for b in r.beside]
    load = [r.throughput_bps for r in recs if r.test == "rtt-loaded" and r.throughput_bps]
    assert len(idle) == len(probe) == 2 and sum(x.samples for x in probe) >= 1000
    return {"idle_p99": _pooled(idle_raw, 0.99) / 1000,
            "loaded_p99": _pooled(probe_raw, 0.99) / 1000,
            "loaded_p50": _pooled(probe_raw, 0.5) / 1000,
            "loaded_n": sum(x.samples for x in probe),
            "loaded_rpm": statistics.median(60e6 / x.trimmed_mean_us for x in probe
                                            if x.trimmed_mean_us),
            "load": max(load) / 1e6}


@pytest.fixture(scope="module")
def report():
    return build(load_runs([RUN]))


def _table(report, family: str):
    [t] = report.tables_of(family)
    return [dict(zip(t.columns, row, strict=True)) for row in t.rows]


def test_idle_and_loaded_side_by_side_per_adapter(report):
    rows = {r["adapter"].split(" (")[0]: r for r in _table(report, "loaded")}
    assert len(rows) == 2
    for row in rows.values():
        pair = "gbe" if "NJ" not in row["adapter"] else "nojumbo"
        want = _expected(pair)
        assert row["idle p99 ms"] == pytest.approx(want["idle_p99"], abs=0.005)
        assert row["loaded p99 ms"] == pytest.approx(want["loaded_p99"], abs=0.005)
        assert row["loaded p50 ms"] == pytest.approx(want["loaded_p50"], abs=0.005)
        assert row["p99 increase ms"] == pytest.approx(want["loaded_p99"] - want["idle_p99"],
                                                       abs=0.01)
        assert row["loaded RPM"] == pytest.approx(want["loaded_rpm"], abs=1)
        assert float(row["load Mbit/s"]) == pytest.approx(want["load"], abs=0.05)
        assert row["idle repetitions"] == "1, 2" == row["loaded repetitions"]
        assert row["notes"].startswith("idle: test rtt-idle")
        assert row["loaded round trips"] == want["loaded_n"]
        assert "loaded p99 in the bin " in row["notes"]


# Link rates under which both loads of the fixture filled their links (98.8 % of the
# goodput limit): the run was made on a busy machine, at 91.3 and 90.1 % of a Gigabit link.
FILLED_RATES = {"gbe": 924e6, "nojumbo": 912e6}


def test_the_verdict_ranks_the_smallest_p99_increase_first():
    report = build(load_runs([RUN]), rates=FILLED_RATES)
    rows = _table(report, "verdict-loaded")
    increases = [r["p99 increase ms"] for r in rows]
    assert [r["rank"] for r in rows] == [1, 2] and increases == sorted(increases)
    assert all(r["statistic"].startswith("p99 of the round trips of repetitions 1, 2 pooled "
                                         "(n = 1,") for r in rows)
    [line] = [s.text for s in report.verdict if "under load" in s.text]
    assert line.startswith("Smallest increase under load (test rtt-loaded: p99 round trip "
                           "of the iperf 2 probe, the repetitions' round trips pooled, loaded "
                           f"minus idle): {rows[0]['adapter']} +")


def test_the_idle_test_is_no_throughput_figure(report):
    assert not any("nothing was measured" in s.text for s in report.verdict)
    assert not any("rtt-idle" in t.title for t in report.tables_of("verdict"))


def test_a_load_above_the_wires_limit_is_flagged_and_not_ranked():
    # a link rate that makes the gbe card's load impossible: 859.6 Mbit/s on 500 Mbit/s
    report = build(load_runs([RUN]), rates={"gbe": 500e6})
    rows = {r["adapter"]: r for r in _table(report, "loaded")}
    [gbe] = [r for name, r in rows.items() if "NJ" not in name]
    assert gbe["rank"] == "" and gbe["% of limit"].endswith(" !")
    assert ("above the wire's limit by more than its tool's printed resolution and timing "
            "error: not ranked") in gbe["notes"]
    [line] = [s.text for s in report.verdict if "under load" in s.text]
    assert "Not ranked, the load's figure above the wire's limit: LX-1000 Gigabit" in line


def test_without_the_probe_alone_there_is_no_increase(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    for name in ("manifest.json", "tuning.json"):
        (run / name).write_bytes((RUN / name).read_bytes())
    lines = [ln for ln in (RUN / "trials.jsonl").read_text().splitlines()
             if '"test": "rtt-idle"' not in ln]
    (run / "trials.jsonl").write_text("\n".join(lines) + "\n")
    report = build(load_runs([run]))
    for row in _table(report, "loaded"):
        assert row["rank"] == "" and row["p99 increase ms"] == "" and row["idle p99 ms"] == ""
        assert "no test of this run ran the same probe alone" in row["notes"]
    [line] = [s.text for s in report.verdict if "under load" in s.text]
    assert "nothing ranked" in line


def test_run_against_run_compares_the_loads_and_the_round_trips_each_as_itself(tmp_path):
    second = tmp_path / "second"
    second.mkdir()
    for name in ("manifest.json", "tuning.json", "trials.jsonl"):
        (second / name).write_bytes((RUN / name).read_bytes())
    report = build(load_runs([RUN, second]))
    [table] = report.tables_of("comparison")
    rows = {(row[table.columns.index("test")], row[table.columns.index("figure")])
            for row in table.rows}
    assert rows == {("rtt-idle", "p50 round trip, us"), ("rtt-idle", "p99 round trip, us"),
                    ("rtt-loaded", "throughput, Mbit/s"),
                    ("rtt-loaded", "probe p50 under load, us"),
                    ("rtt-loaded", "probe p99 under load, us")}
    assert len(report.tables_of("loaded")) == 1 and len(_table(report, "loaded")) == 4


def test_the_figure_draws_both_p99s_per_adapter_as_the_table_gives_them(report):
    [fig] = report.figures_of("loaded")
    [panel] = fig.panels
    table = {r["adapter"]: r for r in _table(report, "loaded")}
    assert [row.label for row in panel.rows] == list(table)       # the table's order
    for row in panel.rows:
        idle, loaded = panel.bar(row.key, "idle"), panel.bar(row.key, "loaded")
        assert idle is not None and loaded is not None
        assert idle.value == pytest.approx(table[row.label]["idle p99 ms"], abs=0.005)
        assert loaded.value == pytest.approx(table[row.label]["loaded p99 ms"], abs=0.005)
        assert "RPM, load " in loaded.text


def test_a_load_that_did_not_fill_the_link_is_shown_not_ranked(report):
    # on a Gigabit link the fixture's loads reached 859.6 and 848.4 Mbit/s: 91.3 and 90.1 %
    for row in _table(report, "loaded"):
        assert row["rank"] == "" and row["p99 increase ms"] != ""
        assert "not under working conditions, not ranked" in row["notes"]
    [line] = [s.text for s in report.verdict if "under load" in s.text]
    assert line.startswith("Smallest increase under load (test rtt-loaded): nothing ranked.")
    assert ("Not ranked, the load under 95 % of the wire's limit (not under working "
            "conditions): ") in line and "(91.3 %)" in line and "(90.1 %)" in line


def _bidir_run(copy_run, reverse_share: dict[str, float]) -> Path:
    """run-loaded as if its load had run both ways (iperf3 ``bidir: true``): the profile
    says so and each loaded trial carries ``bidir``, forward its own throughput, reverse
    ``reverse_share[pair]`` of it (a fake made from the real run: the round trips, the
    forward rates and everything else as measured)."""
    run = copy_run(RUN, "bidir")
    manifest = json.loads((run / "manifest.json").read_text())
    spec = next(t for t in manifest["profile"]["tests"] if t["name"] == "rtt-loaded")
    spec["params"]["bidir"] = True
    (run / "manifest.json").write_text(json.dumps(manifest))
    lines = []
    for line in (run / "trials.jsonl").read_text().splitlines():
        data = json.loads(line)
        if data.get("test") == "rtt-loaded" and data.get("throughput_bps"):
            fwd = data["throughput_bps"]
            data["bidir"] = {"forward_bps": fwd, "reverse_bps": fwd * reverse_share[data["pair"]]}
        lines.append(json.dumps(data))
    (run / "trials.jsonl").write_text("\n".join(lines) + "\n")
    return run


def test_a_load_both_ways_is_held_to_the_limit_in_each_direction(copy_run):
    from nicbench.report import loaded
    from nicbench.report.configs import Index, build_entries

    # Line rates at which the forward loads fill their links (>= 95 % of the limit):
    # gbe's reverse at half its forward did not; nojumbo's, equal to its forward, did.
    run = _bidir_run(copy_run, {"gbe": 0.5, "nojumbo": 1.0})
    runs = load_runs([run])
    rates = {"lab-gbe": 0.924e9, "lab-nojumbo": 0.912e9}
    ix = Index(runs, build_entries(runs, rates))
    rows = {r.config.row.pair: r for r in loaded.loaded_rows(ix)["rtt-loaded"]}
    for pair, share in (("gbe", 0.5), ("nojumbo", 1.0)):
        r = rows[pair]
        limit = r.config.limit_bps / 1e6
        assert r.bidir and r.limit_pct == pytest.approx(100 * r.throughput_mbit / limit)
        assert r.limit_pct >= loaded.FILLED_PCT
        assert r.reverse_mbit == pytest.approx(r.throughput_mbit * share)
        assert r.reverse_pct == pytest.approx(100 * r.reverse_mbit / limit)
    assert not rows["gbe"].above and not rows["nojumbo"].above
    assert rows["gbe"].unfilled and rows["gbe"].rank is None
    assert not rows["nojumbo"].unfilled and rows["nojumbo"].rank == 1
    report = build(runs, rates=rates)
    table = {r["adapter"].split(" (")[0]: r for r in _table(report, "loaded")}
    gbe = next(v for k, v in table.items() if "NJ" not in k)
    assert gbe["reverse Mbit/s"] == f"{rows['gbe'].reverse_mbit:.1f}"
    assert f"reverse {rows['gbe'].reverse_pct:.1f} %" in gbe["notes"]
    [line] = [s.text for s in report.verdict if "under load" in s.text]
    assert "reverse" in line and "Not ranked, the load under 95 %" in line


def test_a_load_direction_above_the_wire_is_flagged_not_ranked(copy_run):
    from nicbench.report import loaded
    from nicbench.report.configs import Index, build_entries

    run = _bidir_run(copy_run, {"gbe": 1.3, "nojumbo": 1.0})
    runs = load_runs([run])
    rates = {"lab-gbe": 0.924e9, "lab-nojumbo": 0.912e9}
    rows = {r.config.row.pair: r for r in loaded.loaded_rows(
        Index(runs, build_entries(runs, rates)))["rtt-loaded"]}
    assert rows["gbe"].above and rows["gbe"].rank is None
    assert rows["nojumbo"].rank == 1


def test_a_round_trip_below_the_wire_minimum_is_flagged_not_ranked(copy_run):
    from nicbench.report import loaded
    from nicbench.report.configs import Index, build_entries
    from nicbench.physics.link import round_trip_floor_us

    # At 10 Mbit/s two 64-byte messages take longer on the wire than the probe's ~60 us.
    run = _bidir_run(copy_run, {"gbe": 1.0, "nojumbo": 1.0})
    runs = load_runs([run])
    ix = Index(runs, build_entries(runs, {"lab-gbe": 10e6}))
    rows = {r.config.row.pair: r for r in loaded.loaded_rows(ix)["rtt-loaded"]}
    gbe = rows["gbe"]
    assert gbe.floor_us == pytest.approx(round_trip_floor_us(10e6, 64, "tcp"))
    assert gbe.idle.p50_us < gbe.floor_us and gbe.below_floor and gbe.rank is None
    t = loaded.verdict_table("rtt-loaded", list(rows.values()))
    (cells,) = [row for row in t.rows if row[1] == gbe.config.entry.label]
    assert "below the wire's minimum round trip" in cells[-1]


def test_an_adapter_at_two_points_is_ranked_once_at_its_smallest_increase(copy_run):
    """run-loaded's records again at MTU 9000 (a copy of the real run: the load 5 % faster,
    every round trip 10 % longer, so the increase is larger there): each adapter is
    ranked once, at MTU 1500, its MTU 9000 row shown and named, not ranked again."""
    from nicbench.report import loaded
    from nicbench.report.configs import Index, build_entries

    run = copy_run(RUN, "two-points")
    lines = (run / "trials.jsonl").read_text().splitlines()
    more = []

    def longer(lat):
        return {k: (v * 1.1 if k.endswith("_us") and v is not None else v)
                for k, v in lat.items()}
    for line in lines:
        data = json.loads(line)
        if data.get("point") != "mtu1500":
            continue
        data.update(point="mtu9000", mtu=9000, trial_id=data["trial_id"] + "-9000")
        if data.get("throughput_bps"):
            data["throughput_bps"] *= 1.05
        if data.get("latency"):
            data["latency"] = longer(data["latency"])
        for b in data.get("beside") or []:
            if b.get("latency"):
                b["latency"] = longer(b["latency"])
        more.append(json.dumps(data))
    (run / "trials.jsonl").write_text("\n".join(lines + more) + "\n")
    runs = load_runs([run])
    rates = {"lab-gbe": 0.924e9, "lab-nojumbo": 0.912e9}
    rows = loaded.loaded_rows(Index(runs, build_entries(runs, rates)))["rtt-loaded"]
    assert len(rows) == 4 and not any(r.unfilled or r.above for r in rows)
    ranked = [r for r in rows if r.rank is not None]
    assert sorted(r.rank for r in ranked) == [1, 2]
    assert {r.config.mtu for r in ranked} == {1500}
    for r in rows:
        if r.rank is None:
            assert r.config.mtu == 9000 and "ranked at MTU 1500" in "; ".join(r.notes)
