"""Shared checks of the console's browser tests (issue 37): every page is accessible (axe-core,
0 serious or critical violations) and fits a phone (no sideways scrolling at 390 px), and its
screenshot for the owner's guide (docs/console.md) is taken by the test that shows it.

    assert_accessible(driver)      # axe-core on the page as it is now
    assert_fits(driver)            # the page is no wider than the window
    check_page(driver, "orders")   # both, at 1280 and at 390 px, with screenshots

axe-core comes from ``axe-selenium-python`` (pinned in requirements-dev.txt), which bundles
``axe.min.js``: nothing is fetched. The script is injected by the driver (not by the page),
so the console's CSP without inline script does not stop it.
"""

import os

from live import ROOT

# Where the owner's guide keeps its screenshots; refreshed only when asked, as the README's.
DOCS_SHOTS = ROOT / "docs" / "console"
ARTIFACTS = ROOT / "artifacts"
BLOCKING = ("serious", "critical")
WIDTHS = ((1280, 900), (390, 844))


def assert_accessible(driver) -> None:
    """axe-core finds no serious or critical violation on the current page."""
    from axe_selenium_python import Axe

    axe = Axe(driver)
    axe.inject()
    results = axe.run()
    blocking = [v for v in results["violations"] if v.get("impact") in BLOCKING]
    assert not blocking, f"{driver.title}: " + axe.report(blocking)


def assert_fits(driver) -> None:
    """The page is no wider than the window: no sideways scrolling."""
    width = driver.execute_script("return document.documentElement.scrollWidth")
    window = driver.execute_script("return window.innerWidth")
    assert width <= window, f"{driver.title}: {width} px wide in a {window} px window"


def shoot(driver, name: str) -> None:
    """A screenshot into artifacts/ and, with ``SHOP_DOCS_SCREENSHOT=1``, the viewport into
    docs/console/ (small PNGs: the window, not the whole page)."""
    ARTIFACTS.mkdir(exist_ok=True)
    driver.execute_script("window.scrollTo(0, 0)")  # the page's top, as a reader arrives
    driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))
    if os.environ.get("SHOP_DOCS_SCREENSHOT") == "1":
        from PIL import Image

        DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
        target = DOCS_SHOTS / f"{name}.png"
        driver.save_screenshot(str(target))
        with Image.open(target) as shot:  # a 64-colour palette: a third of the bytes
            small = shot.convert("RGB").quantize(colors=64)
        small.save(target, optimize=True)


def check_page(driver, name: str | None = None) -> None:
    """The current page at 1280 and at 390 px: it fits, axe finds nothing serious, and (with
    ``name``) its screenshots ``<name>-1280`` / ``<name>-390``. Leaves the window at 1280."""
    for width, height in WIDTHS:
        driver.set_window_size(width, height)
        assert_fits(driver)
        assert_accessible(driver)
        if name:
            shoot(driver, f"{name}-{width}")
    driver.set_window_size(*WIDTHS[0])
