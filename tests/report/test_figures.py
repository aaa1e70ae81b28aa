"""``nicbench figures``: the report's charts drawn by matplotlib.

What a figure plots is read back from its artists (bar patches, errorbar segments, Line2D
data, the heatmap's image), never from pixels, and compared with the report's figure
model; a user's style is seen in the artists; at 50 adapters no text touches another
(matplotlib's own text extents)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from nicbench.cli import main

DATA = Path(__file__).parent / "data"
ROUNDUP, RUN_A, RUN_B = DATA / "roundup", DATA / "run-a", DATA / "run-b"
REPO = Path(__file__).resolve().parents[2]


def drawn(report, runs, styles=None):
    """Every unit of ``report`` (and the comparison's) with its matplotlib figure."""
    import matplotlib.pyplot as plt

    from nicbench.report.configs import Index
    from nicbench.report.figures.comparison import comparison_charts
    from nicbench.report.figures.draw import figure_of
    from nicbench.report.figures.plan import units
    from nicbench.report.figures.style import card_colours, palette, style_files

    styles = styles or style_files(None)
    colours = card_colours(report.entries, palette(styles))
    charts = comparison_charts(Index(runs, report.entries)) if len(runs) > 1 else []
    out = []
    for u in units(report.publication, charts):
        with plt.style.context(styles):
            out.append((u, figure_of(u, colours), colours))
    return out


@pytest.fixture(scope="module")
def roundup():
    from nicbench.report.build import build
    from nicbench.report.load import load_runs

    runs = load_runs([ROUNDUP])
    return runs, build(runs)


@pytest.fixture(scope="module")
def compared():
    from nicbench.report.build import build
    from nicbench.report.load import load_runs

    runs = load_runs([RUN_A, RUN_B])
    return runs, build(runs)


def by_gid(mfig, prefix):
    return {a.get_gid(): a for a in mfig.findobj(lambda a: str(a.get_gid() or "")
                                                 .startswith(prefix))}


# -- files ---------------------------------------------------------------------------------
def test_every_family_is_written_as_png_and_pdf_with_its_data(tmp_path, capsys):
    import pandas as pd

    out = tmp_path / "figs"
    assert main(["figures", str(RUN_A), str(RUN_B), "--out", str(out),
                 "--format", "png,pdf"]) == 0
    assert capsys.readouterr().out.startswith("figures: ")
    files = {p.name for p in out.iterdir()}
    stems = {Path(f).stem for f in files if not f.endswith(".csv")}
    for stem in stems:
        assert {f"{stem}.png", f"{stem}.pdf"} <= files
        assert (out / f"{stem}.pdf").read_bytes().startswith(b"%PDF")
        assert (out / f"{stem}.png").read_bytes().startswith(b"\x89PNG")
    families = {s.split("-")[0] for s in stems}
    assert families == {"speed", "cpu", "cost", "heatmap", "netpipe", "comparison"}
    for name in ("netpipe-gbe", "netpipe-mtu9000",
                 "netpipe-plateau-mtu-1500", "speed-iperf3-tcp-mtu-9000",
                 "comparison-iperf3-tcp-mtu-1500"):
        assert name in stems
    table = pd.read_csv(out / "figures.csv")
    assert set(table["file"]) == stems
    # again with fewer charts: what the first wrote and the second did not is gone
    (out / "notes.txt").write_text("mine")
    assert main(["figures", str(RUN_A), "--out", str(out), "--format", "png",
                 "--tests", "iperf3-tcp"]) == 0
    again = {p.stem for p in out.iterdir() if p.suffix in (".png", ".pdf")}
    assert again and again < stems and all(s.startswith(("speed-iperf3", "cpu-iperf3",
                                                         "cost-iperf3", "heatmap-iperf3"))
                                           for s in again)
    assert (out / "notes.txt").read_text() == "mine"
    gbe = table[(table["file"] == "speed-iperf3-tcp-mtu-1500")
                & table["label"].str.startswith("LX-1000 Gigabit (veth tbf-1g) [A]")]
    assert len(gbe) == 1 and gbe["value"].iloc[0] > 900


def test_pdf_fonts_are_embedded_truetype(tmp_path):
    import shutil
    import subprocess

    # scripts/setup.sh installs poppler-utils: its absence is a broken setup, not a skip
    assert shutil.which("pdffonts"), "pdffonts (poppler-utils) missing: run scripts/setup.sh"
    out = tmp_path / "figs"
    assert main(["figures", str(ROUNDUP), "--out", str(out), "--format", "pdf",
                 "--tests", "iperf3-tcp", "--adapters", "gbe"]) == 0
    listing = subprocess.run(["pdffonts", str(out / "speed-iperf3-tcp-mtu-1500.pdf")],
                             capture_output=True, text=True, check=True).stdout
    fonts = listing.splitlines()[2:]
    assert fonts and all(" yes " in line and "TrueType" in line for line in fonts), listing



def test_pdfs_share_a_font_subset_and_each_shows_its_own_text(tmp_path):
    """The subset cut once per font (pdffonts) serves every later PDF: each still embeds
    TrueType and its text reads back whole, a glyph outside ASCII (µ) included."""
    import shutil
    import subprocess

    from matplotlib import rc_context
    from matplotlib.figure import Figure

    from nicbench.report.figures import pdffonts

    # scripts/setup.sh installs poppler-utils: its absence is a broken setup, not a skip
    assert shutil.which("pdffonts") and shutil.which("pdftotext"), \
        "poppler-utils missing: run scripts/setup.sh"
    assert pdffonts.install()
    texts = ["Ethernet 940.1 Mbit/s", "latency 12.5 µs (x540-t2)", "Ethernet 940.1 Mbit/s"]
    for n, text in enumerate(texts):
        fig = Figure(figsize=(3, 1))
        fig.text(0.05, 0.5, text, fontfamily="Liberation Sans")
        with rc_context({"pdf.fonttype": 42}):
            fig.savefig(tmp_path / f"{n}.pdf", format="pdf")
    assert len(pdffonts._cache) >= 2          # the ASCII subset and the one with µ
    for n, text in enumerate(texts):
        pdf = str(tmp_path / f"{n}.pdf")
        fonts = subprocess.run(["pdffonts", pdf], capture_output=True, text=True,
                               check=True).stdout.splitlines()[2:]
        assert fonts and all(" yes " in f and "TrueType" in f for f in fonts), fonts
        shown = subprocess.run(["pdftotext", pdf, "-"], capture_output=True, text=True,
                               check=True).stdout
        assert shown.strip() == text



def test_png_is_at_the_styles_300_dpi_and_holds_matplotlibs_own_pixels(tmp_path):
    """The PNG is written at savefig.dpi (300), not the figure's 100, by an encoder whose
    pixels are those matplotlib's PNG writer would store."""
    import io

    import numpy as np
    from matplotlib.figure import Figure
    from PIL import Image

    from nicbench.report.figures.png import save_png

    out = tmp_path / "figs"
    assert main(["figures", str(ROUNDUP), "--out", str(out), "--format", "png",
                 "--tests", "iperf3-tcp", "--adapters", "gbe"]) == 0
    with Image.open(out / "speed-iperf3-tcp-mtu-1500.png") as png:
        assert png.info["dpi"][0] == pytest.approx(300, abs=0.01)
        assert png.width == 7 * 300              # a ranking is 7 in wide (DOUBLE)
    fig = Figure(figsize=(2, 1))
    fig.add_subplot().plot([1, 2, 3], [3, 1, 2])
    fig.suptitle("12.5 µs")
    save_png(fig, str(tmp_path / "mine.png"), 150, "t")
    theirs = io.BytesIO()
    fig.savefig(theirs, format="png", dpi=150)
    with Image.open(tmp_path / "mine.png") as mine, Image.open(theirs) as ref:
        assert mine.mode == "RGB" and mine.info["Title"] == "t"
        assert np.array_equal(np.asarray(mine), np.asarray(ref.convert("RGB")))


# -- plotted data equals the model's ----------------------------------------------------------
def test_bars_plot_the_models_values_whiskers_and_limits(roundup):
    from nicbench.report.model import BarPanel

    runs, report = roundup
    seen = set()
    for u, mfig, colours in drawn(report, runs):
        if u.family not in ("speed", "cpu", "netpipe-plateau"):
            continue
        seen.add(u.family)
        p = u.figure.panels[u.panel]
        assert isinstance(p, BarPanel)
        bars = by_gid(mfig, "bar|")
        expected = [b for b in p.bars if b.value is not None]
        assert len(bars) == len(expected), u.stem
        for b in expected:
            rect = bars[f"bar|{b.row}|{b.series}"]
            assert rect.get_width() == pytest.approx(b.value), u.stem
            row = next(r for r in p.rows if r.key == b.row)
            from matplotlib.colors import to_hex
            assert to_hex(rect.get_facecolor(), keep_alpha=False) == colours.of(row.entry,
                                                                                b.fill)
        # rows top to bottom in the model's order (the ranking)
        ax = mfig.axes[0]
        assert [t.get_text() for t in ax.get_yticklabels()] == [r.label for r in p.rows]
        whiskers = sorted((round(min(s[0][0], s[1][0]), 6), round(max(s[0][0], s[1][0]), 6))
                          for eb in ax.containers if hasattr(eb, "lines") and eb.lines[2]
                          for s in eb.lines[2][0].get_segments())
        assert whiskers == sorted((round(b.lo, 6), round(b.hi, 6)) for b in expected
                                  if b.lo is not None and b.hi is not None), u.stem
        limits = by_gid(mfig, "limits")
        want = sorted(b.limit for b in expected if b.limit is not None)
        got = sorted(limits["limits"].get_xdata()) if limits else []
        assert got == pytest.approx(want), u.stem
    assert seen == {"speed", "cpu", "netpipe-plateau"}


def test_flagged_bars_are_outlined_and_marked_as_the_model_says(roundup):
    runs, report = roundup
    flagged = 0
    for u, mfig, _ in drawn(report, runs):
        if u.family != "netpipe-plateau":
            continue
        p = u.figure.panels[u.panel]
        bars = by_gid(mfig, "bar|")
        values = by_gid(mfig, "value|")
        for b in p.bars:
            if b.value is None:
                continue
            rect = bars[f"bar|{b.row}|{b.series}"]
            assert (rect.get_linestyle() == "--") == bool(b.flag)
            assert values[f"value|{b.row}|{b.series}"].get_text() == b.text
            flagged += bool(b.flag)
    assert flagged        # the lab's netPIPE plateaus above the wire's limit: never ranked


def test_curves_scatter_heatmap_and_comparison_plot_the_models_data(roundup, compared):
    from matplotlib.colors import to_hex

    from nicbench.report.figures.comparison import ComparisonChart

    runs, report = roundup
    families = set()
    for u, mfig, colours in drawn(report, runs):
        if u.family in ("netpipe-adapter", "netpipe-mtu"):
            lines = by_gid(mfig, "curve|")
            curves = [c for p in u.figure.panels for c in p.curves if c.points]
            assert len(lines) == len(curves)
            for c in curves:
                line = lines[f"curve|{c.entry}|{c.label}"]
                assert list(line.get_xdata()) == pytest.approx([x for x, _ in c.points])
                assert list(line.get_ydata()) == pytest.approx([y for _, y in c.points])
        elif u.family == "cost":
            dots = by_gid(mfig, "dot|")
            assert len(dots) == sum(len(p.dots) for p in u.figure.panels)
            for p in u.figure.panels:
                for d in p.dots:
                    dot = dots[f"dot|{d.entry}|{p.title}"]
                    assert (dot.get_xdata()[0], dot.get_ydata()[0]) == pytest.approx((d.x, d.y))
                    assert to_hex(dot.get_color()) == colours.of(d.entry, d.colour)
        elif u.family == "heatmap":
            image = mfig.axes[0].get_images()[0].get_array()
            cells = u.figure.panels[0].cells
            for i, line in enumerate(cells):
                for j, cell in enumerate(line):
                    assert to_hex(tuple(image[i][j][:3])) == cell.fill
        else:
            continue
        families.add(u.family)
    assert families == {"netpipe-adapter", "netpipe-mtu", "cost", "heatmap"}
    runs, report = compared
    checked = 0
    for u, mfig, _ in drawn(report, runs):
        if not isinstance(u.figure, ComparisonChart):
            continue
        p = u.figure.panels[u.panel]
        bars = by_gid(mfig, "bar|")
        for s in p.shifts:
            if s.change_pct is None:
                assert f"bar|{s.row}|" not in bars      # above the limit: never a bar
            else:
                assert bars[f"bar|{s.row}|"].get_width() == pytest.approx(s.change_pct)
                checked += 1
    assert checked


# -- style -----------------------------------------------------------------------------------
def test_a_user_style_changes_fonts_and_the_cards_palette(roundup, tmp_path):
    from matplotlib.colors import to_hex

    from nicbench.report.colours import PALETTE
    from nicbench.report.figures.style import check_style, style_files

    user = tmp_path / "journal.mplstyle"
    mine = ["#111111", "#222222", "#333333", "#444444", "#555555"]     # written without #
    user.write_text("font.size: 11  # the journal's body size\nytick.labelsize: 11\n"
                    "axes.prop_cycle: cycler(color=[" + ", ".join(f"'{c[1:]}'" for c in mine)
                    + "])\n")
    runs, report = roundup
    styles = style_files(check_style(str(user)))
    for u, mfig, _ in drawn(report, runs, styles):
        if u.stem != "speed-iperf3-tcp-mtu-1500":
            continue
        ax = mfig.axes[0]
        assert {t.get_fontsize() for t in ax.get_yticklabels()} == {11.0}
        for r in u.figure.panels[u.panel].rows:
            entry = report.entry(r.entry)
            want = mine[PALETTE.index(entry.base_colour) % len(mine)]
            rect = by_gid(mfig, f"bar|{r.key}|").get(f"bar|{r.key}|")
            if rect is not None:
                assert to_hex(rect.get_facecolor(), keep_alpha=False) == want
        break
    else:
        pytest.fail("no speed chart at MTU 1500")
    for u, mfig, _ in drawn(report, runs):      # the house style: 8 pt, the report's colours
        if u.stem == "speed-iperf3-tcp-mtu-1500":
            assert {t.get_fontsize() for t in mfig.axes[0].get_yticklabels()} == {8.0}
            break


@pytest.mark.parametrize("text, message", [
    ("font.sizzle: 3\n", "journal.mplstyle:1: font.sizzle: not a matplotlib setting"),
    ("font.size: 9\naxes.facecolor: nocolour\n", "journal.mplstyle:2: axes.facecolor"),
    ("axes.prop_cycle: cycler(color=['#d55e00'])\n", "journal.mplstyle:1: axes.prop_cycle"),
    # values matplotlib takes but figures cannot draw
    ("font.size: 9\nsavefig.bbox: tight\n", "journal.mplstyle:2: savefig.bbox: 'tight': "
                                            "figures lay each chart out"),
    ("text.usetex: True\n", "journal.mplstyle:1: text.usetex: 'True': names are drawn as "
                            "plain text"),
    ("text.parse_math: True\n", "journal.mplstyle:1: text.parse_math"),
    ("font.size: 1e6\n", "journal.mplstyle:1: font.size: '1e6': give a text size from 4 "
                         "to 72 points"),
    ("axes.titlesize: 0.01\n", "journal.mplstyle:1: axes.titlesize"),
    ("savefig.dpi: 100000\n", "journal.mplstyle:1: savefig.dpi: '100000': give a "
                              "resolution from 50 to 1200"),
    ("figure.dpi: 100000\n", "journal.mplstyle:1: figure.dpi"),
    ("font.size: 9\n\x00\n", "journal.mplstyle:2: a NUL byte"),
])
def test_a_bad_style_file_is_one_line_exit_2(tmp_path, capsys, text, message):
    style = tmp_path / "journal.mplstyle"
    style.write_text(text)
    rc = main(["figures", str(RUN_A), "--out", str(tmp_path / "o"), "--style", str(style)])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.splitlines()) == 1 and message in err, err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("args, message", [
    (["--format", "png,gif"], "--format 'png,gif'"),
    (["--dpi", "5"], "--dpi '5'"),
    (["--adapters", "nosuch"], "--adapters nosuch: no adapter or pair"),
    (["--tests", "nosuch"], "--tests nosuch: no test"),
])
def test_bad_options_are_one_line_exit_2(tmp_path, capsys, args, message):
    rc = main(["figures", str(RUN_A), "--out", str(tmp_path / "o"), *args])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.splitlines()) == 1 and message in err, err


