"""``nicbench windows capture``: every read-only command the Windows platform uses, run
once on a real Windows host, its answer saved as it came, so the first person with a
Windows host hands back fixtures for every reader in one step.

Nothing here changes the host: the list holds only commands that read (facts, adapters,
registry values, firewall rules, counters, listening ports, pings, tool versions) and
the shell's own scripts aimed at paths that cannot exist (a fresh random name), where
they only report that nothing is there. What a run would change (jumbo size, registry
values, firewall rules, reboots, a tool's traffic) is left out on purpose.

A capture directory holds, per command ``NN-name``:

``NN-name.ps1``     the decoded script as it was sent (what its base64 decodes to)
``NN-name.stdout``  the bytes the SSH channel delivered on stdout (the pid line every
                    command prints first removed, nothing else touched)
``NN-name.stderr``  the bytes on stderr (CLIXML left as it came)

and ``manifest.json``: the host, when, nicbench's version, the Windows facts, and per
command what it is for, the command as displayed, its exit status, duration, whether it
timed out, the reader that reads it and whether that reader understood the answer.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Callable

from nicbench import __version__
from nicbench.errors import CommandTimeout, ConnectError, NicbenchError, UsageError
from nicbench.platforms import windows_commands as wc
from nicbench.platforms.windows import WindowsPlatform
from nicbench.remote.command import display
from nicbench.remote.powershell import WindowsShell
from nicbench.remote.result import Result
from nicbench.tools import typeperf
from nicbench.tools.registry import TOOLS

FORMAT_VERSION = 1
# Values the registry setting reads: absent on a modern Windows (reg.exe's error text),
# and one every Windows has (the value-line layout).
REGISTRY_VALUES = ("TcpWindowSize", "Tcp1323Opts", "Hostname")
# Tools whose version option only prints a banner; NTttcp.exe has none (its version is
# the first line of a run, which a capture does not make).
BANNER_TOOLS = ("iperf2", "iperf3")

Reader = Callable[[str], Any]


@dataclass(frozen=True)
class Probe:
    """One read-only command: its name in the capture, argv, what the platform uses it
    for, and the pure reader of its (tidied) stdout with that reader's name."""

    name: str
    argv: list[str]
    why: str
    reads: str | None = None
    reader: Reader | None = None
    timeout_s: float = 30.0
    # Read the answer whatever the exit status (ping.exe's is not to be trusted); other
    # readers read only what a command that succeeded printed, as the platform does.
    any_status: bool = False


@dataclass
class Captured:
    name: str
    why: str
    command: str
    exit_status: int | None = None
    timed_out: bool = False
    duration_s: float = 0.0
    raw: bool = False           # the bytes as the host sent them (False: text re-encoded)
    reads: str | None = None
    read: str | None = None     # "ok", or what the reader said; None: not read
    error: str | None = None    # the command could not be run at all
    stdout: bytes = field(default=b"", repr=False)
    stderr: bytes = field(default=b"", repr=False)


