"""The report in a real browser: headless Chromium (Debian's chromium and chromium-driver,
driven by selenium) opens report.html from disk; every image must have loaded, with at
least one of each chart family, and every address on the page must be a local file.

Skipped only when Chromium itself is not installed (scripts/setup.sh installs it, with
chromium-driver, and selenium comes with the test extras).
"""

from __future__ import annotations

import shutil

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
FAMILIES = {"speed", "cpu", "netpipe-adapter", "netpipe-mtu", "netpipe-peak"}

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium "
                             "chromium-driver, or run scripts/setup.sh)")


@pytest.fixture(scope="module")
def browser():
    assert CHROMEDRIVER, "chromium is installed but chromedriver is not: apt-get install " \
                         "chromium-driver (scripts/setup.sh does)"
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed "
                                    "(pip install -e '.[test]')")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,1000"):
        opts.add_argument(arg)
    # An explicit driver path: selenium never tries to download one.
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def test_every_image_of_the_report_loads_in_chromium(rendered, browser):
    report, page = rendered
    browser.get(page.resolve().as_uri())
    state = browser.execute_script("return document.readyState")
    assert state == "complete"
    images = browser.execute_script("""
        return Array.from(document.images).map(img => ({
            src: img.getAttribute('src'), complete: img.complete,
            width: img.naturalWidth, height: img.naturalHeight,
            family: img.closest('figure') ? img.closest('figure').dataset.family : null}));
    """)
    assert len(images) == len(report.figures)
    broken = [i["src"] for i in images if not (i["complete"] and i["width"] > 0
                                               and i["height"] > 0)]
    assert not broken, f"images that did not load: {broken}"
    assert {i["family"] for i in images} >= FAMILIES
    # everything the page loads is a local file next to it (no CDN, no network)
    urls = browser.execute_script("""
        return Array.from(document.querySelectorAll('[src], [href]'))
            .map(el => el.src || el.href);
    """)
    assert urls and all(u.startswith("file://") for u in urls), urls
    assert browser.execute_script(
        "return document.querySelectorAll('script, link, iframe, object, embed').length") == 0
    title = browser.execute_script("return document.querySelector('h1').textContent")
    assert title == "nicbench report"
