"""Every verdict row family names its statistic and repetitions, holds its figure to a
physical bound (flagged, never ranked beyond it) and reaches verdict.csv: "lowest tail
latency" and "smallest increase under load" on the real runs ``data/latency`` and
``data/run-loaded`` (the small-packet rows: test_smallpkt_report.py)."""

from __future__ import annotations

import statistics
from pathlib import Path

from nicbench.report.build import build
from nicbench.report.load import load_runs
from nicbench.report.verdict import FASTEST, LOWEST_TAIL, SMALLEST_INCREASE
from nicbench.results.records import CpuPart

DATA = Path(__file__).parent / "data"


def csv_rows(report) -> list[dict[str, object]]:
    (t,) = [t for t in report.tables if t.family == "verdict-csv"]
    return [dict(zip(t.columns, r, strict=True)) for r in t.rows]


def test_lowest_tail_latency_rows_in_verdict_csv_flag_what_the_wire_cannot_give():
    (run,) = runs = load_runs([DATA / "latency"])
    rows = [r for r in csv_rows(build(runs)) if r["verdict_row"] == LOWEST_TAIL]
    assert {(r["test"], r["adapter_id"]) for r in rows} == {
        (t, a) for t in ("rtt-udp-64", "rtt-tcp-64") for a in ("lab-gbe", "lab-fe")}
    for r in rows:
        row = next(s for s in run.summary if s.adapter == r["adapter_id"] and s.test == r["test"])
        assert r["unit"] == "us" and r["value"] == round(row.p99_us, 3)
        assert r["statistic"] == "p99 of the " + (
            "median of 3 repetitions' own percentiles, no round trips kept, each given "
            "only where every repetition has enough" if r["test"] == "rtt-udp-64" else
            "pooled round trips of 3 repetitions kept whole")
        assert float(r["bound"]) > 0           # the wire's minimum round trip
        # fe's p50 is below the 100 Mbit/s wire's (UDP; TCP's pooled p50 is not)
        if r["adapter_id"] == "lab-fe" and r["test"] == "rtt-udp-64":
            assert r["rank"] == "" and "below the wire's minimum" in r["beyond_bound"]
        elif r["test"] == "rtt-udp-64":
            assert r["rank"] == 1 and r["beyond_bound"] == ""
        else:
            assert r["rank"] in (1, 2) and r["beyond_bound"] == ""
    # no rate verdict for round trips
    assert not [r for r in csv_rows(build(runs)) if r["verdict_row"] == FASTEST]


def test_under_load_rows_in_verdict_csv_say_why_nothing_was_ranked():
    runs = load_runs([DATA / "run-loaded"])
    rows = csv_rows(build(runs))
    loaded = [r for r in rows if r["verdict_row"] == SMALLEST_INCREASE]
    assert len(loaded) == 2
    for r in loaded:
        # on the busy machine neither load reached 95 % of the wire's limit
        assert r["rank"] == "" and r["status"] == "not ranked"
        assert "under 95 %" in r["beyond_bound"]
        assert r["statistic"].startswith("p99 of the round trips of repetitions 1, 2 pooled "
                                         "(n = 1,")
        assert r["unit"] == "us" and isinstance(r["value"], float)
        assert float(r["limit_pct"]) < 95.0
    # the bounce-back probe alone is a latency test: ranked lowest first, never 'fastest'
    tail = [r for r in rows if r["verdict_row"] == LOWEST_TAIL]
    # two repetitions each cannot show a difference by the comparison's rule: one rank
    assert sorted(r["rank"] for r in tail) == [1, 1]
    assert all(r["tied"] == "yes" for r in tail)
    assert {r["test"] for r in rows if r["verdict_row"] == FASTEST} == {"rtt-loaded"}


