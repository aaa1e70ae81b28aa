"""The small-packet rate of a run: per frame size and bound (NDR, PDR), one typed
:class:`FrameRate` made from the stored trials by :func:`frame_rates`, the one definition
the search's event, ``--plan``'s replay and the report share.

A bound's rate is the highest offered frame rate that one of the frame size's trials
carried within the bound's loss (:func:`nicbench.results.policy.passes`: lost at most
0 % for the NDR, ``pdr_loss_pct`` for the PDR, and the offered rate delivered, so a
sender that could not send what it was asked fails the trial instead of passing it). The
searches' own answer is that on a link that behaves; a trial that passed above a probe
that failed (a burst) counts, as it would in the bisection that made it. Every zero-loss
trial is within the PDR's loss too, so the NDR is never above the PDR.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from nicbench.physics.ethernet import Bound, above_line, frame_mbit
from nicbench.results.policy import passes
from nicbench.results.records import Kind, Status, TrialRecord


@dataclass(frozen=True)
class FrameRate:
    """A search's outcome at one frame size under one loss bound: the trial that stands
    for it (None: no offered rate passed) and its figures."""

    pair: str
    adapter: str
    adapter_label: str
    point: str
    test: str
    frame_bytes: int
    bound: Bound
    loss_limit_pct: float
    line_pps: float
    trials: int                      # the trials made at this frame size, both searches
    trial_id: str | None = None
    offered_pps: int | None = None
    received_pps: float | None = None
    loss_pct: float | None = None
    cpu_sender_pct: float | None = None
    cpu_sender_other_pct: float | None = None   # the sender's load beside the tool

    @property
    def mbit(self) -> float | None:
        """Mbit/s of frames (header and FCS, no preamble or gap) at the received rate."""
        return None if self.received_pps is None else frame_mbit(self.received_pps,
                                                                  self.frame_bytes)

    @property
    def line_pct(self) -> float | None:
        if self.received_pps is None or self.line_pps <= 0:
            return None
        return 100.0 * self.received_pps / self.line_pps

    @property
    def above_line(self) -> bool:
        """Above the line rate for its frame size: impossible on that link, never ranked."""
        return self.received_pps is not None and above_line(self.received_pps, self.line_pps)


def received_pps(rec: TrialRecord) -> float | None:
    """The frames per second that arrived: the receiver's own count of datagrams (total
    less lost) over its duration, exact where iperf prints its rate to 3 digits; without
    them, the receiver's payload rate over the payload."""
    if rec.frame is None or rec.throughput_bps is None or rec.frame.payload_bytes <= 0:
        return None
    u = rec.udp
    if u is not None and u.total is not None and u.lost is not None and rec.duration_s:
        return (u.total - u.lost) / rec.duration_s
    return rec.throughput_bps / (rec.frame.payload_bytes * 8)


def limit(bound: Bound, pdr_loss_pct: float) -> float:
    return 0.0 if bound is Bound.NDR else pdr_loss_pct


def best(trials: list[TrialRecord], bound: Bound, pdr_loss_pct: float) -> TrialRecord | None:
    """The trial of the highest offered rate that passed under ``bound``."""
    ok = [r for r in trials if passes(r, limit(bound, pdr_loss_pct))]
    return max(ok, key=lambda r: (r.frame.offered_pps if r.frame else 0, r.trial_id),
               default=None)


def frame_rates(records: Iterable[TrialRecord],
                pdr_loss_pct: dict[str, float] | float) -> list[FrameRate]:
    """Every (pair, point, test, frame size) of small-packet trials in ``records`` (the
    current ones), as its NDR and PDR, in the order first met. ``pdr_loss_pct``: one
    limit, or one per test name (a test not named: 0.5 %)."""
    groups: dict[tuple[str, str, str, int], list[TrialRecord]] = {}
    for r in records:
        if r.frame is not None and r.kind is Kind.UDP_SEARCH and r.status is not Status.SKIPPED:
            groups.setdefault((r.pair, r.point, r.test, r.frame.frame_bytes), []).append(r)
    out = []
    for (pair, point, test, frame), trials in groups.items():
        pdr = pdr_loss_pct if isinstance(pdr_loss_pct, float) else pdr_loss_pct.get(test, 0.5)
        first = trials[0]
        assert first.frame is not None
        for bound in Bound:
            rec = best(trials, bound, pdr)
            out.append(FrameRate(
                pair=pair, adapter=first.adapter, adapter_label=first.adapter_label,
                point=point, test=test, frame_bytes=frame, bound=bound,
                loss_limit_pct=limit(bound, pdr), line_pps=first.frame.line_pps,
                trials=len(trials),
                trial_id=rec.trial_id if rec else None,
                offered_pps=rec.frame.offered_pps if rec and rec.frame else None,
                received_pps=received_pps(rec) if rec else None,
                loss_pct=rec.udp.loss_pct if rec and rec.udp else None,
                cpu_sender_pct=rec.cpu_sender_pct if rec else None,
                cpu_sender_other_pct=rec.cpu_sender_other_pct if rec else None))
    return out
