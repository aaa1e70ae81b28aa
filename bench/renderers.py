"""The report's two renderers on the same figure models: svg.py (the page's inline SVG)
against matplotlib (report/figures/, the publication files), on one real run.

Builds the figure models of a run once (the main job's real lab run in
tests/report/data/roundup by default), then measures the CPU time this one process
spends (not the wall time, which moves with the machine's load):
``svg.render_all`` drawing every chart of the page, and matplotlib drawing every
publication unit of the same models (``draw.render``: laid out, saved as SVG, then as
PNG), after one warm-up unit so that importing matplotlib and loading its fonts are not
counted. What it shows is why the page keeps its own SVG renderer: the page's charts
cost milliseconds, matplotlib's seconds, and its SVG is not the page's (no hover titles,
a print figure in the house style, random ids).

The last line is the figures: ``renderers: charts=... svg_ms=... mpl_svg_ms=...
mpl_png_ms=... ratio=...``.

    python bench/renderers.py [--from DIR]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--from", dest="src", default=str(REPO / "tests/report/data/roundup"),
                   help="a results directory (default: the main job's lab run)")
    args = p.parse_args()

    from nicbench.report.build import build
    from nicbench.report.figures.draw import Job, render
    from nicbench.report.figures.plan import units
    from nicbench.report.figures.style import card_colours, palette, style_files
    from nicbench.report.load import load_runs
    from nicbench.report.svg import render_all

    report = build(load_runs([args.src]))
    t = time.process_time()
    render_all(report)
    svg_s = time.process_time() - t
    styles = style_files(None)
    colours = card_colours(report.entries, palette(styles))
    todo = units(report.publication, [])
    with tempfile.TemporaryDirectory(prefix="nicbench-renderers-") as out:
        render(Job(todo[0], colours, styles, ["svg"], None, out))      # warm-up
        times = {}
        for fmt in ("svg", "png"):
            t = time.process_time()
            for u in todo:
                render(Job(u, colours, styles, [fmt], None, out))
            times[fmt] = time.process_time() - t
    print(f"{len(report.figures)} charts of the page drawn by svg.py in {svg_s * 1e3:.0f} ms; "
          f"the same models as {len(todo)} publication files by matplotlib in "
          f"{times['svg']:.2f} s (SVG) and {times['png']:.2f} s (PNG)")
    print(f"renderers: charts={len(report.figures)} units={len(todo)} "
          f"svg_ms={svg_s * 1e3:.0f} mpl_svg_ms={times['svg'] * 1e3:.0f} "
          f"mpl_png_ms={times['png'] * 1e3:.0f} ratio={times['svg'] / svg_s:.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
