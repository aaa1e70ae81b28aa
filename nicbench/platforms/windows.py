"""Windows hosts (10 1809+ / Server 2019+, OpenSSH server, Windows PowerShell 5.1).

The same seam as ``linux.py``, over :class:`~nicbench.remote.powershell.WindowsShell`;
every operation is a builder and a reader in ``windows_commands.py``. Settings, each read,
changed, read back, journaled by :class:`~nicbench.platforms.tuning.TuningSession` and
restored ("absent" is a real original: restoring it deletes):

``jumbo``     key: interface; value: the driver's jumbo keyword's registry value
              (``*JumboPacket``, else the driver's own). ``set_mtu`` maps onto it (frame =
              IP MTU + 14). A value the driver does not list or range is refused with the
              driver's valid values; after the miniport restarts, the adapter must be Up
              and NlMtu must read frame - 14 (else a mismatch naming both numbers).
``registry``  key: a ``Tcpip\\Parameters`` value (TcpWindowSize ...); written as a
              REG_DWORD, its original journaled with its type and raw data (REG_SZ,
              REG_DWORD up to 0xffffffff, REG_QWORD, ..., or absent) and put back
              exactly so (:class:`~.windows_commands.RegValue`); a restore that fails
              says the reg.exe command to finish it by hand. Takes effect at the next
              boot (Windows 2000/XP/2003).
``reboot``    a journal marker recorded before a host's registry values: applying it
              does nothing; restoring it (after those values, the journal restores in
              reverse) reboots the host and waits, so a crash between the two is
              recovered by ``nicbench restore``.
``firewall``  key: a rule name; value: the ports (TCP and UDP rules in group nicbench).

Adapters: the inventory names one by its name (localized too), ifIndex or interface
GUID; it is found once by that (exact comparison, never a wildcard), then named by its
GUID (:meth:`adapter`, :meth:`ident`). Pings go from the test adapter's own address.

Processes and files a trial leaves (a receiver's directory, a client's pid file, a
tool's -xml file) are named under the SSH user's TEMP (:meth:`scratch_file`), so the
journal holds full paths that :meth:`reap` finds from any later session.

Reboot-wait (:meth:`begin_reboot`, :meth:`finish_reboot`): the boot time is read, the
host told to restart, the connection closed; then the host is followed down and up:
probed, every probe with its own timeout, until it answers with a boot time later by
more than the probe's own jitter (:data:`BOOT_JITTER_S`). Every failing probe is waited
out: a refused, dropped or timed-out connection, and a host that answers before WMI is
ready (``Get-CimInstance : The RPC server is unavailable.``, exit 1); a changed host key
(or a refused login) is fatal. Past the profile's ``reboot_timeout_s`` (``options``,
given when the platform is made) or past as many probes as that time holds
(:class:`RebootWait`), the wait fails with one line saying so and the last answer. Then
the adapter must be Up at the link it had (:meth:`wait_adapter_up`) and, before a point
is measured, the peer must answer on the test link (:meth:`wait_peer`).
:func:`reboot_together` waits for every host it restarted, however slow one of them is.
"""

from __future__ import annotations

import contextlib
import math
import ntpath
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import assert_never
from collections.abc import Callable, Mapping, Sequence

from nicbench.errors import (AuthError, CommandError, CommandTimeout, ConnectError, HostKeyError,
                             NicbenchError, ParseError, RemoteError, TrialError, TuningError,
                             TuningErrorKind, UsageError)
from nicbench.platforms import windows_commands as wc
from nicbench.platforms.base import CpuTimes, Platform, PlatformOptions, SettingKind
from nicbench.polling import poll_until
from nicbench.remote.connection import Connection
from nicbench.remote.powershell import WindowsShell
from nicbench.results.facts import WindowsHostFacts, WindowsInterfaceFacts
from nicbench.tools.registry import TOOLS

