"""Configurations that did not give all their measurements, and why.

Each is listed with the word its gap carries in the charts (``Failure.word``), the counts
("0/15 (3 failed, 12 not run)") and every reason in the words of the kernel or the tool.
"""

from __future__ import annotations

from nicbench.report.configs import Index, point_label
from nicbench.report.model import Failure, Table
from nicbench.results.records import Kind, Status
from nicbench.results.summary import RowStatus


def failures(ix: Index) -> list[Failure]:
    out = []
    for c in sorted(ix.configs, key=lambda c: (ix.order[c.entry.key], c.mtu, ix.test_order(c))):
        bad = [r for r in c.records if r.status is not Status.OK or r.kind is Kind.GIVEN_UP]
        if c.row.status is RowStatus.OK and not bad:
            continue
        out.append(Failure(entry=c.entry.key, test=c.test, tool=c.tool, point=c.point,
                           mtu=c.mtu, status=c.row.status, word=c.word, counts=c.counts,
                           reasons=c.reasons, kernel_message=c.kernel_message))
    return out


def failures_table(ix: Index, fails: list[Failure]) -> Table:
    t = Table(id="failures", family="failures", title="Failed and skipped configurations",
              columns=["adapter", "point", "test", "status", "what happened", "n ok",
                       "reason"])
    by_key = {e.key: e for e in ix.entries}
    for f in fails:
        e = by_key[f.entry]
        reason = "; ".join(f"{r}" + (f" (×{n})" if n > 1 else "") for r, n in f.reasons)
        t.rows.append([e.label, point_label(f.point, f.mtu), f.test, f.status, f.word,
                       f.counts, reason])
        t.row_entries.append(e.key)
    return t
