"""Values no trial can have, refused as a record is read (``RunDir.numbered_records``), so
that every command that reads runs (report, compare, resume, status) sees only records
that could have been measured. The stored types are checked before (``store._check_types``:
a finite number, a whole number); this checks what those numbers say:

- a rate (throughput, sent, offered, a curve's points, a bidirectional run's directions,
  a tool beside the test's own)
  below 0 or above ``MAX_BPS``;
- an ``ok`` trial without a throughput or a latency test's round trips (the engine fails
  such a trial: ``no-result``); round trips whose percentiles are out of order;
- an MTU outside 68 (IPv4's minimum, RFC 791) to 65536 (Linux loopback's default, above
  any Ethernet jumbo frame);
- a repetition below 1, or above the most trials its test plans (the manifest's profile:
  its repetitions, an until-stable policy's max, a UDP search's rates); without a manifest,
  above ``MAX_REPETITION``; a measured trial without a repetition number;
- a small-packet probe (``frame``) whose payload is not its frame less 46 bytes, whose
  line rate is not its link rate over (frame + 20) x 8 bits, or whose offered frames
  carry a rate other than the trial's ``offered_bps`` (``nicbench.physics.ethernet``);
- a raw output named outside the run's ``raw/`` directory;
- a start or end (0: not stamped) before 2000 or in the future (beyond ``CLOCK_SLACK_S``), an end before
  the start; a duration or wall time below 0 or above ``MAX_DURATION_S``; a host's CPU
  busy (sender, receiver, their tool and other shares) outside 0 to 100 %, the tool's own
  figure (a process's CPU time over wall time: above 100 with threads) outside 0 to
  ``MAX_TOOL_CPU_PCT``;
- with a manifest: a trial for a pair its inventory does not have, or for an adapter
  that is not that pair's (the verdict would rank an adapter the run never measured);
  and for a store's import (:func:`of_run`), a trial of another run (its run_id) or
  started outside the run's window (its start to its end, or now if it has not ended,
  give or take ``CLOCK_SLACK_S``).
  A test the profile does not name is read (its repetitions bounded as without a
  manifest): reports are made of runs combined by hand.
"""

from __future__ import annotations

import time
from dataclasses import MISSING, fields
from typing import Protocol

from nicbench.config.inventory import Inventory
from nicbench.config.profile import Profile
from nicbench.physics import ethernet
from nicbench.results.records import (FORMAT_VERSION, HOST_CPU, OLD_KEYS, CpuPart, Failure,
                                      Kind, RoleResult, Status, TrialRecord, cpu_of,
                                      cpu_of_keys)


class RunFacts(Protocol):
    """What a record is checked against: a run's ``Manifest`` (named by its fields, as
    the manifest's own module writes through the store)."""

    @property
    def inventory(self) -> Inventory: ...

    @property
    def profile(self) -> Profile: ...

    @property
    def run_id(self) -> str: ...

    @property
    def started_at(self) -> float: ...

    @property
    def ended_at(self) -> float | None: ...

# 10 Tbit/s: over six times the fastest Ethernet standardised (1.6 Tbit/s, IEEE 802.3dj)
# and a hundred times the fastest loopback or 100 GbE figure nicbench has stored. A rate
# above it is a unit error or a corrupt file, not a measurement.
MAX_BPS = 1e13
MTU_MIN, MTU_MAX = 68, 65536
# The most trials a profile can plan for one test at one point: a UDP sweep of 10001
# rates, each offered 15 times, twice (a probe offered again); used without a manifest.
MAX_REPETITION = 10_001 * 15 * 2
YEAR_2000 = 946_684_800.0       # 2000-01-01 UTC: no nicbench trial is older
# A controller's clock may be stepped (NTP) while a run goes: how far a trial's time may
# stray from the run's window, or into the future, before it is not a time it was run at.
CLOCK_SLACK_S = 3600.0
# A week: past any trial (a tool's duration is at most a day: profile.MAX_DURATION_S).
MAX_DURATION_S = 7 * 86400.0
# A tool's CPU figure is its CPU time over wall time: 100 per CPU it kept busy.
MAX_TOOL_CPU_PCT = 100.0 * 1024


def impossible(rec: TrialRecord, manifest: RunFacts | None = None) -> str | None:
    """What is impossible about ``rec`` (one phrase), or None."""
    return (_rates(rec) or _ok_without_figure(rec) or _mtu(rec) or _frame(rec) or _raw(rec)
            or _times(rec) or _durations(rec) or _cpu(rec)
            or (in_run(rec, manifest) if manifest else
                _repetition(rec, None)))


