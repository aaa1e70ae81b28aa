"""Profiles: what to measure and how (tuning points, tests, repetitions, selection).

A profile says which review and section it follows (``source``), which OS method it is
(``platform``), the tuning points (MTUs on Linux; frame sizes with registry values on
Windows), and the tests to run at each point. ``extends:`` names a parent profile whose
keys this one overrides, so a review's variants stay short.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (Discriminator, Field, SerializerFunctionWrapHandler, Tag, ValidationInfo,
                      field_validator, model_serializer, model_validator)

from nicbench.config.fields import (NAME_RE, UNION_TAGS, Float, Int, Label, Name, Rate,
                                    RegistryName, Strict, SysctlName, SysctlValue, ToolArg,
                                    ToolName, ToolParam)
from nicbench.config.inventory import Inventory, Pair
from nicbench.config.source import Where
from nicbench.errors import ConfigError, UsageError

Select = Literal["best", "mean", "median"]
# What to do with points[].registry values the Windows host ignores.
RegistryPolicy = Literal["apply", "skip-if-ignored"]
DEFAULT_LOSS_PCT = 0.1   # a UDP rate counts with at most this much loss, unless told


class UdpSearch(Strict):
    """How to find the highest UDP rate that gets through.

    ``sweep`` is the reviews' method: offer start, start+step, ... up to stop, keep the
    highest rate received. ``bisect`` finds the highest offered rate whose loss stays at
    or under ``loss_pct`` with the same resolution, in far fewer trials."""

    method: Literal["sweep", "bisect"] = "sweep"
    start_bps: Rate = 200_000_000
    stop_bps: Rate = 800_000_000
    step_bps: Rate = 10_000_000
    loss_pct: Float = Field(DEFAULT_LOSS_PCT, ge=0, le=100)
    trials_per_rate: Int = Field(1, ge=1, le=15)   # each rate offered N times, best kept

    @model_validator(mode="after")
    def _order(self):
        if self.stop_bps <= self.start_bps:
            raise ValueError("stop_bps must be above start_bps")
        if self.step_bps <= 0:
            raise ValueError("step_bps must be positive")
        if (self.stop_bps - self.start_bps) / self.step_bps > 10_000:
            raise ValueError("more than 10000 steps: raise step_bps")
        return self

    @property
    def planned_trials(self) -> int:
        """The trials a search is planned as, each times trials_per_rate: every rate of a
        sweep; for a bisection an estimate (a search may take fewer or more): halving
        the rates down to one, plus the offer of stop_bps and the first guess."""
        rates = (self.stop_bps - self.start_bps) // self.step_bps + 1
        if self.method == "sweep":
            return rates * self.trials_per_rate
        return (max(1, (rates - 1).bit_length()) + 2) * self.trials_per_rate


# RFC 2544 section 9.1's Ethernet frame sizes (less 1280, as FD.io CSIT runs them);
# nicbench.physics.ethernet holds the arithmetic (config/ stands on nothing above it).
RFC2544_FRAMES = [64, 128, 256, 512, 1024, 1518]
# and a jumbo frame of MTU 9000, searched only at points whose MTU carries it
DEFAULT_FRAMES = [*RFC2544_FRAMES, 9018]
MIN_FRAME = 64            # Ethernet's smallest frame: 18 bytes of UDP payload
FRAME_OVERHEAD = 18       # an Ethernet frame's header (14) and FCS (4) around its MTU
JUMBO_FRAME = 9000 + FRAME_OVERHEAD
MAX_FRAME = 65535 + FRAME_OVERHEAD    # the largest IP packet with its header and FCS
DEFAULT_PDR_LOSS_PCT = 0.5


# One bound's short trials at most (execution/udpsearch.py): from the line rate down to
# 1/10,000 of it with the step doubling, then halving to the resolution.
MAX_SHORT_TRIALS = 24
# What a search is planned as per frame size (an estimate): two modern runs on the lab
# with the receiver's 4 MB buffer (five pairs, 64 bytes, load average 5-11, 2026-11-28)
# averaged 7.2 short and 5.5 full-length trials a frame size for both bounds (8-18 in
# all); the seeded simulation in tests/unit/test_framesearch_sim.py, 4.5 short and 3.2
# full-length a bound alone. (Before the buffer, 13.1 and 8.1: 5 s trials lost frames
# where 1 s trials had passed.)
PLANNED_SHORT_PER_FRAME = 7
PLANNED_FULL_PER_FRAME = 6


class FrameSearch(Strict):
    """The small-packet rate (issue 22, issue 30): at each Ethernet frame size, the
    highest offered frame rate with no loss (NDR, RFC 2544's throughput) and with at most
    ``pdr_loss_pct`` loss (PDR), each searched with the test's short trials until the
    bracket (the highest rate passed, the lowest failed) is within ``resolution_pct`` of
    the rate found, then settled by trials of ``confirm_s`` at full length (RFC 2544's
    final determination; its 60 s is ``confirm_s: 60``): the rate is confirmed or stepped
    down, at most ``confirm_tries`` of them (``execution/udpsearch.py``). A frame the
    point's MTU does not carry (9018 at MTU 1500) is left out there. The line rate is
    ``line_rate``, else the inventory adapter's ``link_rate``."""

    frames: list[Annotated[Int, Field(ge=MIN_FRAME, le=MAX_FRAME)]] = Field(
        default_factory=lambda: list(DEFAULT_FRAMES), min_length=1, max_length=32)
    pdr_loss_pct: Float = Field(DEFAULT_PDR_LOSS_PCT, gt=0, le=100)
    resolution_pct: Float = Field(1.0, ge=0.1, le=50)
    confirm_s: Float = Field(10.0, ge=1, le=3600)
    confirm_tries: Int = Field(8, ge=1, le=20)
    line_rate: Rate | None = None
    trials_per_rate: Int = Field(1, ge=1, le=15)

    @field_validator("frames")
    @classmethod
    def _distinct(cls, frames: list[int]) -> list[int]:
        if len(set(frames)) != len(frames):
            raise ValueError("a frame size is listed twice")
        return frames

    @property
    def planned_confirmations(self) -> int:
        """The full-length trials planned at one point (an estimate)."""
        return len(self.frames) * PLANNED_FULL_PER_FRAME

    @property
    def planned_trials(self) -> int:
        """An estimate (a search may take fewer or more): per frame size, the short
        trials of both bounds and their full-length ones."""
        return (len(self.frames) * PLANNED_SHORT_PER_FRAME * self.trials_per_rate
                + self.planned_confirmations)

    @property
    def most_trials(self) -> int:
        """The most trials it can make at one point: per frame and bound, every short
        trial and every full-length one."""
        return len(self.frames) * 2 * (MAX_SHORT_TRIALS * self.trials_per_rate
                                       + self.confirm_tries)


# The fewest repetitions an until-stable policy stops after.
MIN_UNTIL_STABLE = 5


class UntilStable(Strict):
    """Repetitions until the figure is known well enough: at least ``min`` (5 or more),
    then one more while the 95 % confidence interval of the figure the profile reports
    (the median's order-statistic interval, the mean's t-interval; under ``select: best``
    the median's, best-of-n having none) reaches further than ``until_ci_pct`` % of the
    figure on either side, at most ``max`` (``results/policy.stopped``)."""

    min: Int = Field(..., ge=1, le=1000)
    max: Int = Field(..., ge=2, le=1000)
    until_ci_pct: Float = Field(..., gt=0, le=100)

    @model_validator(mode="before")
    @classmethod
    def _retired(cls, data: Any) -> Any:
        if isinstance(data, dict) and "until_rsd_pct" in data:
            raise ValueError(
                "until_rsd_pct is retired (a running spread stopped on lucky streaks): give "
                "until_ci_pct, how far the 95 % interval of the figure may reach, in % of it")
        return data

    @model_validator(mode="after")
    def _order(self):
        if self.min < MIN_UNTIL_STABLE:
            raise ValueError(f"min {self.min} is below {MIN_UNTIL_STABLE}: an interval of the "
                             f"figure from fewer repetitions stops on lucky streaks; give "
                             f"min: {MIN_UNTIL_STABLE} or more")
        if self.max < self.min:
            raise ValueError(f"max {self.max} is below min {self.min}")
        return self

    def describe(self) -> str:
        return (f"{self.min} to {self.max}, until the 95 % interval of the figure is within "
                f"±{self.until_ci_pct:g} %")


def _repetitions_form(value: Any) -> str:
    return UNION_TAGS.STABLE if isinstance(value, (dict, UntilStable)) else UNION_TAGS.COUNT


# "repetitions: 15" (the reviews' fixed count) or "repetitions: {min, max, until_ci_pct}".
Repetitions = Annotated[
    Annotated[Annotated[Int, Field(ge=1, le=1000)], Tag(UNION_TAGS.COUNT)]
    | Annotated[UntilStable, Tag(UNION_TAGS.STABLE)],
    Discriminator(_repetitions_form)]


class Role(StrEnum):
    """What a tool does in a test's trial. Every role has the pair's two ends: its server
    on the receiver, its client on the sender (the record's ``hosts``); the role says
    what its figure means.

    ``load`` is the test's own tool (``tool:``): its figure is the trial's throughput.
    ``probe`` runs beside the load, started and stopped with it, and measures what the
    link still gives while the load runs (its figure is kept in the record's ``beside``).
    """

    LOAD = "load"
    PROBE = "probe"


class BesideSpec(Strict):
    """A tool run beside a test's own (``tests[].beside``), in the same trial."""

    role: Role
    tool: ToolName
    protocol: Literal["tcp", "udp"] = "tcp"
    params: dict[Name, ToolParam] = Field(default_factory=dict)


SWEEP_MAX_VALUES = 16


class Swept(Strict):
    """Where a test made by a sweep came from: the test as written (``of``), whose
    ``sweep:`` ran it at each value of ``param``; this one is at ``value``."""

    of: Name
    param: Name
    value: ToolArg


def sweep_problem(test: Any) -> str | None:
    """What is wrong with a test's ``sweep:`` as written (None: it can be expanded)."""
    sweep = test.get("sweep")
    example = "e.g. sweep: {streams: [1, 2, 4, 8]}"
    if not isinstance(sweep, dict) or len(sweep) != 1:
        return f"give one parameter and the list of its values, {example}"
    ((param, values),) = sweep.items()
    if not isinstance(param, str) or not NAME_RE.match(param):
        return f"{param!r} is not a parameter name, {example}"
    if not isinstance(values, list) or not 2 <= len(values) <= SWEEP_MAX_VALUES:
        return (f"{param}: give a list of 2 to {SWEEP_MAX_VALUES} values, {example}")
    for j, value in enumerate(values):
        if not isinstance(value, (bool, int, float, str)) or \
                (isinstance(value, str) and not NAME_RE.match(value)):
            return f"{param}[{j}]: {value!r} is not a number or a word"
        if value in values[:j]:
            return f"{param}: {value!r} is given twice"
    params = test.get("params")
    if isinstance(params, dict) and param in params:
        return f"{param} is in params: and in sweep: give it in one of them"
    if not isinstance(test.get("name"), str):
        return "a swept test needs its name: (its tests are named after it)"
    if params is not None and not isinstance(params, dict):
        return "params: must be a mapping"
    return None


def _word(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else f"{value:g}" \
        if isinstance(value, float) else str(value)


def expand_sweeps(tests: Any) -> Any:
    """A test with ``sweep: {param: [v1, v2, ...]}`` as one test per value, named
    ``NAME-PARAMv`` (``tcp-streams4``), each with ``params.PARAM: v`` and ``swept:``
    saying where it came from. A sweep that is not well formed is left for TestSpec to
    refuse; a profile read back from a manifest has no sweep left to expand."""
    if not isinstance(tests, list):
        return tests
    out = []
    for test in tests:
        if not (isinstance(test, dict) and "sweep" in test and sweep_problem(test) is None):
            out.append(test)
            continue
        ((param, values),) = test["sweep"].items()
        rest = {k: v for k, v in test.items() if k != "sweep"}
        for value in values:
            out.append({**rest, "name": f"{test['name']}-{param}{_word(value)}",
                        "params": {**(test.get("params") or {}), param: value},
                        "swept": {"of": test["name"], "param": param, "value": value}})
    return out


def sweep_origins(tests: Any) -> list[tuple[int, str | None, int | None]]:
    """For each test after :func:`expand_sweeps`: the index of the test as written, and
    for a swept one its parameter and the index of its value (for error lines)."""
    out: list[tuple[int, str | None, int | None]] = []
    for i, test in enumerate(tests if isinstance(tests, list) else ()):
        if isinstance(test, dict) and "sweep" in test and sweep_problem(test) is None:
            ((param, values),) = test["sweep"].items()
            out += [(i, param, j) for j in range(len(values))]
        else:
            out.append((i, None, None))
    return out


class TestSpec(Strict):
    name: Name
    tool: ToolName
    protocol: Literal["tcp", "udp"] = "tcp"
    params: dict[Name, ToolParam] = Field(default_factory=dict)
    # Tools run at the same time as this one, each in its own role (the test's own tool
    # is the load); empty for a test of one tool.
    beside: list[BesideSpec] = Field(default_factory=list)
    repetitions: Repetitions | None = None
    select: Select | None = None
    timeout_s: Float | None = Field(None, ge=1, le=86_400)
    give_up_after: Int | None = Field(None, ge=0, le=1000)
    udp_search: UdpSearch | None = None
    frame_search: FrameSearch | None = None
    description: str | None = None
    # "sweep: {streams: [1, 2, 4, 8]}": the test once per value (Profile expands it, so a
    # sweep left here was not well formed); a test so made says where from in swept:.
    sweep: Any = None
    swept: Swept | None = None
    # The profile's points (by name) this test runs at; unset: every point. A test not
    # run at a point by design is no configuration there (not missing, not failed).
    points: list[Label] | None = Field(None, min_length=1)

    def runs_at(self, point: Point) -> bool:
        """Is this test one of ``point``'s (``points:`` unset: every point's)?"""
        return self.points is None or point.name in self.points

    @field_validator("sweep")
    @classmethod
    def _sweep_expanded(cls, value: Any, info: ValidationInfo) -> Any:
        if value is not None:
            raise ValueError(sweep_problem({**info.data, "sweep": value})
                             or "fix the test's other keys first")
        return value

    @model_serializer(mode="wrap")
    def _without_empty_beside(self, handler: SerializerFunctionWrapHandler) -> Any:
        # A manifest of a one-tool test stays as it was before beside: existed, and one of
        # a test not swept as before sweep: existed.
        data = handler(self)
        if isinstance(data, dict):
            if not self.beside:
                data.pop("beside", None)
            data.pop("sweep", None)
            if self.swept is None:
                data.pop("swept", None)
            if self.points is None:
                data.pop("points", None)
        return data

class Point(Strict):
    """One tuning point: a Linux MTU, or a Windows frame size with its registry values."""

    mtu: Int | None = Field(None, ge=68, le=65535)
    frame_size: Int | None = Field(None, ge=82, le=65549)
    # REG_DWORD values: 0 to 0xffffffff
    registry: dict[RegistryName, Annotated[Int, Field(ge=0, le=0xFFFFFFFF)]] = Field(
        default_factory=dict)
    sysctl: dict[SysctlName, SysctlValue] = Field(default_factory=dict)
    # "$name" in a test's params takes this point's value; null leaves the parameter
    # out at this point (NTttcp's -rb, given at jumbo frames only in the Jan 2003 review)
    vars: dict[Name, ToolArg | None] = Field(default_factory=dict)
    # The point's name in results, file names and reports: a name like any other.
    label: Label | None = None

    @model_validator(mode="after")
    def _one_size(self):
        if self.mtu is None and self.frame_size is None:
            raise ValueError("a point needs mtu or frame_size")
        if self.mtu is not None and self.frame_size is not None \
                and self.frame_size != self.mtu + 14:
            raise ValueError(f"frame_size {self.frame_size} is not mtu {self.mtu} + 14")
        return self

    @property
    def ip_mtu(self) -> int:
        """The IP MTU (a Windows 'Jumbo Frame' size counts the 14-byte Ethernet header)."""
        if self.mtu is not None:
            return self.mtu
        assert self.frame_size is not None    # _one_size makes sure one is set
        return self.frame_size - 14

    @property
    def name(self) -> str:
        if self.label:
            return self.label
        return f"mtu{self.mtu}" if self.mtu is not None else f"frame{self.frame_size}"


class Profile(Strict):
    format_version: Literal[1] = 1
    name: Name
    description: str = ""
    source: str = Field(..., min_length=1,
                        description="which review and section this profile follows")
    platform: Literal["linux", "windows", "any"] = "linux"
    repetitions: Repetitions = 15
    select: Select = "best"
    timeout_s: Float = Field(120.0, ge=1, le=86_400)
    # A driver that hangs on jumbo frames fails every repetition the same way: after this
    # many consecutive failures the rest are recorded as not run (0 = never give up).
    give_up_after: Int = Field(3, ge=0, le=1000)
    mtu: list[Int] | None = None
    points: list[Point] = Field(default_factory=list)
    sysctl: dict[SysctlName, SysctlValue] = Field(default_factory=dict)
    tests: list[TestSpec] = Field(min_length=1)
    # Windows: what to do with points[].registry values this Windows ignores (since
    # Vista: TcpWindowSize, GlobalMaxTcpWindowSize): write them anyway, or leave them
    # out. Either way the run says so.
    registry_policy: RegistryPolicy = "apply"
    # Windows: how long a host may take to come back after a registry reboot.
    reboot_timeout_s: Float = Field(1800.0, gt=0, le=86_400)

    file: str = Field("", exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _expand_mtu(cls, data: Any) -> Any:
        # "mtu: [1500, 9000]" is shorthand for one point per MTU.
        # Once expanded, mtu is left unset, so a profile saved in a manifest and validated
        # again does not carry its points twice.
        if isinstance(data, dict) and isinstance(data.get("mtu"), list) and not data.get("points"):
            data = dict(data)
            data["points"] = [{"mtu": m} for m in data["mtu"]]
            data["mtu"] = None
        return data

    @model_validator(mode="before")
    @classmethod
    def _expand_sweeps(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("tests"), list):
            data = {**data, "tests": expand_sweeps(data["tests"])}
        return data

    @field_validator("points")
    @classmethod
    def _not_both(cls, points: list[Point], info: ValidationInfo) -> list[Point]:
        # With both, one of them would be ignored without a word.
        if points and info.data.get("mtu") is not None:
            raise ValueError("mtu: and points: are both given; mtu: [..] is shorthand for "
                             "points: [{mtu: ..}, ..]: keep one of them")
        return points

    @model_validator(mode="after")
    def _has_points(self):
        if not self.points:
            raise ValueError("no tuning points: give mtu: [..] or points: [..]")
        return self

    def repetition_policy(self, test: TestSpec) -> int | UntilStable:
        """The test's repetitions: a fixed count, or until the figure is stable."""
        return test.repetitions or self.repetitions

    def repetitions_for(self, test: TestSpec) -> int:
        """The most repetitions the test may run (an until-stable policy's max)."""
        policy = self.repetition_policy(test)
        return policy.max if isinstance(policy, UntilStable) else policy

    def tools(self) -> tuple[str, ...]:
        """The tools the tests run (their own and those beside them), in test order, each
        once."""
        return tuple(dict.fromkeys(tool for t in self.tests
                                   for tool in (t.tool, *(b.tool for b in t.beside))))

    def planned_trials(self, test: TestSpec) -> int:
        """The trials ``test`` is planned as at one point of one pair: its repetitions, or
        its UDP search's planned trials. What progress, ETAs, ``--plan`` and ``status``
        count."""
        if test.frame_search:
            return test.frame_search.planned_trials
        return test.udp_search.planned_trials if test.udp_search else self.repetitions_for(test)

    def tests_at(self, point: Point) -> list[TestSpec]:
        """The tests run at ``point`` (a test's ``points:`` may leave it out), in order."""
        return [t for t in self.tests if t.runs_at(point)]

    def trials_at(self, point: Point) -> int:
        """The trials of the tests at ``point`` of one pair."""
        return sum(self.planned_trials(t) for t in self.tests_at(point))

    @property
    def trials_per_pair(self) -> int:
        """The trials of one pair: every point's tests."""
        return sum(self.trials_at(p) for p in self.points)

    @property
    def configurations_per_pair(self) -> int:
        """The (point, test) configurations of one pair."""
        return sum(len(self.tests_at(p)) for p in self.points)

    def select_for(self, test: TestSpec) -> str:
        return test.select or self.select

    def timeout_for(self, test: TestSpec) -> float:
        return test.timeout_s or self.timeout_s

    def give_up_after_for(self, test: TestSpec) -> int:
        return self.give_up_after if test.give_up_after is None else test.give_up_after

    def test(self, name: str) -> TestSpec | None:
        return next((t for t in self.tests if t.name == name), None)

    def point(self, name: str) -> Point | None:
        return next((p for p in self.points if p.name == name), None)


def check_platforms(profile: Profile, inventory: Inventory, pairs: list[Pair]) -> None:
    """A profile of one OS's method runs only on pairs of that OS: refused before any
    host is contacted."""
    if profile.platform == "any":
        return
    for pair in pairs:
        for side in (pair.a, pair.b):
            host = inventory.host(side.host)
            if host.os != profile.platform:
                raise UsageError(
                    f"profile {profile.name} is the {profile.platform} method "
                    f"({profile.source.split(';')[0]}) but pair {pair.name} host {host.name} "
                    f"runs {host.os}: choose a {host.os} profile or a {profile.platform} pair")


def cross_check(profile: Profile, where: Where,
                validate_params: Callable[[TestSpec, Profile], Iterable[tuple[tuple, str]]]
                | None = None) -> list[ConfigError]:
    errors: list[ConfigError] = []
    names: dict[str, int] = {}
    for i, test in enumerate(profile.tests):
        if test.name in names:
            errors.append(where.error(("tests", i, "name"),
                                      f"duplicate test name '{test.name}' (also tests[{names[test.name]}])"))
        names.setdefault(test.name, i)
        if test.udp_search and test.protocol != "udp":
            errors.append(where.error(("tests", i, "udp_search"),
                                      "udp_search needs protocol: udp"))
        errors += _frame_search_errors(where, i, test, profile)
        errors += _undefined_vars(profile, where, ("tests", i), test.params)
        errors += _beside_errors(profile, where, i, test)
        if validate_params is not None:
            for subpath, message in validate_params(test, profile):
                errors.append(where.error(("tests", i, *tuple(subpath)), message))
    errors += _test_points_errors(profile, where)
    # Results, resumes and reports know a point by its name: two points of one name would
    # leave the second never measured (its trials look done).
    points: dict[str, int] = {}
    for j, point in enumerate(profile.points):
        if point.name in points:
            key = "label" if point.label else "mtu" if point.mtu is not None else "frame_size"
            errors.append(where.error(("points", j, key),
                                      f"duplicate point name '{point.name}' (also points"
                                      f"[{points[point.name]}]): give each point its own "
                                      "label:"))
        points.setdefault(point.name, j)
    if profile.platform == "linux":
        for j, point in enumerate(profile.points):
            if point.registry:
                errors.append(where.error(("points", j, "registry"),
                                          "registry values are Windows settings; this profile "
                                          "is platform: linux"))
    return errors


def _test_points_errors(profile: Profile, where: Where) -> list[ConfigError]:
    """A test's ``points:`` names points of the profile (a sweep's tests share the list:
    said once)."""
    errors, said = [], set()
    names = [p.name for p in profile.points]
    for i, test in enumerate(profile.tests):
        for k, name in enumerate(test.points or ()):
            key = (test.swept.of if test.swept else test.name, k)
            if name in names or key in said:
                continue
            said.add(key)
            errors.append(where.error(("tests", i, "points", k),
                                      f"no point named '{name}' in this profile (its points: "
                                      f"{', '.join(names)})"))
    return errors


def _frame_search_errors(where: Where, i: int, test: TestSpec,
                         profile: Profile) -> list[ConfigError]:
    """A small-packet search sends UDP of its own payload sizes, alone; each frame size
    one of the test's points carries (RFC 2544's frames stop at the MTU + 18: the
    Ethernet header and FCS)."""
    if test.frame_search is None:
        return []
    at = ("tests", i, "frame_search")
    errors = []
    points = [p for p in profile.points if not test.points or p.name in test.points]
    if points:
        mtu = max(p.ip_mtu for p in points)
        for k, frame in enumerate(test.frame_search.frames):
            # RFC 2544's jumbo frame (9018) is searched only where a point carries it,
            # left out elsewhere (the plan says so); a frame beyond it and beyond every
            # point's MTU + 18 is never sent: a typo or a unit error
            if frame > max(mtu + FRAME_OVERHEAD, JUMBO_FRAME):
                errors.append(where.error((*at, "frames", k), (
                    f"frame {frame} bytes is larger than any point of this test carries "
                    f"(its largest MTU is {mtu}: frames up to {mtu + FRAME_OVERHEAD} "
                    f"bytes, MTU + {FRAME_OVERHEAD}): drop it, or add a point of MTU "
                    f"{frame - FRAME_OVERHEAD}")))
    if test.protocol != "udp":
        errors.append(where.error(at, "frame_search needs protocol: udp"))
    if test.udp_search is not None:
        errors.append(where.error(at, "frame_search and udp_search are two searches: "
                                  "keep one per test"))
    if test.beside:
        errors.append(where.error(("tests", i, "beside"), "a small-packet search runs its "
                                  "tool alone: drop beside: or frame_search:"))
    if "length" in test.params:
        errors.append(where.error(("tests", i, "params", "length"), "frame_search sets "
                                  "the UDP payload from each frame size: drop length"))
    short = test.params.get("duration_s")
    if isinstance(short, (int, float)) and short > test.frame_search.confirm_s:
        errors.append(where.error((*at, "confirm_s"), f"confirm_s {test.frame_search.confirm_s:g}"
                                  f" is shorter than the search's trials (duration_s {short:g}):"
                                  " the confirmation is the full-length trial; give at least "
                                  "the trials' duration"))
    return errors


def _undefined_vars(profile: Profile, where: Where, at: tuple[Any, ...],
                    params: dict[str, Any]) -> list[ConfigError]:
    """"$window" in params refers to a per-point variable: every point must define it."""
    errors = []
    for key, value in params.items():
        if isinstance(value, str) and value.startswith("$"):
            var = value[1:]
            for j, point in enumerate(profile.points):
                if var not in point.vars:
                    errors.append(where.error(
                        (*at, "params", key),
                        f"uses ${var} but points[{j}] ({point.name}) has no vars.{var}"))
    return errors


def _beside_errors(profile: Profile, where: Where, i: int, test: TestSpec) -> list[ConfigError]:
    """A test's beside roles: each role once, never the load (the test's own tool is),
    and not in a UDP search (its trials are single offered rates, judged by their loss).
    Their params and ports are the tools' to check (``validate_params``)."""
    errors = []
    seen: dict[Role, int] = {}
    for j, spec in enumerate(test.beside):
        at = ("tests", i, "beside", j)
        if spec.role is Role.LOAD:
            errors.append(where.error((*at, "role"), "the test's own tool (tool:) is its "
                                      "load: a tool beside it takes another role (probe)"))
        elif spec.role in seen:
            errors.append(where.error((*at, "role"), f"duplicate role '{spec.role}' (also "
                                      f"beside[{seen[spec.role]}]): one tool per role"))
        seen.setdefault(spec.role, j)
        errors += _undefined_vars(profile, where, at, spec.params)
    if test.beside and test.udp_search:
        errors.append(where.error(("tests", i, "beside"),
                                  "a UDP search runs its tool alone: drop beside: or "
                                  "udp_search:"))
    return errors
