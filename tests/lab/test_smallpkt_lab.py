"""The small-packet rate for real on the session lab: ``profiles/lab-smallpkt.yaml`` (NDR and
PDR at 64, 512 and 1518-byte frames, iperf 2, the frame-rate search) through the engine
``nicbench run`` uses, on the shaped ``gbe`` link at 1 Gbit/s (64 and 1518 bytes) and on
the same link shaped to 100 Mbit/s (all three: the Fast Ethernet card's rate; the session
lab has no ``fe`` pair).

The physics (``nicbench.physics.ethernet``, RFC 2544): a link of R bit/s carries at most
R / ((frame + 20) x 8) frames a second, 148,809 at 64 bytes on 100 Mbit/s and 1,488,095 on
1 Gbit/s. The lab's tbf shapes each frame as its IP packet + 14 + 24 bytes (FCS, preamble,
gap), so that limit is the shaper's too.

Always judged (a busy machine cannot excuse them): no frame rate above the line rate for
its frame size (beyond the rate's own count-and-timing error); every NDR and PDR stands on
a full-length trial of at least 5 s at the rate reported within its loss bound (an NDR on
an NDR search's trial, never a PDR's) (issue 30); the NDR at or below the PDR at every
frame size; every trial sent the frame's payload (``-l``, frame - 46) at ``-b`` = offered
frames/s x payload x 8, and its figures read again from its raw files are the stored ones;
an NDR trial lost nothing by the receiver's own count and delivered what was offered.
Judged on a quiet machine only (``loadcheck.Beside``, the machine's load measured outside
the tool; a skip names it and every figure): each NDR and PDR bracketed (to the lowest
rate failed above it) within 3 % of itself, a confirmed rate at every bound (the 64-byte
rate is the sender's CPU here, which another's load moves from trial to trial); and only
at 100 Mbit/s: at 1518
bytes, where the sender needs few packets a second (8,127), the NDR is found within two
resolution steps of the line rate. A confirmation whose link tc slows while it runs
fails, and the search steps down and confirms again (the last test). At 1 Gbit/s no floor is held (81,274 frames/s of 1472
bytes is past what one iperf 2 sends here).
At 64 bytes the sender's CPU, not the link, sets the rate on this shared 2-core machine;
the figures are printed (``-s``) for the README, not held to a floor.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from loadcheck import Beside, lab_namespaces

from nicbench.config.loader import load_profile
from nicbench.execution import events as ev
from nicbench.execution.runner import Runner
from nicbench.results.framerate import FrameRate, frame_rates
from nicbench.physics.ethernet import Bound, line_pps, payload_bytes
from nicbench.results.policy import passes
from nicbench.results.records import Kind
from nicbench.tools.registry import CATALOG, TOOLS

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parents[2]
PROFILE = REPO / "profiles" / "lab-smallpkt.yaml"
TOL = 0.015                       # the lab's shaping calibration (test_calibration)
# A floor is judged only where one sender keeps up with the line rate at 1518 bytes:
# 8,127 frames/s at 100 Mbit/s (measured 98.5-99.7 %); at 1 Gbit/s, 81,274 frames/s of
# 1472-byte datagrams is past what iperf 2 sends on this 2-core machine (test_udp_lab.py).
FLOOR_UP_TO_BPS = 100e6


def run_smallpkt(lab, lab_inventory, tmp_path: Path, rate: str, line_rate: str):
    """The lab profile on the gbe pair, its link shaped to ``rate`` and the search's line
    rate set to match; shaped back afterwards, also on failure."""
    text = PROFILE.read_text().replace("confirm_s: 5}",
                                       f"confirm_s: 5, line_rate: {line_rate}}}")
    assert f"line_rate: {line_rate}" in text
    path = tmp_path / "smallpkt.yaml"
    path.write_text(text)
    profile = load_profile(path, CATALOG)
    link = next(x for x in lab.spec.links() if x.adapter.key == "gbe")
    found: list[ev.FrameRateFound] = []

    def listen(event: ev.Event) -> None:
        if isinstance(event, ev.FrameRateFound):
            found.append(event)

    with lab.shaped(link, rate), Beside(lab_namespaces(lab)) as load:
        run_dir = Runner(profile, lab_inventory, tmp_path / "out", pairs=["gbe"],
                         listener=listen).run()
    return profile, run_dir, found, load


def judge(profile, run_dir, found, load, link_bps: float,
          pair: str = "gbe") -> dict[tuple[int, Bound], FrameRate]:
    (test,) = profile.tests
    assert test.frame_search is not None
    probes = [r for r in run_dir.records() if r.kind is Kind.UDP_SEARCH and r.pair == pair]
    found = [e for e in found if e.pair == pair]
    assert probes, "no trial was stored"
    assert [r.repetition for r in probes] == list(range(1, len(probes) + 1))
    for rec in probes:
        f = rec.frame
        assert f is not None and f.frame_bytes in test.frame_search.frames
        assert f.payload_bytes == payload_bytes(f.frame_bytes) == f.frame_bytes - 46
        assert f.line_pps == pytest.approx(line_pps(f.frame_bytes, link_bps))
        assert rec.offered_bps == f.offered_pps * f.payload_bytes * 8
        assert f"-l {f.payload_bytes}" in rec.commands["client"]
        assert f"-b {int(rec.offered_bps)}" in rec.commands["client"]
        text = {end: (run_dir.path / rel).read_text() for end, rel in rec.raw.items()}
        parsed = TOOLS[rec.tool].driver.interpret(text.get("client", ""),
                                                  text.get("server", ""), None, "udp")
        if rec.ok:
            assert parsed.throughput_bps == rec.throughput_bps and parsed.udp == rec.udp
    rates = {(r.frame_bytes, r.bound): r
             for r in frame_rates(probes, test.frame_search.pdr_loss_pct)}
    assert {(e.frame_bytes, e.bound) for e in found} == set(rates)
    figures = "; ".join(
        f"{r.frame_bytes} B {r.bound.value}: "
        + (f"{r.received_pps:,.0f} pps = {r.line_pct:.1f} % of {int(r.line_pps):,}, "
           f"failed at {r.hi_pps if r.hi_pps is not None else 'none (line)'}, "
           f"{r.duration_s:.1f} s at {r.loss_pct or 0:g} % loss, "
           f"{r.mbit:.1f} Mbit/s, sender CPU {r.cpu_sender_pct or 0:.0f} %"
           if r.received_pps is not None else "none")
        + f" ({r.trials} trials)" for r in rates.values())
    print(f"\n{pair}, line {link_bps / 1e6:g} Mbit/s: {figures}; {load.short()}")
    wide: list[str] = []      # brackets over 3 % (or open below the line rate)
    for frame in test.frame_search.frames:
        ndr, pdr = rates[(frame, Bound.NDR)], rates[(frame, Bound.PDR)]
        for r in (ndr, pdr):
            assert r.received_pps is None or r.received_pps <= r.line_pps * (1 + TOL), figures
            assert not r.above_line, figures
            if r.trial_id is None:
                wide.append(f"{frame} B {r.bound.value} (none confirmed)")
                continue
            rec = next(p for p in probes if p.trial_id == r.trial_id)
            assert rec.frame is not None and rec.frame.confirm and r.confirmed, figures
            assert rec.frame.bound is Bound.NDR or r.bound is Bound.PDR, figures
            assert (rec.duration_s or 0) >= 5 * 0.99 and passes(rec, r.loss_limit_pct), figures
            top = r.hi_pps
            if top is None and (r.offered_pps or 0) < int(r.line_pps):
                wide.append(f"{frame} B {r.bound.value} (open)")
            elif top is not None and top - (r.offered_pps or 0) > 0.03 * (r.offered_pps or 0):
                wide.append(f"{frame} B {r.bound.value}")
        assert (ndr.offered_pps or 0) <= (pdr.offered_pps or 0), figures
        if ndr.trial_id is not None:
            rec = next(p for p in probes if p.trial_id == ndr.trial_id)
            assert rec.udp is not None and rec.udp.lost == 0 and passes(rec, 0.0), figures
    if wide:
        # the rate at 64 bytes is the sender's CPU on this shared machine: another's load
        # moves it between trials (seen: 54,000 to 150,000 frames/s within a minute)
        if load.busy:
            pytest.skip(f"{pair}: bracket over 3 % at {', '.join(wide)} with other load on "
                        f"the machine ({load.short()}): {figures}")
        raise AssertionError(f"{pair}: bracket over 3 % at {', '.join(wide)} on a quiet "
                             f"machine: {figures}")
    big = rates[(1518, Bound.NDR)]
    step = big.line_pps * test.frame_search.resolution_pct / 100
    if link_bps > FLOOR_UP_TO_BPS:
        return rates        # the sender's CPU, not the link, may be the limit: no floor
    if big.received_pps is None or big.received_pps < big.line_pps * (1 - TOL) - 2 * step:
        if load.busy:
            pytest.skip(f"{pair}: 1518-byte NDR short of the line with other load on the machine "
                        f"({load.short()}), not judged: {figures}")
        raise AssertionError(f"{pair}: 1518-byte NDR short of the line on a quiet machine: {figures}")
    return rates


def test_fast_ethernet_small_packets_stay_under_148809_pps(lab, lab_inventory, tmp_path):
    profile, run_dir, found, load = run_smallpkt(lab, lab_inventory, tmp_path, "100mbit",
                                                 "100M")
    rates = judge(profile, run_dir, found, load, 100e6)
    at64 = rates[(64, Bound.NDR)]
    assert at64.line_pps == pytest.approx(148_809, abs=1)
    # at most the line rate, within what the rate's own count and timing can tell, as the
    # report judges it (the sender waits on the link, so 64 bytes reach it here:
    # 148,812.4 frames/s was seen, 3 over, with an error of 298)
    assert not at64.above_line


def test_each_link_rate_of_the_lab_with_the_lab_profiles_search(lab, lab_inventory,
                                                                  tmp_path):
    """``profiles/lab-smallpkt.yaml`` on one pair of each link rate the session lab has
    (gbe at 1 Gbit/s; a real ``fe`` macvlan at 100 Mbit/s with
    NICBENCH_TEST_LAB_ADAPTERS=gbe,pci32,nojumbo,stall,fe), each judged at its inventory
    link rate: at or under 1,488,095 frames/s of 64 bytes at 1 Gbit/s and 148,809 at 100
    Mbit/s; the report's verdict names the highest small-packet rate. At MTU 1500 the
    lab's cards of one rate are one shaped link to a sender that cannot fill it (stall
    differs above 6000 only, a macvlan only in its MTU limit), so one of each keeps the
    suite's time. The profile as shipped but for its frame sizes: 64 and 1518 bytes, not
    512 (at 1 Gbit/s a search at 512 bytes is the sender's CPU as at 64, 215,000-230,000
    of 234,962 frames/s, and took 36 of this test's 87-98 s; all three sizes are judged
    at 100 Mbit/s above, where 512 bytes reach the line). Prints the run's time."""
    import time

    from nicbench.report.build import build
    from nicbench.report.load import load_runs

    text = PROFILE.read_text()
    assert "frames: [64, 512, 1518]," in text
    path = tmp_path / "smallpkt.yaml"
    path.write_text(text.replace("frames: [64, 512, 1518],", "frames: [64, 1518],"))
    profile = load_profile(path, CATALOG)
    found: list[ev.FrameRateFound] = []
    kinds: dict[str, str] = {}
    for p in lab_inventory.pairs:
        kinds.setdefault(str(lab_inventory.adapter(p.adapter).link_rate), p.name)
    pairs = list(kinds.values())
    assert "gbe" in pairs, pairs
    started = time.monotonic()
    with Beside(lab_namespaces(lab)) as load:
        run_dir = Runner(profile, lab_inventory, tmp_path / "out", pairs=pairs,
                         listener=lambda e: found.append(e) if isinstance(
                             e, ev.FrameRateFound) else None).run()
    took = time.monotonic() - started
    print(f"\nlab-smallpkt on {', '.join(pairs)}: {took:.0f} s")
    skipped = []
    for pair in pairs:
        rate = lab_inventory.adapter(lab_inventory.pair(pair).adapter).link_rate
        assert rate, f"{pair}: the lab's inventory gives no link rate"
        try:
            rates = judge(profile, run_dir, found, load, float(rate), pair)
        except pytest.skip.Exception as why:
            skipped.append(str(why))
            continue
        at64 = rates[(64, Bound.NDR)]
        limit = 148_809 if float(rate) == 100e6 else 1_488_095
        assert at64.line_pps == pytest.approx(limit, abs=1)
        assert not at64.above_line
    (sentence,) = [s for s in build(load_runs([run_dir.path])).verdict
                   if s.method == "small-packet rate"]
    assert sentence.text.startswith("Highest small-packet rate (NDR at 64-byte frames")
    print(sentence.text)
    if skipped:
        pytest.skip("; ".join(skipped))


