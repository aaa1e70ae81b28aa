"""The small-packet rate of a run: per frame size and bound (NDR, PDR), one typed
:class:`FrameRate` made from the stored trials by :func:`frame_rates`, the one definition
the search's event, ``--plan``'s replay and the report share.

A bound's rate is the highest offered frame rate a full-length trial (``confirm``, of
the test's ``confirm_s``) carried within the bound's loss
(:func:`nicbench.results.policy.passes`: lost at most 0 % for the NDR, ``pdr_loss_pct``
for the PDR, and the offered rate delivered): the confirmation. For the NDR only the NDR
search's trials count (a PDR trial never stands as the NDR); for the PDR every trial
does (a full-length pass at 0 % loss is one within the PDR's). Beside it, its bracket:
the lowest offered rate above it that failed the bound (:func:`bracket_top`; None: the
rate is the line rate). No confirmation passed: no
rate (the lowest failure is still given).

Runs stored before confirmations (issue 30) have none: their figure is the old rule's
(the highest short trial that passed), marked unconfirmed and never ranked.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from nicbench.physics.ethernet import Bound, frame_mbit
from nicbench.results.plausible import bound_allowance, timing_error_s
from nicbench.results.policy import passes
from nicbench.results.records import CpuPart, Kind, Status, TrialRecord


@dataclass(frozen=True)
class FrameRate:
    """A search's outcome at one frame size under one loss bound: the trial that stands
    for it (None: no full-length trial passed) and its figures."""

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
    confirmed: bool = False          # the figure's trial is a full-length one
    duration_s: float | None = None  # the figure trial's duration (the receiver's)
    hi_pps: int | None = None        # the bracket's top: the lowest failure above
    hi_full: bool = False            # ... a full-length trial's (else a short one's)
    error_pps: float = 0.0           # how far above the line it may read (allowance)
    full_trials: int = 0             # full-length trials at this frame size

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
        """Above the line rate for its frame size by more than ``error_pps``, the
        allowance every physical bound has (``results.plausible``): impossible on that
        link, never ranked."""
        return self.received_pps is not None and self.received_pps > self.line_pps + \
            self.error_pps

    @property
    def bracket_pct(self) -> float | None:
        """The bracket's width as a share of the figure (the search's last step)."""
        if self.offered_pps is None or self.hi_pps is None or self.offered_pps <= 0:
            return None
        return 100.0 * (self.hi_pps - self.offered_pps) / self.offered_pps


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


def error_pps(rec: TrialRecord, line: float) -> float:
    """How far above the ``line`` rate :func:`received_pps` may read and still be the
    line rate, by the rule of every physical bound (``results.plausible.bound_allowance``):
    one frame of the count over the receiver's duration, plus the tool's timing error
    (its ``TIMING_ERROR_S``) over that duration (one second where none was read)."""
    duration = rec.duration_s if rec.duration_s and rec.duration_s > 0 else None
    return bound_allowance(line, 1.0 / (duration or 1.0), timing_error_s(rec.tool), duration)


def limit(bound: Bound, pdr_loss_pct: float) -> float:
    return 0.0 if bound is Bound.NDR else pdr_loss_pct


def _offered(r: TrialRecord) -> int:
    return r.frame.offered_pps if r.frame else 0


def _counts(r: TrialRecord, bound: Bound) -> bool:
    """Whether a trial speaks for ``bound``: the PDR's trials never for the NDR."""
    return bound is Bound.PDR or (r.frame is not None and r.frame.bound is Bound.NDR)


def best(trials: list[TrialRecord], bound: Bound, pdr_loss_pct: float) -> TrialRecord | None:
    """The trial of the highest offered rate that passed under ``bound`` at full length
    (in an older run without full-length trials, any that passed)."""
    loss = limit(bound, pdr_loss_pct)
    full = [r for r in trials if r.frame is not None and r.frame.confirm]
    pool = [r for r in (full if full else trials) if _counts(r, bound) or not full]
    ok = [r for r in pool if passes(r, loss)]
    return max(ok, key=lambda r: (_offered(r), r.trial_id), default=None)


def bracket_top(trials: list[TrialRecord], bound: Bound, pdr_loss_pct: float,
                above: int | None) -> tuple[int | None, bool]:
    """The lowest offered rate above ``above`` that failed ``bound``, and whether at full
    length: a full-length trial's, or for the NDR a short one that lost a frame (a frame
    lost in a short trial is lost in a longer one); where neither failed above it, any
    short trial's. A short trial that lost nothing but delivered short is not a
    full-length failure (iperf 2's sender catches up over a longer trial), nor is a
    short trial over a loss ratio (the PDR: a ratio averages over the trial)."""
    loss = limit(bound, pdr_loss_pct)
    failed = [r for r in trials if _counts(r, bound) and not passes(r, loss)
              and (above is None or _offered(r) > above)]
    full = [r for r in failed if (r.frame is not None and r.frame.confirm)
            or (bound is Bound.NDR and lost_any(r))]
    pool = full or failed
    low = min(pool, key=lambda r: (_offered(r), not (r.frame and r.frame.confirm)),
              default=None)
    if low is None:
        return None, False
    return _offered(low), bool(low.frame and low.frame.confirm)


def lost_any(r: TrialRecord) -> bool:
    """Did the receiver count a frame lost (or give no count: a failed trial)?"""
    u = r.udp
    if not r.ok or u is None:
        return True
    return u.lost > 0 if u.lost is not None else (u.loss_pct or 0.0) > 0


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
        n_full = sum(1 for r in trials if r.frame is not None and r.frame.confirm)
        for bound in Bound:
            rec = best(trials, bound, pdr)
            top, top_full = bracket_top(trials, bound, pdr,
                                        rec.frame.offered_pps if rec and rec.frame else None)
            out.append(FrameRate(
                pair=pair, adapter=first.adapter, adapter_label=first.adapter_label,
                point=point, test=test, frame_bytes=frame, bound=bound,
                loss_limit_pct=limit(bound, pdr), line_pps=first.frame.line_pps,
                trials=len(trials),
                trial_id=rec.trial_id if rec else None,
                offered_pps=rec.frame.offered_pps if rec and rec.frame else None,
                received_pps=received_pps(rec) if rec else None,
                loss_pct=rec.udp.loss_pct if rec and rec.udp else None,
                cpu_sender_pct=CpuPart.SENDER_BUSY.of(rec) if rec else None,
                cpu_sender_other_pct=CpuPart.SENDER_OTHER.of(rec) if rec else None,
                confirmed=bool(rec and rec.frame and rec.frame.confirm),
                duration_s=rec.duration_s if rec else None, hi_pps=top, hi_full=top_full,
                error_pps=error_pps(rec, first.frame.line_pps) if rec else 0.0,
                full_trials=n_full))
    return out