def test_every_configuration_shows_round_trips_not_an_empty_rate_nor_a_goodput_limit():
    for name, tests in (("latency", {"rtt-udp-64", "rtt-tcp-64"}), ("run-loaded", {"rtt-idle"})):
        (run,) = runs = load_runs([DATA / name])
        (t,) = build(runs).tables_of("summary")
        rows = [dict(zip(t.columns, r, strict=True)) for r in t.rows]
        for r in rows:
            s = next(x for x in run.summary if x.test == r["test"]
                     and x.adapter_label == r["adapter"].split(" [")[0])
            if r["test"] in tests:
                p50, p99 = (f"{s.p50_us:.1f}", f"{s.p99_us:.1f}") if s.p50_low_us is None \
                    else (f"{s.p50_low_us:.1f}-{s.p50_us:.1f}", f"{s.p99_low_us:.1f}-{s.p99_us:.1f}")
                assert r["selected"] == (f"p50 {p50} us, p99 {p99} us "
                                         f"(n = {s.latency_samples:,} round trips pooled)")
                assert r["min"] == f"{s.p50_min_us:.1f} us"
                assert r["goodput limit"] == ""
                below = r["beyond the wire"]
                assert below == "" or "below the wire's minimum round trip" in below
            else:                       # the load: a rate with its limit
                assert float(r["selected"]) == round(s.selected_bps / 1e6, 1)
                assert r["goodput limit"] != ""
        if name == "latency":          # fe's p50 is below its 100 Mbit/s wire's minimum
            assert {r["adapter"].startswith("LX-100 ") for r in rows
                    if r["beyond the wire"]} == {True}


def test_a_latency_rows_cpu_is_every_repetitions_not_the_selected_ones():
    from nicbench.report.configs import Index, build_entries

    runs = load_runs([DATA / "latency"])
    ix = Index(runs, build_entries(runs, {}))
    (t,) = build(runs).tables_of("summary")
    cells = {(e, r[1]): r[t.columns.index("CPU sender %")]
             for r, e in zip(t.rows, t.row_entries, strict=True)}
    for c in ix.configs:
        # the configuration's CPU: the median over every successful repetition, not the
        # one whose p50 is selected
        reps = sorted(c.ok, key=lambda r: r.repetition)
        assert c.cpu_repetitions == [r.repetition for r in reps]
        assert cells[(c.entry.key, c.test)] == \
            f"{statistics.median(CpuPart.SENDER_BUSY.of(r) for r in reps):.1f}"


def test_an_adapter_at_two_points_is_ranked_once_at_its_lowest_tail(copy_run):
    """The latency run's records again at MTU 9000 with every round trip 10 % longer (a
    copy of the real run): each adapter is one row of the verdict, at MTU 1500."""
    import json

    run = copy_run(DATA / "latency", "two-points")
    lines = (run / "trials.jsonl").read_text().splitlines()
    more = []
    for line in lines:
        data = json.loads(line)
        if data.get("latency"):
            data.update(point="mtu9000", mtu=9000, trial_id=data["trial_id"] + "-9000")
            data["latency"] = {k: (v * 1.1 if k.endswith("_us") and v is not None else v)
                               for k, v in data["latency"].items()}
            more.append(json.dumps(data))
    (run / "trials.jsonl").write_text("\n".join(lines + more) + "\n")
    report = build(load_runs([run]), rates={"lab-gbe": 1e9, "lab-fe": 1e9})
    for t in [t for t in report.tables_of("verdict") if "lowest tail latency" in t.title]:
        assert sorted(t.row_entries) == sorted(set(t.row_entries))          # once each
        assert {row[3] for row in t.rows} == {"MTU 1500"}
        # 3 against 3 repetitions cannot rank apart by the comparison's rule: tied
        assert [row[0] for row in t.rows] == ["1 (tied)", "1 (tied)"]
    rows = [r for r in csv_rows(report) if r["verdict_row"] == LOWEST_TAIL]
    assert len(rows) == 4 and {r["point"] for r in rows} == {"mtu1500"}
