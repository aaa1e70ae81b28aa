"""The scratch results directory of ``--plan``'s run (results.store.ScratchRunDir): its
records come back as stored, in order, and nothing is written to disk."""

from __future__ import annotations

from nicbench.results.records import Failure, Kind, Status, TrialRecord, current
from nicbench.results.rundir import ScratchRunDir


def record(repetition: int, **kw) -> TrialRecord:
    return TrialRecord(run_id="r", trial_id=f"p.mtu1500.t.r{repetition}", pair="p",
                       adapter="a", adapter_label="A", tool="iperf3", test="t",
                       protocol="tcp", point="mtu1500", mtu=1500, repetition=repetition,
                       kind=Kind.REPETITION, **kw)


def test_records_come_back_as_stored_in_order_and_nothing_is_written(tmp_path):
    scratch = ScratchRunDir(tmp_path / "run")
    stored = [record(1, status=Status.OK, throughput_bps=9e8,
                     commands={"server": "iperf3 -s", "client": "iperf3 -c x"}),
              record(2, status=Status.FAILED, failure=Failure.TIMEOUT, reason="slow"),
              record(2, status=Status.OK, throughput_bps=8e8, extra={"note": [1, 2]})]
    for rec in stored:
        scratch.append(rec)
    back = list(scratch.numbered_records())
    assert [i for i, _ in back] == [1, 2, 3]
    assert [r for _, r in back] == stored
    assert [r.throughput_bps for r in current(scratch.records())] == [9e8, 8e8]
    assert scratch.done_keys() == {stored[0].key, stored[2].key}
    assert scratch.write_raw("p.mtu1500.t.r1", "client", "text") == \
        "raw/p.mtu1500.t.r1.client.txt"
    assert not scratch.torn_tail() and scratch.repair_torn_tail() is None
    assert not (tmp_path / "run").exists()
