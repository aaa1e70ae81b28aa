"""A scripted Windows host: a state machine over what real Windows prints, answering the
decoded commands of a :class:`~nicbench.remote.fake.ReplayConnection`.

The platform under it is the real :class:`~nicbench.platforms.windows.WindowsPlatform`
over the real :class:`~nicbench.remote.powershell.WindowsShell`: every command is
rendered, base64-encoded and decoded back before it is answered, and the engine parses
the answers with its real readers. What the host holds: adapters with a jumbo keyword and
the values their driver lists, ``Tcpip\\Parameters`` values (absent until written),
firewall rules, files, background processes, and a boot time that changes when it
reboots, and what nicbench leaves in the SSH user's TEMP: background directories with
their "pid" file and pid files of running clients, each holding "<pid> <start time>" as
the real scripts write them, which ``reap`` checks before it kills a process tree. A
test scripts the hard parts: refused connections for N probes after a restart, a host
still up for a while after ``shutdown /t 5``, a boot time that wobbles by a tick from
one probe to the next, probes answering ``The RPC server is unavailable.`` while it
boots, an adapter still Disconnected and a peer not answering just after the boot, a
different host key, a host that never comes back, a connection that drops and comes
back, a controller that dies mid-trial (``on_call``), and what each tool printed (real
captures, through ``tools``).

Answers are shaped like the real outputs they stand for: JSON where the platform asks
for ConvertTo-Json, reg.exe's value-line layout (tests/fixtures/windows, Win32-OpenSSH
#936), the cmdlet's refusal text (windows-powershell-docs#2366), ping.exe's "Reply from
... TTL=" line. Which of them are real captures and which only follow a documented shape
is listed in tests/fixtures/windows/READERS.md.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta, UTC
from collections.abc import Callable, Mapping

from nicbench.errors import ConnectError, HostKeyError
from nicbench.platforms.base import PlatformOptions
from nicbench.platforms.windows_commands import REG_KINDS, RegValue
from nicbench.platforms.windows import WindowsPlatform
from nicbench.remote.fake import Call, ReplayConnection, Reply
from nicbench.remote.powershell import WindowsShell, list2cmdline
from nicbench.remote.warm_powershell import SessionLost, end_lines, read_frame

REG_ABSENT = "ERROR: The system was unable to find the specified registry key or value.\n"
TEMP = "C:\\Users\\bench\\AppData\\Local\\Temp\\"


@dataclass
class FakeAdapter:
    addresses: tuple[str, ...]
    keyword: str | None = "*JumboPacket"
    value: str = "1514"
    valid: tuple[str, ...] = ("1514", "4088", "9014")
    numeric: tuple[int, int, int] | None = None      # min, max, step instead of valid
    mtu_style: bool = False        # Broadcom-like: the value is not what NlMtu follows
    status: str = "Up"
    # Polls of (Get-NetAdapter).Status after a change before the link is Up again (the
    # miniport restarts); more than the script's UpPolls and it gives up (exit 3).
    down_after_change: int = 2
    provider: str = "Intel"
    driver_version: str = "12.19.2.45"
    description: str = "Intel(R) Ethernet Server Adapter I350-T2"
    guid: str = ""                 # InterfaceGuid; given one by the host if left empty
    if_index: int = 0              # likewise

    @property
    def nl_mtu(self) -> int:
        if self.keyword is None:
            return 1500
        return 1500 if self.mtu_style else int(self.value) - (0 if self.keyword == "MTU" else 14)


@dataclass
class ToolRun:
    """What a tool printed for one trial: the sender's console, the receiver's
    console, and the file the sender wrote (-xml), as the test answers it."""

    client: str = ""
    server: str = ""
    outfile: bytes | None = None
    exit_status: int = 0


@dataclass
class Proc:
    """A process nicbench started: a background tool (its runner, in ``workdir``) or a
    client run in the foreground with a pid file."""

    pid: int
    start: str                     # StartTime.ToFileTimeUtc(), as the scripts write it
    argv: list[str]
    workdir: str | None = None
    out: bytes = b""
    err: bytes = b""
    rc: int | None = None
    alive: bool = True
    killed_by: str | None = None   # "kill-tree" (a trial stopping it), "reap", "session"
    in_session: bool = False       # started by the warm session: ends with it


@dataclass
class FakeWindowsHost:
    name: str
    adapters: dict[str, FakeAdapter]
    version: str = "10.0.20348"
    caption: str = "Microsoft Windows Server 2022 Standard"
    cpus: int = 4
    tool_run: Callable[[FakeWindowsHost, list[str]], ToolRun] | None = None
    # Tcpip\Parameters values: an int is a REG_DWORD, any other type a RegValue.
    registry: dict[str, int | RegValue] = field(default_factory=dict)
    registry_error: str = ""       # every registry write answers this (exit 1)
    firewall: dict[str, str] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    dirs: set[str] = field(default_factory=set)
    procs: dict[int, Proc] = field(default_factory=dict)
    boots: int = 1
    # Reboot behaviour, set by a test.
    down_probes: int = 2           # refused connections after a restart before it is back
    new_host_key: bool = False     # it comes back with another key
    never_back: bool = False
    up_after_shutdown: int = 0     # commands still answered after shutdown /t 5, before it goes
    rpc_errors_after_boot: int = 0  # boot-time probes answering "The RPC server is unavailable."
    boot_jitter: bool = False      # each boot-time probe reads 100 ns later (same boot)
    adapter_down_after_boot: int = 0  # adapter queries answering Disconnected after a boot
    peer_silent_after_boot: int = 0   # pings answering "Request timed out." after a boot
    connection_down: bool = False  # the SSH connection dropped: reconnect() brings it back
    # Called with every command before it is answered (a test's way to make the
    # controller die mid-trial: raise, and keep raising).
    on_call: Callable[[Call], None] | None = None
    log: list[str] = field(default_factory=list)   # labels, in order
    # powershell.exe processes started on the host: one per command that reached it
    # (each is its own `powershell.exe -EncodedCommand`), one more per background tool
    # (its runner, created by WMI). What a trial costs in process starts is counted here.
    powershell_starts: int = 0
    # The warm PowerShell session (warm_powershell.SESSION) a warm connection keeps: its
    # pid while it runs, how many were started, and a test's ways to break it: it
    # cannot start at all, or it ends under its N-th script.
    session_pid: int | None = None
    sessions: int = 0
    warm_refused: bool = False
    session_dies_at: int | None = None
    session_scripts: int = 0
    _in_session: bool = False      # the command at hand runs in the session
    _down: int = 0
    _rebooting: bool = False
    _up_left: int = 0
    _rpc_left: int = 0
    _jitter: int = 0
    _adapter_down_left: int = 0
    _silent_left: int = 0
    _pid: int = 4000
    _ticks: int = 0
    peers: FakeWindowsPair | None = None

    def __post_init__(self) -> None:
        for i, a in enumerate(self.adapters.values()):
            a.guid = a.guid or f"{{4A7D1E0C-0000-4000-8000-{i + 1:012X}}}"
            a.if_index = a.if_index or 7 + i

    def find_adapter(self, by: str, ident: str) -> tuple[str, FakeAdapter] | None:
        """Find-Adapter: exactly one adapter by GUID, ifIndex or name (exact)."""
        found = [(n, a) for n, a in self.adapters.items()
                 if (by == "guid" and a.guid.upper() == ident.upper())
                 or (by == "index" and str(a.if_index) == ident)
                 or (by == "name" and n.lower() == ident.lower())]
        return found[0] if len(found) == 1 else None

    def rename(self, old: str, new: str) -> None:
        """Rename-NetAdapter: the same adapter (GUID, ifIndex) under another name."""
        self.adapters = {new if n == old else n: a for n, a in self.adapters.items()}

    # -- the connection's answer ------------------------------------------------------------
    def __call__(self, call: Call) -> Reply:
        """A command in a powershell.exe of its own."""
        return self._answer(call, start=True)

    def open_session(self) -> None:
        """A warm connection starts its session: one powershell.exe that will run every
        later command (SessionLost: it cannot start, nothing ran)."""
        if self._rebooting and self._up_left <= 0:
            self._probe_while_down()
        if self.connection_down:
            raise ConnectError(self.name, "the connection was lost", "the host may have "
                               "rebooted or dropped the connection")
        self.powershell_starts += 1
        self.sessions += 1
        if self.warm_refused:
            raise SessionLost("could not start: powershell.exe ended before it was ready "
                              "(Program 'powershell.exe' failed to run)")
        self._pid += 4
        self.session_pid = self._pid

    def session_call(self, call: Call, line: bytes) -> tuple[bytes, bytes]:
        """One framed script in the session, as SESSION handles it: the line split into
        nonce and script, the script's output after the session's pid line, then the
        end markers with the nonce and its exit status; none when it does not end (a
        timeout). A session that died raises SessionLost (ran: its outcome unknown)."""
        if self.session_pid is None:
            raise SessionLost("ended while a command ran", ran=True)
        nonce, script = read_frame(line)
        if script != call.script:
            raise AssertionError(f"{self.name}: the frame does not carry the script sent")
        self.session_scripts += 1
        if self.session_dies_at == self.session_scripts:
            self.session_pid = None
            raise SessionLost("ended while a command ran", ran=True)
        out, err, rc = self._answer(call, start=False)
        body = (f"{self.session_pid}\r\n" + out).encode("utf-8")
        if rc is None:
            return body, err.encode("utf-8")
        out_end, err_end = end_lines(nonce, rc)
        return body + out_end, err.encode("utf-8") + err_end

    def close_session(self) -> None:
        """Its channel closed (a timeout killed its tree, the connection closed): what it
        started ends with it (Win32-OpenSSH's job object, #1195)."""
        self.session_pid = None
        for p in self.procs.values():
            if p.in_session and p.alive:
                _terminate(p, "session")

    def _answer(self, call: Call, start: bool) -> Reply:
        if self.on_call is not None:
            self.on_call(call)
        if self._rebooting:
            if self._up_left > 0:
                self._up_left -= 1      # shutdown /t 5: still up for a while
            else:
                self.session_pid = None
                self._probe_while_down()
        if self.connection_down:
            self.close_session()
            raise ConnectError(self.name, "the connection was lost", "the host may have "
                               "rebooted or dropped the connection")
        self.log.append(call.label)
        self.powershell_starts += start
        self._in_session = not start
        handler = _HANDLERS.get(call.label.split(" ")[0] if call.is_script else "native")
        if handler is None:
            raise AssertionError(f"{self.name}: no answer for {call.label!r}")
        out, err, rc = handler(self, call)
        return out.replace("\n", "\r\n"), err, rc

    def reconnect(self) -> None:
        """What a new SSH connection finds: the host, unless it is still down."""
        if self._rebooting:
            self._probe_while_down()
        self.connection_down = False

    def _probe_while_down(self) -> None:
        if self.never_back or self._down < self.down_probes:
            self._down += 1
            raise ConnectError(self.name, f"cannot reach {self.name}:22: Connection refused",
                               "is the host up?")
        self._rebooting = False
        self.boots += 1
        self.procs.clear()
        self.session_pid = None
        self._rpc_left = self.rpc_errors_after_boot
        self._adapter_down_left = self.adapter_down_after_boot
        self._silent_left = self.peer_silent_after_boot
        if self.new_host_key:
            raise HostKeyError(self.name, f"host key of {self.name} differs from the one "
                                          "in known_hosts",
                               "if the host was reinstalled, remove its line from "
                               "known_hosts and check the new key by hand")

    @property
    def boot_time(self) -> str:
        # A different time for every boot, however many (a plan of many pairs reboots
        # each host dozens of times; a time that stopped changing would be waited for).
        boot = datetime(2026, 1, 1, 6, tzinfo=UTC) + timedelta(hours=self.boots - 1)
        return boot.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self._jitter:07d}Z"

    def new_proc(self, argv: list[str], workdir: str | None = None) -> Proc:
        self._pid += 4
        # FILETIME (100 ns since 1601) of the start, later for each process and boot
        start = str(133_500_000_000_000_000 + self.boots * 10_000_000_000 + self._pid * 1000)
        proc = Proc(pid=self._pid, start=start, argv=argv, workdir=workdir)
        self.procs[proc.pid] = proc
        return proc

    def exists(self, path: str) -> bool:
        return path in self.dirs or path in self.files

    def remove(self, path: str) -> None:
        """Remove-Item -Recurse: a directory with the files in it, or a file."""
        self.dirs.discard(path)
        for name in [f for f in self.files if f == path or f.startswith(path + "\\")]:
            del self.files[name]

    def listening(self) -> bool:
        return any(p.alive for p in self.procs.values())