PROBE_TIMEOUT_S = 10.0              # the first command after a boot can hang (PKB 5112997b4)
# The probes a reboot-wait may make are counted as if at least this far apart, so a
# wait that does not sleep (tests, a plan) still ends after a bounded number of them.
MIN_PROBE_INTERVAL_S = 1.0
ADAPTER_UP_TIMEOUT_S = 60.0
# LastBootUpTime is worked out from the clock and the uptime, so two probes of one boot
# can differ by a tick or so; a real reboot moves it by at least shutdown's /t 5 plus the
# uptime before it. A move of this much or less is the same boot.
BOOT_JITTER_S = 2.0
# A reap command line, rendered, at most this long (cmd.exe takes 8191; the pid line
# render_with_pid adds stays within the margin).
REAP_LINE_MAX = 7600


@dataclass(frozen=True)
class RebootWait:
    """How a reboot is waited for: a probe of the boot time every ``interval_s``, each
    within ``probe_timeout_s``, for at most ``timeout_s`` and at most ``max_probes``."""

    timeout_s: float
    interval_s: float
    probe_timeout_s: float = PROBE_TIMEOUT_S

    @property
    def max_probes(self) -> int:
        return math.ceil(self.timeout_s / max(self.interval_s, MIN_PROBE_INTERVAL_S)) + 1

    def text(self) -> str:
        return (f"repeated every {self.interval_s:g} s (each at most "
                f"{self.probe_timeout_s:g} s) until the boot time changes: at most "
                f"{self.timeout_s:g} s (reboot_timeout_s) and {self.max_probes} probes")


