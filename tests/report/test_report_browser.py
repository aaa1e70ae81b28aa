"""The report in a real browser: headless Chromium (Debian's chromium and chromium-driver,
driven by selenium) opens report.html from disk: every image loads, every address is a
local file, and the first screen is the verdict.

Skipped only when Chromium itself is not installed (scripts/setup.sh installs it with
chromium-driver; selenium comes with the test extras).
"""

from __future__ import annotations

import shutil

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
FAMILIES = {"speed", "heatmap", "cpu", "cost", "netpipe-adapter", "netpipe-mtu",
            "netpipe-plateau"}
# As root, Chromium needs --no-sandbox; nothing may come from the network.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage")

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
    for arg in FLAGS + ("--window-size=1280,1000",
                        f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"):
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
