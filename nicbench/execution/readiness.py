"""Is each pair of a run ready to measure? Asked before the run changes anything, with
``nicbench check --profile``'s own checks and words (:func:`nicbench.check.check_pair`):
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
from dataclasses import dataclass

from nicbench.check import check_pair
from nicbench.config.inventory import Pair
from nicbench.config.profile import Profile
from nicbench.execution.sides import Hosts
from nicbench.results.records import Failure
from nicbench.tools.registry import version_needs


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
