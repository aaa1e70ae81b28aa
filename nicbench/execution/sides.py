"""The two ends of a pair for one run: :class:`PairSides`.

Made by the prepare phase (:mod:`.prepare`) and used by every phase after it: the point's
tuning, the OS settings beyond it (:mod:`.ossettings`) and the trials.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Protocol

from nicbench.config.inventory import Pair
from nicbench.platforms.base import Platform


class End(NamedTuple):
    """One end of the pair: it unpacks as (platform, interface, address)."""

    platform: Platform
    interface: str
    address: str


@dataclass(frozen=True)
class PairSides:
    pair: Pair
    adapter_id: str
    adapter_label: str
    receiver: Platform
    sender: Platform

    @property
    def ends(self) -> tuple[End, End]:
        """The receiver's end, then the sender's."""
        r, s = self.pair.receiver_side, self.pair.sender_side
        return (End(self.receiver, r.interface, r.address),
                End(self.sender, s.interface, s.address))

    @property
    def host_names(self) -> set[str]:
        return {self.receiver.host, self.sender.host}


class Hosts(Protocol):
    """Where a run gets each host's platform: one per host name, kept for the run
    (``HostPool`` over SSH; fakes in tests; recording hosts for --plan)."""

    def platform(self, name: str) -> Platform: ...

    def close(self) -> None: ...
