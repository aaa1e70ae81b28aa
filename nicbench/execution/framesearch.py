"""The small-packet rate (issue 22, RFC 2544's throughput at each frame size).

At each frame size of the test's ``frame_search`` that the point's MTU carries, the UDP
bisection (:func:`nicbench.execution.udpsearch.bisect`) looks for the highest offered
frame rate with no loss (NDR), then, from there up, the highest with at most
``pdr_loss_pct`` loss (PDR). The tool sends UDP datagrams of the frame's payload (frame
less 46 bytes: :func:`nicbench.physics.ethernet.payload_bytes`, 18 at 64 bytes), and the
search runs in the tool's unit, payload bit/s (what ``-b`` and the receiver's figure
are), on a grid of whole frames per second: from one step to the line rate for the frame
size, in steps of ``resolution_pct`` of it.

Every trial is stored (kind ``udp-search``, numbered in the order made across the frame
sizes and both searches) with its ``frame`` probe; a resume replays the stored trials
where the searches walk the same rates again, as :class:`UdpRateSearch` does. The PDR
search uses the NDR search's trials at the rates it asks for again (each once: a retry
is a new trial). The outcome per frame size and bound is
:func:`nicbench.results.framerate.frame_rates` of the stored trials.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol

from nicbench.config.profile import FrameSearch, Point, TestSpec
from nicbench.execution import events as ev
from nicbench.execution.context import HostLost, RunContext
from nicbench.execution.recorder import Where
from nicbench.execution.trialcontext import TrialContext
from nicbench.execution.udpsearch import bisect
from nicbench.physics import ethernet
from nicbench.results.framerate import frame_rates
from nicbench.physics.ethernet import Bound, FrameProbe
from nicbench.results.policy import passes
from nicbench.results.records import Failure, Kind, TrialKey, TrialRecord
from nicbench.tools.params import resolve


class TrialsAt(Protocol):
    """What the search needs of ``measure.Trials``: a pair at a point, running trials."""

    ctx: TrialContext
    point: Point

    @property
    def where(self) -> Where: ...

    def key(self, test: TestSpec, kind: Kind, repetition: int | None) -> TrialKey: ...

    def one(self, test: TestSpec, params: dict[str, Any], **kw: Any) -> TrialRecord: ...


def search_frames(run: RunContext, trials: TrialsAt, test: TestSpec, planned: int) -> None:
    """Both searches at each frame size the point carries; ``planned`` is the test's
    planned trials at a point (progress advances over the frames left out)."""
    search = test.frame_search
    assert search is not None
    link = link_rate(run, trials, search)
    if link is None:
        reason = (f"no line rate for adapter {trials.ctx.adapter}: give the inventory "
                  "adapter a link_rate or the test frame_search.line_rate")
        run.tell(ev.GaveUp(pair=trials.ctx.pair, point=trials.ctx.point, test=test.name,
                           reason=reason))
        run.recorder.marker(trials.where, test, Kind.SKIPPED, Failure.TUNING, reason,
                            not_run=planned)
        run.recorder.advance(planned)
        return
    probes = _FrameProbes(run, trials, test)
    for frame in search.frames:
        if not ethernet.fits(frame, trials.point.ip_mtu):
            run.recorder.advance(planned // len(search.frames))   # 9018 at MTU 1500
            continue
        made = probes.made
        seen = _one_frame(probes, search, frame, link)
        for rate in frame_rates(seen, search.pdr_loss_pct):
            run.tell(ev.FrameRateFound(
                pair=trials.ctx.pair, point=trials.ctx.point, test=test.name,
                frame_bytes=frame, bound=rate.bound, pps=rate.received_pps,
                line_pps=rate.line_pps, trials=probes.made - made))


def link_rate(run: RunContext, trials: TrialsAt, search: FrameSearch) -> float | None:
    """The line rate the grid runs up to: the test's, else the adapter's."""
    if search.line_rate:
        return float(search.line_rate)
    rate = run.inventory.adapter(trials.ctx.adapter).link_rate
    return float(rate) if rate else None


def _one_frame(probes: _FrameProbes, search: FrameSearch, frame: int,
               link: float) -> list[TrialRecord]:
    """The NDR search, then the PDR search from the NDR up; the trials they used."""
    line = ethernet.line_pps(frame, link)
    bits = ethernet.payload_bytes(frame) * 8
    step = max(1, math.ceil(line * search.resolution_pct / 100))
    top = max(step + 1, math.floor(line))
    probes.frame(frame, link)
    ndr = bisect(probes.at(Bound.NDR, 0.0), step * bits, top * bits, step * bits, 0.0)
    start = ndr.best_offered_bps or step * bits
    if start < top * bits:       # else no loss at the line rate: the PDR is that trial
        bisect(probes.at(Bound.PDR, search.pdr_loss_pct), start, top * bits, step * bits,
               search.pdr_loss_pct)
    return probes.seen


class _FrameProbes:
    """The trials of one test's small-packet searches at a point, numbered in the order
    made, replayed from the stored ones where the searches walk the same rates again."""

    def __init__(self, run: RunContext, trials: TrialsAt, test: TestSpec):
        self.run, self.trials, self.test = run, trials, test
        assert test.frame_search is not None
        self.search = test.frame_search
        self.params = resolve(test.params, trials.point.vars)
        self.timeout = run.profile.timeout_for(test)
        self.made = 0
        self.frame_bytes = ethernet.MIN_FRAME
        self.link_bps = 0.0
        self.reusable: dict[int, TrialRecord] = {}     # NDR trials the PDR may use once
        self.seen: list[TrialRecord] = []              # this frame size's trials

    def frame(self, frame: int, link_bps: float) -> None:
        self.frame_bytes, self.link_bps = frame, link_bps
        self.reusable, self.seen = {}, []

    def at(self, bound: Bound, loss_pct: float) -> Callable[[int], TrialRecord]:
        def trial(rate_bps: int) -> TrialRecord:
            if bound is Bound.PDR and rate_bps in self.reusable:
                return self.reusable.pop(rate_bps)
            # trials_per_rate > 1: the best (one that passes, then the most received)
            # speaks for the rate; all are stored.
            recs = [self._one(rate_bps, bound) for _ in range(self.search.trials_per_rate)]
            best = max(recs, key=lambda r: (passes(r, loss_pct), r.ok,
                                            r.throughput_bps or 0.0))
            if bound is Bound.NDR:
                self.reusable[rate_bps] = best
            return best
        return trial

    def _one(self, rate_bps: int, bound: Bound) -> TrialRecord:
        self.made += 1
        payload = ethernet.payload_bytes(self.frame_bytes)
        probe = FrameProbe(frame_bytes=self.frame_bytes, payload_bytes=payload, bound=bound,
                           offered_pps=rate_bps // (payload * 8),
                           line_pps=ethernet.line_pps(self.frame_bytes, self.link_bps),
                           link_rate_bps=self.link_bps)
        recorder, key = self.run.recorder, self.trials.key(self.test, Kind.UDP_SEARCH,
                                                            self.made)
        old = recorder.record(key)
        if old is not None and old.offered_bps == rate_bps and old.frame is not None \
                and old.frame.frame_bytes == self.frame_bytes:
            recorder.advance(1)
            self.seen.append(old)
            return old
        self.run.check_stop()
        rec = self.trials.one(self.test, {**self.params, "length": payload},
                              repetition=self.made, kind=Kind.UDP_SEARCH,
                              offered_bps=rate_bps, timeout_s=self.timeout)
        rec.search_method = "bisect"
        rec.frame = probe
        if old is not None:    # the search took another path: keep both, mark the new
            rec.trial_id += ".replayed"
            rec.extra["superseded_stored_trial"] = old.trial_id
        recorder.store(rec)
        self.seen.append(rec)
        recorder.measured(rec, self.made, None)
        if rec.failure is Failure.HOST_LOST:
            raise HostLost(self.trials.ctx.sender.host, rec.reason or "")
        return rec
