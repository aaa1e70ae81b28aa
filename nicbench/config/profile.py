"""Profiles: what to measure and how (tuning points, tests, repetitions, selection).

A profile says which review and section it follows (``source``), which OS method it is
(``platform``), the tuning points (MTUs on Linux; frame sizes with registry values on
Windows), and the tests to run at each point. ``extends:`` names a parent profile whose
keys this one overrides, so a review's variants stay short.
"""

from __future__ import annotations

from typing import Any, Literal
from collections.abc import Callable, Iterable

from pydantic import Field, ValidationInfo, field_validator, model_validator

from nicbench.config.fields import (Float, Int, Label, Name, Rate, RegistryName, Strict,
                                    SysctlName, SysctlValue, ToolArg, ToolName, ToolParam)
from nicbench.config.inventory import Inventory, Pair
from nicbench.config.source import Where
from nicbench.errors import ConfigError, UsageError

Select = Literal["best", "mean", "median"]
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


class TestSpec(Strict):
    name: Name
    tool: ToolName
    protocol: Literal["tcp", "udp"] = "tcp"
    params: dict[Name, ToolParam] = Field(default_factory=dict)
    repetitions: Int | None = Field(None, ge=1, le=1000)
    select: Select | None = None
    timeout_s: Float | None = Field(None, ge=1, le=86_400)
    give_up_after: Int | None = Field(None, ge=0, le=1000)
    udp_search: UdpSearch | None = None
    description: str | None = None


class Point(Strict):
    """One tuning point: a Linux MTU, or a Windows frame size with its registry values."""

    mtu: Int | None = Field(None, ge=68, le=65535)
    frame_size: Int | None = Field(None, ge=82, le=65549)
    registry: dict[RegistryName, Int] = Field(default_factory=dict)
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
    repetitions: Int = Field(15, ge=1, le=1000)
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
    registry_policy: Literal["apply", "skip-if-ignored"] = "apply"
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

    def repetitions_for(self, test: TestSpec) -> int:
        return test.repetitions or self.repetitions

    def planned_trials(self, test: TestSpec) -> int:
        """The trials ``test`` is planned as at one point of one pair: its repetitions, or
        its UDP search's planned trials. What progress, ETAs, ``--plan`` and ``status``
        count."""
        return test.udp_search.planned_trials if test.udp_search else self.repetitions_for(test)

    @property
    def trials_per_point(self) -> int:
        """The trials of all the tests at one point of one pair."""
        return sum(self.planned_trials(t) for t in self.tests)

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
        # "$window" in params refers to a per-point variable: every point must define it.
        for key, value in test.params.items():
            if isinstance(value, str) and value.startswith("$"):
                var = value[1:]
                for j, point in enumerate(profile.points):
                    if var not in point.vars:
                        errors.append(where.error(
                            ("tests", i, "params", key),
                            f"uses ${var} but points[{j}] ({point.name}) has no vars.{var}"))
        if validate_params is not None:
            for subpath, message in validate_params(test, profile):
                errors.append(where.error(("tests", i, *tuple(subpath)), message))
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