def _ok(out: str = "") -> Reply:
    return out, "", 0


def _host_facts(h: FakeWindowsHost, call: Call) -> Reply:
    return _ok(json.dumps({
        "hostname": h.name.upper(), "caption": h.caption, "version": h.version,
        "build": h.version.rsplit(".", 1)[-1], "last_boot": h.boot_time, "cpus": h.cpus,
        "cpu_model": "Intel(R) Xeon(R) CPU E5-2620 v4 @ 2.10GHz",
        "defender_realtime": True, "autotuning": "Normal", "temp": TEMP}) + "\n")


def _no_adapter(call: Call) -> Reply:
    by, ident = call.params["By"], call.params["Adapter"]
    return "", f"no adapter with {by} {ident} (0 found; Get-NetAdapter lists them)\n", 1


def _adapter(h: FakeWindowsHost, call: Call) -> Reply:
    found = h.find_adapter(call.params["By"], call.params["Adapter"])
    if found is None:
        return _no_adapter(call)
    name, a = found
    status = a.status
    if h._adapter_down_left > 0:     # the driver is still starting after the boot
        h._adapter_down_left -= 1
        status = "Disconnected"
    adv = []
    if a.keyword:
        lo, hi, step = a.numeric or (None, None, None)
        adv.append({"keyword": a.keyword, "display": "Jumbo Packet", "value": [a.value],
                    "valid": [] if a.numeric else list(a.valid), "min": lo, "max": hi,
                    "step": step})
    adv.append({"keyword": "*LsoV2IPv4", "display": "Large Send Offload V2 (IPv4)",
                "value": ["1"], "valid": ["0", "1"], "min": None, "max": None, "step": None})
    return _ok(json.dumps({
        "name": name, "description": a.description, "status": status,
        "if_index": a.if_index, "guid": a.guid,
        "mac": "00-1B-21-00-00-01", "link_speed": "1 Gbps", "driver_provider": a.provider,
        "driver_version": a.driver_version, "driver_description": a.description,
        "driver_date": "2021-03-04", "nl_mtu": a.nl_mtu, "addresses": list(a.addresses),
        "advanced": adv}) + "\n")