def probes(platform: WindowsPlatform, interfaces: list[str], peers: list[str]) -> list[Probe]:
    """The commands of a capture, in order. ``interfaces``: the host's test adapters;
    ``peers``: the addresses it pings in a run."""
    shell = platform.conn.shell
    assert isinstance(shell, WindowsShell)
    # A name nothing can have; relative (the session's directory), so the capture does not
    # depend on reading the host facts right.
    nowhere = f"nicbench-capture-{uuid.uuid4().hex}"
    out = [
        Probe("host-facts", wc.host_facts_argv(), "host facts and TEMP (manifest, scratch "
              "paths)", "read_host_facts", wc.read_host_facts),
        Probe("last-boot", wc.last_boot_argv(), "boot time before and after a reboot",
              "read_last_boot", wc.read_last_boot),
        Probe("cpu-raw-1", wc.cpu_raw_argv(), "CPU load: raw per-processor counters",
              "read_cpu_raw", wc.read_cpu_raw),
        Probe("cpu-raw-2", wc.cpu_raw_argv(), "CPU load: the second snapshot",
              "read_cpu_raw", wc.read_cpu_raw),
        Probe("typeperf", typeperf.typeperf_argv(samples=3), "the reviews' system-monitor "
              "CPU counter (optional mode), 3 samples", "typeperf.parse_cpu",
              typeperf.parse_cpu),
        Probe("netsh-tcp-global", ["netsh.exe", "interface", "tcp", "show", "global"],
              "receive-window autotuning as netsh prints it (localized labels)",
              "read_netsh_tcp_global", wc.read_netsh_tcp_global),
        Probe("netsh-subinterfaces", ["netsh.exe", "interface", "ipv4", "show",
                                      "subinterfaces"], "the IP MTU as netsh prints it"),
        Probe("reg-tcpip-parameters", ["reg.exe", "query", wc.TCPIP_PARAMETERS],
              "every Tcpip\\Parameters value as reg.exe lists them"),
    ]
    for name in REGISTRY_VALUES:
        out.append(Probe(f"reg-query-{name}", wc.reg_query_argv(name),
                         "a registry value as reg.exe prints it (exit 1: absent)",
                         "read_reg_query", _reg_reader(name)))
    for name in (n for n in REGISTRY_VALUES if n in wc.REGISTRY_NAMES):
        out.append(Probe(f"reg-get-{name}", wc.reg_get_argv(name),
                         "a registry setting's original, its type and raw data (what the "
                         "journal keeps; <absent> if there is none)", "read_reg_get",
                         wc.read_reg_get))
    out.append(Probe("firewall-get", wc.firewall_get_argv("nicbench-capture"),
                     "a firewall setting's original (a rule that does not exist)"))
    for i, iface in enumerate(interfaces, 1):
        out += [
            Probe(f"adapter-{i}", wc.adapter_argv(iface), f"adapter {iface!r}: facts, "
                  "NlMtu, jumbo keyword and its valid values", "read_adapter",
                  wc.read_adapter),
            Probe(f"adapter-{i}-format-list", wc.advanced_format_list_argv(iface),
                  f"adapter {iface!r}: every advanced property as Format-List prints it",
                  "read_format_list", wc.read_format_list)]
    for i, peer in enumerate(peers, 1):
        out += [
            Probe(f"ping-{i}", wc.ping_argv(peer), f"reaches {peer}", "read_ping",
                  _ping_reader(peer), timeout_s=15, any_status=True),
            Probe(f"ping-{i}-df-1500", wc.ping_argv(peer, 1500 - 28),
                  f"path MTU 1500 to {peer}, Don't Fragment", "read_ping",
                  _ping_reader(peer), timeout_s=15, any_status=True),
            Probe(f"ping-{i}-df-9000", wc.ping_argv(peer, 9000 - 28),
                  f"path MTU 9000 to {peer}, Don't Fragment (no reply at 1500: the "
                  "refusal's words)", "read_ping", _ping_reader(peer, needs_reply=False),
                  timeout_s=15, any_status=True)]
    out += [
        Probe("wait-listening-22", wc.wait_listening_argv(22, "tcp", 1),
              "a port something listens on (sshd): exit 0"),
        Probe("wait-listening-free", wc.wait_listening_argv(1, "tcp", 1),
              "a port nothing listens on: exit 1 after the polls"),
    ]
    for tool in TOOLS:
        exe = platform.tools.get(tool)
        if exe is None:
            continue
        out.append(Probe(f"tool-file-{tool}", wc.tool_file_argv(exe),
                         f"{tool}: where {exe} is and its file version", "read_tool_file",
                         wc.read_tool_file))
        if tool in BANNER_TOOLS:
            out.append(Probe(f"banner-{tool}", [exe, *TOOLS[tool].version.args],
                             f"{tool}: the version banner (used without a version "
                             "resource)", timeout_s=10))
    out += [
        Probe("alive-none", shell.alive_argv(0), "is a process alive (pid 0: exit 1)"),
        Probe("ended-none", shell.ended_argv(nowhere, 1), "has a background tool ended "
              "(no directory: exit 1 after the polls)"),
        Probe("collect-none", shell.collect_argv(nowhere), "a background tool's output as "
              "base64 lines (nothing there: empty lines)", "parse_collected",
              shell.parse_collected),
        Probe("read-and-remove-none", shell.read_and_remove_argv(nowhere + ".out"),
              "a tool's output file (nothing there: no output)"),
        Probe("reap-none", shell.reap_argv([nowhere + ".d", nowhere + ".pid"]),
              "what a crashed run left (nothing there: 'none PATH' lines)", "reap lines",
              _reap_lines),
    ]
    return out


def _reg_reader(name: str) -> Reader:
    return lambda text: wc.read_reg_query(text, name)


def _ping_reader(peer: str, needs_reply: bool = True) -> Reader:
    def read(text: str) -> tuple[bool, str]:
        replied, said = wc.read_ping(text, peer)
        if needs_reply and not replied:
            raise ValueError(f"no reply from {peer}: {said}")
        return replied, said
    return read


