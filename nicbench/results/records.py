"""What one trial leaves behind: :class:`TrialRecord`, with typed status, kind and failure.

A record is written as one JSON line of ``trials.jsonl`` and read back as the same type
(:meth:`TrialRecord.from_dict`). Why a trial did not measure is data, not prose: the
:class:`Failure` is set where the failure is detected (the trial, the tuning, the engine),
and ``reason`` keeps the words for people (the tool's error text, the kernel's refusal).

A netPIPE or netio curve is a list of :class:`~nicbench.tools.base.Point` and UDP
statistics a :class:`~nicbench.tools.base.UdpStats`, the parsers' own types: in the JSON
line they are the same objects as ever (``{"size_bytes": ..., "throughput_bps": ...,
"tx_bps": ..., "rx_bps": ...}``, ``{"lost": ..., "total": ..., "loss_pct": ...,
"jitter_ms": ...}``), checked as they are read (:func:`points_of`, :func:`udp_of`).

The hosts' CPU over the transfer is one value, :class:`Cpu` (each host's
:class:`CpuSplit`), in the line as ``"cpu": {"sender": {"busy": ..., "tool": ...,
"other": ...}, "receiver": {...}}`` and absent where nothing was read.

Format versions: 1 (nicbench 0.1) had no ``failure`` and kept ``kernel_message``,
``not_run`` and ``search_method`` under ``extra``; such records are read with the failure
inferred once, here, from their reason (:func:`_failure_of_v1`). 2 kept the CPU figures
as six keys of their own (:data:`OLD_KEYS`), read into a :class:`Cpu` here
(:func:`cpu_of_keys`). 3 is written now.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable
from dataclasses import MISSING, asdict, dataclass, field, fields
from enum import StrEnum
from typing import Any, NamedTuple, assert_never

from nicbench.errors import TuningErrorKind
from nicbench.physics.ethernet import Bound, FrameProbe
from nicbench.tools.base import Bidir, Latency, Point, UdpStats

from nicbench.config.profile import Role

FORMAT_VERSION = 3


class Status(StrEnum):
    OK = "ok"
    FAILED = "failed"
    SKIPPED = "skipped"       # stands for trials that were not run (refused, given up)


class Kind(StrEnum):
    REPETITION = "repetition"
    UDP_SEARCH = "udp-search"
    SKIPPED = "skipped"       # one record for a test at a point that could not be measured
    GIVEN_UP = "given-up"     # one record for the repetitions left after N failures in a row


class Failure(StrEnum):
    """Why a trial (or a configuration) gave no measurement. ``final`` failures are
    results (a resume does not measure them again); the others are retried on resume."""

    REFUSED = "refused"                 # the driver or kernel refused the setting
    PATH_CHECK = "path-check"           # the setting was taken, the path did not carry it
    TUNING = "tuning"                   # a setting could not be read or applied otherwise
    INTERFACE = "interface"             # the test interface is missing or down
    NOT_READY = "not-ready"             # the pair failed `nicbench check` before the run
    TIMEOUT = "timeout"                 # the tool ran past its time and was killed
    TOOL_ERROR = "tool-error"           # the tool printed its own error
    EXIT_STATUS = "exit-status"         # the tool exited non-zero without a readable error
    UNPARSED = "unparsed"               # output that could not be read
    NO_RESULT = "no-result"             # readable output without a throughput
    DEAD_LINK = "dead-link"             # the transfer moved almost nothing
    NO_RECEIVER_REPORT = "no-receiver-report"   # the receiver never saw the transfer end
    LINK_DOWN = "link-down"             # the test link's carrier changed during the trial
    OVERRAN = "overran"                 # the tool ran far past its planned duration
    SHORT_TRANSFER = "short-transfer"   # the link carried far less than the tool says
    OUTPUT_CAP = "output-cap"           # the tool printed more than nicbench keeps
    SERVER_ENDED = "server-ended"       # the receiver's server ended before the transfer
    NOT_LISTENING = "not-listening"     # the receiver's server never listened
    HOST_LOST = "host-lost"             # a host stopped answering
    REMOTE = "remote"                   # any other failure talking to a host
    GIVEN_UP = "given-up"               # repetitions left out after consecutive failures
    NOT_RUN = "not-run"                 # the run stopped before these trials

    @property
    def final(self) -> bool:
        return self is Failure.REFUSED

    @property
    def word(self) -> str:
        """One word or two for charts, the same for the same event whatever the tool."""
        match self:
            case Failure.REFUSED:
                return "refused"
            case Failure.PATH_CHECK:
                return "path check failed"
            case Failure.TUNING:
                return "not tuned"
            case Failure.INTERFACE:
                return "no link"
            case Failure.NOT_READY:
                return "not ready"
            case Failure.TIMEOUT:
                return "timed out"
            case Failure.TOOL_ERROR:
                return "tool error"
            case Failure.EXIT_STATUS:
                return "failed"
            case Failure.UNPARSED:
                return "unreadable"
            case Failure.NO_RESULT:
                return "no result"
            case Failure.DEAD_LINK | Failure.NO_RECEIVER_REPORT:
                return "stalled"
            case Failure.LINK_DOWN:
                return "link down"
            case Failure.OVERRAN:
                return "ran long"
            case Failure.SHORT_TRANSFER:
                return "short transfer"
            case Failure.OUTPUT_CAP:
                return "too much output"
            case Failure.SERVER_ENDED | Failure.NOT_LISTENING:
                return "receiver failed"
            case Failure.HOST_LOST:
                return "host lost"
            case Failure.REMOTE:
                return "host error"
            case Failure.GIVEN_UP:
                return "given up"
            case Failure.NOT_RUN:
                return "not run"
            case _:
                assert_never(self)

    @classmethod
    def of_tuning(cls, kind: TuningErrorKind) -> Failure:
        """What a point's setting not taken (a TuningError of ``kind``) is for its trials."""
        match kind:
            case TuningErrorKind.REFUSED:
                return cls.REFUSED
            case TuningErrorKind.PATH:
                return cls.PATH_CHECK
            case TuningErrorKind.MISMATCH | TuningErrorKind.OTHER:
                return cls.TUNING
            case TuningErrorKind.INTERFACE:
                return cls.INTERFACE
            case _:
                assert_never(kind)


