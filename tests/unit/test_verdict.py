"""The verdict's judgements on constructed runs: which repetitions the CPU figure is taken
over (all tied for the best), when the CPU is too noisy to rank on, and that a figure above
the wire's limit is never ranked.

Each run is written as the engine writes one (trials.jsonl and manifest.json) and read back
by the report, so the verdict is built from the same records and rules as a real report's.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pytest

from nicbench.config.inventory import Inventory
from nicbench.config.profile import Profile
from nicbench.report.build import build
from nicbench.report.configs import cpu_figure
from nicbench.report.load import load_runs
from nicbench.report.verdict import ABOVE_LAB
from nicbench.results.manifest import Manifest
from nicbench.results.records import Cpu, CpuSplit, Kind, Status, TrialRecord

LIMIT_1500 = 1e9 * (1500 - 52) / (1500 + 38)        # TCP with timestamps, 1 Gbit/s
LIMIT_9000 = 1e9 * (9000 - 52) / (9000 + 38)


def _inventory(pairs: list[str], rates: dict[str, str] | None = None) -> Inventory:
    return Inventory.model_validate({
        "hosts": [{"name": n, "address": "198.19.1.2", "ssh": {"known_hosts": "k"}}
                  for n in ("a", "b")],
        "adapters": [{"id": f"card-{p}", "vendor": "lab", "model": f"Card {p}",
                      "driver": {"name": "veth"}, "link_rate": (rates or {}).get(p, "1gbit"),
                      "emulated": True}
                     for p in pairs],
        "pairs": [{"name": p, "adapter": f"card-{p}",
                   "a": {"host": "a", "interface": p, "address": f"198.18.{k}.1"},
                   "b": {"host": "b", "interface": p, "address": f"198.18.{k}.2"}}
                  for k, p in enumerate(pairs)]})


def _record(pair: str, tool: str, test: str, mtu: int, rep: int, bps: float | None,
            cpu: tuple[float, float] | None, points: list[dict] | None = None) -> TrialRecord:
    if bps is None and points:          # netPIPE's figure: its peak, as the parser gives it
        bps = max(p["throughput_bps"] for p in points)
    return TrialRecord(
        run_id="v1", trial_id=f"{pair}.mtu{mtu}.{test}.r{rep}", pair=pair,
        adapter=f"card-{pair}", adapter_label=f"Card {pair}", tool=tool, test=test,
        protocol="tcp", point=f"mtu{mtu}", mtu=mtu, repetition=rep, kind=Kind.REPETITION,
        status=Status.OK, throughput_bps=bps,
        cpu=Cpu(CpuSplit(cpu[0]), CpuSplit(cpu[1])) if cpu else None,
        points=points or [],
        # as the parsers say it: iperf 2 prints its rate as text (three digits), iperf3's
        # JSON and netPIPE's output file in full
        extra={"format": "text" if tool == "iperf2" else "json"})


def _write(run: Path, records: list[TrialRecord], tests: list[dict], mtus: list[int],
           pairs: list[str], rates: dict[str, str] | None = None) -> Path:
    run.mkdir()
    (run / "trials.jsonl").write_text("".join(json.dumps(asdict(r)) + "\n" for r in records))
    Manifest(run_id="v1", nicbench_version="test", pairs=pairs,
             profile=Profile.model_validate({
                 "name": "verdict", "source": "constructed", "mtu": mtus,
                 "repetitions": max(r.repetition or 1 for r in records), "select": "best",
                 "tests": tests}),
             inventory=_inventory(pairs, rates)).write(run / "manifest.json")
    return run


def _iperf2_run(tmp_path: Path, cpus: dict[str, list[tuple[float, float, float]]],
                rates: dict[str, str] | None = None) -> Path:
    """iperf 2 at MTU 1500: per pair, repetitions of (Mbit/s as iperf 2 prints it, CPU
    sending, CPU receiving)."""
    recs = [_record(p, "iperf2", "iperf2-tcp", 1500, k, mbit * 1e6, (snd, rcv))
            for p, reps in cpus.items() for k, (mbit, snd, rcv) in enumerate(reps, 1)]
    return _write(tmp_path / "iperf2", recs,
                  [{"name": "iperf2-tcp", "tool": "iperf2", "params": {"duration_s": 1}}],
                  [1500], list(cpus), rates)


def _verdict(report, method: str):
    (s,) = [s for s in report.verdict if s.method == method]
    (t,) = [t for t in report.tables_of("verdict") if t.title == method]
    # every column of the verdict's rows: the page shows short ones, its CSV all of them
    cols, full = (t.csv_columns, t.csv_rows) if t.csv_columns else (t.columns, t.rows)
    rows = {report.entry(e).adapter: dict(zip(cols, r, strict=True))
            for r, e in zip(full, t.row_entries, strict=True)}
    return s.text, rows


def _csv(report) -> dict[str, dict[str, object]]:
    """verdict.csv's rows by adapter id."""
    (t,) = [t for t in report.tables if t.family == "verdict-csv"]
    return {r[t.columns.index("adapter_id")]: dict(zip(t.columns, r, strict=True))
            for r in t.rows}


