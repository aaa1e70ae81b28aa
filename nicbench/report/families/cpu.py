"""CPU load and cost: the hosts' CPU per configuration of the rate tools, and speed against
CPU (``bars.py`` builds both; the verdict's CPU ranks are the throughput family's)."""

from __future__ import annotations

from collections.abc import Sequence

from nicbench.report import bars
from nicbench.report.configs import NOISY_IQR_POINTS
from nicbench.report.family import Chart, Context, Family, FamilyName, Part
from nicbench.report.model import ChartKind, Block, Figure, FigureBlock, Section, TextBlock


class Cpu(Family):
    name = FamilyName.CPU
    section = Section("cpu", "CPU and cost", "CPU load and cost", absent="CPU load and cost")
    charts = (Chart(ChartKind.CPU, read="read-cpu", file_per_panel=True, bar_unit="%"),
              Chart(ChartKind.COST, read="read-cost"))
    read = (
        ("read-cpu",
         "CPU load: /proc/stat of the sending and of the receiving host, busy share of all "
         "cores while the sender ran, the median over every successful repetition of the "
         "configuration (not only the fastest), with their interquartile range and the "
         "hosts' other load over the same repetitions; a tool's own CPU figure is a "
         "marker, labelled with where it comes from. Mbit/s per CPU % divides the figure "
         "by the median CPU of the busier host; the verdict ranks by it only where the IQR "
         f"is at most {NOISY_IQR_POINTS:g} points. A figure above the wire's limit is "
         "never ranked, nor is any card of that link: the verdict says the method could "
         "not rank it on this setup. Cards whose figures differ by no more than the "
         "figure's resolution, or (with repetitions) by no change the comparison's rule "
         "would call, share a rank: tied. The receiver's load runs from its server's start "
         "to its finish; the axis stops at 100 %."),
        ("read-cost",
         "Speed against CPU: each dot is the selected speed against the busier host's CPU "
         "(the median over every successful repetition of that point); the rankings give "
         "Mbit/s per CPU % with the CPU's spread and rank by it only where the spread "
         "allows."),
    )

    def figures(self, ctx: Context) -> list[Figure]:
        return bars.cpu_figures(ctx.ix) + bars.cost_figures(ctx.ix)

    def shown(self, part: Part) -> bool:
        return any(f.family == ChartKind.CPU for f in part.figures)

    def blocks(self, part: Part) -> Sequence[Block]:
        note = bars.cpu_note(part.ctx.ix, part.figures)
        return ([TextBlock(note, "note")] if note else []) + [
            FigureBlock(f) for f in part.figures]


FAMILY = Cpu()
