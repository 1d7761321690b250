"""The console's invoices (issue 40) in a real headless Chromium: the invoices list and the
order page's Documents block at 1280 and 390 px, no sideways scroll, no serious or critical
axe-core violation. The ``browser`` and ``live`` fixtures are the console's browser test's
(its paid order is invoiced)."""

from tests.admin.test_admin_browser import (  # noqa: F401 - fixtures
    arrive,
    browser,
    database_url,
    live,
    pytestmark,
    sign_in,
)
from tests.admin.test_admin_orders_browser import fits

pytestmark = pytestmark  # live, and skipped where Chromium is missing


def _serious(driver) -> list:
    """axe-core's serious and critical violations on the page."""
    from axe_selenium_python import Axe

    axe = Axe(driver)
    axe.inject()
    found = axe.run()["violations"]
    return [(v["id"], v["impact"]) for v in found if v["impact"] in ("serious", "critical")]


def test_the_invoices_list_and_documents_fit_and_pass_axe(browser, live):  # noqa: F811
    from selenium.webdriver.common.by import By

    browser.set_window_size(1280, 900)
    browser.get(live.url + "/admin/login?next=/admin/invoices")
    arrive(browser, "Sign in")
    sign_in(browser, lands_on="Invoices")
    for width in (1280, 390):
        browser.set_window_size(width, 844)
        browser.get(live.url + "/admin/invoices")
        arrive(browser, "Invoices")
        assert browser.find_elements(By.CSS_SELECTOR, "table.invoices tbody tr")
        assert fits(browser) and _serious(browser) == []
        link = browser.find_element(By.CSS_SELECTOR, "table.invoices tbody td a")
        number = link.text
        link.click()
        arrive(browser, f"Order {number}")
        assert "Invoice INV-" in browser.find_element(By.ID, "documents").text
        assert fits(browser) and _serious(browser) == []