# -- what the CPU figure is taken over ------------------------------------------------------
def test_the_cpu_figure_is_the_configurations_over_every_successful_repetition(tmp_path):
    # iperf 2 prints whole Mbit/s here: 594 x3 tie for the best with CPU 5, 30 and 9; the
    # slower repetition 2 ran at CPU 50. The configuration's cost is over all five, not
    # over those that happened to be fastest (the quiet-machine ones)
    run = _iperf2_run(tmp_path, {
        "x": [(594, 5.0, 6.0), (592, 50.0, 50.0), (594, 30.0, 31.0), (593, 7.0, 7.0),
              (594, 9.0, 9.5)],
        "y": [(941, 20.0, 21.0), (941, 22.0, 22.0), (940, 21.0, 21.0)]})
    report = build(load_runs([run]))
    _, rows = _verdict(report, "iperf 2 TCP")
    x = rows["card-x"]
    assert x["CPU repetitions"] == "1, 2, 3, 4, 5"
    assert x["CPU sender %"] == "9"                     # median of 5, 50, 30, 7, 9
    assert x["CPU IQR, points"].split(" / ")[0] == "23"  # 7 .. 30 (inclusive quartiles)
    by = _csv(report)
    assert by["card-x"]["cpu_repetitions"] == "1,2,3,4,5"
    assert by["card-x"]["cpu_statistic"] == "median over all 5 successful repetitions"
    assert by["card-x"]["cpu_sender_pct"] == 9.0
    assert by["card-y"]["cpu_repetitions"] == "1,2,3"
    assert by["card-y"]["mbit_per_cpu_pct"] == pytest.approx(941 / 21.0, abs=1e-3)


def test_a_wide_cpu_spread_is_shown_but_not_ranked(tmp_path):
    # the same speed, CPU all over the place (the lab's shared machine): IQR far above 10
    run = _iperf2_run(tmp_path, {
        "noisy": [(94.1, 5.0, 5.0), (94.1, 100.0, 100.0), (94.1, 46.0, 46.0),
                  (94.1, 98.0, 98.0), (94.1, 80.0, 80.0)],
        "calm": [(941, 20.0, 20.0), (941, 22.0, 22.0), (941, 21.0, 21.0)],
        "calm2": [(600, 10.0, 10.0), (600, 11.0, 11.0), (600, 12.0, 12.0)]})
    report = build(load_runs([run]))
    text, rows = _verdict(report, "iperf 2 TCP")
    assert rows["card-noisy"]["CPU rank"] == ""
    assert "too noisy to rank on" in rows["card-noisy"]["Mbit/s per CPU %"]
    # the others rank by Mbit/s per CPU % of the busier host: 600/11 = 54.5 > 941/21 = 44.8
    assert (rows["card-calm2"]["CPU rank"], rows["card-calm"]["CPU rank"]) == (1, 2)
    assert "cheapest Card calm2 54.5, then Card calm 44.8." in text
    assert "Not ranked by CPU: CPU figures too noisy to rank on" in text
    assert "Card noisy (sending IQR 52, receiving IQR 52 points)" in text
    assert "cheapest Card noisy" not in text


def test_one_repetition_has_no_spread_and_no_cpu_rank(tmp_path):
    run = _iperf2_run(tmp_path, {"a": [(941, 20.0, 20.0)], "b": [(600, 10.0, 10.0)]})
    text, rows = _verdict(load_runs_and_build(run), "iperf 2 TCP")
    assert rows["card-a"]["CPU rank"] == rows["card-b"]["CPU rank"] == ""
    assert "cheapest" not in text
    assert "No CPU ranking: CPU figures too noisy to rank on" in text
    assert "one repetition: spread unknown" in text


def load_runs_and_build(run: Path):
    return build(load_runs([run]))