@dataclass(frozen=True)
class CpuSplit:
    """A host's CPU over a trial's window, % of all CPUs: busy in all, the tool's own
    share, and the rest of the machine's load (busy minus the tool minus irq + softirq,
    where the network work of the transfer itself is done; at least 0, see
    ``platforms/base.cpu_split``). None: not read."""

    busy: float | None
    tool: float | None = None
    other: float | None = None


@dataclass(frozen=True)
class Cpu:
    """The hosts' CPU over a trial's transfer: the sending host's and the receiving
    host's :class:`CpuSplit`, None where that host's was not read (a Windows host, a
    trial that failed before the transfer)."""

    sender: CpuSplit | None = None
    receiver: CpuSplit | None = None

    @classmethod
    def of(cls, sender: CpuSplit, receiver: CpuSplit) -> Cpu | None:
        """Two hosts' splits as read (``busy`` None: not read); None if neither was."""
        snd = sender if sender.busy is not None else None
        rcv = receiver if receiver.busy is not None else None
        return cls(snd, rcv) if snd is not None or rcv is not None else None


class CpuPart(StrEnum):
    """One CPU figure of a trial, named by where the record's line keeps it: a host's
    busy, the tool's share of it or the rest of its load (in ``cpu``), or the tool's
    own figure where it prints one (``cpu_tool_pct``). All in % of all CPUs."""

    SENDER_BUSY = "cpu.sender.busy"
    RECEIVER_BUSY = "cpu.receiver.busy"
    SENDER_TOOL = "cpu.sender.tool"
    RECEIVER_TOOL = "cpu.receiver.tool"
    SENDER_OTHER = "cpu.sender.other"
    RECEIVER_OTHER = "cpu.receiver.other"
    TOOL_OWN = "cpu_tool_pct"

    def of(self, rec: TrialRecord) -> float | None:
        """This figure of ``rec`` (None: not read)."""
        if self is CpuPart.TOOL_OWN:
            return rec.cpu_tool_pct
        if rec.cpu is None:
            return None
        _, side, split = self.value.split(".")
        host = rec.cpu.sender if side == "sender" else rec.cpu.receiver
        return None if host is None else getattr(host, split)


