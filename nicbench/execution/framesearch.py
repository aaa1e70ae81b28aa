"""The small-packet rate (issue 22, RFC 2544's throughput at each frame size).

At each frame size of the test's ``frame_search`` that the point's MTU carries, the
frame-rate search (:func:`nicbench.execution.udpsearch.frame_rate_search`, RFC 2544's
throughput narrowed as MLRsearch, RFC 9971, narrows) looks for the highest offered frame
rate with no loss (NDR), then, from what the NDR's trials showed, the highest with at
most ``pdr_loss_pct`` loss (PDR): short trials (the test's ``duration_s``) bracket the
rate to ``resolution_pct`` of it, and trials of ``confirm_s`` settle it at full length.
The tool sends UDP datagrams of the frame's payload (frame less 46 bytes:
:func:`nicbench.physics.ethernet.payload_bytes`, 18 at 64 bytes) at ``-b`` = frames/s x
payload x 8, in whole frames per second up to the line rate for the frame size.

Every trial is stored (kind ``udp-search``, numbered in the order made across the frame
sizes and both searches) with its ``frame`` probe (``confirm``: a full-length trial); a
resume replays the stored trials where the searches walk the same rates again, as
:class:`UdpRateSearch` does. The outcome per frame size and bound is
:func:`nicbench.results.framerate.frame_rates` of the stored trials.
"""

from __future__ import annotations

import math
from typing import Any, Protocol

from nicbench.config.profile import FrameSearch, Point, TestSpec
from nicbench.execution import events as ev
from nicbench.execution.context import HostLost, RunContext
from nicbench.execution.recorder import Where
from nicbench.execution.trialcontext import TrialContext
from nicbench.execution.udpsearch import Known, RateTrial, Verdict, frame_rate_search
from nicbench.physics import ethernet
from nicbench.results.framerate import frame_rates, lost_any, received_pps
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
    per_frame = planned // len(search.frames)
    probes = _FrameProbes(run, trials, test, per_frame)
    for frame in search.frames:
        if not ethernet.fits(frame, trials.point.ip_mtu):
            run.recorder.advance(per_frame)   # 9018 at MTU 1500
            continue
        made = probes.made
        seen = _one_frame(probes, search, frame, link)
        # progress: a frame of fewer trials than planned counts the rest as done (a
        # frame of more grew the total trial by trial: _FrameProbes._one)
        run.recorder.advance(max(0, per_frame - (probes.made - made)))
        for rate in frame_rates(seen, search.pdr_loss_pct):
            run.tell(ev.FrameRateFound(
                pair=trials.ctx.pair, point=trials.ctx.point, test=test.name,
                frame_bytes=frame, bound=rate.bound, pps=rate.received_pps,
                line_pps=rate.line_pps, trials=probes.made - made, hi_pps=rate.hi_pps,
                confirm_s=rate.duration_s if rate.confirmed else None,
                loss_pct=rate.loss_pct))


def link_rate(run: RunContext, trials: TrialsAt, search: FrameSearch) -> float | None:
    """The line rate the grid runs up to: the test's, else the adapter's."""
    if search.line_rate:
        return float(search.line_rate)
    rate = run.inventory.adapter(trials.ctx.adapter).link_rate
    return float(rate) if rate else None


def _one_frame(probes: _FrameProbes, search: FrameSearch, frame: int,
               link: float) -> list[TrialRecord]:
    """The NDR search, then the PDR search from what the NDR's trials showed; the trials
    they used. A trial of the PDR search never stands for the NDR; the NDR's stand for
    the PDR where their loss is within its bound (a full-length pass at the NDR is one at
    the PDR's bound too)."""
    line = ethernet.line_pps(frame, link)
    top = max(2, math.floor(line))
    floor = max(1, math.ceil(line * FLOOR_SHARE))
    probes.frame(frame, link)
    for bound, loss in ((Bound.NDR, 0.0), (Bound.PDR, search.pdr_loss_pct)):
        frame_rate_search(probes.at(bound, loss), top=top,
                          resolution_pct=search.resolution_pct,
                          confirm_tries=search.confirm_tries, zero_loss=loss == 0,
                          known=None if bound is Bound.NDR else probes.known(loss),
                          floor=floor)
    return probes.seen


