"""Ethernet frames and the packet rate a link carries: RFC 2544's arithmetic.

RFC 2544 (Benchmarking Methodology for Network Interconnect Devices, 1999), section 9.1,
names the frame sizes of a test on Ethernet: 64, 128, 256, 512, 1024, 1280 and 1518
bytes (a frame counts its 14-byte header and 4-byte FCS, not the preamble). Its
"throughput" (section 26.1) is the highest rate at which no offered frame is lost; FD.io
CSIT calls that the NDR and the highest rate with a small loss allowed the PDR (its
reports use 0.5 %).

On the wire every frame also takes a preamble with its start-of-frame delimiter (8 bytes)
and the inter-frame gap (12 bytes), so a link of R bit/s carries at most

    R / ((frame + 20) x 8) frames per second

148,809 at 64 bytes on 100 Mbit/s Fast Ethernet, 1,488,095 on Gigabit Ethernet, 81,274
at 1518 bytes on Gigabit. A figure above that for its frame size (beyond what the tool's
count and timing allow, ``results.plausible.above_bound``, as for any physical bound) was
not measured on that link (``results.framerate.FrameRate.above_line``).

A UDP datagram of P payload bytes in IPv4 makes a frame of P + 8 (UDP) + 20 (IPv4) + 14
(Ethernet header) + 4 (FCS) bytes: a 64-byte frame carries 18 bytes of payload, what a
tool's ``-l`` is given (:func:`payload_bytes`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

ETHERNET_HEADER = 14
FCS = 4
IPV4_HEADER = 20
UDP_HEADER = 8
PREAMBLE = 8              # 7 bytes of preamble and the start-of-frame delimiter
INTER_FRAME_GAP = 12
WIRE_EXTRA = PREAMBLE + INTER_FRAME_GAP            # 20: on the wire, not in the frame
FRAME_OVERHEAD = ETHERNET_HEADER + FCS + IPV4_HEADER + UDP_HEADER   # 46: frame - payload

MIN_FRAME = 64            # Ethernet's smallest frame (IEEE 802.3)
RFC2544_FRAMES = (64, 128, 256, 512, 1024, 1518)   # section 9.1 less 1280, as CSIT runs it


class Bound(StrEnum):
    """Which loss a rate is searched under: none (RFC 2544 throughput, CSIT's NDR) or the
    profile's partial-drop limit (CSIT's PDR, 0.5 % unless told)."""

    NDR = "ndr"
    PDR = "pdr"


def payload_bytes(frame: int) -> int:
    """The UDP payload (``-l``) that makes an IPv4 Ethernet frame of ``frame`` bytes."""
    return frame - FRAME_OVERHEAD


def ip_packet_bytes(frame: int) -> int:
    """The IP packet in that frame: what the interface's MTU has to let through."""
    return frame - ETHERNET_HEADER - FCS


def fits(frame: int, mtu: int) -> bool:
    """Does a frame of ``frame`` bytes go through an interface of IP MTU ``mtu``?"""
    return ip_packet_bytes(frame) <= mtu


def line_pps(frame: int, rate_bps: float) -> float:
    """The most frames of ``frame`` bytes per second a link of ``rate_bps`` carries:
    rate / ((frame + 20) x 8), preamble and gap counted."""
    return rate_bps / ((frame + WIRE_EXTRA) * 8)


def frame_mbit(pps: float, frame: int) -> float:
    """``pps`` frames of ``frame`` bytes as Mbit/s of frames (header and FCS counted,
    preamble and gap not: the L2 rate RFC 2544 and CSIT report)."""
    return pps * frame * 8 / 1e6


@dataclass
class FrameProbe:
    """What a small-packet trial offered: appended to its record (``frame``), absent from
    every other line. ``bound`` is the search that asked for the trial; a PDR search
    starts from the NDR search's trials (their loss is known), so an NDR trial may stand
    for both, never a PDR trial for the NDR. ``confirm``: a full-length trial (absent
    from lines stored before issue 30: a short trial)."""

    frame_bytes: int
    payload_bytes: int
    bound: Bound
    offered_pps: int
    line_pps: float          # at ``link_rate_bps``
    link_rate_bps: float
    confirm: bool = False    # a full-length trial (``confirm_s``) settling the rate

    def __post_init__(self) -> None:
        self.bound = Bound(self.bound)