HOST_CPU = tuple(p for p in CpuPart if p is not CpuPart.TOOL_OWN)


class TrialKey(NamedTuple):
    """What makes a trial unique in a run: a resume skips keys already stored."""

    pair: str
    point: str
    test: str
    kind: Kind
    repetition: int | None


@dataclass
class RoleResult:
    """What a tool run beside a test's own (``tests[].beside``) gave in its trial: its
    outcome and figure, judged by its own tool's parser, with its commands and raw files.
    The test's own tool (the load) fills the record's own fields."""

    role: Role
    tool: str
    protocol: str
    status: Status
    failure: Failure | None = None
    reason: str | None = None
    throughput_bps: float | None = None
    sent_bps: float | None = None
    duration_s: float | None = None
    udp: UdpStats | None = None
    version: str | None = None
    commands: dict[str, str] = field(default_factory=dict)
    raw: dict[str, str] = field(default_factory=dict)     # end -> path relative to DIR
    exit_status: dict[str, int | None] = field(default_factory=dict)
    latency: Latency | None = None    # a latency probe's round trips (absent from the line if None)

    def __post_init__(self) -> None:
        self.role = Role(self.role)
        self.status = Status(self.status)
        self.failure = Failure(self.failure) if self.failure else None

    def fail(self, failure: Failure, reason: str) -> None:
        self.status = Status.FAILED
        self.failure = failure
        self.reason = reason

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RoleResult:
        names = _field_names(cls)
        data = {k: v for k, v in data.items() if k in names}
        if "udp" in data:
            data["udp"] = udp_of(data["udp"])
        if "latency" in data:
            data["latency"] = latency_of(data["latency"])
        return cls(**data)