def _set_advanced(h: FakeWindowsHost, call: Call) -> Reply:
    found = h.find_adapter(call.params["By"], call.params["Adapter"])
    if found is None:
        return _no_adapter(call)
    name, a = found
    value = call.params["Value"]
    listed = value in a.valid if not a.numeric else \
        a.numeric[0] <= int(value) <= a.numeric[1]
    if not listed:
        return ("", "Set-NetAdapterAdvancedProperty : No matching keyword value found. The "
                    f"following are valid keyword values: {', '.join(a.valid)}\n", 1)
    a.value = value
    # The script's loop: poll Status until Up, at most UpPolls times.
    if a.down_after_change > int(call.params["UpPolls"]):
        a.status = "Disconnected"
        return "", f"adapter {name} not Up after the change\n", 3
    return _ok()


def _last_boot(h: FakeWindowsHost, call: Call) -> Reply:
    if h._rpc_left > 0:       # sshd answers before WMI does
        h._rpc_left -= 1
        return ("", "Get-CimInstance : The RPC server is unavailable.\n"
                    "At line:5 char:31\n", 1)
    if h.boot_jitter:          # LastBootUpTime = now - uptime: it wobbles by a tick
        h._jitter += 1
    return _ok(h.boot_time + "\n")


def _typed(value: int | RegValue) -> RegValue:
    return value if isinstance(value, RegValue) else RegValue("REG_DWORD", str(value))