def in_run(rec: TrialRecord, manifest: RunFacts) -> str | None:
    """What is impossible about ``rec`` as a trial of ``manifest``'s run (one phrase),
    or None: the checks :func:`impossible` makes with a manifest and without one not
    (a record :func:`plainly_possible` passed needs only these)."""
    return _repetition(rec, manifest.profile) or _names(rec, manifest)


def of_run(rec: TrialRecord, manifest: RunFacts) -> str | None:
    """Why ``rec``, read from a run's directory, is not a trial of that run (one phrase),
    or None: another run's run_id, or a start outside the run's window (a time not
    stamped, 0, included). What a store imports is checked so (a report reads runs
    combined by hand, and records made in tests, unstamped)."""
    return _run(rec, manifest)


def plainly_possible(data: dict) -> bool:
    """True only if ``data``, a stored record's dict whose stored types were checked
    (``store._check_types``), is a record of this format (or of format 2, its CPU keys
    numbers from 0 to 100: ``records.plain_record`` groups them) with nothing beyond a
    throughput trial's plain fields (no curve, UDP statistics, round trips, second
    direction, frame, tools beside; no unknown key) and with values :func:`impossible`
    (without a manifest) finds nothing wrong with: such a dict is made a record without
    ``TrialRecord.from_dict``'s work (a store's import reads millions). False says
    nothing: the dict is read and judged the full way, which words any refusal.
    ``tests/unit/test_record_lines.py`` holds the two ways to the same answers."""
    version = data.get("format_version")
    keys = _PLAIN_KEYS if version == FORMAT_VERSION else \
        _PLAIN_KEYS_2 if version == 2 else None
    if keys is None or not keys.issuperset(data) or not _REQUIRED.issubset(data):
        return False
    if data["kind"] not in _KIND_VALUES or data["status"] not in _STATUS_VALUES or \
            data.get("failure") not in _FAILURE_VALUES:
        return False
    if data.get("points") or data.get("udp") is not None or data.get("beside") or \
            any(data.get(k) is not None for k in ("latency", "bidir", "frame")):
        return False
    for name in ("throughput_bps", "sent_bps", "offered_bps"):
        v = data.get(name)
        if v is not None and not 0 <= v <= MAX_BPS:
            return False
    if data["status"] == Status.OK.value and data.get("throughput_bps") is None:
        return False
    if not MTU_MIN <= data["mtu"] <= MTU_MAX:
        return False
    for name in ("started_at", "ended_at"):
        t = data.get(name, 0.0)
        if not (YEAR_2000 <= t <= time.time() + CLOCK_SLACK_S or t == 0):
            return False
    if data.get("ended_at", 0.0) and data["ended_at"] < data.get("started_at", 0.0):
        return False
    for name in ("duration_s", "wall_s"):
        v = data.get(name)
        if v is not None and not 0 <= v <= MAX_DURATION_S:
            return False
    v = data.get("cpu_tool_pct")
    if v is not None and not 0 <= v <= MAX_TOOL_CPU_PCT:
        return False
    try:            # the stored types of format 2's keys and of a cpu are checked here
        cpu = cpu_of_keys(data) if version == 2 else cpu_of(data.get("cpu"))
    except ValueError:
        return False
    if cpu is not None and not all(v is None or 0 <= v <= 100 for side in (cpu.sender,
                                   cpu.receiver) if side is not None
                                   for v in (side.busy, side.tool, side.other)):
        return False
    rep = data["repetition"]
    if rep is None:
        if data["kind"] in (Kind.REPETITION.value, Kind.UDP_SEARCH.value):
            return False
    elif not 1 <= rep <= MAX_REPETITION:
        return False
    return all(_inside_raw(rel) for rel in data.get("raw", {}).values())


_PLAIN_KEYS = frozenset(f.name for f in fields(TrialRecord))
_PLAIN_KEYS_2 = _PLAIN_KEYS - {"cpu"} | frozenset(OLD_KEYS)    # format 2's CPU keys
_REQUIRED = frozenset(f.name for f in fields(TrialRecord)
                      if f.default is MISSING and f.default_factory is MISSING)
_KIND_VALUES = frozenset(k.value for k in Kind)
_STATUS_VALUES = frozenset(k.value for k in Status)
_FAILURE_VALUES = frozenset([None, *(k.value for k in Failure)])


def _rate(name: str, value: float | None) -> str | None:
    if value is None:
        return None
    if value < 0:
        return f"{name} {value!r} is negative"
    if value > MAX_BPS:
        return (f"{name} {value:.3g} bit/s is above {MAX_BPS:.0e} bit/s (10 Tbit/s), more "
                "than any link carries")
    return None


