"""Throughput: the rate tools' speed rankings per point and their heatmap, and the verdict
of the fastest card per method (``bars.py`` builds the charts, ``verdict.py`` decides every
rank and word, ``glance.py`` lays the rankings out)."""

from __future__ import annotations

from nicbench.report import bars, glance, verdict
from nicbench.report.family import Chart, Context, Family, FamilyName, Part, VerdictPart
from nicbench.report.model import ChartKind, Figure, Section

READ = (
    ("read-speed",
     "Speed charts rank the adapters at each MTU, fastest first. A bar is the "
     "configuration's selected value (the profile's select: best, mean or median of the "
     "repetitions, as in the review the profile follows); its whisker runs from the "
     "lowest to the highest repetition that succeeded; 'n ok/n' counts those against "
     "the repetitions planned and names how many failed and were not run. A UDP search's "
     "bar is the rate it found. A value above the link's limit is not a measurement of "
     "the card: it comes after the ranked ones, marked ! and not ranked."),
    ("read-heatmap",
     "Heatmaps: one row per adapter, fastest first at its best point, one column per "
     "point; the colour runs from the chart's lowest selected value (dark) to its "
     "highest (light), so small differences show, and the numbers are the figures. A "
     "grey cell names what happened; a white cell marked ! is above the link's limit, "
     "left off the scale and not ranked."),
    ("",
     "A gap names what happened, one word per event whatever the tool: 'refused' only "
     "when the driver or kernel refused the setting, 'path check failed' when the MTU "
     "was taken but the path did not carry it, 'stalled' when the transfer moved almost "
     "nothing or never ended at the receiver, 'timed out', 'given up', ... The failures "
     "section gives every reason in the kernel's or the tool's words."),
    ("",
     "The black mark on a bar is the best goodput of the link at that MTU: "
     "R × (MTU − 52) / (MTU + 38) for TCP with timestamps (− 40 without, − 28 for UDP), "
     "R the link's line rate, 38 the bytes each frame costs on the wire besides the IP "
     "packet (Ethernet header 14, FCS 4, preamble 8, inter-frame gap 12): 941.5 Mbit/s "
     "at MTU 1500 and 990.0 at 9000 on Gigabit Ethernet. A value above it by more "
     "than the tool's printed resolution plus its timing error over the time measured "
     "(iperf 2 and iperf3: 10 ms of the test's duration; netPIPE: 10 us of a 0.25 s "
     "trial) is marked ! and listed under its chart."),
    ("",
     "The line rate is taken from --link-rate NAME=RATE when given, else from the "
     "inventory adapter's link_rate recorded in the run's manifest, else from the rate "
     "the adapter's description names; the table of adapters says which."),
)


class Throughput(Family):
    name = FamilyName.THROUGHPUT
    section = Section("throughput", "Throughput", "Throughput per adapter and MTU",
                      absent="throughput per adapter and MTU (iperf, NTttcp, UDP)")
    charts = (Chart(ChartKind.SPEED, read="read-speed", file_per_panel=True),
              Chart(ChartKind.HEATMAP, read="read-heatmap"))
    read = READ

    def figures(self, ctx: Context) -> list[Figure]:
        return bars.speed_figures(ctx.ix) + bars.heatmap_figures(ctx.ix)

    def verdict(self, ctx: Context) -> VerdictPart:
        rows = ctx.once(verdict.verdicts)
        return VerdictPart(sentences=[verdict.sentence(m, r) for m, r in rows.items()],
                           tables=[glance.ranking_table(m, r) for m, r in rows.items()],
                           csv_rows=verdict.verdict_csv_rows(rows),
                           glance=glance.glance(rows))

    def shown(self, part: Part) -> bool:
        return any(f.family == ChartKind.SPEED for f in part.figures)


FAMILY = Throughput()