def _registry(h: FakeWindowsHost, call: Call) -> Reply:
    """SET_REGISTRY: .NET's SetValue with the kind and data the script converts (a
    REG_DWORD kept as an int, as tests write them), or DeleteValue."""
    if h.registry_error:
        return "", h.registry_error + "\n", 1
    name, kind = call.params["Name"], call.params["Kind"]
    if kind == "":
        h.registry.pop(name, None)
        return _ok()
    reg_kind = next(k for k, v in REG_KINDS.items() if v == kind)
    value = RegValue(reg_kind, call.params["Data"])
    h.registry[name] = int(value.data) if reg_kind == "REG_DWORD" else value
    return _ok()


def _reg_get(h: FakeWindowsHost, call: Call) -> Reply:
    """REG_GET: the value's .NET kind and raw data as JSON, or <absent>."""
    name = call.params["Name"]
    if name not in h.registry:
        return _ok("<absent>\n")
    value = _typed(h.registry[name])
    return _ok(json.dumps({"kind": REG_KINDS[value.kind], "data": value.data}) + "\n")


def _firewall(h: FakeWindowsHost, call: Call) -> Reply:
    name = call.params["Name"]
    if call.label == "firewall-get":
        return _ok(h.firewall.get(name, "<absent>") + "\n")
    h.firewall.pop(name, None)
    if call.params["Ports"]:
        h.firewall[name] = call.params["Ports"]
    return _ok()


