"""The prepare phase: a pair's hosts reached, their facts and tool versions in the
manifest, and each test interface found up, before any point is applied.

:func:`prepare_pair` returns the pair's :class:`~nicbench.execution.sides.PairSides`, or
raises: :class:`~nicbench.errors.TuningError` (kind ``interface``) for a missing or down
interface, :class:`~nicbench.errors.ConnectError` / ``HostKeyError`` for a host that cannot
be reached. What that means for the pair's configurations is the pair's to decide
(:mod:`.pair`).
"""

from __future__ import annotations

from nicbench.config.inventory import Pair
from nicbench.errors import TuningError, TuningErrorKind
from nicbench.execution.context import RunContext
from nicbench.execution.sides import Hosts, PairSides
from nicbench.results.facts import LinkState


def prepare_pair(run: RunContext, hosts: Hosts, pair: Pair) -> PairSides:
    adapter = run.inventory.adapter(pair.adapter)
    sides = PairSides(pair=pair, adapter_id=adapter.id, adapter_label=adapter.label,
                      receiver=hosts.platform(pair.receiver_side.host),
                      sender=hosts.platform(pair.sender_side.host))
    for plat, iface, _ in sides.ends:
        run.note("hosts", plat.host, plat.host_facts())
        facts = plat.interface_facts(iface)
        run.note("interfaces", f"{pair.name}/{plat.host}", facts)
        if facts.link is LinkState.DOWN:
            raise TuningError(plat.host, "interface", iface, f"{iface} is {facts.state}",
                              kind=TuningErrorKind.INTERFACE)
        run.note("tools", plat.host,
                 {tool: plat.tool_version(tool) for tool in run.profile.tools()})
    run.write_manifest()
    return sides
