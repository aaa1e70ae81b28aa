"""``nicbench run --store`` on the session lab, as a user runs it (a subprocess of the real
CLI, real SSH and tools), into a DuckDB file and a real PostgreSQL database: the store
holds every trial that stands in the run's directory, as the run wrote them, and a store
rebuilt from the directory with ``nicbench store rebuild --from`` holds the same.

One MTU: what the store holds does not depend on the point a trial measured (the unit
tests store runs of many points); a second point here cost an MTU change, a path check
and two trials per backend (issue 32).
"""

from __future__ import annotations

import textwrap

import pytest
from clihelp import env, nicbench

from nicbench.results.records import current
from nicbench.results.rundir import RunDir
from nicbench.store import open_store, resolve
from nicbench.store.schema import record_line

pytestmark = pytest.mark.lab

PROFILE = """\
    format_version: 1
    name: store-lab
    source: "nicbench lab test: a run written to a results store as it goes"
    platform: linux
    repetitions: 2
    mtu: [1500]
    tests:
      - {name: iperf3-tcp, tool: iperf3, params: {duration_s: 1}}
    """


def held(at: str) -> tuple[list, list]:
    with open_store(resolve(at), write=False) as s:
        trials = sorted(s.backend.fetchall("SELECT run_id, trial_id, record FROM nb_trials"))
        runs = sorted(s.backend.fetchall("SELECT run_id, manifest, ended_at, profile "
                                         "FROM nb_runs"))
    return trials, runs


def test_a_run_writes_its_store_as_it_goes_and_a_rebuild_equals_it(lab, store_at,
                                                                   tmp_path):
    prof = tmp_path / "store-lab.yaml"
    prof.write_text(textwrap.dedent(PROFILE))
    out = tmp_path / "out"
    proc = nicbench("run", str(prof), "-i", str(lab.inventory_file), "--pair", "gbe",
                    "--out", str(out), "--store", store_at, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert "results store" not in proc.stderr        # written throughout, nothing to say
    trials, runs = held(store_at)
    stands = current(RunDir(out).records())
    assert len(stands) == 2
    assert trials == sorted((r.run_id, r.trial_id, record_line(r)) for r in stands)
    manifest = (out / "manifest.json").read_text()
    assert [(r[1], r[3]) for r in runs] == [(manifest, "store-lab")]
    assert runs[0][2] is not None                    # the run's end, written as it ended
    rebuilt = str(tmp_path / "rebuilt.duckdb")
    proc = nicbench("store", "rebuild", "--from", str(out), "--store", rebuilt,
                    environ=env())
    assert proc.returncode == 0, proc.stderr
    assert held(rebuilt) == held(store_at)