def test_report_figures_writes_them_beside_the_page(tmp_path, capsys):
    out = tmp_path / "rep"
    args = ["report", str(RUN_A), "--out", str(out), "--figures", "svg"]
    assert main(args) == 0
    pub = out / "publication"
    assert (pub / "figures.csv").is_file()
    assert (pub / "speed-iperf3-tcp-mtu-1500.svg").is_file()
    (pub / "stale.svg").write_text("<svg/>")
    assert main(args) == 0                      # again into the same report: replaced
    assert not (pub / "stale.svg").exists()
    capsys.readouterr()


# -- 50 adapters: no label over another --------------------------------------------------------
@pytest.fixture(scope="module")
def fifty(tmp_path_factory):
    sys.path.insert(0, str(REPO / "bench"))
    try:
        from report_scale import clone_run
    finally:
        sys.path.remove(str(REPO / "bench"))
    from nicbench.report.build import build
    from nicbench.report.load import load_runs

    run = tmp_path_factory.mktemp("fifty") / "run"
    run.mkdir()
    clone_run(ROUNDUP, run, 50)
    runs = load_runs([run])
    return runs, build(runs)


def ticks_drawn(axis, limits):
    """The tick labels matplotlib draws: those of ticks inside the view."""
    lo, hi = sorted(limits)
    return [t.label1 for t in axis.get_major_ticks()
            if lo - 1e-9 <= t.get_loc() <= hi + 1e-9 and t.label1.get_visible()]


