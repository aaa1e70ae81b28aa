"""The tools nicbench drives, by name: every other table of tools derives from ``TOOLS``.

Adding a tool is one module (its parameters, parser, driver and ``TOOL``) and one line
here, plus its tests.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from collections.abc import Iterator

from pydantic import ValidationError

from nicbench.config.loader import ToolCatalog
from nicbench.errors import NicbenchError
from nicbench.tools import iperf2, iperf3, netio, netpipe, ntttcp, sockperf
from nicbench.tools.driver import Endpoints, Need, Tool
from nicbench.tools.params import resolve

TOOLS: dict[str, Tool] = {t.name: t for t in (
    iperf2.TOOL, iperf3.TOOL, netpipe.TOOL, ntttcp.TOOL, netio.TOOL, sockperf.TOOL)}

# ``nicbench parse auto``: the formats easiest to tell apart are tried first.
DETECT_ORDER: tuple[str, ...] = tuple(sorted(TOOLS, key=lambda n: TOOLS[n].detect_priority))


def tool(name: str) -> Tool:
    return TOOLS[name]


@contextmanager
def registered(new: Tool) -> Iterator[Tool]:
    """``new`` among the tools while the block runs (a test's made-up tool); removed after."""
    if new.name in TOOLS:
        raise ValueError(f"a tool named {new.name!r} is registered already")
    TOOLS[new.name] = new
    try:
        yield new
    finally:
        del TOOLS[new.name]


def display_name(name: str) -> str:
    """How charts name a tool; a tool nicbench does not know keeps its own name."""
    return TOOLS[name].display if name in TOOLS else name


def validate_params(test: Any, profile: Any) -> Iterator[tuple[tuple, str]]:
    """Check a test's params against its tool's schema at every point of the profile, and
    those of the tools beside it (``tests[].beside``), whose ports must differ from the
    test's own.

    Yields (sub key path, message) for the profile loader to place on a line."""
    problems = list(_check_params(test, profile))
    problems += list(_frame_search_tool(test))
    for j, spec in enumerate(test.beside):
        problems += [(("beside", j, *path), msg) for path, msg in _check_params(spec, profile)]
    yield from problems
    if not problems and test.beside:
        yield from _port_clashes(test, profile)


def tool_ports(tool: str, params: dict[str, Any], protocol: str) -> tuple[int, ...]:
    """Every port a tool's server listens on with these (valid, resolved) params."""
    plan = TOOLS[tool].driver.plan(tool, tool, params,
                                   Endpoints("198.18.0.1", "198.18.0.2", protocol), "check")
    return plan.ports or (plan.port,)


def _port_clashes(test: Any, profile: Any) -> Iterator[tuple[tuple, str]]:
    """Tools of one trial listen on the same receiver at once: no two on one port."""
    for point in profile.points:
        try:
            taken = dict.fromkeys(tool_ports(test.tool, resolve(test.params, point.vars),
                                             test.protocol), test.tool)
            ports_of = [tool_ports(spec.tool, resolve(spec.params, point.vars), spec.protocol)
                        for spec in test.beside]
        except (KeyError, ValueError, NicbenchError):
            return   # an undefined $var, or params a driver refuses: reported elsewhere
        for j, (spec, ports) in enumerate(zip(test.beside, ports_of, strict=True)):
            clash = sorted(set(ports) & set(taken))
            if clash:
                yield (("beside", j, "params"),
                       f"{spec.tool} listens on port {clash[0]} as {taken[clash[0]]} does in "
                       "the same trial: give it another port (params: {port: ...})")
                return
            taken.update(dict.fromkeys(ports, spec.tool))


@dataclass(frozen=True)
class VersionNeed:
    """A test whose params use an option its tool has only since some version."""

    test: str
    tool: str
    need: Need


def version_needs(profile: Any) -> tuple[VersionNeed, ...]:
    """Every option a profile's tests (and the tools beside them) use that older versions
    of their tools lack, once per test and option: what a pair's hosts are checked
    against before a run (``check.check_pair``)."""
    out: dict[tuple[str, str, str], VersionNeed] = {}
    for test in profile.tests:
        for spec in (test, *test.beside):
            driver = TOOLS[spec.tool].driver
            for point in profile.points:
                try:
                    needs = driver.needs(driver.parse_params(resolve(spec.params, point.vars)))
                except (KeyError, ValueError):
                    continue      # reported by the profile's own checks
                for need in needs:
                    out.setdefault((test.name, spec.tool, need.option),
                                   VersionNeed(test.name, spec.tool, need))
    return tuple(out.values())


def takes(tool: str, *params: str) -> bool:
    """Does ``tool`` (a known one) take every one of ``params`` (``length``: the message
    length, iperf's -l; ``rate``: the offered rate)?"""
    return tool in TOOLS and all(p in TOOLS[tool].params.model_fields for p in params)


def _frame_search_tool(test: Any) -> Iterator[tuple[tuple, str]]:
    """A small-packet search sets the UDP payload (``length``) and the rate of each probe:
    its tool must take both."""
    if getattr(test, "frame_search", None) is None:
        return
    if not takes(test.tool, "length", "rate"):
        takes_both = [n for n in TOOLS if takes(n, "length", "rate")]
        yield (("tool",), f"frame_search sends UDP of each frame's payload: {test.tool} "
                          f"cannot set one; use {' or '.join(takes_both)}")


def _check_params(test: Any, profile: Any) -> Iterator[tuple[tuple, str]]:
    model = TOOLS[test.tool].params
    for point in profile.points:
        try:
            params = resolve(test.params, point.vars)
            valid = model.model_validate(params)
            refused = TOOLS[test.tool].driver.protocol_error(params, test.protocol)
            if refused:
                yield ("protocol",), refused
                return
            for param, why in TOOLS[test.tool].driver.refuses(
                    valid, test.protocol, getattr(test, "udp_search", None) is not None):
                yield ("params", param), why
                return
        except KeyError:
            return  # undefined $var: reported by the profile's own check
        except ValidationError as exc:
            seen = set()
            for err in exc.errors():
                key = err["loc"][0] if err["loc"] else None
                if key in seen:
                    continue  # a union (Size | VarRef) fails once per member: keep the first
                seen.add(key)
                path = ("params", key) if key is not None else ("params",)
                if err["type"] == "extra_forbidden":
                    msg = (f"{test.tool} has no parameter '{key}' "
                           f"(parameters: {', '.join(model.model_fields)})")
                else:
                    msg = err["msg"].removeprefix("Value error, ")
                    msg = f"{msg} at {point.name}" if len(profile.points) > 1 else msg
                yield path, msg
            return


# What the config loader checks a file's tools against (config/ does not import the tools).
CATALOG = ToolCatalog(names=tuple(TOOLS), check_params=validate_params)
