"""The report's families in page order: ``build.py``, the page, the CSV writer and
``nicbench figures`` loop over :data:`FAMILIES` and name none of them.

Adding a family is a module offering one :class:`~nicbench.report.family.Family` and a
line here; a test adds one for its duration with :func:`registered`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from nicbench.report.family import Chart, Family
from nicbench.report.families import (cpu, history, latency, loaded, netpipe, published,
                                      sizetables, smallpkt, streams, throughput)

FAMILIES: list[Family] = [history.FAMILY, throughput.FAMILY, latency.FAMILY, loaded.FAMILY,
                          cpu.FAMILY, netpipe.FAMILY, streams.FAMILY, smallpkt.FAMILY,
                          published.FAMILY, sizetables.FAMILY]


def chart(kind: str) -> Chart:
    """What the families say of a kind of chart (a kind no family names: the defaults)."""
    for fam in FAMILIES:
        for c in fam.charts:
            if c.kind == kind:
                return c
    return Chart(kind)


@contextmanager
def registered(family: Family, before: Family | None = None) -> Iterator[Family]:
    """``family`` in the list (before ``before``, else last) while the block runs."""
    if any(f.name == family.name for f in FAMILIES):
        raise ValueError(f"a family named {family.name!r} is registered already")
    at = FAMILIES.index(before) if before is not None else len(FAMILIES)
    FAMILIES.insert(at, family)
    try:
        yield family
    finally:
        FAMILIES.remove(family)
