"""Shaping calibration: the lab's ``gbe`` link carries what a real Gigabit Ethernet link
would, at every MTU the roundups used.

TCP goodput on Ethernet with timestamps is R x (m - 52) / (m + 38): 52 = IP 20 + TCP 20 +
timestamp option 12 bytes of each m-byte packet, 38 = Ethernet header 14 + FCS 4 +
preamble/SFD 8 + inter-frame gap 12 on the wire. Measured with iperf3 between the two
lab hosts over SSH, as a trial would; every value must land within 1.5 % of theory.

A busy machine only ever makes a run slower, so a run below the band is repeated; a run
above the band fails at once, since shaping that lets more through than the wire could
carry is exactly what this test is here to catch. To tell "this machine is busy" from "the
shaping is wrong", the load other than the lab's and this test's own is measured before
each run and beside it (tests/lab/loadcheck.py: /proc/stat of the whole machine less the
processes of the lab's namespaces, this test and irq/softirq; and the hypervisor's steal).
Up to five runs in a row, then four more 5 s apart, since a disturbance of this VM can
last longer than five runs. If no run reaches the band: skipped with the figures when
every run had other load on the machine; failed when some ran on a quiet machine.
"""

from __future__ import annotations

import json
import time

import pytest
from loadcheck import Beside, lab_namespaces

from nicbench.platforms.tuning import TuningSession

pytestmark = pytest.mark.lab

RATE_BPS = 1e9
TOLERANCE = 0.015
MTUS = (1500, 3000, 6000, 9000, 16000)
PORT = 5311
DURATION_S = 3
ATTEMPTS = 5
# A disturbance of this VM that does not show as load or steal (seen: 443-799 Mbit/s at MTU
# 1500 over five runs in a full suite, 941 minutes later) can outlast five runs in a row:
# then a few more, spaced out. Bounded: 4 x (5 s + a 3 s run).
LATE_ATTEMPTS = 4
LATE_PAUSE_S = 5.0
def theory_bps(mtu: int) -> float:
    return RATE_BPS * (mtu - 52) / (mtu + 38)


def iperf3_received_bps(pool, receiver: str, sender: str, address: str) -> float:
    server_conn = pool.connection(receiver)
    server = server_conn.start(["iperf3", "-s", "-1", "-p", str(PORT), "-B", address],
                               f"/tmp/nicbench-calibration-{PORT}-{time.monotonic_ns()}",
                               timeout=10)
    try:
        pool.platform(receiver).wait_listening(PORT, "tcp", timeout_s=10)
        res = pool.connection(sender).run(
            ["iperf3", "-c", address, "-p", str(PORT), "-t", str(DURATION_S), "-J"],
            timeout=DURATION_S + 20)
        assert server.wait(10), "iperf3 server did not exit after its one test"
    finally:
        server.stop(grace_s=2)
        server.collect()
    report = json.loads(res.stdout)
    assert "error" not in report, report.get("error")
    return float(report["end"]["sum_received"]["bits_per_second"])


@pytest.mark.parametrize("mtu", MTUS)
def test_gbe_link_matches_gigabit_ethernet(lab, pool, mtu):
    link = next(l for l in lab.spec.links() if l.adapter.key == "gbe")
    assert link.adapter.rate == "1gbit" and link.adapter.ceiling is None
    receiver, sender = link.host_a.name, link.host_b.name
    expected = theory_bps(mtu)
    measured: list[float] = []
    loads: list[Beside] = []
    with TuningSession() as session:
        for host in (receiver, sender):
            session.set_mtu(pool.platform(host), link.ifname, mtu)
        pool.platform(sender).verify_path_mtu(link.ifname, link.address("a"), mtu)
        for attempt in range(ATTEMPTS + LATE_ATTEMPTS):
            if attempt >= ATTEMPTS:
                time.sleep(LATE_PAUSE_S)    # the first ones all fell short: let it pass
            with Beside(lab_namespaces(lab)) as load:
                bps = iperf3_received_bps(pool, receiver, sender, link.address("a"))
            loads.append(load)
            measured.append(bps)
            assert bps <= expected * (1 + TOLERANCE), (
                f"MTU {mtu}: {bps / 1e6:.1f} Mbit/s is above the wire's "
                f"{expected / 1e6:.1f} Mbit/s by more than {TOLERANCE:.1%}: shaping leaks")
            if bps >= expected * (1 - TOLERANCE):
                break
    runs = ", ".join(f"{m / 1e6:.1f} Mbit/s ({load.short()})"
                     for m, load in zip(measured, loads, strict=False))
    if max(measured) < expected * (1 - TOLERANCE) and all(load.busy for load in loads):
        pytest.skip(f"MTU {mtu}: other load on the machine at every run ({runs}), under "
                    f"the theoretical {expected / 1e6:.1f} Mbit/s less {TOLERANCE:.1%}: the "
                    "shaping cannot be judged now")
    assert max(measured) >= expected * (1 - TOLERANCE), (
        f"MTU {mtu}: {runs}: more than {TOLERANCE:.1%} under the theoretical "
        f"{expected / 1e6:.1f} Mbit/s, with runs on a quiet machine")
