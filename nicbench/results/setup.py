"""The setup of a run as flat facts: what a night's figure could have moved with.

``setup_facts(manifest, pair)`` turns what a run's ``manifest.json`` recorded about one
pair (its two hosts' kernels and tools, its test interfaces' driver, firmware and
offloads, the inventory's adapter and link rate, the profile) into a flat
``{name: text}`` dictionary. Two runs' facts compared key by key are the setup
differences ``nicbench history`` prints beside a change ("nb-a gbe driver_version 1.0 ->
1.1"), so the names are stable and readable:

=============================  ==================================================
``profile``                    the profile's name
``nicbench``                   the nicbench version that ran it
``<pair> sender`` / ``receiver``  the hosts of the pair's two ends
``<pair> adapter``             the inventory adapter (id: vendor model)
``<pair> inventory driver``    the driver the inventory names (name version)
``<pair> link_rate``           the inventory's line rate of the adapter, bit/s
``<host> kernel`` ... ``os``   the host's facts (kernel, os_build, cpu_model, cpus)
``<host> <tool> version``      each tool's version on the host
``<host> <pair> driver`` ...   the interface's driver, driver_version, firmware,
                               max_mtu and offloads ("gro=off,tso=on", sorted)
=============================  ==================================================

Only facts that were recorded are keys: an absent key and a present one differ too
("(none)" on the side that lacks it). Only the manifest is read, so a store that keeps
each run's manifest gives the same facts as the run's directory.
"""

from __future__ import annotations

from nicbench.results.facts import HostFacts, InterfaceFacts
from nicbench.results.manifest import Manifest

_HOST_FIELDS = ("os", "kernel", "os_build", "cpu_model", "cpus")
_INTERFACE_FIELDS = ("driver", "driver_version", "firmware", "max_mtu", "shaping")


def offloads_text(offloads: dict[str, bool]) -> str:
    """Offloads as one sorted text: ``"gro=off,tso=on"``."""
    return ",".join(f"{k}={'on' if v else 'off'}" for k, v in sorted(offloads.items()))


def _text(value: object) -> str | None:
    if value is None:
        return None
    return str(value)


def pair_hosts(manifest: Manifest, pair: str) -> tuple[str | None, str | None]:
    """(sender host, receiver host) of ``pair`` as the inventory runs it; None where the
    pair is not in the manifest's inventory."""
    found = next((p for p in manifest.inventory.pairs if p.name == pair), None)
    if found is None:
        return None, None
    return found.sender_side.host, found.receiver_side.host


def host_facts(manifest: Manifest, host: str) -> HostFacts | None:
    return manifest.hosts.get(host)


def interface_facts(manifest: Manifest, pair: str, host: str) -> InterfaceFacts | None:
    return manifest.interfaces.get(f"{pair}/{host}")


def setup_facts(manifest: Manifest, pair: str) -> dict[str, str]:
    """The flat setup facts of ``pair`` in the run of ``manifest`` (see the module)."""
    facts: dict[str, str] = {"profile": manifest.profile.name,
                             "nicbench": manifest.nicbench_version}
    sender, receiver = pair_hosts(manifest, pair)
    inv_pair = next((p for p in manifest.inventory.pairs if p.name == pair), None)
    if inv_pair is not None:
        facts[f"{pair} sender"] = str(sender)
        facts[f"{pair} receiver"] = str(receiver)
        adapter = next((a for a in manifest.inventory.adapters if a.id == inv_pair.adapter),
                       None)
        if adapter is not None:
            facts[f"{pair} adapter"] = f"{adapter.id}: {adapter.vendor} {adapter.model}"
            facts[f"{pair} inventory driver"] = " ".join(
                v for v in (adapter.driver.name, adapter.driver.version) if v)
            if adapter.link_rate:
                facts[f"{pair} link_rate"] = f"{float(adapter.link_rate):g}"
    for host in dict.fromkeys(h for h in (sender, receiver) if h is not None):
        hf = host_facts(manifest, host)
        if hf is not None:
            for name in _HOST_FIELDS:
                value = _text(getattr(hf, name, None))
                if value is not None:
                    facts[f"{host} {name}"] = value
        for tool, version in sorted((manifest.tools.get(host) or {}).items()):
            if version is not None:
                facts[f"{host} {tool} version"] = version
        iface = interface_facts(manifest, pair, host)
        if iface is not None:
            for name in _INTERFACE_FIELDS:
                value = _text(getattr(iface, name, None))
                if value is not None:
                    facts[f"{host} {pair} {name}"] = value
            if iface.offloads:
                facts[f"{host} {pair} offloads"] = offloads_text(iface.offloads)
    return facts


# The setup columns the trial frame joins on (run_id, pair): the sender's side where the
# two ends differ (the interface that sends is the one a driver change shows on first).
SETUP_COLUMNS: tuple[tuple[str, str], ...] = (
    ("sender_kernel", "string"),
    ("receiver_kernel", "string"),
    ("driver", "string"),
    ("driver_version", "string"),
    ("firmware", "string"),
    ("offloads", "string"),
)


def setup_columns(manifest: Manifest, pair: str) -> dict[str, str | None]:
    """The frame's setup columns of ``pair`` in this run (None: not recorded)."""
    sender, receiver = pair_hosts(manifest, pair)
    out: dict[str, str | None] = {name: None for name, _ in SETUP_COLUMNS}
    for column, host in (("sender_kernel", sender), ("receiver_kernel", receiver)):
        hf = host_facts(manifest, host) if host else None
        out[column] = hf.kernel if hf is not None else None
    ifaces = [interface_facts(manifest, pair, h) for h in (sender, receiver) if h]
    iface = next((i for i in ifaces if i is not None), None)
    if iface is not None:
        out["driver"] = iface.driver
        out["driver_version"] = iface.driver_version
        out["firmware"] = iface.firmware
        out["offloads"] = offloads_text(iface.offloads) if iface.offloads else None
    return out