class WindowsPlatform(Platform):
    os_name = "windows"
    PROBE_INTERVAL_S = 5.0
    SETTING_KINDS = (SettingKind.JUMBO, SettingKind.REGISTRY, SettingKind.REBOOT,
                     SettingKind.FIREWALL)

    def __init__(self, conn: Connection, tools: Mapping[str, str] | None = None,
                 options: PlatformOptions | None = None):
        if not isinstance(conn.shell, WindowsShell):
            raise UsageError(f"{conn.host}: a Windows host needs the powershell shell")
        super().__init__(conn, tools, options)
        self.probe_interval_s = self.PROBE_INTERVAL_S
        self._host: wc.WindowsHost | None = None
        self._adapters: dict[str, wc.WindowsAdapter] = {}
        self._boot_before: str | None = None
        self._links: dict[str, str] = {}     # adapter -> link speed before a reboot
        # adapter (as the inventory names it) -> its interface GUID, once read: kept
        # across reconnects and reboots (a GUID does not change; a name or ifIndex may)
        self._guids: dict[str, str] = {}
        self._temp: str | None = None
        self.reboots = 0

    def reconnect(self, timeout_s: float) -> None:
        # The host may have rebooted while it was away: its boot time, adapters and
        # jumbo values are asked again.
        super().reconnect(timeout_s)
        self._host = None
        self._adapters.clear()

    # -- facts -----------------------------------------------------------------------------
    def windows(self) -> wc.WindowsHost:
        if self._host is None:
            self._host = wc.read_host_facts(self.conn.run(wc.host_facts_argv()).stdout)
        return self._host

    def host_facts(self) -> WindowsHostFacts:
        w = self.windows()
        try:
            counters = self._cpu()[1]
        except RemoteError:
            counters = None
        return WindowsHostFacts(
            os="windows", kernel=f"{w.version}", cpu_model=w.cpu_model, cpus=w.cpus,
            hostname=w.hostname, caption=w.caption, version=w.version, build=w.build,
            last_boot=w.last_boot, defender_realtime=w.defender_realtime,
            autotuning=w.autotuning, cpu_counters=counters)

    def adapter(self, iface: str, fresh: bool = False) -> wc.WindowsAdapter:
        """The adapter the inventory names ``iface`` (its name, ifIndex or GUID). Found
        once by that, then by its interface GUID (:meth:`ident`), so a rename, a
        localized name or an ifIndex that moved after a boot changes nothing."""
        if fresh or iface not in self._adapters:
            res = self.conn.run(wc.adapter_argv(self.ident(iface)), warn=True)
            if not res.ok:
                raise TuningError(self.host, "interface", iface, _one_line(res.tail())
                                  or "not found", "check pairs[].a/b.interface: a name, "
                                  "ifIndex or InterfaceGuid that Get-NetAdapter lists",
                                  kind=TuningErrorKind.INTERFACE)
            a = wc.read_adapter(res.stdout)
            self._adapters[iface] = a
            if a.guid and wc.WINDOWS_GUID_RE.fullmatch(a.guid):
                self._guids.setdefault(iface, a.guid.upper())
        return self._adapters[iface]

    def ident(self, iface: str) -> str:
        """How the adapter ``iface`` is named in commands: its GUID once known."""
        return self._guids.get(iface, iface)

    def interface_facts(self, iface: str) -> WindowsInterfaceFacts:
        a = self.adapter(iface, fresh=True)
        jumbo = a.jumbo()
        max_mtu = None
        if jumbo is not None:
            top = max((int(v) for v in jumbo.valid if v.isdigit()), default=jumbo.maximum)
            if top is not None:
                max_mtu = top if jumbo.keyword in wc.MTU_STYLE_KEYWORDS else top - 14
        offloads = {p.keyword: p.value not in ("0", None) for p in a.advanced
                    if p.keyword in ("*LsoV2IPv4", "*TCPChecksumOffloadIPv4", "*RSS",
                                     "*IPChecksumOffloadIPv4", "*InterruptModeration")}
        return WindowsInterfaceFacts(
            name=a.name or iface, mtu=a.nl_mtu or 0, max_mtu=max_mtu, state=a.status.lower(),
            carrier=a.status == "Up", driver=a.driver_description or None,
            driver_version=a.driver_version or None, offloads=offloads,
            addresses=a.addresses, driver_provider=a.driver_provider or None,
            description=a.description or None, if_index=a.if_index, guid=a.guid or None,
            link_speed=a.link_speed or None,
            jumbo_keyword=jumbo.keyword if jumbo else None,
            jumbo_value=jumbo.value if jumbo else None,
            jumbo_valid=jumbo.valid if jumbo else (),
            jumbo_range=(jumbo.minimum, jumbo.maximum, jumbo.step) if jumbo and
            jumbo.minimum is not None else None)

    # -- MTU through the jumbo keyword ----------------------------------------------------
    def get_mtu(self, iface: str) -> int:
        a = self.adapter(iface, fresh=True)
        if a.nl_mtu is None:
            raise TuningError(self.host, "interface", iface, "no IPv4 interface",
                              kind=TuningErrorKind.INTERFACE)
        return a.nl_mtu

    def mtu_setting(self, iface: str, mtu: int) -> tuple[SettingKind, str, str]:
        jumbo = self.adapter(iface).jumbo()
        frame = mtu if jumbo is not None and jumbo.keyword in wc.MTU_STYLE_KEYWORDS \
            else mtu + 14
        return SettingKind.JUMBO, iface, str(frame)

    def set_mtu(self, iface: str, mtu: int) -> None:
        kind, key, value = self.mtu_setting(iface, mtu)
        self.set_setting(kind, key, value)

    def _get_jumbo(self, iface: str) -> str | None:
        jumbo = self.adapter(iface, fresh=True).jumbo()
        return None if jumbo is None else jumbo.value

    def _set_jumbo(self, iface: str, value: str | None) -> None:
        if value is None:
            return   # the driver had no jumbo keyword: nothing was changed
        jumbo = self.adapter(iface).jumbo()
        setting = f"jumbo frame of {iface}"
        if jumbo is None:
            if value in ("1514", "1500"):
                return
            raise TuningError(self.host, setting, value,
                              f"the driver has none of the keywords {', '.join(wc.JUMBO_KEYWORDS)}",
                              "this card's driver offers no jumbo frames")
        why = jumbo.refusal(value)
        if why:
            raise TuningError(self.host, setting, value, why,
                              "the driver does not offer this size")
        res = self.conn.run(wc.set_advanced_argv(self.ident(iface), jumbo.keyword, value,
                                                 ADAPTER_UP_TIMEOUT_S),
                            warn=True, timeout=ADAPTER_UP_TIMEOUT_S + 30)
        if res.exit_status == 3:
            raise TuningError(self.host, setting, value, res.tail(),
                              "the adapter did not come back after the driver restarted it",
                              kind=TuningErrorKind.INTERFACE)
        if not res.ok:
            said, valid = wc.read_set_property_error(res.stderr or res.stdout)
            raise TuningError(self.host, setting, value, said,
                              "the driver does not offer this size" if valid else "")
        now = self.adapter(iface, fresh=True)
        got = now.jumbo()
        if got is None or got.value != value:
            raise TuningError(self.host, setting, value,
                              f"accepted, but {jumbo.keyword} reads back as "
                              f"{got.value if got else 'nothing'}", kind=TuningErrorKind.MISMATCH)
        want_mtu = int(value) if jumbo.keyword in wc.MTU_STYLE_KEYWORDS else int(value) - 14
        if now.nl_mtu != want_mtu:
            # The Broadcom case: an MTU-valued *JumboPacket, or an IP MTU pinned with
            # netsh ... store=persistent (n2n#153: the two can disagree).
            raise TuningError(self.host, setting, value,
                              f"accepted, but the IP MTU reads back as {now.nl_mtu}, not "
                              f"{want_mtu}", kind=TuningErrorKind.MISMATCH)

    def _source(self, iface: str, peer: str) -> str | None:
        """The test adapter's address to ping ``peer`` from (None: the adapter cannot be
        read; the ping then goes from wherever the host routes it, and the answer says
        whether the peer is there at all)."""
        try:
            return wc.source_address(self.adapter(iface).addresses, peer)
        except TuningError:
            return None

    def verify_path_mtu(self, iface: str, peer: str, mtu: int) -> None:
        res = self.conn.run(wc.ping_argv(peer, mtu - 28, self._source(iface, peer)),
                            warn=True, timeout=15)
        replied, said = wc.read_ping(res.stdout + "\n" + res.stderr, peer)
        if not replied:
            raise TuningError(self.host, f"path MTU to {peer}", mtu,
                              f"no reply to a {mtu}-byte packet with DF set ({said})",
                              "the link or the other end does not carry this MTU",
                              kind=TuningErrorKind.PATH)

    def reaches(self, iface: str, peer: str) -> bool:
        res = self.conn.run(wc.ping_argv(peer, source=self._source(iface, peer)), warn=True,
                            timeout=15)
        return wc.read_ping(res.stdout, peer)[0]

    # -- registry ------------------------------------------------------------------------------
    def _get_registry(self, name: str) -> str | None:
        """The value's journal text (:meth:`RegValue.text`: type and raw data), None
        if absent."""
        res = self.conn.run(wc.reg_get_argv(name), warn=True)
        if not res.ok:
            raise TuningError(self.host, f"registry {name}", "?", _one_line(res.tail()),
                              kind=TuningErrorKind.OTHER)
        value = wc.read_reg_get(res.stdout)
        return None if value is None else value.text()

    def _set_registry(self, name: str, value: str | None) -> None:
        """Write ``name`` as ``value`` says, with its type (a journal's original goes back
        exactly as it was; None deletes it). Every failure is a TuningError naming the
        reg.exe command that finishes the job by hand."""
        setting = f"registry {name}"
        shown = value if value is not None else wc.ABSENT
        try:
            typed = None if value is None else wc.RegValue.parse(value)
        except ValueError as exc:
            raise TuningError(self.host, setting, shown, f"not a value nicbench can write "
                              f"({exc})", "set it by hand with reg add",
                              kind=TuningErrorKind.OTHER) from None
        by_hand = f"to finish by hand: {wc.registry_by_hand(name, typed)}"
        try:
            res = self.conn.run(wc.set_registry_argv(name, typed), warn=True)
            now = self._get_registry(name) if res.ok else None
        except (CommandError, ParseError, UsageError, TuningError) as exc:
            said = exc.kernel_message if isinstance(exc, TuningError) else str(exc)
            raise TuningError(self.host, setting, shown, _one_line(said), by_hand,
                              kind=TuningErrorKind.OTHER) from None
        if not res.ok:
            raise TuningError(self.host, setting, shown, _one_line(res.tail()), by_hand,
                              kind=TuningErrorKind.OTHER)
        if now != value:
            raise TuningError(self.host, setting, shown,
                              f"reads back as {now if now is not None else wc.ABSENT}",
                              by_hand, kind=TuningErrorKind.MISMATCH)

    def registry_ignored(self, name: str) -> bool:
        return self.windows().ignores(name)

    # -- firewall --------------------------------------------------------------------------------
    def _get_firewall(self, name: str) -> str | None:
        out = self.conn.run(wc.firewall_get_argv(name)).stdout.strip()
        return None if out == wc.ABSENT else out

    def _set_firewall(self, name: str, ports: str | None) -> None:
        self.conn.run(wc.firewall_set_argv(name, ports))
        now = self._get_firewall(name)
        if now != ports:
            raise TuningError(self.host, f"firewall rule {name}", ports or wc.ABSENT,
                              f"reads back as {now or wc.ABSENT}", kind=TuningErrorKind.MISMATCH)

    # -- settings, as the journal sees them ----------------------------------------------------
    def get_setting(self, kind: SettingKind, key: str) -> str | None:
        match kind:
            case SettingKind.JUMBO:
                return self._get_jumbo(key)
            case SettingKind.REGISTRY:
                return self._get_registry(key)
            case SettingKind.FIREWALL:
                return self._get_firewall(key)
            case SettingKind.REBOOT:
                return None   # a marker: never "already there"
            case SettingKind.MTU | SettingKind.SYSCTL:
                return super().get_setting(kind, key)
            case _:
                assert_never(kind)

    def set_setting(self, kind: SettingKind, key: str, value: str | None) -> None:
        match kind:
            case SettingKind.JUMBO:
                self._set_jumbo(key, value)
            case SettingKind.REGISTRY:
                self._set_registry(key, value)
            case SettingKind.FIREWALL:
                self._set_firewall(key, value)
            case SettingKind.REBOOT:
                if value is None:       # restoring the marker: the restored values need a boot
                    self.reboot()
            case SettingKind.MTU | SettingKind.SYSCTL:
                super().set_setting(kind, key, value)
            case _:
                assert_never(kind)

    def same_setting(self, kind: SettingKind, a: str | None, b: str | None) -> bool:
        if kind is SettingKind.JUMBO and a is None:
            return b in ("1514", "1500", None)   # no keyword: standard frames only
        return super().same_setting(kind, a, b)

    # -- reboot-wait ------------------------------------------------------------------------------
    def begin_reboot(self) -> None:
        """Read the boot time, tell the host to restart, drop the connection."""
        self._boot_before = wc.read_last_boot(
            self.conn.run(wc.last_boot_argv(), timeout=PROBE_TIMEOUT_S).stdout)
        # The channel may drop as the host goes down (rig treats it as success).
        with contextlib.suppress(ConnectError, CommandTimeout):
            self.conn.run(wc.reboot_argv(), timeout=PROBE_TIMEOUT_S)
        self._links = {name: a.link_speed for name, a in self._adapters.items()}
        self.conn.close()
        self._host = None
        self._adapters.clear()

    @property
    def reboot_wait(self) -> RebootWait:
        return RebootWait(self.options.reboot_timeout_s, self.probe_interval_s)

    def finish_reboot(self, deadline: float | None = None) -> float:
        """Follow the host down and up: probe its boot time until it answers with one
        later than before by more than the probe's own jitter (:data:`BOOT_JITTER_S`);
        returns the seconds it took. Every probe has its own timeout, and every failure
        of one is waited out (refused or dropped connections, a timeout, and what a host
        that is still booting answers, ``Get-CimInstance : The RPC server is
        unavailable.`` with exit 1), except another host key or a refused login.
        ConnectError after the deadline or :attr:`RebootWait.max_probes` probes."""
        assert self._boot_before is not None, "begin_reboot first"
        wait = self.reboot_wait
        t0 = time.monotonic()
        deadline = deadline or t0 + wait.timeout_s
        before = _boot_instant(self._boot_before)
        last, went_down = "no answer yet", False
        for polls in range(1, wait.max_probes + 1):
            try:
                boot = wc.read_last_boot(self.conn.run(wc.last_boot_argv(),
                                                       timeout=wait.probe_timeout_s).stdout)
                moved = (_boot_instant(boot) - before).total_seconds()
                if moved > BOOT_JITTER_S:
                    self._boot_before = None
                    self.reboots += 1
                    return time.monotonic() - t0
                last = (f"still up since {boot}" if not went_down else
                        f"back, but still up since {boot}")
            except (HostKeyError, AuthError):
                raise            # a different host answers, or our key is refused: stop
            except (ConnectError, CommandTimeout) as exc:
                went_down = True
                last = exc.one_line()
                self.conn.close()
            except (RemoteError, ParseError) as exc:
                last = exc.one_line()    # up, but not ready to answer (WMI, RPC)
            if time.monotonic() >= deadline or polls == wait.max_probes:
                break
            time.sleep(min(wait.interval_s, max(0.0, deadline - time.monotonic())))
        raise ConnectError(self.host, f"did not come back within {wait.timeout_s:g} s of a "
                                      f"reboot ({polls} probes; last: {last})",
                           "check the host's console; raise reboot_timeout_s for slow boots")

    def reboot(self) -> None:
        self.begin_reboot()
        self.finish_reboot()
        for iface in list(self._links):
            self.wait_adapter_up(iface)

    def wait_adapter_up(self, iface: str, timeout_s: float = ADAPTER_UP_TIMEOUT_S) -> None:
        """After a boot: the adapter is Up at the link speed it had before (the driver
        may take a while after sshd answers); TuningError (interface) if not."""
        want = self._links.get(iface) or None
        seen = ["not asked"]

        def up() -> bool:
            a = self.adapter(iface, fresh=True)
            seen[0] = a.status + (f" at {a.link_speed}" if a.link_speed else "")
            return a.status == "Up" and (want is None or a.link_speed == want)

        if self._poll(up, timeout_s):
            return
        raise TuningError(self.host, f"interface {iface} after a reboot", "Up" + (
            f" at {want}" if want else ""), f"{timeout_s:g} s after the boot it is {seen[0]}",
            "check the cable and the driver on the host's console",
            kind=TuningErrorKind.INTERFACE)

    def wait_peer(self, iface: str, peer: str, timeout_s: float = ADAPTER_UP_TIMEOUT_S) -> None:
        """After a boot: ``peer`` answers a ping on the test link; TuningError (path)
        if it does not within ``timeout_s``."""
        if self._poll(lambda: self.reaches(iface, peer), timeout_s):
            return
        raise TuningError(self.host, f"the test link to {peer} after a reboot", "answering",
                          f"no reply within {timeout_s:g} s",
                          "check the peer and the cable", kind=TuningErrorKind.PATH)

    def _poll(self, check: Callable[[], bool], timeout_s: float) -> bool:
        """``check`` every probe interval until it holds, at most ``timeout_s`` and as
        many probes as that time holds (:func:`_polls`)."""
        return poll_until(check, timeout_s, self.probe_interval_s,
                          tries=_polls(timeout_s, self.probe_interval_s))

    # -- measurement helpers ------------------------------------------------------------------
    def _cpu(self) -> tuple[CpuTimes, int]:
        return wc.read_cpu_raw(self.conn.run(wc.cpu_raw_argv()).stdout)

    def cpu_times(self) -> CpuTimes:
        return self._cpu()[0]

    def wait_listening(self, port: int, protocol: str, timeout_s: float) -> None:
        try:
            res = self.conn.run(wc.wait_listening_argv(port, protocol, timeout_s),
                                timeout=timeout_s + 10, warn=True)
        except CommandTimeout:
            res = None
        if res is None or res.exit_status != 0:
            raise TrialError(f"{self.host}: nothing listened on {protocol} port {port} "
                             f"within {timeout_s:g} s")

    def probe_version(self, tool: str, exe: str) -> str | None:
        res = self.conn.run(wc.tool_file_argv(exe), warn=True)
        if not res.ok:
            return None
        _, version = wc.read_tool_file(res.stdout)
        if version:
            return version
        probe = TOOLS[tool].version   # no version resource (Cygwin/MinGW builds): ask it
        banner = self.conn.run([exe, *probe.args], warn=True, timeout=10)
        text = banner.stdout + banner.stderr
        m = re.search(r"Copyright Version (\S+)", text) or re.search(probe.regex, text)
        return m.group(1) if m else "unknown"

    def scratch_file(self, name: str) -> str:
        # In the SSH user's TEMP (asked once; it does not move with a reboot), so the
        # journal holds a full path that reap finds again from any later session.
        if self._temp is None:
            temp = self.windows().temp
            if not temp:
                raise RemoteError(self.host, "the host did not say where its TEMP is")
            self._temp = temp
        return ntpath.join(self._temp, name)

    def reap(self, paths: Sequence[str]) -> dict[str, str]:
        # One encoded script must stay under cmd.exe's 8191 characters: a long list of
        # leftovers (a crash late in a run) goes in as many calls as it takes.
        out: dict[str, str] = {}
        batch: list[str] = []
        for path in paths:
            if batch and len(self.conn.shell.render(
                    self.conn.shell.reap_argv([*batch, path]))) > REAP_LINE_MAX:
                out.update(super().reap(batch))
                batch = []
            batch.append(path)
        out.update(super().reap(batch))
        return out

    def read_and_remove(self, path: str) -> str | None:
        res = self.conn.run(self.conn.shell.read_and_remove_argv(path), warn=True)
        shell = self.conn.shell
        assert isinstance(shell, WindowsShell)
        return shell.read_back(res.stdout) or None