def _rates(rec: TrialRecord) -> str | None:
    named: list[tuple[str, float | None]] = [
        ("throughput_bps", rec.throughput_bps), ("sent_bps", rec.sent_bps),
        ("offered_bps", rec.offered_bps)]
    for i, p in enumerate(rec.points):
        named += [(f"points[{i}].throughput_bps", p.throughput_bps),
                  (f"points[{i}].tx_bps", p.tx_bps), (f"points[{i}].rx_bps", p.rx_bps)]
    if rec.bidir is not None:
        named += [(f"bidir.{name}", value) for name, value in (
            ("forward_bps", rec.bidir.forward_bps), ("reverse_bps", rec.bidir.reverse_bps),
            ("forward_sent_bps", rec.bidir.forward_sent_bps),
            ("reverse_sent_bps", rec.bidir.reverse_sent_bps))]
    for i, b in enumerate(rec.beside):
        named += [(f"beside[{i}].throughput_bps", _number(b.throughput_bps)),
                  (f"beside[{i}].sent_bps", _number(b.sent_bps))]
    return next((why for name, value in named if (why := _rate(name, value))), None)


def _number(value: object) -> float | None:
    # a tool beside the test's own is read without the record's type check
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)
                         and value == value and abs(value) != float("inf")):
        return value
    return float("inf")       # refused above as more than any link carries


def _ok_without_figure(rec: TrialRecord) -> str | None:
    if rec.status is Status.OK and rec.throughput_bps is None and rec.latency is None:
        return ("status ok without a throughput_bps or latency (an ok trial has its "
                "figure)")
    lat = rec.latency
    if lat is not None and not (lat.p50_us <= lat.p90_us <= lat.p99_us <= lat.p999_us
                                <= lat.max_us):
        return (f"latency percentiles out of order (p50 {lat.p50_us:g} p90 {lat.p90_us:g} "
                f"p99 {lat.p99_us:g} p99.9 {lat.p999_us:g} max {lat.max_us:g} us)")
    return None


def _when(t: float) -> str:
    if not YEAR_2000 / 2 < t < 1e11:
        return f"{t:g}"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t))


def _times(rec: TrialRecord) -> str | None:
    latest = time.time() + CLOCK_SLACK_S
    for name, t in (("started_at", rec.started_at), ("ended_at", rec.ended_at)):
        if t == 0:
            continue                    # not stamped (a run's window refuses it: of_run)
        if t < YEAR_2000:
            return f"{name} {_when(t)} is before 2000"
        if t > latest:
            return f"{name} {_when(t)} is in the future"
    if rec.ended_at and rec.ended_at < rec.started_at:
        return f"ended_at {_when(rec.ended_at)} is before started_at {_when(rec.started_at)}"
    return None


def _durations(rec: TrialRecord) -> str | None:
    for name, v in (("duration_s", rec.duration_s), ("wall_s", rec.wall_s)):
        if v is not None and not 0 <= v <= MAX_DURATION_S:
            return f"{name} {v:g} is outside 0 to {MAX_DURATION_S:g} s (a week)"
    return None


def _cpu(rec: TrialRecord) -> str | None:
    for part in HOST_CPU:
        v = part.of(rec)
        if v is not None and not 0 <= v <= 100:
            return f"{part} {v:g} is outside 0 to 100 % (a host's CPU busy)"
    v = CpuPart.TOOL_OWN.of(rec)
    if v is not None and not 0 <= v <= MAX_TOOL_CPU_PCT:
        return (f"{CpuPart.TOOL_OWN} {v:g} is outside 0 to {MAX_TOOL_CPU_PCT:g} % (100 for "
                "each CPU a tool keeps busy)")
    return None


def _run(rec: TrialRecord, manifest: RunFacts) -> str | None:
    if rec.run_id != manifest.run_id:
        return (f"run_id {rec.run_id!r} is another run's (the directory's manifest says "
                f"{manifest.run_id!r})")
    first = manifest.started_at - CLOCK_SLACK_S
    last = (manifest.ended_at if manifest.ended_at is not None else time.time()) \
        + CLOCK_SLACK_S
    if not first <= rec.started_at <= last:
        end = _when(manifest.ended_at) if manifest.ended_at is not None else "now"
        return (f"started_at {_when(rec.started_at)} is outside the run's window "
                f"({_when(manifest.started_at)} to {end})")
    return None


def _mtu(rec: TrialRecord) -> str | None:
    if not MTU_MIN <= rec.mtu <= MTU_MAX:
        return f"mtu {rec.mtu} is outside {MTU_MIN} to {MTU_MAX}"
    return None