def _cpu(h: FakeWindowsHost, call: Call) -> Reply:
    # Counters advance as real ones do: 1 s of time base per call, idle a quarter of it.
    h._ticks += 1
    ts, idle = h._ticks * 10_000_000, h._ticks * 2_500_000
    return _ok(json.dumps([{"name": str(i), "idle": str(idle), "ts": str(ts)}
                           for i in range(h.cpus)]) + "\n")


def _background(h: FakeWindowsHost, call: Call) -> Reply:
    workdir = call.params["Dir"]
    if h.exists(workdir):
        return "", f"{workdir} exists already\n", 97
    exe, argline = _runner_params(call.params["Runner"])
    if (exe, argline) != (call.params["Exe"], call.params["ArgLine"]):
        raise AssertionError(f"{h.name}: the runner and the session would start another "
                             "command")
    h.dirs.add(workdir)
    proc = h.new_proc([exe, *_split(argline)], workdir)
    proc.in_session = h._in_session
    # BACKGROUND: in the warm session, the session starts the tool itself (no process
    # but the tool's); in a powershell.exe of its own, WMI creates a runner for it.
    h.powershell_starts += not h._in_session
    h.files[workdir + "\\pid"] = f"{proc.pid} {proc.start}".encode()
    h.log.append(f"server {exe}")
    return _ok(f"{proc.pid} {workdir}\n")


def _runner_params(runner: str) -> tuple[str, str]:
    values = {}
    for line in runner.split("\n"):
        for key in ("Exe", "ArgLine"):
            prefix = f"${key} = '"
            if line.startswith(prefix) and line.endswith("'"):
                values[key] = line[len(prefix):-1].replace("''", "'")
    return values["Exe"], values.get("ArgLine", "")


def _split(line: str) -> list[str]:
    # The words a test's tools use (no backslash before a quote): POSIX splitting reads
    # list2cmdline's output the same way here.
    import shlex

    return shlex.split(line, posix=True)


def _proc(h: FakeWindowsHost, call: Call) -> Proc | None:
    if "Id" in call.params:
        return h.procs.get(int(call.params["Id"]))
    return next((p for p in h.procs.values() if p.workdir == call.params.get("Dir")), None)


