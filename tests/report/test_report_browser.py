"""The report in a real browser: headless Chromium (Debian's chromium and chromium-driver,
driven by selenium) opens report.html from disk: every image loads and every address is a
local file; in dark mode the page turns dark; on a narrow screen nothing is wider than it;
printed (Chromium's own --print-to-pdf, read back with pdftotext) no table is cut at the
page's edge: the values of every table's last columns are in the PDF. The card finder and
sortable tables work with JavaScript, and without it the page shows everything. The
five-card roundup (data/roundup) is measured as a reviewer reads it: the Verdict in at most
250 words, no caption over 80, its tables whole at 1280 px, nothing wider than a 390 px
phone, printed in at most 20 pages.

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
PDFINFO = shutil.which("pdfinfo")
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
        "return document.querySelectorAll('link, iframe, object, embed, script[src]').length"
    ) == 0
    assert browser.execute_script("return document.scripts.length") == 1   # inline, ours
    assert browser.execute_script("return document.querySelector('h1').textContent") == \
        "nicbench report"
    # the first screen (1280 x 1000) is the verdict
    top = browser.execute_script(
        "return document.querySelector('#table-glance').getBoundingClientRect().top")
    assert top < 400


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
        if t.family in ("verdict-csv", "summary"):
            continue            # CSV only, or left out of print with a note
        # the last three columns of every row: numbers never wrap, so each is whole
        for row in t.rows:
            for cell in row[-3:]:
                value = str(cell)
                if value and value.replace(".", "", 1).isdigit() and value not in words:
                    missing.append((t.id, value))
    assert not missing, f"table cells cut from the PDF: {missing[:20]}"
    # every configuration's table is left out of print, and the print says so
    (summary,) = report.tables_of("summary")
    assert f"{len(summary.rows)} rows: left out of print" in " ".join(text.split())


def _visible_rows(browser, table_id: str) -> list[str]:
    return browser.execute_script(
        "return Array.from(document.querySelectorAll('#' + arguments[0] + ' tbody tr'))"
        ".filter(r => r.offsetParent !== null).map(r => r.cells[1].textContent.trim())",
        table_id)


def test_find_a_card_and_sort_a_table_with_javascript(rendered, browser):
    report, page = rendered
    _media(browser)
    browser.get(page.resolve().as_uri())
    box = browser.find_element("id", "card-filter")
    assert box.is_displayed()
    (t,) = [t for t in report.tables_of("verdict") if t.id == "verdict-iperf3-tcp"]
    table = "table-" + t.id
    everyone = _visible_rows(browser, table)
    assert len(everyone) == len(t.rows) > 1
    box.send_keys("stall")
    rows = _visible_rows(browser, table)
    assert rows and all("stall" in r for r in rows) and len(rows) < len(everyone)
    assert browser.find_element("id", "card-count").text == f"1 of {len(report.entries)} cards match"
    # a figure of another card is hidden, the card's own shown
    hidden = browser.execute_script(
        "return Array.from(document.querySelectorAll('figure[data-card]'))"
        ".map(f => [f.dataset.card, f.offsetParent !== null])")
    assert hidden and all(("stall" in card.lower()) == shown for card, shown in hidden)
    from selenium.webdriver.common.keys import Keys

    box.send_keys(Keys.BACKSPACE * len("stall"))
    assert _visible_rows(browser, table) == everyone
    # sorting: a click on "Mbit/s" orders the rows by it, a second click reverses them
    col = t.columns.index("Mbit/s")
    head = browser.find_elements("css selector", f"#{table} thead th")[col]
    head.click()
    values = browser.execute_script(
        "return Array.from(document.querySelectorAll('#' + arguments[0] + ' tbody tr'))"
        ".map(r => parseFloat(r.cells[arguments[1]].textContent))", table, col)
    assert values == sorted(values) and values != list(reversed(values))
    head.click()
    again = browser.execute_script(
        "return Array.from(document.querySelectorAll('#' + arguments[0] + ' tbody tr'))"
        ".map(r => parseFloat(r.cells[arguments[1]].textContent))", table, col)
    assert again == sorted(values, reverse=True)


def test_without_javascript_the_page_shows_everything(rendered, browser):
    report, page = rendered
    _media(browser)
    browser.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": True})
    try:
        browser.get(page.resolve().as_uri())
        # the finder needs the script: hidden; every row and figure is there, unsorted
        assert not browser.find_element("id", "card-filter").is_displayed()
        (t,) = [t for t in report.tables_of("verdict") if t.id == "verdict-iperf3-tcp"]
        assert _visible_rows(browser, "table-" + t.id) == [str(r[1]) for r in t.rows]
        assert browser.execute_script(
            "return document.querySelectorAll('.filtered-out, th[aria-sort]').length") == 0
        assert browser.execute_script("return document.querySelectorAll('figure').length") \
            == len(report.figures)
    finally:
        browser.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": False})


@pytest.fixture(scope="module")
def roundup(tmp_path_factory):
    """The five-card roundup held back from the project (data/roundup), as a report."""
    from conftest import DATA, write_report

    return write_report(tmp_path_factory.mktemp("roundup"), [DATA / "roundup"])


MEASURE = """
    const words = el => (el.innerText.trim().match(/\\S+/g) || []).length;
    const verdict = document.querySelector('#verdict');
    const tables = Array.from(verdict.querySelectorAll('table')).concat(
        Array.from(document.querySelectorAll('#rankings table')));
    return {
        verdict: words(verdict),
        captions: Array.from(document.querySelectorAll('figcaption'))
            .map(c => [c.closest('figure').id, words(c)]),
        cut: tables.filter(t => t.scrollWidth > t.parentElement.clientWidth + 1
                                || t.getBoundingClientRect().right >
                                   t.parentElement.getBoundingClientRect().right + 1)
            .map(t => t.id),
        n_tables: tables.length};
"""


def test_a_reviewer_reads_the_roundup_in_a_minute(roundup, browser, tmp_path):
    _, page = roundup
    _media(browser, width=1280)
    browser.get(page.resolve().as_uri())
    m = browser.execute_script(MEASURE)
    assert 0 < m["verdict"] <= 250, m["verdict"]
    long = [(fig, n) for fig, n in m["captions"] if n > 80]
    assert m["captions"] and not long, long
    assert m["n_tables"] >= 4 and not m["cut"], m["cut"]
    # a phone: nothing wider than its 390 px (wide tables scroll inside their box)
    _media(browser, width=390)
    wide = browser.execute_script("""
        return Array.from(document.querySelectorAll('body *'))
            .filter(e => !e.closest('.scroll') && e.getBoundingClientRect().right > 391)
            .map(e => e.tagName + '#' + e.id).slice(0, 10);""")
    assert browser.execute_script("return document.documentElement.scrollWidth") <= 390
    assert not wide, wide
    _media(browser)
    if PDFINFO is None:
        pytest.skip("pdfinfo is not installed (apt-get install poppler-utils)")
    pdf = tmp_path / "roundup.pdf"
    subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--no-pdf-header-footer",
         f"--print-to-pdf={pdf}", page.resolve().as_uri()],
        capture_output=True, text=True, timeout=180)
    info = subprocess.run([PDFINFO, str(pdf)], capture_output=True, text=True, timeout=60,
                          check=True).stdout
    pages = int(next(line.split()[1] for line in info.splitlines()
                     if line.startswith("Pages:")))
    assert pages <= 20, pages