@dataclass
class TrialRecord:
    run_id: str
    trial_id: str
    pair: str
    adapter: str
    adapter_label: str
    tool: str
    test: str
    protocol: str
    point: str
    mtu: int
    repetition: int | None            # None for a skipped or given-up configuration
    kind: Kind
    status: Status
    failure: Failure | None = None
    reason: str | None = None
    throughput_bps: float | None = None
    sent_bps: float | None = None
    offered_bps: float | None = None
    duration_s: float | None = None   # the tool's own duration
    wall_s: float | None = None       # what the trial took, all included
    # the hosts' CPU over the transfer (absent from the line if None)
    cpu: Cpu | None = None
    cpu_tool_pct: float | None = None       # the tool's own CPU figure, if it prints one
    udp: UdpStats | None = None
    points: list[Point] = field(default_factory=list)
    version: str | None = None
    commands: dict[str, str] = field(default_factory=dict)
    hosts: dict[str, str] = field(default_factory=dict)   # role -> host name
    raw: dict[str, str] = field(default_factory=dict)     # role -> path relative to DIR
    exit_status: dict[str, int | None] = field(default_factory=dict)
    started_at: float = 0.0
    ended_at: float = 0.0
    kernel_message: str | None = None  # a refusal in the OS's own words
    not_run: int | None = None         # given-up / skipped: how many trials this stands for
    search_method: str | None = None   # udp-search trials: sweep | bisect
    extra: dict[str, Any] = field(default_factory=dict)
    format_version: int = FORMAT_VERSION
    # The tools run beside the test's own in this trial (absent from a one-tool trial's line).
    beside: list[RoleResult] = field(default_factory=list)
    # A latency test's round trips (absent from the line if None, so older lines keep
    # their bytes).
    latency: Latency | None = None
    # A bidirectional test's two directions (iperf3 --bidir): throughput_bps is the
    # forward one, this holds both (absent from the line if None, as latency).
    bidir: Bidir | None = None
    # A small-packet trial's frame size and offered frame rate (absent from the line if
    # None, so older lines keep their bytes).
    frame: FrameProbe | None = None

    def __post_init__(self) -> None:
        # a dict's look-up where it can (an enum's call is a few µs, and an import reads
        # millions of records); the enum's own call for anything else, and its error
        self.kind = _member(_KINDS, Kind, self.kind)
        self.status = _member(_STATUSES, Status, self.status)
        self.failure = _member(_FAILURES, Failure, self.failure) if self.failure else None

    @property
    def key(self) -> TrialKey:
        return TrialKey(self.pair, self.point, self.test, self.kind, self.repetition)

    @property
    def ok(self) -> bool:
        """Succeeded with a figure (a throughput, or a latency test's round trips): the
        trials every statistic is taken over."""
        return self.status is Status.OK and (self.throughput_bps is not None
                                             or self.latency is not None)

    def fail(self, failure: Failure, reason: str) -> None:
        self.status = Status.FAILED
        self.failure = failure
        self.reason = reason

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if not self.beside:
            del data["beside"]     # a one-tool trial's line as before beside existed
        for role in data.get("beside", ()):
            if role["latency"] is None:
                del role["latency"]
        if data["latency"] is None:
            del data["latency"]    # not a latency test: the line as before
        if data["bidir"] is None:
            del data["bidir"]      # a one-way test: the line as before
        if data["frame"] is None:
            del data["frame"]      # not a small-packet trial: the line as before
        if data["cpu"] is None:
            del data["cpu"]        # not read (Windows, a failed trial)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrialRecord:
        """A stored record back as an object: enums typed, unknown keys dropped, records of
        format 1 brought to this one. Raises ValueError (or KeyError, TypeError) on a
        record that is not a trial record."""
        data = dict(data)
        version = data.get("format_version", 1)
        if version == 1:
            extra = dict(data.get("extra") or {})
            for name in ("kernel_message", "not_run", "search_method"):
                data.setdefault(name, extra.pop(name, None))
            data["extra"] = extra
            data["failure"] = _failure_of_v1(data)
        if version in (1, 2):
            data["cpu"] = cpu_of_keys(data)
        for name in ("pair", "point", "test", "tool", "protocol", "adapter"):
            if not isinstance(data.get(name), str):
                raise ValueError(f"{name} {data.get(name)!r} is not a string")
        if not isinstance(data.get("mtu"), int) or isinstance(data.get("mtu"), bool):
            raise ValueError(f"mtu {data.get('mtu')!r} is not a number")
        data.setdefault("adapter_label", data["adapter"])
        if "points" in data:
            data["points"] = points_of(data["points"])
        if "udp" in data:
            data["udp"] = udp_of(data["udp"])
        if "latency" in data:
            data["latency"] = latency_of(data["latency"])
        if "bidir" in data:
            data["bidir"] = bidir_of(data["bidir"])
        if "frame" in data:
            data["frame"] = frame_of(data["frame"])
        if version not in (1, 2) and "cpu" in data:
            data["cpu"] = cpu_of(data["cpu"])
        data["beside"] = [RoleResult.from_dict(r) for r in data.get("beside") or ()]
        names = _field_names(cls)
        rec = cls(**(data if names.issuperset(data)
                     else {k: v for k, v in data.items() if k in names}))
        rec.format_version = FORMAT_VERSION
        return rec


