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


class Chromium:
    """One headless Chromium for the browser tests of a test process (conftest's ``chromium``),
    started on first use; each test gets it back as new (``fresh``).

    A start and a quit were 3 to 5 s of a worker's wall clock a test on the loaded VM (0.7 s
    of CPU). Between tests, ``fresh`` closes every window but one, leaves the page for
    ``about:blank`` and clears what could carry over: the cookies (they ignore the port, so
    the last test's sign-in would reach the next live server on 127.0.0.1), the HTTP cache,
    granted permissions (the clipboard), and the window's size and implicit wait are the
    first test's. What is kept per origin (storage) stays behind with the last server's
    port; the app stores nothing there. A browser that no longer answers is replaced.
    """

    def __init__(self, binary: str, driver_path: str, flags: tuple[str, ...]):
        self.binary, self.driver_path, self.flags = binary, driver_path, flags
        self.driver = None
        self.profile = None

    def fresh(self):
        if self.driver is not None:
            try:
                self._reset(self.driver)
                return self.driver
            except Exception:  # noqa: BLE001 - a browser that crashed or hung: a new one
                self.quit()
        self.driver = self._start()
        self._reset(self.driver)
        return self.driver

    def _start(self):
        import shutil
        import tempfile

        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self.profile = tempfile.mkdtemp(prefix="shop-chromium-")
        options = webdriver.ChromeOptions()
        options.binary_location = self.binary
        for flag in (*self.flags, f"--user-data-dir={self.profile}", "--window-size=1280,800"):
            options.add_argument(flag)
        try:
            return webdriver.Chrome(service=Service(self.driver_path), options=options)
        except Exception:
            shutil.rmtree(self.profile, ignore_errors=True)
            raise

    @staticmethod
    def _reset(driver) -> None:
        first, *others = driver.window_handles
        for handle in others:
            driver.switch_to.window(handle)
            driver.close()
        driver.switch_to.window(first)
        driver.get("about:blank")
        driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
        driver.execute_cdp_cmd("Network.clearBrowserCache", {})
        driver.execute_cdp_cmd("Browser.resetPermissions", {})
        driver.set_window_size(1280, 800)
        driver.implicitly_wait(5)

    def quit(self) -> None:
        import shutil

        if self.driver is not None:
            try:
                self.driver.quit()
            finally:
                self.driver = None
                shutil.rmtree(self.profile, ignore_errors=True)
