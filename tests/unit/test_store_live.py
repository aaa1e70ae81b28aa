"""The store written as a run goes (``StoreSink`` through ``Runner(sinks=...)``), on
DuckDB and PostgreSQL: equal to the store rebuilt from the run's directory, a resume's
superseded records included; a store that fails mid-run costs no trial, is said once,
and ``import`` catches it up; two processes writing one DuckDB file both keep every
trial.
"""

from __future__ import annotations

import multiprocessing
import shutil
from pathlib import Path

import pytest
from test_runner import GIVE_UP, INVENTORY, fake, iperf3_ok, profile, stalls_at_jumbo

from nicbench.execution import events as ev
from nicbench.execution.runner import Runner
from nicbench.results.records import current
from nicbench.results.rundir import RunDir
from nicbench.store import StoreSink, import_dirs, open_store, resolve
from nicbench.store.schema import record_line, standing

DATA = Path(__file__).resolve().parents[1] / "report" / "data"


def contents(at: str):
    """Everything a store holds, in a comparable form."""
    with open_store(resolve(at), write=False) as s:
        frame = s.trial_frame()
        runs = s.runs()
        records = sorted(s.backend.fetchall("SELECT run_id, trial_id, record FROM nb_trials"))
        manifests = sorted(s.backend.fetchall("SELECT run_id, manifest, ended_at FROM nb_runs"))
    return frame, runs, records, manifests


def assert_same(a: str, b: str) -> None:
    fa, ra, reca, ma = contents(a)
    fb, rb, recb, mb = contents(b)
    assert fa.equals(fb)
    assert ra.equals(rb)
    assert reca == recb and ma == mb


def run_with_store(tmp_path, at: str, answer, *, resume: bool = False, seen=None):
    out = tmp_path / "out"
    sink = StoreSink(resolve(at), out, listener=(seen.append if seen is not None
                                                 else ev.ignore))
    try:
        Runner(profile(tmp_path, GIVE_UP), INVENTORY, out, hosts=fake(answer), sinks=[sink],
               resume=resume).run()
    finally:
        sink.close()
    return out, sink


def test_written_as_it_runs_equals_rebuilt_from_the_directory(store_at, tmp_path):
    out, sink = run_with_store(tmp_path, store_at, stalls_at_jumbo)
    assert sink.failed is None and sink.written == len(list(RunDir(out).records()))
    # the resume measures the failed and given-up configuration again: the store keeps
    # what stands, as records.current reads the file
    out, _ = run_with_store(tmp_path, store_at, iperf3_ok, resume=True)
    stands = standing(current(RunDir(out).records()))
    with open_store(resolve(store_at), write=False) as s:
        frame = s.trial_frame()
    assert sorted(frame["trial_id"]) == sorted(r.trial_id for r in stands)
    assert len(list(RunDir(out).records())) > len(stands)      # some were superseded
    rebuilt = str(tmp_path / "rebuilt.duckdb")
    import_dirs(lambda: open_store(resolve(rebuilt)), [str(out)])
    assert_same(store_at, rebuilt)
    again = import_dirs(lambda: open_store(resolve(store_at)), [str(out)])
    assert (again.trials_added, again.runs_added) == (0, 0)


def _hold_lock(path: str, held, release) -> None:
    import duckdb

    con = duckdb.connect(path)
    held.set()
    release.wait(60)
    con.close()


def test_a_store_locked_mid_run_costs_no_trial_is_said_once_and_import_catches_up(tmp_path):
    at = str(tmp_path / "store.duckdb")
    open_store(resolve(at)).close()
    ctx = multiprocessing.get_context("spawn")
    held, release = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold_lock, args=(at, held, release))
    holder.start()
    try:
        assert held.wait(60)
        out = tmp_path / "out"
        seen: list = []
        sink = StoreSink(resolve(at), out, listener=seen.append, lock_wait_s=0.2)
        run = Runner(profile(tmp_path, GIVE_UP), INVENTORY, out, hosts=fake(iperf3_ok),
                     sinks=[sink])
        run.run()
        sink.close()
    finally:
        release.set()
        holder.join(60)
    warnings = [e.message for e in seen if isinstance(e, ev.Warning)]
    assert len(warnings) == 1 and "locked by process" in warnings[0]
    assert f"nicbench store import --store {at} {out}" in warnings[0]
    assert len(list(RunDir(out).records())) == 6         # every trial in the directory
    counts = import_dirs(lambda: open_store(resolve(at)), [str(out)])
    assert (counts.runs_added, counts.trials_added) == (1, 6)


def _write_run(at: str, run_dir: str, barrier) -> None:
    from nicbench.results.rundir import RunDir as Dir

    sink = StoreSink(resolve(at), run_dir, listener=_fail_on_warning)
    barrier.wait(60)
    for rec in Dir(run_dir).records():
        sink(rec)
    sink.close()
    assert sink.failed is None