@pytest.mark.shares_machine   # the search's steps are judged, not a rate of this machine
def test_a_confirmation_on_a_link_slowed_by_tc_fails_and_steps_down(lab, lab_inventory,
                                                                      tmp_path):
    """The lab profile at 64 bytes on gbe shaped to 100 Mbit/s (its line rate set to
    match), the link shaped by tc to half the first full-length trial's offered rate
    while it runs and back after it: the short trials found what the link carries, the
    confirmation there fails (the sender, held
    back by the slowed link's queue as by a NIC's, delivers short of what it offered, or
    frames are lost), the search steps down (to what arrived, or a step under) and confirms again
    on the link as it was; the NDR is below the failed confirmation, stands on a
    full-length trial within its bound, and its bracket's top is at most the failure.
    Its confirmations last 2 s, not the profile's 5: what is judged is the search's
    steps, which a trial's length does not change, and no rate is held to a floor, so
    the test runs beside others (another's load only moves the rate it steps down to).
    At 100 Mbit/s, not the Gigabit link's own rate: the search's steps are the same, and
    its 64-byte trials there cost the machine's other tests far less CPU (at 1 Gbit/s the
    sender is CPU-bound by design, with the receiver most of the other core)."""
    from nicbench.execution.trial import run_trial

    base = "100mbit"
    text = PROFILE.read_text().replace("frames: [64, 512, 1518]", "frames: [64]") \
        .replace("confirm_s: 5}", "confirm_s: 2, line_rate: 100M}")
    assert "frames: [64]," in text and "confirm_s: 2, line_rate: 100M}" in text
    path = tmp_path / "smallpkt.yaml"
    path.write_text(text)
    profile = load_profile(path, CATALOG)
    (test,) = profile.tests
    assert test.frame_search is not None
    confirm_s = test.frame_search.confirm_s
    link = next(x for x in lab.spec.links() if x.adapter.key == "gbe")
    slowed: list[int] = []

    def trial(ctx, spec, params, **kw):
        if params.get("duration_s") != confirm_s or slowed:
            return run_trial(ctx, spec, params, **kw)
        slowed.append(int(kw["offered_bps"]))
        pps = int(kw["offered_bps"]) // (params["length"] * 8)
        wire_kbit = pps * (64 + 20) * 8 // 1000       # what 64-byte frames need on the wire
        lab.reshape(link, f"{max(64, wire_kbit // 2)}kbit")
        try:
            return run_trial(ctx, spec, params, **kw)
        finally:
            lab.reshape(link, base)

    with lab.shaped(link, base):
        run_dir = Runner(profile, lab_inventory, tmp_path / "out", pairs=["gbe"],
                         trial=trial).run()
    probes = [r for r in run_dir.records() if r.kind is Kind.UDP_SEARCH]
    # the NDR's full-length trials (the PDR's, after it, have their own budget)
    fulls = [r for r in probes if r.frame is not None and r.frame.confirm
             and r.frame.bound is Bound.NDR]
    assert slowed and fulls and fulls[0].offered_bps == slowed[0]
    first = fulls[0]
    assert not passes(first, 0.0), "the slowed confirmation lost nothing and delivered all"
    rates = {r.bound: r for r in frame_rates(probes, test.frame_search.pdr_loss_pct)}
    ndr = rates[Bound.NDR]
    print(f"\nslowed confirmation at {first.frame.offered_pps:,} frames/s lost "
          f"{first.udp.loss_pct if first.udp else None} %; then "
          + ", ".join(f"{r.frame.offered_pps:,}{'' if passes(r, 0.0) else ' (lost)'}"
                      for r in fulls[1:])
          + f"; NDR {ndr.offered_pps} failed at {ndr.hi_pps}")
    assert len(fulls) >= 2 and len(fulls) <= test.frame_search.confirm_tries + 1
    assert ndr.trial_id is not None and ndr.confirmed, "no confirmation passed after"
    rec = next(p for p in probes if p.trial_id == ndr.trial_id)
    assert rec.frame is not None and rec.frame.confirm and passes(rec, 0.0)
    assert (rec.duration_s or 0) >= confirm_s * 0.99
    assert (ndr.offered_pps or 0) < first.frame.offered_pps
    assert ndr.hi_pps is not None and ndr.hi_pps <= first.frame.offered_pps
    assert not ndr.above_line
