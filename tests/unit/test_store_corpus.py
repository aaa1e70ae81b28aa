"""bench/_store_corpus.py: runs cloned from the real lab runs in bench/data/store-corpus,
with renamed adapters and shifted nights, read back by nicbench's own readers (the
manifest, and every record strictly, checked for plausibility against it)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from nicbench.results.manifest import Manifest
from nicbench.results.records import Kind
from nicbench.results.rundir import RunDir

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def store_corpus():
    sys.path.insert(0, str(BENCH))
    try:
        import _store_corpus
    finally:
        sys.path.remove(str(BENCH))
    return _store_corpus


def read(run_dir: Path):
    manifest = Manifest.read(run_dir / "manifest.json")
    return manifest, list(RunDir(run_dir).records(strict=True, manifest=manifest))


def test_the_sources_are_real_lab_runs(store_corpus):
    plain, slowed = (read(s) for s in store_corpus.SOURCES)
    for manifest, records in (plain, slowed):
        assert manifest.pairs == ["gbe", "pci32", "nojumbo"]
        assert len(records) == 32                  # 3 cards x 2 MTUs x 2 tools x 3, less
        assert Counter(r.kind for r in records)[Kind.SKIPPED] == 2     # nojumbo's 9000
    assert plain[0].interfaces["gbe/nblh-a"].shaping == "tbf rate 1gbit"
    assert slowed[0].interfaces["gbe/nblh-a"].shaping == "tbf rate 500mbit"


def test_a_corpus_has_the_runs_adapters_nights_and_trials_asked_for(store_corpus, tmp_path):
    runs = list(store_corpus.corpus(runs=4, adapters=7, nights=2, trials_per_run=700,
                                    slowed={0: (1, 0.5)}))
    assert [r.night for r in runs] == [0, 0, 1, 1]
    assert len({r.run_id for r in runs}) == 4
    assert [len(r.lines) for r in runs] == [700] * 4
    dirs = [r.write(tmp_path) for r in runs]
    first, recs = read(dirs[0])
    # renamed: 7 adapters cloned round the sources' 6 pairs, each under its own names
    assert first.pairs == [f"{p}{i:03d}" for i, p in enumerate(
        ["gbe", "pci32", "nojumbo", "gbe", "pci32", "nojumbo", "gbe"])]
    assert len({a.id for a in first.inventory.adapters}) == 7
    assert Counter(r.pair for r in recs) == dict.fromkeys(first.pairs, 100)
    assert len({r.trial_id for r in recs}) == 700                   # none stands for another
    assert {r.run_id for r in recs} == {first.run_id}
    assert recs[0].adapter_label == "LX-1000 Gigabit #000 (veth tbf-1g)"
    # the nights: a day apart, the runs of a night five minutes apart, records in the run
    starts = [datetime.fromtimestamp(read(d)[0].started_at, UTC) for d in dirs]
    assert [s.strftime("%Y-%m-%d %H:%M") for s in starts] == [
        "2026-10-01 20:00", "2026-10-01 20:05", "2026-10-02 20:00", "2026-10-02 20:05"]
    assert all(first.started_at <= r.started_at <= first.ended_at for r in recs)
    # adapter 0 slowed from night 1: half the figure, and its link's tbf says so
    last, last_recs = read(dirs[3])
    def median_gbe000(records):
        values = sorted(r.throughput_bps for r in records
                        if r.pair == "gbe000" and r.throughput_bps is not None)
        return values[len(values) // 2]
    assert median_gbe000(last_recs) / median_gbe000(recs) == pytest.approx(0.5, rel=0.02)
    assert first.interfaces["gbe000/nblh-a"].shaping == "tbf rate 1gbit"
    assert last.interfaces["gbe000/nblh-a"].shaping == "tbf rate 500mbit"
    assert last.interfaces["pci32001/nblh-a"].shaping == "tbf rate 600mbit"


def test_the_same_arguments_give_the_same_bytes(store_corpus):
    a = next(store_corpus.corpus(runs=2, adapters=3, trials_per_run=90))
    b = next(store_corpus.corpus(runs=2, adapters=3, trials_per_run=90))
    assert (a.manifest_text, a.lines) == (b.manifest_text, b.lines)
    assert json.loads(a.lines[0])["run_id"] == a.run_id


@pytest.mark.parametrize("kwargs", [{"runs": 0}, {"adapters": 1000}, {"runs": 2, "nights": 3},
                                    {"adapters": 5, "trials_per_run": 4}])
def test_impossible_corpora_are_refused(store_corpus, kwargs):
    with pytest.raises(ValueError):
        next(store_corpus.corpus(**kwargs))


def test_runs_of_one_group_each_as_bench_store_takes_them(store_corpus, tmp_path):
    # the main job's real run (tests/report/data/roundup: 5 cards, netPIPE curves too)
    source = store_corpus.Source(BENCH.parent / "tests" / "report" / "data" / "roundup")
    dirs = store_corpus.write_runs(source, tmp_path, first=1, count=3, groups=2)
    runs = [read(d) for d in dirs]
    assert [len(recs) for _, recs in runs] == [source.trials] * 3 == [402] * 3
    # run i: group i % 2 on night i // 2
    assert [m.pairs[0] for m, _ in runs] == ["gbe-g1", "gbe-g0", "gbe-g1"]
    assert {r.adapter for r in runs[0][1]} == {f"lab-{p}-g1" for p in
                                               ("gbe", "pci32", "nojumbo", "stall", "fe")}
    days = [datetime.fromtimestamp(m.started_at, UTC).date() for m, _ in runs]
    assert [(d - days[0]).days for d in days] == [0, 1, 1]
    assert len({m.run_id for m, _ in runs}) == 3