def texts_of(mfig):
    out = []
    for t in mfig.texts:
        out.append(t)
    for leg in mfig.legends:
        out += leg.get_texts()
    for ax in mfig.axes:
        if not ax.get_visible():
            continue
        out += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label]
        out += ticks_drawn(ax.xaxis, ax.get_xlim()) + ticks_drawn(ax.yaxis, ax.get_ylim())
        out += ax.texts
        if ax.get_legend() is not None:
            out += ax.get_legend().get_texts()
    return [t for t in out if t.get_visible() and t.get_text().strip()]


def test_no_label_overlaps_another_at_50_adapters(fifty):
    from nicbench.report.figures.draw import freeze_layout

    runs, report = fifty
    wanted = {"speed-iperf3-tcp-mtu-1500", "cpu-iperf2-tcp-mtu-9000", "heatmap-iperf3-tcp",
              "netpipe-plateau-mtu-16000", "netpipe-mtu1500", "cost-iperf3-tcp"}
    adapter_charts = 0
    checked = set()
    for u, mfig, _ in drawn_some(report, runs, wanted):
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        canvas = FigureCanvasAgg(mfig)
        freeze_layout(mfig)
        mfig.draw_without_rendering()
        renderer = canvas.get_renderer()
        page = mfig.bbox
        boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts_of(mfig)]
        for text, box in boxes:
            assert box.x0 >= page.x0 - 1 and box.x1 <= page.x1 + 1 and \
                box.y0 >= page.y0 - 1 and box.y1 <= page.y1 + 1, (u.stem, text)
        boxes.sort(key=lambda tb: tb[1].y0)
        for i, (ta, a) in enumerate(boxes):
            for tb, b in boxes[i + 1:]:
                if b.y0 >= a.y1 - 0.5:
                    break
                overlap_x = min(a.x1, b.x1) - max(a.x0, b.x0)
                overlap_y = min(a.y1, b.y1) - max(a.y0, b.y0)
                assert overlap_x <= 0.5 or overlap_y <= 0.5, (u.stem, ta, tb)
        checked.add(u.stem if u.family != "netpipe-adapter" else "netpipe-adapter")
        adapter_charts += u.family == "netpipe-adapter"
    assert checked == wanted | {"netpipe-adapter"}
    assert len(report.entries) == 50


