"""Per-point OS settings beyond MTU and sysctls, for hosts that have them (Windows):
``Tcpip\\Parameters`` registry values, with the reboots they need, and firewall rules
for exactly the tools' ports. The runner calls :meth:`OsSettings.apply` after a point's
sysctls and :meth:`OsSettings.restore_filter` when the point ends.

Reboots are few: points are grouped by their registry values (:func:`grouped`, stable),
registry values stay applied from one point to the next of the same group, and a
change of group writes the new values over the old ones (the journal keeps the true
originals) and reboots once. Each host's values are journaled after a ``reboot`` marker,
so restoring them (in reverse) ends with a reboot, also in ``nicbench restore`` after a
crash.

A profile's ``registry_policy`` says what to do with values modern Windows ignores
(TcpWindowSize, GlobalMaxTcpWindowSize: ignored since Vista): ``apply`` writes them
anyway, ``skip-if-ignored`` leaves them out; either way the manifest and the run's
output say so (``registry_notes``), never a silent "applied". The policy and the reboot
timeout reach each platform when it is made (``PlatformOptions``, from the profile);
which values the OS ignores it says itself (``Platform.registry_ignored``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from nicbench.config.profile import Point, TestSpec
from nicbench.errors import NicbenchError, TuningError, TuningErrorKind
from nicbench.execution import events as ev
from nicbench.execution.sides import PairSides
from nicbench.platforms.base import Platform, SettingKind
from nicbench.platforms.tuning import Change, TuningSession
from nicbench.tools.driver import Endpoints
from nicbench.tools.params import resolve
from nicbench.tools.registry import TOOLS, tool_ports

if TYPE_CHECKING:
    from nicbench.platforms.windows import WindowsPlatform

REGISTRY_KINDS = (SettingKind.REGISTRY, SettingKind.REBOOT)
REBOOT_MARKER = "tcpip-parameters"


def registry_key(point: Point) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(point.registry.items()))


def grouped(points: Iterable[Point]) -> list[Point]:
    """Points with the same registry values next to each other, in the order each set
    first appears (1514, 9014, 1514 -> 1514, 1514, 9014): one reboot per set."""
    order: dict[tuple, list[Point]] = {}
    for p in points:
        order.setdefault(registry_key(p), []).append(p)
    return [p for group in order.values() for p in group]


class OsSettings:
    def __init__(self, tuning: TuningSession, listener: ev.Listener):
        self.tuning = tuning
        self.listener = listener
        self.notes: dict[str, list[str]] = {}      # host -> registry notes, for the manifest
        self._told: set[tuple[str, str]] = set()

    # -- apply ---------------------------------------------------------------------------
    def apply(self, side: PairSides, point: Point, tests: list[TestSpec]) -> None:
        hosts = [(plat, iface) for plat, iface, _ in side.ends]
        rebooted = self._registry(point, [p for p, _ in hosts
                                          if p.supports(SettingKind.REGISTRY)])
        # Back from a boot: the test adapter Up at its link, the peer answering on the
        # test link, before anything is measured (TuningError: the point says why).
        (receiver, r_if, r_addr), (sender, s_if, s_addr) = side.ends
        for plat, iface, peer in ((receiver, r_if, s_addr), (sender, s_if, r_addr)):
            if plat in rebooted:
                plat.wait_adapter_up(iface)
                plat.wait_peer(iface, peer)
        ports = self._ports(side, point, tests)
        for plat, _ in hosts:
            if plat.supports(SettingKind.FIREWALL) and ports:
                from nicbench.platforms.windows_commands import port_spec

                self.tuning.apply(plat, SettingKind.FIREWALL, f"nicbench-{side.pair.name}",
                                  port_spec(sorted(ports)))

    def _registry(self, point: Point, platforms: list[Platform]) -> list[WindowsPlatform]:
        """Write the point's registry values; the hosts rebooted for them."""
        changed: list[Platform] = []
        for plat in platforms:
            wanted = self._wanted(plat, point)

            # Values of the previous group this point does not set go back first; with
            # none left, so does their reboot marker (restoring it reboots the host).
            def dropped(c: Change, host: str = plat.host, keep: dict = wanted) -> bool:
                if c.host != host:
                    return False
                return c.key not in keep if c.kind is SettingKind.REGISTRY else \
                    c.kind is SettingKind.REBOOT and not keep

            dropping = [c for c in self.tuning.pending() if dropped(c)]
            # This host only: pairs measured at once on other hosts have their own
            # settings and running tools in the same journal.
            problems = self.tuning.restore(hosts={plat.host}, only=dropped)
            if problems:
                raise TuningError(plat.host, "registry values of the previous point",
                                  "their originals", str(problems[0]),
                                  "run `nicbench restore DIR` when the host answers",
                                  kind=TuningErrorKind.OTHER)
            rebooted = any(c.kind is SettingKind.REBOOT for c in dropping)
            moved = bool(dropping) and not rebooted
            if wanted:
                # Journaled before the values, so restoring (in reverse) reboots last.
                self.tuning.apply(plat, SettingKind.REBOOT, REBOOT_MARKER, "pending")
            for name, value in wanted.items():
                moved = self.tuning.apply(plat, SettingKind.REGISTRY, name, str(value)) or moved
            if moved:
                changed.append(plat)
        if not changed:
            return []
        from nicbench.platforms.windows import WindowsPlatform, reboot_together

        wins = [p for p in changed if isinstance(p, WindowsPlatform)]
        took = reboot_together(wins)
        for host, seconds in took.items():
            self.listener(ev.HostRebooted(host=host, seconds=seconds,
                                          reason=f"registry values of {point.name}"))
        return wins

    def _wanted(self, plat: Platform, point: Point) -> dict[str, int]:
        wanted = {}
        for name, value in point.registry.items():
            if plat.registry_ignored(name):
                skip = plat.options.registry_policy == "skip-if-ignored"
                note = (f"{name}: ignored by this Windows (since Vista, Microsoft: \"no longer "
                        f"supported, and ignored\"); " + (
                            "not written (registry_policy: skip-if-ignored); the tools' "
                            "socket buffers (-w, -rb) carry the window"
                            if skip else "written anyway (registry_policy: apply), with "
                            "no effect on the figures"))
                if (plat.host, name) not in self._told:
                    self._told.add((plat.host, name))
                    self.notes.setdefault(plat.host, []).append(note)
                    self.listener(ev.Warning(f"{plat.host}: {note}"))
                if skip:
                    continue
            wanted[name] = value
        return wanted

    def _ports(self, side: PairSides, point: Point, tests: list[TestSpec]) -> set[int]:
        """Every port the point's tests listen on (from the drivers' own plans)."""
        (receiver, _, r_addr), (sender, _, s_addr) = side.ends
        ports: set[int] = set()
        for test in tests:
            try:
                offered = test.udp_search.start_bps if test.udp_search else None
                plan = TOOLS[test.tool].driver.plan(
                    receiver.executable(test.tool), sender.executable(test.tool),
                    resolve(test.params, point.vars),
                    Endpoints(r_addr, s_addr, test.protocol, offered,
                              receiver_os=receiver.os_name, sender_os=sender.os_name,
                              client_file=sender.scratch_file("nicbench-ports")), "ports")
            except NicbenchError:
                continue     # the trial itself will fail with the reason
            ports.update(plan.ports or (plan.port,))
            for beside in test.beside:     # the tools run beside it listen too
                try:
                    ports.update(tool_ports(beside.tool, resolve(beside.params, point.vars),
                                            beside.protocol))
                except NicbenchError:
                    continue
        return ports

    # -- restore -----------------------------------------------------------------------------
    def restore_filter(self, next_point: Point | None) -> Callable[[Change], bool]:
        """What to restore when a point ends: everything, except registry values (and
        their reboot marker) when the next point sets registry values too; that point
        moves them to its own set with one reboot."""
        keep = next_point is not None and bool(next_point.registry)
        return lambda c: not (keep and c.kind in REGISTRY_KINDS)