def _alive(h: FakeWindowsHost, call: Call) -> Reply:
    p = _proc(h, call)
    return "", "", 0 if p is not None and p.alive else 1


def _ended(h: FakeWindowsHost, call: Call) -> Reply:
    if call.params["Dir"] not in h.dirs:
        return "", "", 1         # no rc file appears: the polls run out
    p = _proc(h, call)
    return "", "", 0 if p is None or p.rc is not None else 1


def _stop(h: FakeWindowsHost, call: Call) -> Reply:
    p = _proc(h, call)
    if p is None or p.rc is not None:
        return "", "", 3
    if not p.out:
        return "", "", 1
    p.alive = False
    return _ok()


def _kill(h: FakeWindowsHost, call: Call) -> Reply:
    p = _proc(h, call)
    if p is not None:
        _terminate(p, "kill-tree")
    return _ok()


def _terminate(p: Proc, by: str) -> None:
    p.alive = False
    p.killed_by = p.killed_by or by
    if p.rc is None:
        p.rc = 1            # TerminateProcess's exit code from taskkill /F


def _wait(h: FakeWindowsHost, call: Call) -> Reply:
    p = _proc(h, call)
    return "", "", 0 if p is None or not p.alive else 1


def _collect(h: FakeWindowsHost, call: Call) -> Reply:
    p = _proc(h, call)
    if p is None:
        return _ok("\n\n\n")
    rc = "" if p.rc is None else str(p.rc)
    return _ok("\n".join([base64.b64encode(p.out).decode(), base64.b64encode(p.err).decode(),
                          rc]) + "\n")


def _cleanup(h: FakeWindowsHost, call: Call) -> Reply:
    h.remove(call.params["Dir"])
    for pid, p in list(h.procs.items()):
        if p.workdir == call.params["Dir"] and not p.alive:
            del h.procs[pid]
    return _ok()


def _reap(h: FakeWindowsHost, call: Call) -> Reply:
    """REAP: stop what a directory's "pid" or a *.pid file names if that pid still runs
    with the same start time, remove the path, one line per path."""
    lines = []
    for path in call.params["Paths"].split("\n"):
        if not h.exists(path):
            lines.append(f"none {path}")
            continue
        pidfile = path + "\\pid" if path in h.dirs else path if path.endswith(".pid") \
            else None
        what = "gone"
        words = h.files.get(pidfile, b"").decode().split() if pidfile else []
        if len(words) == 2 and words[0].isdigit():
            p = h.procs.get(int(words[0]))
            if p is not None and p.alive and p.start == words[1]:
                _terminate(p, "reap")
                what = "stopped"
        h.remove(path)
        lines.append(f"{what} {path}")
    return _ok("".join(line + "\n" for line in lines))


def _read_and_remove(h: FakeWindowsHost, call: Call) -> Reply:
    data = h.files.pop(call.params["Path"], None)
    return _ok("" if data is None else base64.b64encode(data).decode() + "\n")


def _wait_listening(h: FakeWindowsHost, call: Call) -> Reply:
    sshd = call.params["Protocol"] == "tcp" and call.params["Port"] == "22"
    return "", "", 0 if sshd or h.listening() else 1


def _format_list(h: FakeWindowsHost, call: Call) -> Reply:
    """Get-NetAdapterAdvancedProperty ... | Format-List *, in the layout of the E810
    capture (tests/fixtures/windows/mfd__...), for the jumbo keyword only."""
    found = h.find_adapter(call.params["By"], call.params["Adapter"])
    if found is None:
        return _no_adapter(call)
    name, a = found
    if a.keyword is None:
        return _ok("\n")
    lo, hi, step = a.numeric or ("", "", "")
    rows = {"ValueName": a.keyword, "ValueData": f"{{{a.value}}}", "ifAlias": name,
            "InterfaceAlias": name, "ifDesc": a.description, "DisplayName": "Jumbo Packet",
            "NumericParameterMaxValue": hi, "NumericParameterMinValue": lo,
            "NumericParameterStepValue": step, "RegistryKeyword": a.keyword,
            "RegistryValue": f"{{{a.value}}}",
            "ValidRegistryValues": "{" + ", ".join(a.valid if not a.numeric else ()) + "}"}
    width = max(len(k) for k in rows) + 1
    return _ok("\n" + "".join(f"{k:<{width}}: {v}".rstrip() + "\n" for k, v in rows.items())
               + "\n")


