"""One driver per tool: the command lines for both ends, and how to read the result.

A driver knows its tool's options (from the typed params in ``params.py``), which end
listens, whether the server exits by itself after one client, how long a run should take,
and which output holds the figures. Parsing itself is done by the pure parser modules
(``iperf2.py`` ...); a driver only chooses which end's output to trust. ``DRIVERS`` is the
registry.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from nicbench.errors import ParseError, UsageError
from nicbench.tools import iperf2, iperf3, netio, netpipe, ntttcp
from nicbench.tools.base import ParsedRun
from nicbench.tools.params import PARAMS, NtttcpParams


@dataclass(frozen=True)
class Endpoints:
    receiver_addr: str
    sender_addr: str
    protocol: str                 # tcp | udp
    offered_bps: int | None = None  # UDP: the rate the sender offers this trial


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


# A row covering a whole run (it starts at 0.0 s), as iperf 2.1 ("[  1] 0.0000-2.0043 sec
# 225 MBytes  941 Mbits/sec") and 2.0 ("[  3]  0.0- 1.0 sec ...") print it, for grep -E.
# The server runs without -i, so no interval row (0.0-1.0 of a longer run) can match.
IPERF2_WHOLE_RUN_ROW = r"^\[ *([0-9]+|SUM[-0-9]*)\] +0\.0+ *- *[0-9.]+ sec .*/sec"


def _size(v: Any) -> str:
    return str(int(v))


class Driver:
    name = "?"

    def params(self, raw: dict[str, Any]):
        return PARAMS[self.name].model_validate(raw)

    def plan(self, exe_server: str, exe_client: str, raw_params: dict[str, Any],
             ends: Endpoints, tag: str) -> Plan:
        raise NotImplementedError

    def interpret(self, client_text: str, server_text: str, outfile_text: str | None,
                  protocol: str) -> ParsedRun:
        raise NotImplementedError


class Iperf2Driver(Driver):
    name = "iperf2"

    def plan(self, exe_server, exe_client, raw_params, ends, tag):
        p = self.params(raw_params)
        common: list[str] = ["-p", str(p.port)]
        if p.window is not None:
            common += ["-w", _size(p.window)]
        if p.length is not None:
            common += ["-l", _size(p.length)]
        if p.mss is not None:
            common += ["-M", str(int(p.mss))]
        if ends.protocol == "udp":
            common += ["-u"]
        if p.enhanced:
            common += ["-e"]
        server = [exe_server, "-s", "-B", ends.receiver_addr, *common]
        if p.print_mss:
            server.append("-m")
        client = [exe_client, "-c", ends.receiver_addr, "-B", ends.sender_addr, *common,
                  "-t", f"{p.duration_s:g}"]
        if p.streams > 1:
            client += ["-P", str(p.streams)]
        rate = ends.offered_bps or p.rate
        if ends.protocol == "udp" and rate:
            client += ["-b", str(int(rate))]
        # iperf 2 servers never exit by themselves and take 1-2 s to honour TERM; they
        # flush each report as they print it, so once the whole-run rows are there KILL
        # loses nothing: one row per stream, and the [SUM] row when there are several.
        return Plan(server=server, client=client, port=p.port, listen_protocol=ends.protocol,
                    server_exits=False, expected_s=float(p.duration_s),
                    report_re=IPERF2_WHOLE_RUN_ROW,
                    report_count=p.streams + (1 if p.streams > 1 else 0),
                    report_wait_s=2.0, stop_signal="KILL")

    def interpret(self, client_text, server_text, outfile_text, protocol):
        client = iperf2.parse(client_text)
        if client.error or protocol == "udp" and client.udp:
            return client
        # TCP: the server saw what arrived; the client only what it wrote into its socket
        # buffer. A receiver that printed no report never saw the transfer end (a stalled
        # link): that is a failure, not a reason to trust the sender's figure.
        try:
            server = iperf2.parse(server_text)
        except ParseError:
            server = None
        if server is None or server.throughput_bps is None:
            return replace(client, error=client.error or
                           "the receiver printed no report: the transfer did not complete")
        return replace(client, throughput_bps=server.throughput_bps,
                       sent_bps=client.sent_bps or client.throughput_bps,
                       udp=server.udp or client.udp,
                       extra={**client.extra, "rate_from": "server"})


class Iperf3Driver(Driver):
    name = "iperf3"

    def plan(self, exe_server, exe_client, raw_params, ends, tag):
        p = self.params(raw_params)
        server = [exe_server, "-s", "-1", "-J", "-B", ends.receiver_addr, "-p", str(p.port)]
        client = [exe_client, "-c", ends.receiver_addr, "-B", ends.sender_addr,
                  "-p", str(p.port), "-J", "-t", f"{p.duration_s:g}"]
        if p.omit_s:
            client += ["-O", f"{p.omit_s:g}"]
        if p.window is not None:
            client += ["-w", _size(p.window)]
        if p.length is not None:
            client += ["-l", _size(p.length)]
        if p.streams > 1:
            client += ["-P", str(p.streams)]
        if ends.protocol == "udp":
            client += ["-u", "-b", str(int(ends.offered_bps or p.rate or 1_000_000))]
        return Plan(server=server, client=client, port=p.port, listen_protocol="tcp",
                    server_exits=True, expected_s=float(p.duration_s + p.omit_s))

    def interpret(self, client_text, server_text, outfile_text, protocol):
        return iperf3.parse(client_text)


class NetpipeDriver(Driver):
    """NPtcp 3.x: the receiver has no -h; the transmitter writes the curve to -o."""

    name = "netpipe"

    def plan(self, exe_server, exe_client, raw_params, ends, tag):
        p = self.params(raw_params)
        opts = ["-P", str(p.port)]
        if p.buffer is not None:
            opts += ["-b", _size(p.buffer)]
        if p.upper is not None:
            opts += ["-u", _size(p.upper)]
        if p.lower is not None:
            opts += ["-l", _size(p.lower)]
        if p.perturbation is not None:
            opts += ["-p", str(p.perturbation)]
        if p.repeats is not None:
            opts += ["-n", str(p.repeats)]
        outfile = f"/tmp/nicbench-netpipe-{tag}.out"
        return Plan(server=[exe_server, *opts],
                    client=[exe_client, "-h", ends.receiver_addr, *opts, "-o", outfile],
                    port=p.port, listen_protocol="tcp", server_exits=True, expected_s=None,
                    client_outfile=outfile)

    def interpret(self, client_text, server_text, outfile_text, protocol):
        for text in (client_text, server_text):
            err = netpipe.error_text(text)
            if err:
                return ParsedRun(tool="netpipe", protocol="tcp", throughput_bps=None, error=err)
        return netpipe.parse(outfile_text or client_text)


class NtttcpDriver(Driver):
    """ntttcp-for-linux between Linux hosts (Windows hosts use NTttcp.exe, later)."""

    name = "ntttcp"

    def plan(self, exe_server, exe_client, raw_params, ends, tag):
        p = self.params(raw_params)
        # -n (a buffer count) and -a are the Windows tools' (DDK ntttcps/ntttcpr, NTttcp.exe);
        # ntttcp-for-linux runs for a time and has neither: refuse rather than drop them.
        if p.count is not None or p.async_count != NtttcpParams.model_fields["async_count"].default:
            raise UsageError("ntttcp-for-linux has no -n (count) or -a (async_count): those "
                             "are for Windows NTttcp; use duration_s on Linux hosts")
        duration = p.duration_s or 10
        kw = dict(threads=p.threads, proc=p.cpu, duration_s=int(duration),
                  udp=ends.protocol == "udp", port=p.port, length=int(p.length),
                  buffer=None if p.receive_buffer is None else int(p.receive_buffer))
        server = ntttcp.linux_receiver_argv(ends.receiver_addr, exe=exe_server, **kw)
        client = ntttcp.linux_sender_argv(ends.receiver_addr, exe=exe_client, **kw)
        return Plan(server=server, client=client, port=p.port, listen_protocol=ends.protocol,
                    server_exits=True, expected_s=float(duration))

    def interpret(self, client_text, server_text, outfile_text, protocol):
        try:
            received = ntttcp.parse(server_text)
        except ParseError:
            return ntttcp.parse(client_text)
        sent = ntttcp.parse(client_text)
        return replace(received, sent_bps=sent.throughput_bps, cpu_pct=sent.cpu_pct,
                       extra={**received.extra, "receiver_cpu_pct": received.cpu_pct})


class NetioDriver(Driver):
    name = "netio"

    def plan(self, exe_server, exe_client, raw_params, ends, tag):
        p = self.params(raw_params)
        flag = "-u" if ends.protocol == "udp" else "-t"
        return Plan(server=[exe_server, "-s", flag, "-p", str(p.port)],
                    client=[exe_client, flag, "-p", str(p.port),
                            *(["-b", f"{p.block // 1024}k"] if p.block else []),
                            ends.receiver_addr],
                    port=p.port, listen_protocol=ends.protocol, server_exits=False,
                    expected_s=None)

    def interpret(self, client_text, server_text, outfile_text, protocol):
        return netio.parse(client_text)


DRIVERS: dict[str, Driver] = {d.name: d for d in (
    Iperf2Driver(), Iperf3Driver(), NetpipeDriver(), NtttcpDriver(), NetioDriver())}
