"""Linux hosts: interface facts, MTU and sysctl changes, CPU time, listening ports.

Each fact is a command builder plus a pure parser (``parse_*`` functions below, tested on
captured output). MTUs are set with ``ip link`` and read back; where ``ip`` is missing,
with ``ifconfig <if> mtu <n> up`` as the reviews did. A refusal carries the kernel's own
words ("RTNETLINK answers: Invalid argument").
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import replace
from typing import assert_never
from collections.abc import Mapping, Sequence

from nicbench.errors import (CommandTimeout, NicbenchError, RemoteError, TrialError,
                             TuningError, TuningErrorKind)
from nicbench.platforms.base import (ClientRun, CpuTimes, Finishing, HostFacts,
                                     InterfaceFacts, LinkCounters, Platform, PlatformOptions,
                                     ServerEnd, ServerFinish, ServerStart, SettingKind,
                                     same_sysctl_value)
from nicbench.remote.command import display
from nicbench.remote.connection import Background, Connection
from nicbench.remote.result import make_result
from nicbench.remote.shell import collected_ticks, posix_script
from nicbench.tools.registry import TOOLS
import contextlib

def parse_ip_link_json(text: str, iface: str) -> dict:
    data = json.loads(text)
    if not data:
        raise ValueError(f"no interface {iface}")
    return data[0]


def parse_ethtool_i(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            out[key.strip()] = value.strip()
    return out


def parse_ethtool_k(text: str) -> dict[str, bool]:
    """``ethtool -k``: feature -> on/off (fixed features included)."""
    out = {}
    for line in text.splitlines()[1:]:
        m = re.match(r"^\s*([\w-]+):\s+(on|off)", line)
        if m:
            out[m.group(1)] = m.group(2) == "on"
    return out


# Root qdiscs that shape a link to a rate (the lab's adapters are tbf-shaped veths).
SHAPING_QDISCS = frozenset({"tbf"})
_TC_RATE = re.compile(r"^(\d+(?:\.\d+)?)([KMGT]?)bit$")
_TC_UNITS = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}


def rate_text(bps: int) -> str:
    """A rate in tc's own input syntax, in the largest unit that keeps it whole:
    1000000000 -> "1gbit", 2500000000 -> "2500mbit", 1500000 -> "1500kbit"."""
    for unit, mult in (("tbit", 10**12), ("gbit", 10**9), ("mbit", 10**6), ("kbit", 10**3)):
        if bps >= mult and bps % mult == 0:
            return f"{bps // mult}{unit}"
    return f"{bps}bit"


def _tc_rate_bps(word: str) -> int | None:
    m = _TC_RATE.match(word)
    return round(float(m.group(1)) * _TC_UNITS[m.group(2)]) if m else None


def parse_tc_qdisc(text: str) -> str | None:
    """``tc qdisc show dev IF``: the root qdisc's shaping as "tbf rate 500mbit" (and
    " peakrate 2gbit" when it has one), rates in tc's input syntax; None when the root
    qdisc does not shape (noqueue, fq_codel, mq) or tc printed nothing."""
    for line in text.splitlines():
        words = line.split()
        if len(words) < 3 or words[0] != "qdisc" or "root" not in words:
            continue
        if words[1] not in SHAPING_QDISCS:
            return None
        parts = [words[1]]
        for key in ("rate", "peakrate"):
            if key in words[:-1]:
                bps = _tc_rate_bps(words[words.index(key) + 1])
                if bps is not None:
                    parts.append(f"{key} {rate_text(bps)}")
        return " ".join(parts) if len(parts) > 1 else None
    return None


HOST_FACTS_SCRIPT = ("uname -r; hostname; nproc 2>/dev/null || echo; "
                     "grep -m1 '^model name' /proc/cpuinfo || echo; "
                     "grep -m1 '^MemTotal:' /proc/meminfo || echo; "
                     "grep -m1 '^PRETTY_NAME=' /etc/os-release 2>/dev/null || echo")


def host_facts_command() -> list[str]:
    """One command for a host's kernel, name, CPU count and model, memory and OS release:
    one line each, an empty line for what the host cannot say."""
    return ["sh", "-c", HOST_FACTS_SCRIPT]


def parse_host_facts(text: str) -> HostFacts:
    """The lines of :func:`host_facts_command`; a missing line is a fact not recorded
    (None), never a guess."""
    lines = [*text.splitlines(), "", "", "", "", "", ""]
    cpus = lines[2].strip()
    model = lines[3].split(":", 1)[1].strip() if ":" in lines[3] else None
    return HostFacts(os="linux", kernel=lines[0].strip(), hostname=lines[1].strip() or None,
                     cpus=int(cpus) if cpus.isdigit() else None, cpu_model=model or None,
                     memory_bytes=parse_meminfo_total(lines[4]),
                     os_build=parse_os_release_name(lines[5]))


def parse_os_release_name(line: str) -> str | None:
    """``PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"`` of /etc/os-release -> the name
    (the distribution and its release: the OS build a comparison names)."""
    m = re.match(r"""^PRETTY_NAME=(["']?)(.*)\1\s*$""", line.strip())
    return m.group(2).strip() or None if m else None


def parse_meminfo_total(line: str) -> int | None:
    """``MemTotal:       24684084 kB`` of /proc/meminfo (kB there is 1024 bytes) -> bytes."""
    m = re.match(r"^MemTotal:\s+(\d+)\s+kB\s*$", line.strip())
    return int(m.group(1)) * 1024 if m else None


def parse_proc_stat(text: str) -> CpuTimes:
    """First line of /proc/stat: user nice system idle iowait irq softirq steal ..."""
    for line in text.splitlines():
        if line.startswith("cpu "):
            values = [float(v) for v in line.split()[1:]]
            idle = values[3] + (values[4] if len(values) > 4 else 0.0)
            # guest/guest_nice (9th, 10th) are already counted in user/nice
            total = sum(values[:8])
            irq, softirq = (values[5], values[6]) if len(values) > 6 else (None, None)
            return CpuTimes(busy=total - idle, total=total, irq=irq, softirq=softirq)
    raise ValueError("no 'cpu ' line in /proc/stat")


_CPU_MARK = re.compile(r"^@@nicbench-cpu(?P<n>[01])@@ (?P<stat>.*?)\n?$")
_TOOL_MARK = re.compile(r"^@@nicbench-tool@@ (?P<ticks>\d+)\n?$")
_OUTFILE_MARK = "\n@@nicbench-outfile@@\n"
_LINK_MARK = re.compile(r"^@@nicbench-link(?P<n>[01])@@ (?P<iface>\S+) (?P<cc>\S+) (?P<cd>\S+) "
                        r"(?P<state>\S+) (?P<tx>\S+) (?P<rx>\S+)\n?$")
# Counters of every interface of a host at one reading ("0" before, "1" after), by name.
Links = dict[str, dict[str, LinkCounters]]


def _count(word: str) -> int | None:
    return int(word) if word.isdigit() else None


def link_line(line: str, links: Links) -> bool:
    """A line links.sh printed, kept in ``links``; False for any other line."""
    m = _LINK_MARK.match(line)
    if m is None:
        return False
    state = m["state"]
    links.setdefault(m["n"], {})[m["iface"]] = LinkCounters(
        carrier_changes=_count(m["cc"]), carrier_down=_count(m["cd"]),
        up=None if state in ("-", "unknown") else state == "up",
        tx_bytes=_count(m["tx"]), rx_bytes=_count(m["rx"]))
    return True


def parse_links(text: str) -> Links:
    """Every links.sh line of ``text`` (other lines are passed over)."""
    links: Links = {}
    for line in text.splitlines():
        link_line(line, links)
    return links


def _pick(links: Links, n: str, iface: str | None) -> LinkCounters | None:
    return None if iface is None else links.get(n, {}).get(iface)


def _sh(script: str, *args: object) -> list[str]:
    return ["sh", "-c", posix_script(script), "nicbench", *(str(a) for a in args)]


def _stat_line(lines: list[str]) -> CpuTimes | None:
    """CPU time from a /proc/stat 'cpu ' line a script printed (None if it did not)."""
    try:
        return parse_proc_stat(lines[0]) if lines else None
    except ValueError:
        return None


def parse_client_cpu(stderr: str, links: Links | None = None) -> tuple[
        CpuTimes | None, CpuTimes | None, float | None, str]:
    """client_run.sh's error output -> the host's CPU time before and after the client,
    the client's own CPU time (clock ticks; None: not printed), and the client's own
    error output without those marked lines; the interfaces' counters go to ``links``."""
    cpu: dict[str, CpuTimes | None] = {"0": None, "1": None}
    ticks = None
    err = []
    links = {} if links is None else links
    for line in stderr.splitlines(keepends=True):
        m = _CPU_MARK.match(line)
        t = None if m else _TOOL_MARK.match(line)
        if m:
            cpu[m["n"]] = _stat_line([m["stat"]])
        elif t:
            ticks = float(t["ticks"])
        elif not (line.startswith("@@nicbench-link") and link_line(line, links)):
            err.append(line)
    return cpu["0"], cpu["1"], ticks, "".join(err)


def parse_finish_cpu(stdout: str) -> tuple[CpuTimes | None, CpuTimes | None, str]:
    """server_finish.sh's output -> the host's CPU time as the transfer began (None: the
    finish was sent after it), as it ended, and the server's collected sections (the
    interfaces' counters in the part before them: :func:`finish_links`)."""
    head, _, collected = stdout.partition("@@nicbench-out@@\n")
    cpu: dict[str, CpuTimes | None] = {"0": None, "1": None}
    for line in head.splitlines():
        m = _CPU_MARK.match(line)
        if m:
            cpu[m["n"]] = _stat_line([m["stat"]])
    return cpu["0"], cpu["1"], collected


def finish_links(stdout: str) -> Links:
    """The interfaces' counters server_finish.sh printed before the server's sections."""
    return parse_links(stdout.partition("@@nicbench-out@@\n")[0])


def _float(ticks: int | None) -> float | None:
    return None if ticks is None else float(ticks)


def mtu_refusal(stderr: str, stdout: str = "") -> str:
    text = (stderr or stdout).strip()
    return text.splitlines()[-1] if text else "refused without a message"


class LinuxPlatform(Platform):
    os_name = "linux"
    SETTING_KINDS = (SettingKind.SYSCTL,)
    # An overlapped finish waits on the receiver on a thread of its own; a plan's
    # hosts, which answer at once, have it sent in the trial's thread.
    finish_on_a_thread = True

    def __init__(self, conn: Connection, tools: Mapping[str, str] | None = None,
                 options: PlatformOptions | None = None):
        super().__init__(conn, tools, options)     # no reboots or registry: unused here
        self._has_ip: bool | None = None
        self._host_facts: HostFacts | None = None

    # -- facts --------------------------------------------------------------------
    def host_facts(self) -> HostFacts:
        # Asked once per pair by check and run; a host's kernel and CPUs do not change
        # between its pairs, so one remote call per host.
        if self._host_facts is None:
            self._host_facts = self._probe_host_facts()
        return self._host_facts

    def _probe_host_facts(self) -> HostFacts:
        res = self.conn.run(host_facts_command(), warn=True)
        return parse_host_facts(res.stdout)

    def _link(self, iface: str) -> dict:
        res = self.conn.run(["ip", "-j", "-d", "addr", "show", "dev", iface], warn=True)
        if not res.ok:
            raise TuningError(self.host, "interface", iface, res.tail() or "not found",
                              "check pairs[].a/b.interface in the inventory",
                              kind=TuningErrorKind.INTERFACE)
        return parse_ip_link_json(res.stdout, iface)

    def _shaping(self, iface: str, link: dict) -> str | None:
        """The shaping of ``iface`` when ``ip`` says its root qdisc shapes (tbf): asked
        only then, so a NIC without one costs no command."""
        if link.get("qdisc") not in SHAPING_QDISCS:
            return None
        res = self.conn.run(["tc", "qdisc", "show", "dev", iface], warn=True)
        return parse_tc_qdisc(res.stdout) if res.ok else None

    def interface_facts(self, iface: str) -> InterfaceFacts:
        link = self._link(iface)
        max_mtu = link.get("max_mtu")
        lower = link.get("link")
        shaping = self._shaping(iface, link)
        if lower:
            # A macvlan/vlan cannot exceed its lower device's MTU, whatever it reports;
            # its frames are shaped where they leave: on the lower device.
            try:
                lower_link = self._link(lower)
                lower_mtu = lower_link.get("mtu")
                if lower_mtu and (max_mtu is None or lower_mtu < max_mtu):
                    max_mtu = lower_mtu
                shaping = shaping or self._shaping(lower, lower_link)
            except TuningError:
                pass
        ethi = self.conn.run(["ethtool", "-i", iface], warn=True)
        info = parse_ethtool_i(ethi.stdout) if ethi.ok else {}
        ethk = self.conn.run(["ethtool", "-k", iface], warn=True)
        offloads = parse_ethtool_k(ethk.stdout) if ethk.ok else {}
        flags = link.get("flags", [])
        return InterfaceFacts(
            name=iface, mtu=int(link["mtu"]), max_mtu=max_mtu,
            state=str(link.get("operstate", "UNKNOWN")).lower(),
            carrier="NO-CARRIER" not in flags and "UP" in flags and
                    "LOWER_UP" in flags,
            kind=(link.get("linkinfo") or {}).get("info_kind"), lower=lower,
            driver=info.get("driver") or None, driver_version=info.get("version") or None,
            firmware=info.get("firmware-version") or None, bus_info=info.get("bus-info") or None,
            offloads={k: v for k, v in offloads.items() if k in (
                "tcp-segmentation-offload", "generic-segmentation-offload",
                "generic-receive-offload", "rx-checksumming", "tx-checksumming",
                "scatter-gather")},
            addresses=tuple(a["local"] for a in link.get("addr_info", []) if "local" in a),
            shaping=shaping)

    # -- MTU ----------------------------------------------------------------------
    def get_mtu(self, iface: str) -> int:
        # sysfs, not `ip`: the same read works on hosts that only have ifconfig, where
        # set_mtu falls back to it.
        res = self.conn.run(["cat", f"/sys/class/net/{iface}/mtu"], warn=True)
        if not res.ok or not res.stdout.strip().isdigit():
            raise TuningError(self.host, "interface", iface, res.tail() or "not found",
                              "check pairs[].a/b.interface in the inventory",
                              kind=TuningErrorKind.INTERFACE)
        return int(res.stdout)

    def _ip_available(self) -> bool:
        if self._has_ip is None:
            self._has_ip = self.conn.run(["sh", "-c", "command -v ip"], warn=True).ok
        return self._has_ip

    def set_mtu(self, iface: str, mtu: int) -> None:
        if self._ip_available():
            argv = ["ip", "link", "set", "dev", iface, "mtu", str(int(mtu))]
        else:
            argv = ["ifconfig", iface, "mtu", str(int(mtu)), "up"]
        res = self.conn.run(argv, warn=True)
        if not res.ok:
            raise TuningError(self.host, f"MTU of {iface}", mtu,
                              mtu_refusal(res.stderr, res.stdout),
                              "the driver or device does not accept this MTU")
        now = self.get_mtu(iface)
        if now != mtu:
            raise TuningError(self.host, f"MTU of {iface}", mtu,
                              f"accepted, but reads back as {now}", kind=TuningErrorKind.MISMATCH)

    def verify_path_mtu(self, iface: str, peer: str, mtu: int) -> None:
        # ICMP echo of exactly MTU bytes with DF set: 20 IP + 8 ICMP header bytes.
        size = mtu - 28
        res = self.conn.run(["ping", "-n", "-q", "-M", "do", "-s", str(size), "-c", "1",
                             "-W", "2", "-I", iface, peer], warn=True, timeout=10)
        if not res.ok:
            said = [ln for ln in (res.stderr + res.stdout).splitlines()
                    if "error" in ln.lower() or "loss" in ln]
            raise TuningError(self.host, f"path MTU to {peer}", mtu,
                              f"no reply to a {mtu}-byte packet with DF set"
                              + (f" ({said[-1].strip()})" if said else ""),
                              "the link or the other end does not carry this MTU",
                              kind=TuningErrorKind.PATH)

    def reaches(self, iface: str, peer: str) -> bool:
        return self.conn.run(["ping", "-n", "-q", "-c", "1", "-W", "2", "-I", iface, peer],
                             warn=True, timeout=10).ok

    # -- sysctl -------------------------------------------------------------------
    def get_sysctl(self, name: str) -> str:
        return self.conn.run(["sysctl", "-n", name]).stdout.strip()

    def set_sysctl(self, name: str, value: str) -> None:
        res = self.conn.run(["sysctl", "-w", f"{name}={value}"], warn=True)
        if not res.ok:
            raise TuningError(self.host, name, value, res.tail(), kind=TuningErrorKind.OTHER)
        now = self.get_sysctl(name)
        if not same_sysctl_value(now, value):
            raise TuningError(self.host, name, value, f"accepted, but reads back as {now!r}",
                              kind=TuningErrorKind.MISMATCH)

    def get_setting(self, kind: SettingKind, key: str) -> str | None:
        match kind:
            case SettingKind.SYSCTL:
                return self.get_sysctl(key)
            case (SettingKind.MTU | SettingKind.JUMBO | SettingKind.REGISTRY
                  | SettingKind.FIREWALL | SettingKind.REBOOT):
                return super().get_setting(kind, key)
            case _:
                assert_never(kind)

    def set_setting(self, kind: SettingKind, key: str, value: str | None) -> None:
        match kind:
            case SettingKind.SYSCTL if value is not None:
                self.set_sysctl(key, value)
            case (SettingKind.SYSCTL | SettingKind.MTU | SettingKind.JUMBO
                  | SettingKind.REGISTRY | SettingKind.FIREWALL | SettingKind.REBOOT):
                super().set_setting(kind, key, value)
            case _:
                assert_never(kind)

    def same_setting(self, kind: SettingKind, a: str | None, b: str | None) -> bool:
        if kind is SettingKind.SYSCTL:
            return same_sysctl_value(a, b)
        return super().same_setting(kind, a, b)

    # -- measurement helpers ------------------------------------------------------
    def cpu_times(self) -> CpuTimes:
        return parse_proc_stat(self.conn.run(["head", "-n", "1", "/proc/stat"]).stdout)

    def wait_listening(self, port: int, protocol: str, timeout_s: float) -> None:
        flag = "-Hltn" if protocol == "tcp" else "-Hlun"
        script = (f'while ! ss {flag} "sport = :$1" | grep -q .; do sleep 0.01; done')
        try:
            self.conn.run(["sh", "-c", script, "nicbench", str(int(port))],
                          timeout=timeout_s, warn=True)
        except CommandTimeout:
            raise TrialError(f"{self.host}: nothing listened on {protocol} port {port} "
                             f"within {timeout_s:g} s") from None

    # -- a trial's three steps, one call each (see Platform.start_server) -------------
    def start_server(self, argv: Sequence[str], workdir: str, port: int, protocol: str,
                     listen_timeout_s: float, link: str | None = None) -> ServerStart:
        polls = max(1, round(listen_timeout_s / 0.002))   # a poll: one `listening` (ss), no sleep
        res = self.conn.run(_sh("server_start.sh", workdir, str(int(port)), protocol,
                                polls, *argv), timeout=listen_timeout_s * 2 + 10,
                            warm=True)
        lines = res.stdout.splitlines()
        try:
            pid_s, where = lines[0].split(" ", 1)
            server = Background(self.conn, list(argv), int(pid_s), where)
            listening = lines[1] == "listening yes"
            ended = lines[2] == "ended yes"
        except (IndexError, ValueError) as exc:
            raise RemoteError(self.host, f"could not start `{display(argv)}`: unexpected "
                                         f"reply {res.stdout.strip()[:200]!r}") from exc
        return ServerStart(server, listening, ended, _stat_line(lines[3:4]),
                           _pick(parse_links("\n".join(lines[4:])), "0", link))

    def run_client(self, argv: Sequence[str], timeout: float, pidfile: str | None,
                   outfile: str | None, link: str | None = None) -> ClientRun:
        # The script keeps the pid file itself (one shell less than Connection.run's
        # pidfile wrapper): its pid is the one the SSH layer kills on a timeout.
        res = self.conn.run(_sh("client_run.sh", pidfile or "", outfile or "", *argv),
                            timeout=timeout, warn=True, warm=True)
        links: Links = {}
        cpu0, cpu1, ticks, err = parse_client_cpu(res.stderr, links)
        out, mark, filed = res.stdout.partition(_OUTFILE_MARK)
        clean = replace(res, stdout=out, stderr=err, argv=tuple(argv), command=display(argv))
        return ClientRun(clean, cpu0, cpu1, (filed or None) if mark else None, ticks,
                         link0=_pick(links, "0", link), link1=_pick(links, "1", link))

    def finish_server(self, server: Background, end: ServerEnd,
                      link: str | None = None) -> ServerFinish:
        return self._finish(server, end, overlapped=False, link=link)

    def link_counters(self, iface: str) -> LinkCounters | None:
        res = self.conn.run(_sh("links.sh", "@@nicbench-link0@@"), warn=True)
        return _pick(parse_links(res.stdout), "0", iface)

    def begin_finish(self, server: Background, end: ServerEnd,
                     link: str | None = None) -> Finishing:
        # Overlapped where the server's end can be waited for while its client runs: the
        # finish is sent as the client starts and sleeps on the receiver through the
        # transfer, so it is all but done when the client returns (one remote call less
        # after each transfer, and iperf 2's report, printed on its reporter's next 16 ms
        # tick, comes while the client still lingers on its own tick).
        if end.client_s:
            return _OverlappedFinish(self, server, end, link)
        return super().begin_finish(server, end, link)

    def _finish(self, server: Background, end: ServerEnd, overlapped: bool,
                link: str | None = None) -> ServerFinish:
        # A server that exits by itself is waited for at a fine grain (a test for a file);
        # a report a little less often (each look runs grep; iperf 2 prints it on its
        # reporter's next 16 ms tick after the transfer); a settle time coarsely.
        mode = "exits" if end.exits else "report" if end.report_re else "settle"
        poll = {"exits": 0.002, "report": 0.005}.get(mode, self.conn.shell.OUTPUT_POLL_S)
        if overlapped:
            # Fine polls for a quarter of a second after the sleep (the client's own
            # start and end take a few ms; a tool that runs on much longer than it said
            # should not have a poll every few ms beside it), then every 0.05 s until the
            # client's limit and the usual wait have passed.
            nap = end.client_s or 0.0
            fine_s, coarse_s = 0.25, (end.client_limit_s or nap) - nap + end.wait_s
        else:
            nap, fine_s, coarse_s = 0.0, end.wait_s, 0.0
        polls = max(1, round(fine_s / poll))
        hold = polls + round(coarse_s / 0.05)
        argv = _sh("server_finish.sh", server.pid, server.workdir, mode, end.report_re or "",
                   end.report_count, polls, end.stop_signal, f"{poll:g}", f"{nap:g}", hold)
        limit = nap + fine_s + coarse_s
        res = self.conn.run(argv, timeout=limit + 15, warn=True, warm=True)
        return self._finished(server, res.stdout, link)

    def _finished(self, server: Background, stdout: str,
                  link: str | None = None) -> ServerFinish:
        """What server_finish.sh printed: its CPU lines (cpu0 only where it slept through
        the transfer), then the server's collected sections."""
        cpu0, cpu1, collected = parse_finish_cpu(stdout)
        out, err, rc = self.conn.shell.parse_collected(collected)
        result = make_result(self.host, server.argv, stdout=out, stderr=err, exit_status=rc,
                             started_at=server.started_at)
        server.finished(result)
        return ServerFinish(result, cpu=cpu1, cpu0=cpu0,
                            tool_ticks=_float(collected_ticks(collected)),
                            link=_pick(finish_links(stdout), "1", link))

    def wake_finish(self, server: Background) -> None:
        """Tell an overlapped finish that its client has ended: stop the server now."""
        self.conn.run(_sh("server_wake.sh", server.workdir), warn=True, timeout=15)

    def probe_version(self, tool: str, exe: str) -> str | None:
        found = self.conn.run(["sh", "-c", 'command -v "$1"', "nicbench", exe], warn=True)
        if not found.ok:
            return None
        probe = TOOLS[tool].version
        if probe.package:
            res = self.conn.run(["dpkg-query", "-W", "-f", "${Version}", probe.package],
                                warn=True)
            return res.stdout.strip() if res.ok and res.stdout.strip() else "unknown"
        res = self.conn.run([exe, *probe.args], warn=True, timeout=10)
        m = re.search(probe.regex, res.stdout + res.stderr)
        return m.group(1) if m else "unknown"

    def scratch_file(self, name: str) -> str:
        return f"/tmp/{name}"


class _OverlappedFinish(Finishing):
    """server_finish.sh sent as the client starts, on a thread of its own (the receiver's
    connection, while the trial's thread waits on the sender's)."""

    overlapped = True
    WAKE_JOIN_S = 10.0    # after a wake: the server's stop (at most ~1.1 s) and collect

    platform: LinuxPlatform

    def __init__(self, platform: LinuxPlatform, server: Background, end: ServerEnd,
                 link: str | None = None):
        super().__init__(platform, server, end, link)
        self._done: ServerFinish | None = None
        self._error: BaseException | None = None
        self._woken = False
        self._thread = threading.Thread(target=self._work, daemon=True,
                                        name=f"finish {platform.host}")
        if platform.finish_on_a_thread:
            self._thread.start()
        else:
            self._work()        # a planning host answers at once: no thread to wait for

    def _work(self) -> None:
        try:
            self._done = self.platform._finish(self.server, self.end, overlapped=True,
                                               link=self.link)
        except BaseException as exc:     # handed to the trial's thread by result()
            self._error = exc

    def _wake(self) -> None:
        if not self._woken:
            self._woken = True
            self.platform.wake_finish(self.server)

    def under_way(self) -> bool:
        return self._thread.is_alive()

    def result(self) -> ServerFinish:
        # Its exit or report comes right after the transfer: most often before the
        # client's own call has returned. Else it gets the same wait as a finish sent
        # after the client, then the server is stopped.
        if self._thread.ident is not None:
            self._thread.join(self.end.wait_s)
        if self._thread.is_alive():
            self._wake()
        while self._thread.is_alive():   # bounded by the call's own timeout
            self._thread.join(0.2)
        if self._error is not None:
            raise self._error
        assert self._done is not None
        return self._done

    def abandon(self) -> None:
        # A wake sent before the finish's shell has said where it sleeps finds no one to
        # wake (server_wake.sh looks for 5 s; a loaded machine has taken longer to start
        # that shell, and the finish then slept out the client's whole time): sent again
        # while the finish is under way, within WAKE_JOIN_S in all.
        deadline = time.monotonic() + self.WAKE_JOIN_S
        while self.under_way() and time.monotonic() < deadline:
            self._woken = False
            with contextlib.suppress(NicbenchError):
                self._wake()
            self._thread.join(min(1.0, max(0.0, deadline - time.monotonic())))
