"""The report in a real browser: headless Chromium (Debian's chromium and chromium-driver,
driven by selenium) opens report.html from disk: every image loads and every address is a
local file; in dark mode the page turns dark; on a narrow screen nothing is wider than it;
printed (Chromium's own --print-to-pdf, read back with pdftotext) no table is cut at the
page's edge: the values of every table's last columns are in the PDF.

Skipped only when Chromium itself is not installed (scripts/setup.sh installs it with
chromium-driver and poppler-utils; selenium comes with the test extras).
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
PDFTOTEXT = shutil.which("pdftotext")
FAMILIES = {"speed", "heatmap", "cpu", "cost", "netpipe-adapter", "netpipe-mtu",
            "netpipe-plateau", "published"}
# As root, Chromium needs --no-sandbox; nothing may come from the network.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage")
A4_PRINTABLE_PX = 718          # 210 mm - 2 x 10 mm margins, at 96 px per inch

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium "
                             "chromium-driver, or run scripts/setup.sh)")


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    assert CHROMEDRIVER, "chromium is installed but chromedriver is not: apt-get install " \
                         "chromium-driver (scripts/setup.sh does)"
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed "
                                    "(pip install -e '.[test]')")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in (*FLAGS, "--window-size=1280,1000", f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"):
        opts.add_argument(arg)
    # An explicit driver path: selenium never tries to download one.
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def _media(browser, media: str = "", dark: bool = False, width: int | None = None) -> None:
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {
        "media": media,
        "features": [{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]})
    if width is None:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    else:
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False})


def test_every_image_of_the_report_loads_in_chromium(rendered, browser):
    report, page = rendered
    _media(browser)
    browser.get(page.resolve().as_uri())
    assert browser.execute_script("return document.readyState") == "complete"
    browser.execute_script("document.querySelectorAll('img').forEach(i => i.loading='eager')")
    browser.execute_script("window.scrollTo(0, document.body.scrollHeight)")
    images = browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const imgs = Array.from(document.images);
        Promise.all(imgs.map(i => i.decode().catch(() => null))).then(() => done(imgs.map(
            img => ({src: img.getAttribute('src'), complete: img.complete,
                     width: img.naturalWidth, height: img.naturalHeight,
                     family: img.closest('figure') ? img.closest('figure').dataset.family
                                                   : null}))));
    """)
    assert len(images) == len(report.figures)
    broken = [i["src"] for i in images if not (i["complete"] and i["width"] > 0
                                               and i["height"] > 0)]
    assert not broken, f"images that did not load: {broken}"
    assert {i["family"] for i in images} == FAMILIES
    urls = browser.execute_script("""
        return Array.from(document.querySelectorAll('[src], [href]'))
            .map(el => el.src || el.href);
    """)
    assert urls and all(u.startswith("file://") for u in urls), urls
    assert browser.execute_script(
        "return document.querySelectorAll('script, link, iframe, object, embed').length") == 0
    assert browser.execute_script("return document.querySelector('h1').textContent") == \
        "nicbench report"
    # the first screen (1280 x 1000) is the verdict
    top = browser.execute_script(
        "return document.querySelector('#verdict ul.verdict').getBoundingClientRect().top")
    assert top < 300


def _luminance(rgb: str) -> float:
    r, g, b = (int(x) for x in rgb[rgb.index("(") + 1:rgb.index(")")].split(",")[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


def test_dark_mode_and_narrow_screens(rendered, browser):
    _, page = rendered
    browser.get(page.resolve().as_uri())
    style = "return getComputedStyle(document.body).{}"
    _media(browser, dark=False)
    assert _luminance(browser.execute_script(style.format("backgroundColor"))) > 0.9
    _media(browser, dark=True)
    assert _luminance(browser.execute_script(style.format("backgroundColor"))) < 0.15
    assert _luminance(browser.execute_script(style.format("color"))) > 0.8
    # the charts keep their white paper
    assert _luminance(browser.execute_script(
        "return getComputedStyle(document.querySelector('figure img')).backgroundColor")) > 0.9
    # a phone: the page is never wider than the screen; wide tables scroll in their box
    _media(browser, width=400)
    widths = browser.execute_script("""
        return {page: document.documentElement.scrollWidth,
                figures: Array.from(document.querySelectorAll('figure img'))
                    .map(i => i.getBoundingClientRect().width)};
    """)
    assert widths["page"] <= 400
    assert max(widths["figures"]) <= 400
    _media(browser)


def test_printed_tables_fit_the_page(rendered, browser):
    """Print media at the width of an A4 page: no table is wider than the page."""
    _, page = rendered
    browser.get(page.resolve().as_uri())
    _media(browser, media="print", width=A4_PRINTABLE_PX)
    wide = browser.execute_script("""
        const limit = document.documentElement.clientWidth + 1;
        return Array.from(document.querySelectorAll('table'))
            .filter(t => t.getBoundingClientRect().right > limit || t.scrollWidth > limit)
            .map(t => (t.id || t.closest('section').id) + ' ' + t.getBoundingClientRect().right);
    """)
    assert not wide, f"tables wider than an A4 page in print: {wide}"
    assert browser.execute_script(
        "return getComputedStyle(document.querySelector('nav#toc')).display") == "none"
    _media(browser)


@pytest.mark.skipif(PDFTOTEXT is None, reason="pdftotext is not installed (apt-get install "
                                              "poppler-utils, or run scripts/setup.sh)")
def test_pdf_of_the_report_has_every_column_of_every_table(rendered, tmp_path):
    report, page = rendered
    pdf = tmp_path / "report.pdf"
    proc = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--no-pdf-header-footer",
         f"--print-to-pdf={pdf}", page.resolve().as_uri()],
        capture_output=True, text=True, timeout=180)
    assert pdf.is_file() and pdf.stat().st_size > 10_000, proc.stderr[-2000:]
    text = subprocess.run([PDFTOTEXT, "-layout", str(pdf), "-"], capture_output=True,
                          text=True, timeout=120, check=True).stdout
    words = set(text.split())
    missing = []
    for t in report.tables:
        if t.family in ("verdict-csv",):
            continue            # CSV only, not on the page
        # the last three columns of every row: numbers never wrap, so each is whole
        for row in t.rows:
            for cell in row[-3:]:
                value = str(cell)
                if value and value.replace(".", "", 1).isdigit() and value not in words:
                    missing.append((t.id, value))
    assert not missing, f"table cells cut from the PDF: {missing[:20]}"
    # the summary's Mbit/s columns (cut from the PDF before) are all there
    (summary,) = report.tables_of("summary")
    col = summary.columns.index("selected")
    assert all(str(r[col]) in words for r in summary.rows if r[col])