def _fail_on_warning(event) -> None:
    raise SystemExit(f"warned: {event}")


def test_two_processes_writing_one_duckdb_store_both_keep_every_trial(tmp_path):
    at = str(tmp_path / "store.duckdb")
    open_store(resolve(at)).close()
    dirs = []
    for name, source in (("one", "run-a"), ("two", "run-b")):
        d = tmp_path / name
        shutil.copytree(DATA / source, d)
        text = (d / "manifest.json").read_text()
        (d / "manifest.json").write_text(text.replace('"run_id": "', f'"run_id": "{name}-', 1))
        # the lines as this nicbench writes them (the fixtures are of format 1), as a run
        # writes them while its sink writes the store
        lines = "".join(record_line(r) + "\n" for r in RunDir(d).records())
        (d / "trials.jsonl").write_text(lines.replace('"run_id": "', f'"run_id": "{name}-'))
        dirs.append(str(d))
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(2)
    procs = [ctx.Process(target=_write_run, args=(at, d, barrier)) for d in dirs]
    for p in procs:
        p.start()
    for p in procs:
        p.join(300)
    assert [p.exitcode for p in procs] == [0, 0]
    want = sum(len(standing(current(RunDir(d).records()))) for d in dirs)
    with open_store(resolve(at), write=False) as s:
        assert s.info().trials == want and s.info().runs == 2
    counts = import_dirs(lambda: open_store(resolve(at)), dirs)
    assert counts.trials_added == 0 and counts.trials_already == want


def test_a_postgresql_store_gone_mid_run_is_said_once_and_caught_up(pg_server, tmp_path):
    import pgserver

    if isinstance(pg_server, pgserver.Unavailable):
        pytest.skip(f"no PostgreSQL server for the store tests: {pg_server}")
    url = pg_server.new_database()
    seen: list = []
    out = tmp_path / "out"
    sink = StoreSink(resolve(url), out, listener=seen.append)
    dropped = []

    def answer(call):
        if len(dropped) == 0 and sink.written == 2:
            pg_server.drop_database(url)        # the server's database goes mid-run
            dropped.append(True)
        return iperf3_ok(call)

    try:
        Runner(profile(tmp_path, GIVE_UP), INVENTORY, out, hosts=fake(answer),
               sinks=[sink]).run()
        sink.close()
        warnings = [e.message for e in seen if isinstance(e, ev.Warning)]
        assert len(warnings) == 1 and "nicbench store import" in warnings[0]
        assert len(list(RunDir(out).records())) == 6
        import psycopg

        with psycopg.connect(pg_server.url(), autocommit=True) as con:
            con.execute(f"CREATE DATABASE {url.split('/')[3].split('?')[0]}")
        counts = import_dirs(lambda: open_store(resolve(url)), [str(out)])
        assert (counts.runs_added, counts.trials_added) == (1, 6)
    finally:
        pg_server.drop_database(url)


def test_the_shards_of_a_campaign_write_one_night_and_a_rebuild_equals_it(store_at, tmp_path):
    from test_campaign import CATALOG, fakes, inventory, load_campaign, ok, write

    from nicbench.execution.campaign import CampaignRunner
    from nicbench.results.campaign import CampaignState, run_dirs

    inv = inventory()
    loaded = load_campaign(write(tmp_path, NIGHT_TEXT), CATALOG)
    seen: list = []
    outs = []
    for k in (1, 2):                       # two controllers, one store
        out = tmp_path / f"ctl{k}"
        CampaignRunner(loaded, inv, out, hosts=fakes(inv, ok), shard=(k, 2),
                       listener=seen.append,
                       sinks=lambda d, tell: StoreSink(resolve(store_at), d, listener=tell)
                       ).run()
        outs.append(out)
    assert not [e for e in seen if isinstance(e, ev.Warning)]
    state = CampaignState.read(outs[0])
    with open_store(resolve(store_at), write=False) as s:
        nights = s.runs(campaign="night")
    assert set(nights["night"]) == {nights["night"].iloc[0]}      # one night
    assert sorted(nights["shard"]) == ["1/2", "1/2", "2/2", "2/2"]
    assert sorted(nights["results_dir"]) == sorted(str(d) for o in outs for d in run_dirs(o))
    assert nights[nights["shard"] == "1/2"]["campaign_started_at"].iloc[0].timestamp() == \
        pytest.approx(state.started_at, abs=1e-6)
    stands = sum(len(standing(current(RunDir(d).records()))) for o in outs
                 for d in run_dirs(o))
    assert int(nights["trials"].sum()) == stands
    rebuilt = str(tmp_path / "rebuilt.duckdb")
    import_dirs(lambda: open_store(resolve(rebuilt)), [str(o) for o in outs])
    assert_same(store_at, rebuilt)


NIGHT_TEXT = """\
    format_version: 1
    name: night
    parallel: 2
    report: false
    runs:
      - profile: pa.yaml
      - profile: pb.yaml
        pairs: [p2, p1]
    """
