"""The lab tests' two lanes (tests/conftest.py, issue 32): a module runs in lane b only if
it uses nothing but its lane's session lab, since only lane a's lock guards the names of
the labs that modules build for themselves (nbl, nbtc, nbf); and every module the lanes
name exists, so that a renamed file does not fall back to lane a unnoticed."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _conftest():
    spec = importlib.util.spec_from_file_location("nicbench_tests_conftest",
                                                  REPO / "tests" / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module          # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


CONFTEST = _conftest()
# what a module that builds or names a lab of its own uses (a bastion, tests/lab/bastion.py,
# is named after the lab it stands beside: the lane's own)
OWN_LAB = re.compile(r"labtests_lock|\bLab(?:Spec)?\(|NICBENCH_LAB_PREFIX|\"lab\", \"up\"")


def test_every_lane_b_module_exists_and_uses_only_its_lanes_lab():
    assert CONFTEST.LANE_B_MODULES
    for name in sorted(CONFTEST.LANE_B_MODULES):
        path = REPO / name
        assert path.is_file(), name
        assert CONFTEST.is_lab_nodeid(name), name
        found = OWN_LAB.findall(path.read_text())
        assert not found, f"{name} builds a lab of its own ({found}): it belongs in lane a"
        assert CONFTEST.lane_of(f"{name}::test_x").name == "b"


def test_the_modules_with_labs_of_their_own_are_in_lane_a():
    own = [p.relative_to(REPO).as_posix()
           for d in ("tests/lab", "tests/faults") for p in sorted((REPO / d).glob("test_*.py"))
           if OWN_LAB.search(p.read_text())]
    assert "tests/faults/test_faults.py" in own and "tests/lab/test_lab_lifecycle.py" in own
    assert [m for m in own if CONFTEST.lane_of(m).name != "a"] == []


def test_the_lanes_labs_and_locks_are_distinct():
    lanes = CONFTEST.LANES
    assert [lane.name for lane in lanes] == ["a", "b"]
    assert len({lane.lock for lane in lanes}) == len({lane.slot for lane in lanes}) == 2
    prefixes = [p for lane in lanes for p in lane.prefixes]
    assert len(prefixes) == len(set(prefixes))
    # an sshd of one lane's labs is never taken for a leftover of the other's
    a, b = (CONFTEST._test_sshd(lane) for lane in lanes)
    nbu = b"sshd: /usr/sbin/sshd -f /tmp/p/popen-gw1/nbu-lab0/nbu-a/sshd_config -E x"
    nbt = b"sshd: /usr/sbin/sshd -f /tmp/p/popen-gw0/nbt-lab0/nbt-jump/sshd_config -E x"
    nbtc = b"sshd: /usr/sbin/sshd -f /tmp/p/popen-gw0/nbtc-lab0/nbtc-c/sshd_config -E x"
    assert (a.search(nbt), a.search(nbtc), a.search(nbu)) != (None, None, None)
    assert a.search(nbu) is None and b.search(nbt) is None and b.search(nbtc) is None
    assert b.search(nbu) and a.search(nbt) and a.search(nbtc)


def test_lane_a_is_scheduled_before_lane_b_and_the_rest_one_test_each():
    assert CONFTEST.scope_of("tests/lab/test_run.py::test_x") == "lab-a"
    assert CONFTEST.scope_of("tests/lab/test_ssh.py::test_x") == "lab-b"
    assert CONFTEST.scope_of("tests/unit/test_frame.py::test_x") == \
        "tests/unit/test_frame.py::test_x"


def test_the_suite_time_line_sums_each_kind_in_a_fixed_order():
    """The session's "suite time" line: each kind's seconds summed and its tests counted,
    the physics checks first and the rest last, whatever order the workers sent them in."""
    rows = [("gw2", "t1", "the rest", 0.0, 0.0, 0.25), ("gw1", "t2", "lab lane b", 0.0, 0.0, 3.0),
            ("gw0", "t3", "physics checks alone", 0.0, 0.0, 10.4),
            ("gw2", "t4", "the rest", 0.0, 0.0, 0.5),
            ("gw0", "t5", "physics checks alone", 0.0, 0.0, 20.3)]
    line = CONFTEST.suite_time_line(rows)
    assert line == ("suite time: physics checks alone 31 s (2 tests); lab lane b 3 s "
                    "(1 test); the rest 1 s (2 tests)")


def test_the_waits_are_summed_per_worker_and_the_timeline_is_in_start_order(tmp_path):
    """The session's wait line sums each worker's time before its tests had the quiet lock;
    the timeline CSV lists the tests in the order they started, from the first start."""
    rows = [("gw1", "tests/lab/test_b.py::t", "lab lane b", 1000.5, 4.25, 2.0),
            ("gw0", "tests/lab/test_a.py::t", "physics checks alone", 1000.0, 0.0, 4.0),
            ("gw1", "tests/unit/test_c.py::t", "the rest", 1003.0, 0.5, 0.1)]
    assert CONFTEST.waited_line(rows) == "waiting for the quiet lock: gw0 0 s, gw1 5 s"
    CONFTEST.write_timeline(tmp_path / "t.csv", rows)
    lines = (tmp_path / "t.csv").read_text().splitlines()
    assert lines == ["worker,test,kind,start_s,waited_s,ran_s",
                     "gw0,tests/lab/test_a.py::t,physics checks alone,0.00,0.00,4.00",
                     "gw1,tests/lab/test_b.py::t,lab lane b,0.50,4.25,2.00",
                     "gw1,tests/unit/test_c.py::t,the rest,3.00,0.50,0.10"]