def _reap_lines(text: str) -> list[str]:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines or not all(ln.split(" ", 1)[0] in ("stopped", "gone", "none")
                            for ln in lines):
        raise ValueError(f"not 'stopped|gone|none PATH' lines: {text[:80]!r}")
    return lines


def capture(platform: WindowsPlatform, out: str | Path, interfaces: list[str],
            peers: list[str], *, say: Callable[[Captured], None] = lambda c: None
            ) -> list[Captured]:
    """Run every probe once on the platform's host and save what came back in ``out``
    (a new or empty directory); ``say`` hears of each command as it ends."""
    shell = platform.conn.shell
    if not isinstance(shell, WindowsShell):
        raise UsageError(f"{platform.host}: not a Windows host (os: windows in the inventory)")
    path = Path(out)
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise UsageError(f"{path}: exists and is not an empty directory: name a new one, so "
                         "captures of different hosts or days do not mix")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{path}: cannot make the directory: {exc.strerror}") from None
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    done: list[Captured] = []
    facts: dict[str, Any] = {}
    lost: str | None = None
    for n, probe in enumerate(probes(platform, interfaces, peers), 1):
        stem = f"{n:02d}-{probe.name}"
        (path / f"{stem}.ps1").write_text(_sent(platform, probe.argv), encoding="utf-8")
        got = _run(platform, probe, lost)
        # a session lost at this command ran it alone: the script as it was sent
        (path / f"{stem}.ps1").write_text(_sent(platform, probe.argv), encoding="utf-8")
        if got.error is not None and got.error.startswith("connection lost"):
            lost = lost or got.error       # the rest would only repeat it
        (path / f"{stem}.stdout").write_bytes(got.stdout)
        (path / f"{stem}.stderr").write_bytes(got.stderr)
        if probe.name == "host-facts" and got.read == "ok":
            facts = asdict(wc.read_host_facts(_text(got.stdout)))
        done.append(got)
        say(got)
    manifest = {
        "format_version": FORMAT_VERSION, "nicbench_version": __version__,
        "host": platform.host, "captured_at": started, "facts": facts,
        "interfaces": list(interfaces), "peers": list(peers),
        "commands": [{**{k: v for k, v in asdict(c).items() if k not in ("stdout", "stderr")},
                      "script": f"{n:02d}-{c.name}.ps1", "stdout": f"{n:02d}-{c.name}.stdout",
                      "stderr": f"{n:02d}-{c.name}.stderr"}
                     for n, c in enumerate(done, 1)]}
    (path / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n",
                                        encoding="utf-8")
    return done


def _sent(platform: WindowsPlatform, argv: list[str]) -> str:
    """The script a command is sent as: in the host's warm session (its form there), or
    in a powershell.exe of its own."""
    conn, shell = platform.conn, platform.conn.shell
    assert isinstance(shell, WindowsShell)
    if getattr(conn, "warm_all", False) and not getattr(conn, "warm_lost", False):
        return shell.warm_script(argv)
    return shell.script_with_pid(argv)


def _text(raw: bytes) -> str:
    """Bytes as the platform reads them (the shell's tidying: UTF-8, no BOM, LF)."""
    return WindowsShell().tidy_output(raw.decode("utf-8", "replace"), "")[0]


def _run(platform: WindowsPlatform, probe: Probe, lost: str | None) -> Captured:
    got = Captured(name=probe.name, why=probe.why, command=display(probe.argv),
                   reads=probe.reads)
    if lost is not None:
        got.error = f"not run: {lost}"
        return got
    res: Result | None = None
    try:
        res = platform.conn.run(probe.argv, timeout=probe.timeout_s, warn=True)
    except CommandTimeout as exc:
        assert isinstance(exc.result, Result)   # errors.py knows it only as a Protocol
        res = exc.result
    except ConnectError as exc:
        got.error = f"connection lost: {exc.one_line()}"
    except NicbenchError as exc:
        got.error = exc.one_line()
    if res is None:
        return got
    got.exit_status, got.timed_out = res.exit_status, res.timed_out
    got.duration_s = round(res.duration_s, 3)
    got.raw = res.raw is not None
    got.stdout, got.stderr = res.raw or (res.stdout.encode("utf-8"), res.stderr.encode("utf-8"))
    if probe.reader is not None and (res.ok or probe.any_status):
        try:
            probe.reader(res.stdout)
            got.read = "ok"
        except (NicbenchError, ValueError, KeyError, TypeError, AttributeError,
                IndexError) as exc:
            got.read = f"{type(exc).__name__}: {exc}"
    return got