def drawn_some(report, runs, stems):
    """The units named (and the first netPIPE chart of an adapter), drawn."""
    import matplotlib.pyplot as plt

    from nicbench.report.figures.draw import figure_of
    from nicbench.report.figures.plan import units
    from nicbench.report.figures.style import card_colours, palette, style_files

    styles = style_files(None)
    colours = card_colours(report.entries, palette(styles))
    first_adapter = True
    for u in units(report.publication, []):
        take = u.stem in stems or (u.family == "netpipe-adapter" and first_adapter)
        if not take:
            continue
        first_adapter = first_adapter and u.family != "netpipe-adapter"
        with plt.style.context(styles):
            yield u, figure_of(u, colours), colours


def test_the_house_style_ships_with_the_package_and_no_text_is_under_8_pt(roundup):
    import tomllib

    from nicbench.report.figures.style import house_style

    assert Path(house_style()).is_file()
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "*.mplstyle" in project["tool"]["setuptools"]["package-data"][
        "nicbench.report.figures"]       # so a wheel carries it, not only this checkout
    runs, report = roundup
    families = set()
    for u, mfig, _ in drawn(report, runs):
        if u.family in families:
            continue
        families.add(u.family)
        sizes = {t.get_fontsize() for t in texts_of(mfig)}
        assert sizes and min(sizes) >= 8.0, (u.stem, sorted(sizes))


