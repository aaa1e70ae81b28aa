"""PingPong, a made-up request/response tool: its parameters, its parser, its driver and
its ``TOOL``, as a tool module of ``nicbench/tools/`` has them.

Its output is one line per run::

    pingpong 1.0: 1000 exchanges, median round trip 52.125 us
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict

from nicbench.tools.base import Latency, ParsedRun
from nicbench.tools.driver import Driver, Endpoints, Plan, Tool, VersionProbe

NAME = "pingpong"
LINE = re.compile(r"^pingpong (?P<version>[\d.]+): (?P<n>\d+) exchanges, median round trip "
                  r"(?P<rtt>\d+(?:\.\d+)?) us$", re.MULTILINE)


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")
    port: int = 7100
    exchanges: int = 1000


def parse(text: str) -> ParsedRun:
    m = LINE.search(text)
    if m is None:
        return ParsedRun(tool=NAME, protocol="tcp", throughput_bps=None,
                         error="no pingpong summary line")
    rtt = float(m["rtt"])       # it prints the median alone
    return ParsedRun(tool=NAME, protocol="tcp", throughput_bps=None, version=m["version"],
                     latency=Latency(samples=int(m["n"]), message_bytes=1, p50_us=rtt,
                                     p90_us=rtt, p99_us=rtt, p999_us=rtt, max_us=rtt))


class PingPongDriver(Driver):
    params = Params

    def plan(self, exe_server: str, exe_client: str, raw_params: dict[str, Any],
             ends: Endpoints, tag: str) -> Plan:
        p = Params.model_validate(raw_params)
        return Plan(server=[exe_server, "-s", "-p", str(p.port)],
                    client=[exe_client, "-c", ends.receiver_addr, "-p", str(p.port),
                            "-n", str(p.exchanges)],
                    port=p.port, listen_protocol="tcp", server_exits=True, expected_s=None)

    def interpret(self, client_text: str, server_text: str, outfile_text: str | None,
                  protocol: str) -> ParsedRun:
        return parse(client_text)


TOOL = Tool(name=NAME, display="PingPong", params=Params, driver=PingPongDriver(),
            parse=parse, looks_like=lambda text: LINE.search(text) is not None,
            executables={"linux": "pingpong"},
            version=VersionProbe(args=("-v",), regex=r"pingpong ([\d.]+)"),
            result="latency", units="us (round trip)")
