"""Is each pair ready to measure? ``nicbench check``'s questions, and the run's ready phase.

For each pair: both hosts answer over SSH, the test interfaces exist and are up, the
tools are installed (with versions), the test addresses reach each other across the test
link, and the current and maximum MTUs are known. Each problem is one line saying what
to do.

With a profile (``nicbench check --profile P``), also: the profile's method is the hosts' OS
(else one refusal line before anything is contacted, the same as ``nicbench run``), the
tools its tests use are installed, and which of its points an adapter cannot carry (an MTU
above the interfaces' largest): those are reported as "will be skipped", not as problems,
since the reviews listed such cards and skipped those sizes.

Before a run changes anything, the same questions of each of its pairs:
both hosts answer, the test interfaces exist, are up and have their addresses, the
profile's tools are installed on both hosts (in versions that have the options its
tests use: iperf3's ``--bidir`` since 3.7), and the addresses reach each other.

A pair that is not ready is recorded as not measurable at once (``Failure.INTERFACE``
for a test interface missing or down, else ``Failure.NOT_READY``; check's reason),
before any setting changes, and the other pairs run; a run with no
pair ready is refused (:class:`~nicbench.errors.NotReadyError`, exit 2). A resume asks
again, so a pair fixed since is measured then.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from nicbench.config.inventory import Inventory, Pair
from nicbench.config.profile import Profile
from nicbench.config.profile import check_platforms
from nicbench.errors import NicbenchError, TuningError, TuningErrorKind
from nicbench.execution.sides import Hosts
from nicbench.platforms.hosts import HostPool
from nicbench.results.facts import LinkState
from nicbench.results.records import Failure
from nicbench.tools.driver import version_numbers
from nicbench.tools.registry import TOOLS, VersionNeed, version_needs


@dataclass
class SideReport:
    host: str
    interface: str
    address: str
    kernel: str | None = None
    driver: str | None = None
    mtu: int | None = None
    max_mtu: int | None = None
    state: str | None = None
    tools: dict[str, str | None] = field(default_factory=dict)
    reaches_peer: bool | None = None


@dataclass
class PairReport:
    pair: str
    adapter: str
    sides: list[SideReport]
    problems: list[str]
    skipped: list[str] = field(default_factory=list)   # profile points the adapter refuses
    # A test interface is missing or down (a run records the pair as "interface").
    no_interface: bool = False

    @property
    def ready(self) -> bool:
        return not self.problems


def check_pair(pool: Hosts, pair: Pair, required_tools: tuple[str, ...], *,
               every_tool: bool = True, needs: Sequence[VersionNeed] = ()) -> PairReport:
    """One pair's report (``nicbench check``, and ``nicbench run`` before it changes
    anything: execution/readiness.py, which asks only for the tools the run needs:
    ``every_tool=False``; a version probe is a process start, costly on Windows)."""
    sides, problems = [], []
    no_interface = False
    for name, side, peer in (("a", pair.a, pair.b), ("b", pair.b, pair.a)):
        rep = SideReport(host=side.host, interface=side.interface, address=side.address)
        sides.append(rep)
        try:
            plat = pool.platform(side.host)
            rep.kernel = plat.host_facts().kernel
            facts = plat.interface_facts(side.interface)
            rep.driver = " ".join(x for x in (facts.driver, facts.driver_version) if x) or None
            rep.mtu, rep.max_mtu, rep.state = facts.mtu, facts.max_mtu, facts.state
            if facts.link is LinkState.DOWN:
                no_interface = True
                problems.append(f"{pair.name}: {side.host} {side.interface} is {facts.state} "
                                f"(bring the link up; check the cable)")
            if side.address not in facts.addresses:
                problems.append(f"{pair.name}: {side.host} {side.interface} does not have "
                                f"{side.address} (pairs[].{name}.address in the inventory, or "
                                f"configure it on the host)")
            for tool in (TOOLS if every_tool else required_tools):
                # A tool with no executable for this OS (netPIPE on Windows) is "-".
                rep.tools[tool] = plat.tool_version(tool) if tool in plat.tools else None
            for tool in required_tools:
                if rep.tools.get(tool) is None:
                    problems.append(f"{pair.name}: {tool} is not installed on {side.host} "
                                    f"(install it, or set hosts[].tools.{tool})")
            problems += _too_old(pair.name, side.host, rep.tools, needs)
            rep.reaches_peer = plat.reaches(side.interface, peer.address)
            if not rep.reaches_peer:
                problems.append(f"{pair.name}: {side.host} cannot reach {peer.address} over "
                                f"{side.interface} (check addresses and the test link)")
        except NicbenchError as exc:
            no_interface |= isinstance(exc, TuningError) and \
                exc.kind is TuningErrorKind.INTERFACE
            problems.append(f"{pair.name}: {exc.one_line()}")
    return PairReport(pair=pair.name, adapter=pair.adapter, sides=sides, problems=problems,
                      no_interface=no_interface)



def _too_old(pair: str, host: str, versions: dict[str, str | None],
             needs: Sequence[VersionNeed]) -> list[str]:
    """One line per option a test asks of a tool whose version on ``host`` lacks it (a
    version nicbench cannot read is not judged: the tool itself will say)."""
    out = []
    for n in needs:
        have = version_numbers(versions.get(n.tool))
        if have is not None and have < n.need.since:
            out.append(f"{pair}: {n.tool} {versions[n.tool]} on {host} has no "
                       f"{n.need.option} (test {n.test}: params.{n.need.param}; {n.tool} "
                       f"{n.need.since_text} and later have it): install a newer {n.tool} "
                       f"there, or drop {n.need.param}")
    return out


def will_be_skipped(profile: Profile, report: PairReport) -> list[str]:
    """The profile's points above the largest MTU of either interface of the pair, as one
    line (empty when the adapter takes them all, or its limit is unknown)."""
    over = [pt for pt in profile.points
            if any(s.max_mtu and pt.ip_mtu > s.max_mtu for s in report.sides)]
    if not over:
        return []
    limits = ", ".join(f"{s.host} {s.interface} {s.max_mtu}" for s in report.sides
                       if s.max_mtu and any(pt.ip_mtu > s.max_mtu for pt in over))
    return [f"{report.pair}: {' '.join(pt.name for pt in over)} will be skipped "
            f"(largest MTU: {limits})"]


def check(inventory: Inventory, pairs: list[str] | None = None, *,
          trust_new_keys: bool = False, profile: Profile | None = None) -> list[PairReport]:
    chosen = [inventory.pair(p) for p in pairs] if pairs else inventory.pairs
    required: tuple[str, ...] = ("iperf3",)
    needs: tuple[VersionNeed, ...] = ()
    if profile is not None:
        check_platforms(profile, inventory, list(chosen))   # refused before any SSH
        required = profile.tools()
        needs = version_needs(profile)
    with HostPool(inventory, trust_new_keys=trust_new_keys) as pool:
        reports = [check_pair(pool, p, required, needs=needs) for p in chosen]
    if profile is not None:
        for rep in reports:
            rep.skipped = will_be_skipped(profile, rep)
    return reports

@dataclass(frozen=True)
class NotReady:
    failure: Failure
    reason: str          # check's lines for the pair, joined


def pairs_not_ready(profile: Profile, pairs: Sequence[Pair],
                    hosts: Hosts) -> dict[str, NotReady]:
    """pair name -> why it is not ready, for the pairs that are not."""
    out = {}
    needs = version_needs(profile)
    for pair in pairs:
        report = check_pair(hosts, pair, profile.tools(), every_tool=False, needs=needs)
        if not report.ready:
            prefix = f"{pair.name}: "
            out[pair.name] = NotReady(
                Failure.INTERFACE if report.no_interface else Failure.NOT_READY,
                "; ".join(p.removeprefix(prefix) for p in report.problems))
    return out