def plain_record(data: dict[str, Any]) -> TrialRecord:
    """The record of a dict ``plausible.plainly_possible`` passed: what ``from_dict``
    makes of it (the same fields, values and types), without its checks (the dict has
    passed them) and without the constructor's keyword handling."""
    rec = object.__new__(TrialRecord)
    values = {name: factory() for name, factory in _FACTORIES}
    values.update(_DEFAULTS)
    values.update(data)
    values["kind"] = _KINDS[data["kind"]]
    values["status"] = _STATUSES[data["status"]]
    failure = data.get("failure")
    values["failure"] = _FAILURES[failure] if failure else None
    if data["format_version"] == 2:
        for key in OLD_KEYS:
            values.pop(key, None)
        values["cpu"] = cpu_of_keys(data)
    elif values["cpu"] is not None:
        values["cpu"] = _plain_cpu(values["cpu"])
    values["format_version"] = FORMAT_VERSION
    rec.__dict__.update(values)
    return rec


_NAMES: dict[type, frozenset[str]] = {}
_KINDS: dict[str, Kind] = {k.value: k for k in Kind}
_STATUSES: dict[str, Status] = {k.value: k for k in Status}
_FAILURES: dict[str, Failure] = {k.value: k for k in Failure}
# A record's field defaults: values, and the factories of those made new for each record.
_DEFAULTS = {f.name: f.default for f in fields(TrialRecord) if f.default is not MISSING}
_FACTORIES = [(f.name, f.default_factory) for f in fields(TrialRecord)
              if f.default_factory is not MISSING]


def _member(members: dict[str, Any], enum: Any, value: Any) -> Any:
    """``enum(value)``, by ``members`` (value -> member) where ``value`` is a string."""
    if isinstance(value, str):
        found = members.get(value)
        if found is not None:
            return found
    return enum(value)


def _field_names(cls: type) -> frozenset[str]:
    """A record class's field names, worked out once (an import reads millions)."""
    names = _NAMES.get(cls)
    if names is None:
        names = _NAMES[cls] = frozenset(f.name for f in fields(cls))
    return names


# Format 2's CPU keys, each a figure of the grouped ``cpu`` (side, part of its split).
_CPU_KEYS: dict[str, tuple[str, str]] = {
    "cpu_sender_pct": ("sender", "busy"), "cpu_receiver_pct": ("receiver", "busy"),
    "cpu_sender_tool_pct": ("sender", "tool"), "cpu_receiver_tool_pct": ("receiver", "tool"),
    "cpu_sender_other_pct": ("sender", "other"),
    "cpu_receiver_other_pct": ("receiver", "other")}
OLD_KEYS = tuple(_CPU_KEYS)
_SPLIT_KEYS = frozenset(f.name for f in fields(CpuSplit))
_SIDE_KEYS = frozenset(f.name for f in fields(Cpu))
_POINT_KEYS = {f.name for f in fields(Point)}
_UDP_KEYS = {f.name for f in fields(UdpStats)}
_LATENCY_KEYS = {f.name for f in fields(Latency)}


def _number(v: object) -> bool:
    # an integer beyond a float's range (json reads any number of digits) is none either
    if isinstance(v, int) and not isinstance(v, bool):
        return abs(v) <= sys.float_info.max
    return isinstance(v, float) and math.isfinite(v)


