"""What a tool is to nicbench: a :class:`Tool` (name, parameters, driver, parser, display
name, units), and the :class:`Driver` that turns a test's parameters into the command
lines of both ends (:class:`Plan`) and chooses which end's output holds the result.

Each tool module (``iperf2.py`` ...) defines its parameters, its pure parser, its driver
and one ``TOOL``; ``registry.py`` lists them. Nothing here runs a command.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any
from collections.abc import Callable, Mapping

from pydantic import BaseModel

from nicbench.tools.base import ParsedRun


@dataclass(frozen=True)
class Endpoints:
    receiver_addr: str
    sender_addr: str
    protocol: str                 # tcp | udp
    offered_bps: int | None = None  # UDP: the rate the sender offers this trial
    receiver_os: str = "linux"
    sender_os: str = "linux"
    # A file on the sender the tool may write its figures to (fresh per trial, named by
    # the sender's platform); the trial reads it back and removes it.
    client_file: str | None = None


@dataclass(frozen=True)
class Plan:
    """What a trial runs: server on the receiver, client on the sender."""

    server: list[str]
    client: list[str]
    port: int
    listen_protocol: str          # what wait_listening looks for on the receiver
    server_exits: bool            # the server ends by itself after one client
    expected_s: float | None      # how long the client should take (None: unknown)
    client_outfile: str | None = None  # a file on the sender holding the figures
    # How to end a server that does not exit by itself: after the client is done, wait
    # until its output holds report_count lines matching report_re (a POSIX extended
    # regex), at most report_wait_s, then send stop_signal. Without report_re, a fixed
    # settle_s. Waiting for the report itself costs a few ms where a fixed pause cost
    # its whole length on every trial, and a slow report is still waited for.
    report_re: str | None = None
    report_count: int = 1
    report_wait_s: float = 2.0
    settle_s: float = 0.0
    stop_signal: str = "TERM"
    # The server's end (its exit, or its report) may be waited for while the client still
    # runs: once it has come, the server owes the client nothing. Not so for an iperf 2
    # UDP server, which sends its report back to the client after printing it.
    finish_overlaps: bool = True
    ports: tuple[int, ...] = ()   # every port the tool listens on (firewalls); () = (port,)


@dataclass(frozen=True)
class Need:
    """An option of a tool that only its newer versions have: ``option`` (as the tool's
    manual names it, asked for by the test's ``param``) needs ``since`` (a version as
    numbers, e.g. (3, 7)) or later."""

    option: str
    since: tuple[int, ...]
    param: str                 # the test's parameter that asks for it

    @property
    def since_text(self) -> str:
        return ".".join(str(n) for n in self.since)


def version_numbers(version: str | None) -> tuple[int, ...] | None:
    """``"3.12"`` -> (3, 12), ``"2.1.8"`` -> (2, 1, 8), ``"3.1.3-1"`` -> (3, 1, 3); None
    when the text does not begin with a version."""
    m = re.match(r"^\s*(\d+(?:\.\d+)*)", version or "")
    return tuple(int(n) for n in m.group(1).split(".")) if m else None


def per_stream_rate(total_bps: int, streams: int) -> int:
    """iperf3's and iperf 2's ``-b`` is per stream: ``-b 200M -P 4`` offers 800 Mbit/s
    (measured on the lab). A test's rate (and a UDP search's offered rate) is the total,
    so each of the streams is given its share, rounded up to a whole bit/s."""
    return -(-total_bps // streams)


def size_arg(v: Any) -> str:
    return str(int(v))


class Driver:
    """Command lines for one tool; subclasses set ``params`` and implement both methods."""

    params: type[BaseModel]

    def parse_params(self, raw: dict[str, Any]) -> Any:
        return self.params.model_validate(raw)

    def protocol_error(self, raw_params: dict[str, Any], protocol: str) -> str | None:
        """Why these (valid) params cannot run over ``protocol``, or None: checked when
        the profile is loaded."""
        return None

    def plan(self, exe_server: str, exe_client: str, raw_params: dict[str, Any],
             ends: Endpoints, tag: str) -> Plan:
        raise NotImplementedError

    def interpret(self, client_text: str, server_text: str, outfile_text: str | None,
                  protocol: str) -> ParsedRun:
        raise NotImplementedError

    def needs(self, params: Any) -> tuple[Need, ...]:
        """The options these (validated) params use that older versions lack: checked
        against each host's probed version before a run changes anything."""
        return ()

    def refuses(self, params: Any, protocol: str, searched: bool) -> list[tuple[str, str]]:
        """(param, why) for valid params this tool cannot measure with a test's protocol
        (``searched``: in a UDP rate search)."""
        return []


@dataclass(frozen=True)
class VersionProbe:
    """How to ask an installed tool its version: run it with ``args`` and search its
    output for ``regex`` (group 1), or, for tools that print none, ask the package
    manager for ``package``."""

    args: tuple[str, ...] = ()
    regex: str = ""
    package: str | None = None


class Shape(StrEnum):
    """What a tool's result is, and so how a report draws it: one rate a trial, a curve
    over message sizes (netPIPE's plateau is its figure), a table of rates by size
    (netio's series), or round trips."""

    RATE = "rate"
    CURVE = "curve"
    SIZES = "sizes"
    LATENCY = "latency"


@dataclass(frozen=True)
class Tool:
    name: str                        # the profile's tests[].tool
    display: str                     # how charts and tables name it
    params: type[BaseModel]          # tests[].params, validated strictly
    driver: Driver
    parse: Callable[[str], ParsedRun]
    looks_like: Callable[[str], bool]
    executables: Mapping[str, str]   # os -> default executable name
    version: VersionProbe
    result: Shape = Shape.RATE
    units: str = ""                  # the tool's own units, as a reader must know them
    detect_priority: int = 50        # ``parse auto`` asks the lowest first
    notes: tuple[str, ...] = field(default=())
    # How far the tool's own timing can be off, in seconds of the time its figure is over
    # (its module's TIMING_ERROR_S, why there): with its printed resolution, how far a
    # figure may read above a physical limit and still be the limit
    # (results.plausible.above_bound; a frame rate's line rate too,
    # results.framerate.error_pps). The one table of tools' timing.
    timing_error_s: float = 0.0
    # The resolution of the throughput it printed, bit/s, from the figure and its output's
    # format (the parser's ``extra["format"]``): no difference finer is a measurement.
    # Exact by default (a figure in full: JSON, CSV, a file of %lf).
    printed_resolution_bps: Callable[[float, str], float] = field(default=lambda v, fmt: 0.0)
    # The resolution of the round trips it prints, us (0: finer than any comparison cares);
    # a record's own ``histogram_bin_us`` comes first where it kept one.
    round_trip_resolution_us: float = 0.0
    # What the report says of where its own CPU figure comes from ("" : the side alone),
    # and how a latency run keeps every round trip when it kept only its percentiles.
    cpu_words: str = ""
    per_sample_hint: str = ""