# The lowest rate a search offers, as a share of the line rate: 149 frames/s at 64 bytes
# on Gigabit; nothing passing there is "no rate" (a broken path, not a slow one).
FLOOR_SHARE = 1e-4


class _FrameProbes:
    """The trials of one test's small-packet searches at a point, numbered in the order
    made, replayed from the stored ones where the searches walk the same rates again."""

    def __init__(self, run: RunContext, trials: TrialsAt, test: TestSpec, per_frame: int):
        self.run, self.trials, self.test = run, trials, test
        self.per_frame = per_frame            # the trials a frame size is planned as
        assert test.frame_search is not None
        self.search = test.frame_search
        self.params = resolve(test.params, trials.point.vars)
        self.timeout = run.profile.timeout_for(test)
        self.made = self.first = 0
        self.frame_bytes = ethernet.MIN_FRAME
        self.link_bps = 0.0
        self.seen: list[TrialRecord] = []              # this frame size's trials

    def frame(self, frame: int, link_bps: float) -> None:
        self.frame_bytes, self.link_bps = frame, link_bps
        self.seen = []
        self.first = self.made                   # trials made before this frame size

    def known(self, loss_pct: float) -> Known:
        """What this frame size's trials so far say under ``loss_pct``: the PDR search
        starts from the NDR search's trials."""
        k = Known()
        short = [r for r in self.seen if r.frame is not None and not r.frame.confirm]
        full = [r for r in self.seen if r.frame is not None and r.frame.confirm]
        ok = [_pps(r) for r in short if passes(r, loss_pct)]
        k.lo = max(ok, default=None)
        bad = [r for r in short if not passes(r, loss_pct)
               and (k.lo is None or _pps(r) > k.lo)]
        low = min(bad, key=_pps, default=None)
        if low is not None:
            k.hi, k.hi_received, k.hi_lost = _pps(low), received_pps(low), lost_any(low)
        k.full_passed = {_pps(r) for r in full if passes(r, loss_pct)}
        k.full_failed = {_pps(r) for r in full if not passes(r, loss_pct)}
        return k

    def at(self, bound: Bound, loss_pct: float) -> RateTrial:
        def trial(pps: int, confirm: bool) -> Verdict:
            # trials_per_rate > 1 (short trials): the best (one that passes, then the
            # most received) guides the search; all are stored. A full-length trial is
            # one trial, its answer final.
            n = 1 if confirm else self.search.trials_per_rate
            recs = [self._one(pps, bound, confirm) for _ in range(n)]
            best = max(recs, key=lambda r: (passes(r, loss_pct), r.ok,
                                            r.throughput_bps or 0.0))
            return Verdict(passes(best, loss_pct), received_pps(best), lost_any(best))
        return trial

    def _one(self, pps: int, bound: Bound, confirm: bool) -> TrialRecord:
        self.made += 1
        if self.made - self.first > self.per_frame:
            self.run.recorder.extend(1)          # beyond the plan: the total grows
        payload = ethernet.payload_bytes(self.frame_bytes)
        rate_bps = pps * payload * 8
        probe = FrameProbe(frame_bytes=self.frame_bytes, payload_bytes=payload, bound=bound,
                           offered_pps=pps,
                           line_pps=ethernet.line_pps(self.frame_bytes, self.link_bps),
                           link_rate_bps=self.link_bps, confirm=confirm)
        recorder, key = self.run.recorder, self.trials.key(self.test, Kind.UDP_SEARCH,
                                                            self.made)
        old = recorder.record(key)
        if old is not None and old.offered_bps == rate_bps and old.frame is not None \
                and old.frame.frame_bytes == self.frame_bytes \
                and old.frame.confirm == confirm:
            recorder.advance(1)
            self.seen.append(old)
            return old
        self.run.check_stop()
        params = {**self.params, "length": payload}
        timeout = self.timeout
        if confirm:       # the full-length trial: its own duration, the margin kept
            short = params.get("duration_s")
            params["duration_s"] = self.search.confirm_s
            timeout += max(0.0, self.search.confirm_s - float(short or 0))
        rec = self.trials.one(self.test, params, repetition=self.made, kind=Kind.UDP_SEARCH,
                              offered_bps=rate_bps, timeout_s=timeout)
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


def _pps(rec: TrialRecord) -> int:
    assert rec.frame is not None
    return rec.frame.offered_pps