def _tool_file(h: FakeWindowsHost, call: Call) -> Reply:
    exe = call.params["Exe"]
    versions = {"NTttcp.exe": "5.40.0.0", "iperf.exe": "", "iperf3.exe": ""}
    if exe not in versions:
        return "", "", 1
    return _ok(f"C:\\tools\\{exe}\n{versions[exe]}\n")


def _native(h: FakeWindowsHost, call: Call) -> Reply:
    exe, args = call.argv[0], call.argv[1:]
    if exe == "reg.exe":
        # reg.exe's layout (Win32-OpenSSH#936 capture): the key, then a value line each.
        values = {"Hostname": ("REG_SZ", h.name.upper()),
                  **{k: (_typed(v).kind, f"{int(_typed(v).data):#x}"
                         if _typed(v).kind in ("REG_DWORD", "REG_QWORD") else _typed(v).data)
                     for k, v in h.registry.items()}}
        if "/v" in args:
            name = args[args.index("/v") + 1]
            if name not in values:
                return "", REG_ABSENT, 1
            values = {name: values[name]}
        return _ok("\nHKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Services\\Tcpip\\Parameters\n"
                   + "".join(f"    {k}    {t}    {v}\n" for k, (t, v) in values.items()) + "\n")
    if exe == "ping.exe":
        peer = args[-1]
        source = args[args.index("-S") + 1] if "-S" in args else None
        if source is not None and not any(source in a.addresses for a in h.adapters.values()):
            # ping.exe from an address the host does not have
            return _ok(f"\nPinging {peer} from {source} with 32 bytes of data:\nPING: "
                       "transmit failed. General failure. \n")
        size = int(args[args.index("-l") + 1]) if "-l" in args else 32
        mtu = h.peers.path_mtu(h, peer, source) if h.peers else 1500
        if h._silent_left > 0:
            h._silent_left -= 1
            mtu = None
        if mtu is None:
            return _ok(f"\nPinging {peer} with {size} bytes of data:\nRequest timed out.\n")
        if "-f" in args and size + 28 > mtu:
            return _ok(f"\nPinging {peer} with {size} bytes of data:\nPacket needs to be "
                       "fragmented but DF set.\n")
        return _ok(f"\nPinging {peer} with {size} bytes of data:\nReply from {peer}: "
                   f"bytes={size} time<1ms TTL=128\n")
    if exe == "shutdown.exe":
        h._rebooting, h._down, h._up_left = True, 0, h.up_after_shutdown
        return _ok()
    if exe in ("hostname", "hostname.exe"):
        return _ok(h.name.upper() + "\n")
    if h.tool_run is None:
        raise AssertionError(f"{h.name}: no tool answers for {exe}")
    client = None
    if call.pidfile is not None:       # the client keeps "<pid> <start>" there while it runs
        client = h.new_proc(list(call.argv))
        client.in_session = h._in_session
        h.files[call.pidfile] = f"{client.pid} {client.start}".encode()
    run = h.tool_run(h, list(call.argv))
    server = h.peers.server_of(h) if h.peers else None
    if server is not None:
        server.out = run.server.encode()
        server.rc = 0 if server.argv and "NTttcp" in server.argv[0] else None
    if run.outfile is not None and "-xml" in args:
        h.files[args[args.index("-xml") + 1]] = run.outfile
    if client is not None:             # it ended: the script removes its pid file
        client.alive, client.rc = False, run.exit_status
        del h.procs[client.pid]
        h.files.pop(call.pidfile or "", None)
    return run.client, "", run.exit_status


