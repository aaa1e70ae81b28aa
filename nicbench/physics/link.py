"""What an Ethernet link can carry, for the reference lines of the charts.

Per frame the wire also carries 38 bytes besides the IP packet: Ethernet header 14,
FCS 4, preamble and start-of-frame 8, inter-frame gap 12 (Oct 2002 review, Table 2;
../shared/docs/methodology.md "Physics"). Of an IP packet of MTU m bytes, TCP carries
m - 40 bytes of payload (IP 20 + TCP 20), m - 52 with the timestamp option that Linux
sends by default; UDP carries m - 28. So the best goodput at line rate R is

    R x (m - headers) / (m + 38)

941.5 Mbit/s for TCP with timestamps at MTU 1500 on Gigabit Ethernet, 990.0 at 9000 (the
lab's iperf3 lands within 1.5 % of it: tests/lab/test_calibration.py).

The frame rate a link carries, rate / ((frame + 20) x 8) (148,809 frames/s of 64 bytes
on 100 Mbit/s, 1,488,095 on 1 Gbit/s; RFC 2544), and the UDP payload of a frame (frame
- 46) are in ``nicbench.physics.ethernet``, where the records' own checks can reach them.

``link_rate`` takes the link rate from the user (``--link-rate NAME=RATE``), else from the
inventory adapter's ``link_rate`` (recorded in the run's manifest; the lab writes it), else
from the adapter's description ("shaped to 1000 Mbit/s", "100 Mbit/s") for results of
older inventories, and always says where it came from. Without a rate, a chart has no
reference line.
"""

from __future__ import annotations

import re

from nicbench.config.fields import parse_rate
from nicbench.config.inventory import Adapter
from nicbench.config.profile import Point, Profile
from nicbench.errors import UsageError

WIRE_OVERHEAD_BYTES = 38      # Ethernet header 14 + FCS 4 + preamble/SFD 8 + gap 12
TCP_HEADERS_BYTES = 40        # IPv4 20 + TCP 20
TCP_TIMESTAMPS_BYTES = 12     # TCP timestamp option (10 bytes, padded to 12)
UDP_HEADERS_BYTES = 28        # IPv4 20 + UDP 8

# The report no longer flags by a fixed share: a figure is above the limit when it exceeds
# it by more than its tool's printed resolution plus its timing error over the time it
# was measured over (``results.plausible.above_bound``, ``Config.above_limit``). Kept only
# for history's series (``history/series.py``), which still flags by it.
FLAG_MARGIN = 0.01

# "1000 Mbit/s", "1 Gbit/s", "600 Mbit/s": a rate written in an adapter's description.
_RATE_TEXT = re.compile(r"\d+(?:\.\d+)?\s*[kMG]bit/s", re.IGNORECASE)


def goodput_bps(rate_bps: float, mtu: int, protocol: str = "tcp",
                timestamps: bool = True) -> float:
    """The most payload per second an Ethernet link of ``rate_bps`` carries at IP MTU
    ``mtu``: R x (m - headers) / (m + 38)."""
    if protocol == "udp":
        headers = UDP_HEADERS_BYTES
    else:
        headers = TCP_HEADERS_BYTES + (TCP_TIMESTAMPS_BYTES if timestamps else 0)
    return rate_bps * (mtu - headers) / (mtu + WIRE_OVERHEAD_BYTES)


def goodput_formula(protocol: str = "tcp", timestamps: bool = True) -> str:
    if protocol == "udp":
        return "R × (MTU − 28) / (MTU + 38)"
    return "R × (MTU − 52) / (MTU + 38)" if timestamps else "R × (MTU − 40) / (MTU + 38)"


def timestamps_on(profile: Profile | None, point: Point | None) -> bool:
    """Whether TCP timestamps were in force at a point: Linux sends them unless
    net.ipv4.tcp_timestamps is 0; Windows only with Tcp1323Opts 2 or 3. Without a profile
    (a run with no manifest), Linux's default."""
    sysctl = {**(profile.sysctl if profile else {}), **(point.sysctl if point else {})}
    if "net.ipv4.tcp_timestamps" in sysctl:
        return str(sysctl["net.ipv4.tcp_timestamps"]).strip() != "0"
    if profile is not None and profile.platform == "windows":
        opts = point.registry.get("Tcp1323Opts") if point else None
        return opts in (2, 3)
    return True


def parse_link_rates(items: list[str] | tuple[str, ...]) -> dict[str, float]:
    """``["gbe=1gbit", "lab-fe=100M"]`` -> {name: bit/s}; a bad item is a UsageError."""
    rates: dict[str, float] = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise UsageError(f"--link-rate {item!r}: give NAME=RATE, e.g. gbe=1gbit")
        try:
            rate = parse_rate(value.strip())
        except ValueError as exc:
            raise UsageError(f"--link-rate {item!r}: {exc}") from None
        if rate <= 0:
            raise UsageError(f"--link-rate {item!r}: the rate must be positive")
        rates[name.strip()] = float(rate)
    return rates


def rate_from_text(text: str | None) -> float | None:
    """The one rate an adapter's description names, or None if it names none or several
    different ones."""
    if not text:
        return None
    found = {float(parse_rate(m.group(0))) for m in _RATE_TEXT.finditer(text)}
    return found.pop() if len(found) == 1 else None


def link_rate(pair: str, adapter: Adapter | None,
              given: dict[str, float]) -> tuple[float | None, str]:
    """(rate in bit/s or None, where it came from) for one pair of one run."""
    for name in (pair, adapter.id if adapter else None):
        if name and name in given:
            return given[name], f"--link-rate {name}"
    if adapter is not None and adapter.link_rate:
        rate = float(adapter.link_rate)
        return rate, f"inventory adapter link_rate: {rate / 1e6:g} Mbit/s"
    if adapter is not None:
        for key, text in (("chipset", adapter.chipset), ("notes", adapter.notes)):
            found = rate_from_text(text)
            if found:
                return found, f"inventory adapter {key}: \"{text}\""
    return None, "not recorded (give --link-rate NAME=RATE for a reference line)"


# The smallest Ethernet frame (header, payload padded to 46 bytes, FCS) and what the wire
# adds to every frame besides it (preamble/SFD 8 + gap 12).
MIN_FRAME_BYTES = 64
PREAMBLE_GAP_BYTES = 20


def round_trip_floor_us(rate_bps: float, message_bytes: int, protocol: str,
                        timestamps: bool = True) -> float:
    """The shortest round trip of one message and its reply of the same size on a wire of
    ``rate_bps``: both frames serialized once, nothing else (no switch, no stack, no
    wakeup). 64-byte UDP at 1 Gbit/s: (14 + 20 + 8 + 64 + 4) + 20 = 130 bytes on the
    wire each way, 2.08 us; at 100 Mbit/s 20.8 us."""
    l4 = (TCP_HEADERS_BYTES + (TCP_TIMESTAMPS_BYTES if timestamps else 0)
          if protocol == "tcp" else UDP_HEADERS_BYTES)
    frame = max(14 + l4 + message_bytes + 4, MIN_FRAME_BYTES)
    return 2 * (frame + PREAMBLE_GAP_BYTES) * 8 / rate_bps * 1e6
