"""netPIPE: throughput by block size, per MTU and per adapter, and the plateau a link
sustains (``report/netpipe.py``)."""

from __future__ import annotations

from collections.abc import Sequence

from nicbench.report import netpipe
from nicbench.report.family import (Chart, Context, Family, FamilyName, Part, figures_of,
                                    tables_of)
from nicbench.report.model import (Block, ChartKind, Figure, FigureBlock, GroupBlock, HeadingBlock,
                                   Section, Table, TableBlock)

READ = ("read-netpipe",
        "netPIPE's figure is the plateau of its curve: the median throughput over the "
        "blocks of the last octave (at least half the largest block), what the link "
        "sustains; its burst maximum is in the table. Its curves are one run per "
        "configuration, one colour per adapter (per MTU in an adapter's own chart, dark "
        "for the smallest MTU to light for the largest).")
PLATEAU, PER_MTU, PER_ADAPTER = (ChartKind.NETPIPE_PLATEAU, ChartKind.NETPIPE_MTU,
                                 ChartKind.NETPIPE_ADAPTER)
GROUPS = [(PLATEAU, "Sustained throughput per adapter and MTU"),
          (PER_MTU, "Per MTU, one curve per adapter"),
          (PER_ADAPTER, "Per adapter, one curve per MTU")]


class NetPipe(Family):
    name = FamilyName.NETPIPE
    section = Section("netpipe", "netPIPE", "netPIPE: throughput by block size",
                      absent="netPIPE")
    charts = (Chart(PLATEAU, read="read-netpipe", file_per_panel=True),
              Chart(PER_MTU, read="read-netpipe", card_colours=True),
              Chart(PER_ADAPTER, read="read-netpipe"))
    read = (READ,)

    def figures(self, ctx: Context) -> list[Figure]:
        return ctx.once(netpipe.netpipe_figures)[0]

    def tables(self, ctx: Context) -> list[Table]:
        return ctx.once(netpipe.netpipe_figures)[1]

    def shown(self, part: Part) -> bool:
        return bool(figures_of(part, PLATEAU))

    def blocks(self, part: Part) -> Sequence[Block]:
        out: list[Block] = []
        for kind, title in GROUPS:
            figs = figures_of(part, kind)
            if not figs:
                continue
            group: list[Block] = [HeadingBlock(kind, title), *map(FigureBlock, figs)]
            if kind == PLATEAU:
                group += [TableBlock(t) for t in tables_of(part, PLATEAU)]
            if kind == PER_ADAPTER:
                out.append(GroupBlock(group, f"{title}: left out of print (in report.html)."))
            else:
                out += group
        return out


FAMILY = NetPipe()