_HANDLERS: dict[str, Callable[[FakeWindowsHost, Call], Reply]] = {
    "host-facts": _host_facts, "adapter": _adapter,
    "last-boot": _last_boot, "delete": _registry, "reg-get": _reg_get, "firewall-get": _firewall,
    "firewall-allow": _firewall, "firewall-remove": _firewall, "cpu-raw": _cpu,
    "start": _background, "alive": _alive, "ended": _ended, "stop-after-output": _stop,
    "kill-tree": _kill, "wait-gone": _wait, "collect": _collect, "cleanup": _cleanup,
    "reap": _reap, "adapter-format-list": _format_list,
    "read-and-remove": _read_and_remove, "wait-listening": _wait_listening,
    "tool-file": _tool_file, "native": _native}


def _set(h: FakeWindowsHost, call: Call) -> Reply:
    # "set *JumboPacket" (adapter) and "set TcpWindowSize" (registry) share a verb.
    return _set_advanced(h, call) if "Keyword" in call.params else _registry(h, call)


_HANDLERS["set"] = _set


@dataclass
class FakeWindowsPair:
    """Scripted Windows hosts by name, for a Runner's ``hosts=``; their platforms are
    made with ``options`` (the profile's, as HostPool makes them: PlatformOptions.of)."""

    hosts: dict[str, FakeWindowsHost] = field(default_factory=dict)
    options: PlatformOptions = field(default_factory=PlatformOptions)
    platforms: dict[str, WindowsPlatform] = field(default_factory=dict)
    connections: dict[str, ReplayConnection] = field(default_factory=dict)
    closed: int = 0
    # Hosts beyond the scripted Windows ones (a Linux peer of a mixed pair): address ->
    # the MTU its interface has now, None if no host has that address. A ping to such
    # a peer is answered as that host would answer it.
    outside: Callable[[str], int | None] | None = None
    # One warm PowerShell per host, as SshConnection keeps by default; False: every
    # command a powershell.exe of its own (the fallback, and the form the goldens pin).
    warm: bool = True

    def add(self, host: FakeWindowsHost) -> FakeWindowsHost:
        host.peers = self
        self.hosts[host.name] = host
        return host

    def platform(self, name: str) -> WindowsPlatform:
        if name not in self.platforms:
            conn = ReplayConnection(name, WindowsShell(), self.hosts[name], warm=self.warm)
            self.connections[name] = conn
            plat = WindowsPlatform(conn, options=self.options)
            plat.probe_interval_s = 0.0
            self.platforms[name] = plat
        return self.platforms[name]

    def close(self) -> None:
        self.closed += 1

    def path_mtu(self, sender: FakeWindowsHost, peer: str,
                 source: str | None = None) -> int | None:
        """The MTU between the sender's adapter (the one holding ``source``; without
        one, the smallest) and the adapter holding ``peer``; None: no such peer."""
        mine = min((a.nl_mtu for a in sender.adapters.values()
                    if source is None or source in a.addresses), default=1500)
        for h in self.hosts.values():
            for a in h.adapters.values():
                if peer in a.addresses:
                    return min(mine, a.nl_mtu)
        theirs = self.outside(peer) if self.outside is not None else None
        return None if theirs is None else min(mine, theirs)

    def server_of(self, sender: FakeWindowsHost) -> Proc | None:
        for h in self.hosts.values():
            if h is not sender:
                live = [p for p in h.procs.values() if p.alive and p.rc is None]
                if live:
                    return live[-1]
        return None


def windows_pair(names: Mapping[str, tuple[str, str]], tool_run=None,
                 options: PlatformOptions | None = None,
                 **adapter: object) -> FakeWindowsPair:
    """Hosts ``name -> (interface, address)`` with one test adapter each."""
    pair = FakeWindowsPair(options=options or PlatformOptions())
    for name, (iface, address) in names.items():
        pair.add(FakeWindowsHost(name, {iface: FakeAdapter(addresses=(address,),
                                                           **adapter)},  # type: ignore[arg-type]
                                 tool_run=tool_run))
    return pair


__all__ = [
    "FakeAdapter",
    "FakeWindowsHost",
    "FakeWindowsPair",
    "ToolRun",
    "list2cmdline",
    "windows_pair",
]