# -- ready for an article (issue 31) -------------------------------------------------------
def _legend_share(mfig) -> float:
    """The share of the figure's height its legends take (matplotlib's own extents)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    r = FigureCanvasAgg(mfig).get_renderer()
    mfig.draw(r)
    legends = list(mfig.legends) + [ax.get_legend() for ax in mfig.axes if ax.get_legend()]
    return sum(lg.get_window_extent(r).height for lg in legends) / mfig.bbox.height


def test_no_legend_takes_a_third_of_its_figure(roundup):
    runs, report = roundup
    shares = {u.stem: _legend_share(mfig) for u, mfig, _ in drawn(report, runs)}
    assert shares and max(shares.values()) < 1 / 3, sorted(
        shares.items(), key=lambda kv: -kv[1])[:5]


def test_a_warning_band_never_reaches_below_a_curves_own_link(roundup):
    """The band shades above a goodput limit: only where that limit is every curve's (one
    link rate and MTU). On a chart of a Fast and Gigabit Ethernet cards it would put the
    Gigabit cards' whole curves in the warning: there each point above its own link's
    limit is ringed instead, and the limits are named by value."""
    runs, report = roundup
    seen = {"band": 0, "ring": 0}
    for u, mfig, _ in drawn(report, runs):
        if not u.family.startswith("netpipe-") or u.family == "netpipe-plateau":
            continue
        for ax in mfig.axes:
            limits = {round(float(line.get_ydata()[0]), 6) for gid, line in by_gid(
                ax, "reference|goodput").items()}
            bands = list(by_gid(ax, "band").values())
            for band in bands:
                bottom = band.get_y() if hasattr(band, "get_y") else min(
                    y for _, y in band.get_xy())
                # the band starts at the one limit every curve of the axes shares
                assert len(limits) == 1 and bottom == pytest.approx(limits.pop()), u.stem
                seen["band"] += 1
            rings = by_gid(ax, "flagged|")
            if rings:
                assert not bands
                seen["ring"] += 1
    # the roundup's per-MTU charts mix fe (94.1) with gigabit cards (941.5): no band there
    assert seen["ring"] >= 1
    fig = next(m for u, m, _ in drawn(report, runs) if u.stem == "netpipe-mtu1500")
    assert not by_gid(fig, "band")
    assert {t.get_text().strip() for t in by_gid(fig, "reflabel|").values()} == {"94.1", "941"}


def test_no_marker_is_clipped_at_100_percent_cpu(roundup):
    """Whiskers, limit marks and a tool's own CPU at the axis's end (100 %) are drawn whole:
    every artist that reaches the axis's edge is drawn unclipped."""
    runs, report = roundup
    at_edge = 0
    for u, mfig, _ in drawn(report, runs):
        if u.family not in ("cpu", "speed", "netpipe-plateau"):
            continue
        ax = mfig.axes[0]
        xmax = ax.get_xlim()[1]
        for line in ax.lines + [c for coll in ax.collections for c in [coll]]:
            if hasattr(line, "get_xdata"):
                xs = [float(x) for x in line.get_xdata()]
            else:
                xs = [float(x) for seg in line.get_segments() for x, _ in seg]
            if xs and max(xs) >= xmax - 1e-9 and line.get_gid() is not None \
                    and not str(line.get_gid()).startswith("rowmarker"):
                at_edge += 1
                assert not line.get_clip_on(), (u.stem, line.get_gid())
        for coll in ax.collections:          # the whiskers' segments
            segs = coll.get_segments() if hasattr(coll, "get_segments") else []
            if any(x >= xmax - 1e-9 for seg in segs for x, _ in seg):
                at_edge += 1
                assert not coll.get_clip_on(), u.stem
    assert at_edge > 0          # the roundup's CPU reaches 100 %: the test looked at some