# -- figures above the wire's limit -------------------------------------------------------
def _curve(plateau_bps: float, small_bps: float) -> list[dict]:
    """A netPIPE curve up to 1 MB: small blocks at ``small_bps``, the last octave (512 KB
    to 1 MB) at ``plateau_bps``, the largest block a little below it."""
    sizes = [1 << k for k in range(10, 21)] + [786432]
    pts = []
    for s in sorted(sizes):
        bps = plateau_bps if s * 2 >= 1 << 20 else small_bps
        if s == 1 << 20:
            bps = plateau_bps * 0.995
        pts.append({"size_bytes": s, "throughput_bps": bps})
    return pts


def test_netpipe_above_the_wire_is_not_ranked_and_shows_its_largest_block(tmp_path):
    recs = [
        # over: its plateau is 2.5 % above the limit at MTU 9000 (the lab's token bucket)
        # and 1.5 % above at 1500: nothing of it can be ranked
        _record("over", "netpipe", "netpipe", 9000, 1, None, (50.0, 50.0),
                _curve(LIMIT_9000 * 1.025, 1.9e9)),
        _record("over", "netpipe", "netpipe", 1500, 1, None, (50.0, 50.0),
                _curve(LIMIT_1500 * 1.015, 1.9e9)),
        # under: within the limit at both; slower than "over"'s non-physical figure
        _record("under", "netpipe", "netpipe", 9000, 1, None, (40.0, 40.0),
                _curve(LIMIT_9000 * 0.98, 1.5e9)),
        _record("under", "netpipe", "netpipe", 1500, 1, None, (40.0, 40.0),
                _curve(LIMIT_1500 * 0.97, 1.5e9)),
    ]
    run = _write(tmp_path / "np", recs,
                 [{"name": "netpipe", "tool": "netpipe", "params": {"upper": "1M"}}],
                 [1500, 9000], ["over", "under"])
    report = build(load_runs([run]))
    text, rows = _verdict(report, "netPIPE TCP")
    # the card within the limit is on the same link: it is not crowned for being lower
    assert text.startswith("netPIPE TCP: nothing ranked. Not ranked: the method could not "
                           "rank the 1000 Mbit/s link on this setup: Card over read above "
                           "the wire's limit; measured Card under 970.2 at MTU 9000.")
    assert rows["card-under"]["rank"] == ""
    assert "not ranked: the method could not rank" in rows["card-under"]["not measured"]
    over = rows["card-over"]
    assert over["rank"] == ""
    assert ABOVE_LAB in over["best Mbit/s"]
    largest = LIMIT_9000 * 1.025 * 0.995 / 1e6
    assert f"largest block {largest:.1f} at 1048576 bytes" in over["best Mbit/s"]
    assert f"{ABOVE_LAB[0].upper()}{ABOVE_LAB[1:]}: Card over " in text
    assert f"at MTU 9000 (102.5 % of the limit; largest block {largest:.1f} at 1048576 " \
           "bytes)" in text
    # the plateau chart puts it after the ranked bar, marked, and says it is not ranked
    (p9000,) = [p for f in report.figures if f.family == "netpipe-plateau"
                for p in f.panels if p.title == "MTU 9000"]
    assert [r.key for r in p9000.rows] == ["0/under", "0/over"]
    bar = next(b for b in p9000.bars if b.row == "0/over")
    assert bar.flag and bar.text.endswith(", not ranked")
    got = _csv(report)["card-over"]
    assert got["rank"] is None and got["status"] == "above the limit"
    assert got["largest_block_bytes"] == 1048576
    assert got["largest_block_bps"] == pytest.approx(largest * 1e6, abs=0.1)


def test_an_iperf_figure_above_the_wire_is_flagged_and_not_ranked(tmp_path):
    run = _iperf2_run(tmp_path, {"fast": [(960, 10.0, 10.0), (959, 10.0, 10.0)],
                                 "slow": [(900, 10.0, 10.0), (899, 10.0, 10.0)]})
    report = build(load_runs([run]))
    text, rows = _verdict(report, "iperf 2 TCP")
    assert text.startswith("iperf 2 TCP: nothing ranked. Not ranked: the method could not "
                           "rank the 1000 Mbit/s link on this setup: Card fast read above")
    assert rows["card-fast"]["rank"] == rows["card-slow"]["rank"] == ""
    got = _csv(report)["card-slow"]
    assert got["rank"] is None and got["not_ranked"].startswith("the method could not rank")
    assert "Above the wire's limit on this lab; not ranked: Card fast 960.0 Mbit/s" in text
    (p,) = [p for f in report.figures if f.id == "heatmap-iperf2-tcp" for p in f.panels]
    cells = {r.key: line[0] for r, line in zip(p.rows, p.cells, strict=True)}
    assert cells["0/fast"].text == "! 960" and p.vmax == 900.0


# -- the pieces -------------------------------------------------------------------------------