def _whole(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def points_of(data: object) -> list[Point]:
    """A stored curve back as points; ValueError naming the first point that is not one
    (a size in bytes and finite rates)."""
    if not isinstance(data, list):
        raise ValueError(f"points {_short(data)} is not a JSON list")
    out = []
    for i, p in enumerate(data):
        if not (isinstance(p, dict) and _whole(p.get("size_bytes"))
                and _number(p.get("throughput_bps")) and set(p) <= _POINT_KEYS
                and all(p.get(k) is None or _number(p[k]) for k in ("tx_bps", "rx_bps"))):
            raise ValueError(f"points[{i}] {_short(p)} is not a block size with its rates")
        out.append(Point(**p))
    return out


def udp_of(data: object) -> UdpStats | None:
    """Stored UDP statistics back as :class:`UdpStats` (None stays None); ValueError if
    they are not lost/total packet counts and finite loss and jitter."""
    if data is None:
        return None
    if not (isinstance(data, dict) and set(data) <= _UDP_KEYS
            and all(data.get(k) is None or _whole(data[k]) for k in ("lost", "total"))
            and all(data.get(k) is None or _number(data[k]) for k in ("loss_pct", "jitter_ms"))):
        raise ValueError(f"udp {_short(data)} is not UDP statistics (lost, total, loss_pct, "
                         "jitter_ms)")
    return UdpStats(**data)


def latency_of(data: object) -> Latency | None:
    """Stored round-trip times back as :class:`Latency` (None stays None); ValueError if
    they are not whole counts and finite, non-negative times."""
    if data is None:
        return None
    required = {"samples", "message_bytes", "p50_us", "p90_us", "p99_us", "p999_us", "max_us"}
    if not (isinstance(data, dict) and required <= set(data) <= _LATENCY_KEYS
            and all(_whole(data[k]) and data[k] >= 0 for k in ("samples", "message_bytes"))
            and all(data.get(k) is None or (_number(data[k]) and data[k] >= 0)
                    for k in _LATENCY_KEYS - {"samples", "message_bytes"})):
        raise ValueError(f"latency {_short(data)} is not round-trip times (samples, "
                         "message_bytes, p50_us ... max_us)")
    return Latency(**data)


_BIDIR_KEYS = {f.name for f in fields(Bidir)}


def bidir_of(data: object) -> Bidir | None:
    """A stored bidirectional run's two directions back as :class:`Bidir` (None stays
    None); ValueError if they are not finite, non-negative rates (the forward's given)."""
    if data is None:
        return None
    if not (isinstance(data, dict) and "forward_bps" in data and set(data) <= _BIDIR_KEYS
            and _number(data["forward_bps"])
            and all(data.get(k) is None or (_number(data[k]) and data[k] >= 0)
                    for k in _BIDIR_KEYS)):
        raise ValueError(f"bidir {_short(data)} is not two directions' rates (forward_bps, "
                         "reverse_bps, forward_sent_bps, reverse_sent_bps)")
    return Bidir(**data)
_FRAME_WHOLE = ("frame_bytes", "payload_bytes", "offered_pps")
_FRAME_KEYS = {f.name for f in fields(FrameProbe)}


def frame_of(data: object) -> FrameProbe | None:
    """A stored small-packet probe back as :class:`FrameProbe` (None stays None);
    ValueError if it is not whole sizes and counts, finite rates and a known bound."""
    if data is None:
        return None
    if not (isinstance(data, dict) and _FRAME_KEYS - {"confirm"} <= set(data) <= _FRAME_KEYS
            and isinstance(data.get("confirm", False), bool)
            and all(_whole(data[k]) and data[k] >= 0 for k in _FRAME_WHOLE)
            and all(_number(data[k]) and data[k] >= 0 for k in ("line_pps", "link_rate_bps"))
            and data["bound"] in {b.value for b in Bound}):
        raise ValueError(f"frame {_short(data)} is not a small-packet probe (frame_bytes, "
                         "payload_bytes, bound, offered_pps, line_pps, link_rate_bps; confirm)")
    return FrameProbe(**data)


def cpu_of_keys(data: dict[str, Any]) -> Cpu | None:
    """Format 2's six CPU keys of ``data`` as one :class:`Cpu` (a host none of whose
    keys holds a figure: None; None if neither host's does); ValueError naming a key that
    is not a finite number or null."""
    sides: dict[str, dict[str, float]] = {}
    for key, (side, part) in _CPU_KEYS.items():
        value = data.get(key)
        if value is None:
            continue
        if not _number(value):
            raise ValueError(f"{key} {_short(value)} is not a finite number")
        sides.setdefault(side, {})[part] = value
    if not sides:
        return None
    snd, rcv = sides.get("sender"), sides.get("receiver")
    return Cpu(None if snd is None else CpuSplit(snd.get("busy"), snd.get("tool"),
                                                  snd.get("other")),
               None if rcv is None else CpuSplit(rcv.get("busy"), rcv.get("tool"),
                                                  rcv.get("other")))


def cpu_of(data: object) -> Cpu | None:
    """A stored ``cpu`` back as :class:`Cpu` (None stays None); ValueError if it is not
    a host's split per side (busy, tool, other: finite numbers or null)."""
    if data is None:
        return None
    if not (isinstance(data, dict) and set(data) <= _SIDE_KEYS and all(
            side is None or (isinstance(side, dict) and "busy" in side
                             and set(side) <= _SPLIT_KEYS
                             and all(v is None or _number(v) for v in side.values()))
            for side in data.values())):
        raise ValueError(f"cpu {_short(data)} is not the hosts' CPU (sender, receiver: "
                         "busy, tool, other)")
    return _plain_cpu(data)


def _plain_cpu(data: dict[str, Any]) -> Cpu:
    """The :class:`Cpu` of a ``cpu`` dict whose shape and values were checked."""
    snd, rcv = data.get("sender"), data.get("receiver")
    return Cpu(None if snd is None else CpuSplit(**snd),
               None if rcv is None else CpuSplit(**rcv))


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def current(records: Iterable[TrialRecord]) -> list[TrialRecord]:
    """The records that stand, in file order. trials.jsonl is append-only, so a resume
    that measures a configuration again adds to it: a record is superseded by a later
    record of the same key (a failed repetition measured again), and a record standing
    for trials not run (``skipped``, ``given-up``) by any later record of its
    configuration (pair, point, test). Superseded records stay in the file."""
    recs = list(records)
    last_key = {r.key: i for i, r in enumerate(recs)}
    last_config = {(r.pair, r.point, r.test): i for i, r in enumerate(recs)}
    return [r for i, r in enumerate(recs)
            if (last_config[(r.pair, r.point, r.test)] == i
                if r.kind in (Kind.SKIPPED, Kind.GIVEN_UP) else last_key[r.key] == i)]


def settled(rec: TrialRecord, keep_failed: bool = False) -> bool:
    """Does a resume leave this (current) record as it is? Successes and final failures
    (a refusal by the driver or kernel) always; other failures, give-ups and points
    skipped for a reason that may pass (a path check, a lost host) only with
    ``keep_failed``. UDP search trials always: a resumed search replays them."""
    if rec.kind is Kind.UDP_SEARCH or rec.status is Status.OK:
        return True
    if rec.failure is not None and rec.failure.final:
        return True
    return keep_failed


def _failure_of_v1(data: dict[str, Any]) -> str | None:
    """The failure of a format-1 record, from the words nicbench 0.1 wrote."""
    if data.get("status") == "ok":
        return None
    reason = (data.get("reason") or "").lower()
    if data.get("kind") == "given-up":
        return Failure.GIVEN_UP
    if data.get("kind") == "skipped":
        if data.get("kernel_message") and "path mtu" not in reason:
            return Failure.REFUSED
        return Failure.PATH_CHECK if "path mtu" in reason else Failure.TUNING
    for words, failure in (
            (("timeout", "timed out"), Failure.TIMEOUT),
            (("receiver printed no report",), Failure.NO_RECEIVER_REPORT),
            (("moved almost nothing",), Failure.DEAD_LINK),
            (("tool error",), Failure.TOOL_ERROR),
            (("output not understood",), Failure.UNPARSED),
            (("no throughput",), Failure.NO_RESULT),
            (("server ended",), Failure.SERVER_ENDED),
            (("nothing listened",), Failure.NOT_LISTENING),
            (("exit ",), Failure.EXIT_STATUS)):
        if any(w in reason for w in words):
            return failure
    return Failure.REMOTE
