"""Tables by packet size: netio's method (Arnold, 2002), and iperf tests run at several
buffer lengths laid out the same way (``report/tables.py``)."""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup

from nicbench.report import tables
from nicbench.report.family import Context, Family, FamilyName, Part, tables_of
from nicbench.report.model import Block, Section, Table, TableBlock, TextBlock


class SizeTables(Family):
    name = FamilyName.SIZE_TABLES
    section = Section("size-tables", "Tables by packet size",
                      "Tables by packet size (netio method)",
                      absent="tables by packet size (netio, iperf -l)")

    def tables(self, ctx: Context) -> list[Table]:
        return [*tables.netio_tables(ctx.ix), *tables.length_tables(ctx.ix)]

    def blocks(self, part: Part) -> Sequence[Block]:
        out: list[Block] = []
        netio, lengths = tables_of(part, "netio"), tables_of(part, "iperf-length")
        if netio:
            out.append(TextBlock("netio's method (Arnold, 2002): per client machine, one row "
                                 "per adapter, throughput at each packet size in KB/s, then "
                                 "the client's CPU load."))
            out += [TableBlock(t) for t in netio]
        if lengths:
            out.append(TextBlock(Markup("iperf tests run at several buffer lengths "
                                        "(<code>-l</code>), laid out the same way.")))
            out += [TableBlock(t) for t in lengths]
        return out


FAMILY = SizeTables()