def test_cpu_figure_median_and_iqr():
    f = cpu_figure([5.0, 100.0, 46.0, 98.0, 80.0])
    assert (f.median, f.iqr, f.n) == (80.0, 52.0, 5) and f.noisy
    g = cpu_figure([20.0, 22.0, None, 21.0])
    assert (g.median, g.iqr, g.n) == (21.0, 1.0, 3) and not g.noisy
    one = cpu_figure([7.0])
    assert (one.median, one.iqr) == (7.0, None) and one.noisy


def test_the_readme_states_the_lab_netpipe_range_the_report_notes_give():
    from nicbench.report.netpipe import LAB_NETPIPE_RANGE

    readme = Path(__file__).resolve().parents[2] / "README.md"
    assert " ".join(LAB_NETPIPE_RANGE.split()) in " ".join(readme.read_text().split())
    assert "up to about 32 KB" not in readme.read_text()


def test_a_host_busy_with_something_else_is_not_ranked_by_cpu(tmp_path):
    # Narrow spreads all round, but on "busy" the sending host ran 25 % of other load
    # (median over the repetitions used) beside the tool: its CPU says nothing of the card.
    recs = []
    for pair, mbit, other in (("busy", 941, (24.0, 25.0, 30.0)), ("calm", 941, (1.0, 2.0, 0.0)),
                              ("calm2", 600, (3.0, 9.0, 4.0))):
        for k, o in enumerate(other, 1):
            rec = _record(pair, "iperf2", "iperf2-tcp", 1500, k, mbit * 1e6, (40.0, 30.0))
            rec.cpu = Cpu(CpuSplit(40.0, 5.0, o), CpuSplit(30.0, 4.0, 2.0))
            recs.append(rec)
    run = _write(tmp_path / "busy", recs,
                 [{"name": "iperf2-tcp", "tool": "iperf2", "params": {"duration_s": 1}}],
                 [1500], ["busy", "calm", "calm2"])
    report = build(load_runs([run]))
    text, rows = _verdict(report, "iperf 2 TCP")
    assert rows["card-busy"]["CPU rank"] == ""
    assert ("too noisy to rank on: the sending host was busy with something else: 25 % "
            "other load") in rows["card-busy"]["Mbit/s per CPU %"]
    assert (rows["card-calm"]["CPU rank"], rows["card-calm2"]["CPU rank"]) == (1, 2)
    assert "Card busy (the sending host was busy with something else: 25 % other load)" \
        in text
    by = _csv(report)
    assert by["card-busy"]["cpu_other_pct"] == 25.0 and by["card-busy"]["cpu_ranked"] == "no"
    assert by["card-calm2"]["cpu_other_pct"] == 4.0 and by["card-calm2"]["cpu_ranked"] == "yes"


def test_old_records_without_the_other_load_rank_as_before(tmp_path):
    run = _iperf2_run(tmp_path, {"a": [(941, 20.0, 20.0), (941, 21.0, 21.0)],
                                 "b": [(600, 10.0, 10.0), (600, 11.0, 11.0)]})
    report = build(load_runs([run]))
    _, rows = _verdict(report, "iperf 2 TCP")
    assert (rows["card-b"]["CPU rank"], rows["card-a"]["CPU rank"]) == (1, 2)
    assert _csv(report)["card-a"]["cpu_other_pct"] == ""


# -- ranks that mean something ----------------------------------------------------------------
def _reps(values, cpu=(10.0, 10.0)):
    return [(v, *cpu) for v in values]


def test_figures_within_the_printed_resolution_share_a_rank(tmp_path):
    # iperf 2 prints whole Mbit/s: 941 against 940 is one printed digit, not a ranking
    run = _iperf2_run(tmp_path, {"a": _reps([941, 941]), "b": _reps([940, 940])})
    report = build(load_runs([run]))
    text, rows = _verdict(report, "iperf 2 TCP")
    assert rows["card-a"]["rank"] == rows["card-b"]["rank"] == "1 (tied)"
    assert "tied with Card b 940.0 at MTU 1500" in text
    assert _csv(report)["card-b"]["tied"] == "yes"


def test_repetitions_rank_apart_only_where_the_comparison_would_call_a_change(tmp_path):
    fast = [930 + k % 5 for k in range(15)]          # 930 .. 934
    run = _iperf2_run(tmp_path, {
        "fast": _reps(fast),
        # 0.1 % below on the same spread: the best differs by 1 Mbit/s, yet no change
        "same": _reps([x - 1 for x in fast]),
        # 3 % below, steadier than that: apart
        "slow": _reps([x - 28 for x in fast]),
        # best of 15 is 2 Mbit/s above "slow"'s, but only by one lucky repetition
        "lucky": _reps([x - 28 for x in fast[:-1]] + [908])})
    report = build(load_runs([run]))
    text, rows = _verdict(report, "iperf 2 TCP")
    assert rows["card-fast"]["rank"] == rows["card-same"]["rank"] == "1 (tied)"
    assert rows["card-lucky"]["rank"] == rows["card-slow"]["rank"] == "3 (tied)"
    assert text.startswith("iperf 2 TCP: Card fast fastest")
    assert "tied with Card same 933.0" in text


