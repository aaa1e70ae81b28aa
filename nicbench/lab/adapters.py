"""Emulated adapters: shaping profiles on a lab test link, modelled on the reviews' cards.

A lab adapter is not hardware: it is a veth link between two namespaces with the wire
physics of a real Ethernet rate (tbf with the 24-byte per-frame overhead), and the limits
or faults of a real card of 2002: a bus that caps throughput, a driver that refuses jumbo
MTUs (a macvlan over a fixed-MTU veth, so the kernel itself answers "Invalid argument"),
or a driver that stalls on large frames (an nftables drop rule). Every name says it is
emulated.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LabAdapter:
    key: str                 # also the interface name on both hosts (<= 15 chars)
    vendor: str
    model: str
    chipset: str
    bus: str
    driver: str
    driver_version: str
    notes: str
    rate: str = "1gbit"      # line rate, tc syntax
    ceiling: str | None = None   # a lower cap (a slow bus), tc syntax
    max_mtu: int | None = None   # None: any MTU up to 65535; else a macvlan refuses above it
    stall_above: int | None = None  # drop IP packets longer than this (driver hang)
    loss_per_mille: int | None = None

    @property
    def shaped_rate(self) -> str:
        return self.ceiling or self.rate


EMULATED = "emulated in the nicbench lab"

ADAPTERS: dict[str, LabAdapter] = {
    a.key: a for a in [
        LabAdapter(
            key="gbe", vendor="nicbench lab", model="LX-1000 Gigabit",
            chipset="veth, shaped to 1000 Mbit/s", bus="64-bit PCI 66 MHz (emulated)",
            driver="veth", driver_version="tbf-1g",
            notes=f"{EMULATED}: a clean Gigabit card, jumbo frames to 16 KB and beyond"),
        LabAdapter(
            key="pci32", vendor="nicbench lab", model="LX-1000/32 Gigabit",
            chipset="veth, shaped to 600 Mbit/s", bus="32-bit PCI 33 MHz (emulated)",
            driver="veth", driver_version="tbf-600m",
            notes=f"{EMULATED}: a Gigabit card whose 32-bit PCI bus caps it near 600 Mbit/s, "
                  "as in the Oct 2002 review",
            ceiling="600mbit"),
        LabAdapter(
            key="nojumbo", vendor="nicbench lab", model="LX-1000NJ Gigabit",
            chipset="macvlan over a 1500-MTU veth, 1000 Mbit/s", bus="32-bit PCI 33 MHz (emulated)",
            driver="macvlan", driver_version="mtu-1500",
            notes=f"{EMULATED}: a card whose driver refuses any MTU above 1500 (the kernel's "
                  "own refusal), like the Jan 2003 review's card that would not go past 1500",
            max_mtu=1500),
        LabAdapter(
            key="stall", vendor="nicbench lab", model="LX-1000S Gigabit",
            chipset="veth, 1000 Mbit/s, drops frames above 6000 bytes",
            bus="64-bit PCI 66 MHz (emulated)", driver="veth", driver_version="stall-6000",
            notes=f"{EMULATED}: a driver that accepts jumbo MTUs but hangs on frames above "
                  "6000 bytes (nftables drop), like the Feb 2003 review's drivers that hung mid-test",
            stall_above=6000),
        LabAdapter(
            key="fe", vendor="nicbench lab", model="LX-100 Fast Ethernet",
            chipset="macvlan over a 1500-MTU veth, 100 Mbit/s", bus="32-bit PCI 33 MHz (emulated)",
            driver="macvlan", driver_version="fe-100m",
            notes=f"{EMULATED}: a Fast Ethernet card (100 Mbit/s, no jumbo frames), as in the "
                  "netio review's era of 10/100 cards",
            rate="100mbit", max_mtu=1500),
    ]
}

DEFAULT_ADAPTERS = tuple(ADAPTERS)