def _boot_instant(text: str) -> datetime:
    try:
        at = datetime.fromisoformat(text)
        return at if at.tzinfo is not None else at.replace(tzinfo=UTC)
    except ValueError:
        raise ParseError("windows", "a boot time like 2024-05-01T08:00:00.0000000Z",
                         f"{text[:60]!r}") from None


def _polls(timeout_s: float, interval_s: float) -> int:
    """As many polls as ``timeout_s`` holds, counted as if at least
    MIN_PROBE_INTERVAL_S apart (a wait that does not sleep still ends)."""
    return math.ceil(timeout_s / max(interval_s, MIN_PROBE_INTERVAL_S)) + 1


def _one_line(text: str) -> str:
    return " ".join(text.split()) or "no message"


def reboot_together(platforms: Sequence[WindowsPlatform]) -> dict[str, float]:
    """Restart several hosts at once and wait for all, each within its own reboot
    timeout counted from when the first was told; host -> seconds. One host that is
    slow, never comes back, or answers with another host key, does not cut short the
    wait for the others: every host told is waited for, then the first failure is
    raised (a lost host's message names the others lost too)."""
    t0 = time.monotonic()
    failed: list[NicbenchError] = []
    told = []
    for p in platforms:
        try:
            p.begin_reboot()
            told.append(p)
        except NicbenchError as exc:
            failed.append(exc)
    took = {}
    for p in told:
        try:
            took[p.host] = p.finish_reboot(t0 + p.reboot_wait.timeout_s)
        except NicbenchError as exc:
            failed.append(exc)
    if failed:
        first = failed[0]
        if type(first) is ConnectError and len(failed) > 1:
            others = "; ".join(e.one_line() for e in failed[1:])
            raise ConnectError(first.host, f"{first.message} (also: {others})", first.hint)
        raise first
    return took