def test_two_or_three_repetitions_never_rank_apart_by_a_close_figure(tmp_path):
    # 2 against 2 cannot reach p < 0.05: 941 and 930 (1.2 % apart) share the rank
    run = _iperf2_run(tmp_path, {"a": _reps([941, 935]), "b": _reps([930, 929])})
    report = build(load_runs([run]))
    _, rows = _verdict(report, "iperf 2 TCP")
    assert rows["card-a"]["rank"] == rows["card-b"]["rank"] == "1 (tied)"


def test_a_link_with_a_card_above_its_limit_is_not_ranked_and_others_are(tmp_path):
    run = _iperf2_run(tmp_path, {"over": _reps([960, 959]), "under": _reps([900, 899]),
                                 "fe": _reps([94.1, 94.0] * 2), "fe2": _reps([80.0, 81.0] * 2)},
                      rates={"fe": "100mbit", "fe2": "100mbit"})
    report = build(load_runs([run]))
    text, rows = _verdict(report, "iperf 2 TCP")
    # the 100 Mbit/s link ranks; the gigabit one does not crown "under"
    assert rows["card-fe"]["rank"] == 1 and rows["card-under"]["rank"] == ""
    assert text.startswith("iperf 2 TCP: Card fe fastest")
    assert ("Not ranked: the method could not rank the 1000 Mbit/s link on this setup: "
            "Card over read above the wire's limit; measured Card under 900.0") in text
    by = _csv(report)
    assert by["card-under"]["rank"] is None and by["card-fe"]["rank"] == 1


def test_cpu_ranks_tie_where_the_repetitions_spread_over_each_other(tmp_path):
    run = _iperf2_run(tmp_path, {
        # same speed; CPU 20-23 against 21-24 (Mbit/s per CPU % overlapping): tied
        "a": [(941, c, c) for c in (20.0, 21.0, 22.0, 23.0)],
        "b": [(941, c, c) for c in (21.0, 22.0, 23.0, 24.0)],
        # CPU 40-43: every repetition dearer than any of a's or b's
        "c": [(941, c, c) for c in (40.0, 41.0, 42.0, 43.0)]})
    report = build(load_runs([run]))
    text, rows = _verdict(report, "iperf 2 TCP")
    assert rows["card-a"]["CPU rank"] == rows["card-b"]["CPU rank"] == "1 (tied)"
    assert rows["card-c"]["CPU rank"] == 3
    assert "(tied at CPU rank 1)" in text


def test_small_packet_ndrs_from_the_same_offered_rate_share_a_rank():
    """The issue's ranking: nojumbo 148,806 frames/s over pci32 148,761, both from trials
    offered at 148,810: one figure, tied; a card more than its bracket (the search's 1 %
    of its figure) below them ranks after both; two within their brackets tie."""

    from nicbench.report.model import Entry
    from nicbench.report.smallpkt import Measured, _ranks
    from nicbench.results.framerate import FrameRate
    from nicbench.physics.ethernet import Bound

    line = 148_809.5

    def m(name: str, received: float, offered: int) -> Measured:
        e = Entry(key=f"0/{name}", run_index=0, run_label="A", run_id="A", run_name="A",
                  pair=name, adapter=name, adapter_label=name)
        return Measured(e, FrameRate(pair=name, adapter=name, adapter_label=name,
                                     point="mtu1500", test="small", frame_bytes=64,
                                     bound=Bound.NDR, loss_limit_pct=0.0, line_pps=line,
                                     trials=8, offered_pps=offered, received_pps=received,
                                     hi_pps=int(received * 1.01)))   # the bracket

    nojumbo, pci32 = m("nojumbo", 148_806, 148_810), m("pci32", 148_761, 148_810)
    slower = m("slower", 145_000, 145_100)              # 3,761 below: beyond 1,487
    near = m("near", 144_200, 144_300)                  # 800 below: within its 1,442
    got = _ranks([nojumbo, pci32, slower, near])
    assert got[id(nojumbo)] == got[id(pci32)] == (1, True)
    assert got[id(slower)] == got[id(near)] == (3, True)