@pytest.fixture(scope="module")
def modern():
    from nicbench.report.build import build
    from nicbench.report.load import load_runs

    runs = load_runs([DATA / "modern"])
    return runs, build(runs)


def test_small_packets_on_a_log_axis_and_streams_directions_told_apart(modern):
    """The small-packet chart's NDR and PDR (0.5-100 k frames/s) beside the line rate
    (1.49 M): a log axis, so they are not flattened to the floor, and a marker of their
    own each; a --bidir chart's forward and reverse differ in more than their dash."""
    runs, report = modern
    units = [(u, m) for u, m, _ in drawn(report, runs)
             if u.family in ("smallpkt", "streams")]
    small = [m for u, m in units if u.family == "smallpkt"]
    assert small
    for mfig in small:
        for ax in [a for a in mfig.axes if a.get_visible()]:
            assert ax.get_yscale() == "log"
            curves = by_gid(ax, "curve|")
            ndr = [c for g, c in curves.items() if "|NDR" in g]
            pdr = [c for g, c in curves.items() if "|PDR" in g]
            assert ndr and pdr
            assert {(c.get_marker(), c.get_markerfacecolor()) for c in ndr}.isdisjoint(
                {(c.get_marker(), c.get_markerfacecolor()) for c in pdr})
            # the lowest NDR sits well above the axis's floor (not flattened onto it)
            lo = ax.get_ylim()[0]
            assert min(min(c.get_ydata()) for c in ndr) >= 1.5 * lo
        assert not [ax.get_legend() for ax in mfig.axes if ax.get_legend()]   # said once
    bidir = [m for u, m in units if u.family == "streams" and "bidir" in u.stem]
    assert bidir
    for mfig in bidir:
        curves = by_gid(mfig, "curve|")
        fwd = [c for g, c in curves.items() if g.endswith("|forward")]
        rev = [c for g, c in curves.items() if g.endswith("|reverse")]
        assert fwd and rev
        assert (fwd[0].get_marker(), fwd[0].get_markerfacecolor()) != (
            rev[0].get_marker(), rev[0].get_markerfacecolor())