def _frame(rec: TrialRecord) -> str | None:
    f = rec.frame
    if f is None:
        return None
    if f.payload_bytes != ethernet.payload_bytes(f.frame_bytes):
        return (f"frame.payload_bytes {f.payload_bytes} is not frame {f.frame_bytes} less "
                f"{ethernet.FRAME_OVERHEAD} bytes of headers")
    line = ethernet.line_pps(f.frame_bytes, f.link_rate_bps)
    if abs(f.line_pps - line) > 1e-6 * max(line, 1.0):
        return (f"frame.line_pps {f.line_pps:g} is not {f.link_rate_bps:g} bit/s over "
                f"({f.frame_bytes} + {ethernet.WIRE_EXTRA}) x 8 bits ({line:g})")
    if rec.offered_bps is not None and rec.offered_bps != f.offered_pps * f.payload_bytes * 8:
        return (f"offered_bps {rec.offered_bps:g} is not frame.offered_pps {f.offered_pps} "
                f"x {f.payload_bytes} payload bytes x 8")
    return None


def _raw(rec: TrialRecord) -> str | None:
    owners: list[TrialRecord | RoleResult] = [rec, *rec.beside]
    for owner in owners:
        for role, rel in owner.raw.items():
            if not _inside_raw(rel):
                who = f"beside {owner.tool} " if isinstance(owner, RoleResult) else ""
                return f"{who}raw.{role} {rel!r} is not a file under raw/"
    return None


def _inside_raw(rel: object) -> bool:
    if not isinstance(rel, str) or "\\" in rel or "\0" in rel:
        return False
    parts = rel.split("/")
    return len(parts) >= 2 and parts[0] == "raw" and all(p not in ("", ".", "..")
                                                          for p in parts[1:])


def _repetition(rec: TrialRecord, profile: Profile | None) -> str | None:
    rep = rec.repetition
    if rep is None:
        if rec.kind in (Kind.REPETITION, Kind.UDP_SEARCH):
            return f"a {rec.kind} trial without a repetition number"
        return None
    most = MAX_REPETITION
    test = profile.test(rec.test) if profile is not None else None
    if test is not None and profile is not None:
        most = _most_trials(profile, test)
    if not 1 <= rep <= most:
        of = f" of test {rec.test!r} (at most {most})" if most != MAX_REPETITION \
            else f" (1 to {most})"
        return f"repetition {rep} is out of range{of}"
    return None


def _most_trials(profile: Profile, test) -> int:
    if test.frame_search is not None:
        return test.frame_search.most_trials
    search = test.udp_search
    if search is None:
        return profile.repetitions_for(test)
    rates = (search.stop_bps - search.start_bps) // search.step_bps + 1
    return (2 * rates + 1) * search.trials_per_rate     # each rate at most twice, + stop


def _names(rec: TrialRecord, manifest: RunFacts) -> str | None:
    inv = manifest.inventory
    pairs = {p.name: p for p in inv.pairs}
    pair = pairs.get(rec.pair)
    if pair is None:
        return (f"pair {rec.pair!r} is not in the run's manifest (its pairs: "
                f"{', '.join(pairs) or 'none'})")
    if rec.adapter != pair.adapter:
        return (f"adapter {rec.adapter!r} is not the adapter of pair {rec.pair!r} (the "
                f"manifest says {pair.adapter!r})")
    return None


# -- a physical bound: how far above it a figure may read and still be the bound ----------
def timing_error_s(tool: str) -> float:
    """The tool's own timing error, in seconds of the time a figure is over (its module's
    ``TIMING_ERROR_S``, ``Tool.timing_error_s``); 0 for a tool nicbench does not know."""
    from nicbench.tools.registry import TOOLS

    return TOOLS[tool].timing_error_s if tool in TOOLS else 0.0


def bound_allowance(limit: float, resolution: float, timing_error: float,
                    duration_s: float | None) -> float:
    """How far above a physical ``limit`` a figure may read and still be that limit, in
    the limit's unit (bit/s, frames/s): the ``resolution`` the tool printed it at, plus
    what its timing error does to a figure at the limit over ``duration_s`` seconds,
    ``limit x timing_error / duration_s``. Without a known duration, one second."""
    duration = duration_s if duration_s and duration_s > 0 else 1.0
    return resolution + abs(limit) * timing_error / duration


def above_bound(value: float | None, limit: float | None, resolution: float,
                timing_error: float, duration_s: float | None) -> bool:
    """Whether ``value`` exceeds ``limit`` by more than :func:`bound_allowance`: a figure
    the wire cannot give, never ranked. The same rule for a rate against a goodput limit
    and a frame rate against the line rate; False without a value or a limit."""
    if value is None or not limit:
        return False
    return value > limit + bound_allowance(limit, resolution, timing_error, duration_s)
