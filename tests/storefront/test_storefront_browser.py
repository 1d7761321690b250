"""The storefront in a real headless Chromium against a live gunicorn: a visitor browses
home → search → a product with sizes → picks a size → a category with a filter → a page,
at 1280 px and on a 390 px phone. Every page: no sideways scroll, and axe-core finds no
serious or critical accessibility violation. Screenshots go to docs/storefront/ when
``SHOP_DOCS_SCREENSHOT=1``, else to artifacts/.
"""

import io
import os

import pytest
from conftest import fresh_database
from live import ROOT, LiveServer

from tests.admin.browser_helpers import assert_accessible, assert_fits
from tests.admin.test_admin_browser import CHROMEDRIVER, CHROMIUM, browser  # noqa: F401, F811
from tests.catalogue_helpers import Catalogue, image_bytes
from tests.fake_stripe import API_KEY, SECRET

SHOTS = ROOT / ("docs/storefront" if os.environ.get("SHOP_DOCS_SCREENSHOT") else "artifacts")

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(
        not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)),
        reason="headless browser test: chromium and chromium-driver are not installed"
        " (apt-get install chromium chromium-driver, or run .ci/browser-deps)",
    ),
]


@pytest.fixture
def database_url(tmp_path):
    """SQLite alone: what a visitor sees does not depend on the engine; every page's reads
    run on both engines through the test client (test_storefront_pages.py)."""
    with fresh_database("sqlite", tmp_path) as url:
        yield url


@pytest.fixture
def live(make_app, database_url, owner_client, fake_stripe):
    """A live gunicorn over a small tea shop that ships to Germany and takes cards (through
    the fake Stripe and its Stripe.js) and bank transfers."""
    made = Catalogue(owner_client)
    teas = made.category(name="Teas", slug="teas", description="Loose-leaf teas.")
    sencha = made.product(
        name="Sencha",
        slug="sencha",
        description="A bright green tea from Shizuoka.",
        category_id=teas["id"],
        options=[{"name": "Size", "values": ["100 g", "250 g"]}],
        generate=True,
    )
    for variant in owner_client.get(f"/products/{sencha['id']}").json["variants"]:
        stock = {"100 g": 12, "250 g": 3}[variant["options"]["Size"]]
        owner_client.patch(
            f"/products/{sencha['id']}/variants/{variant['id']}", json={"stock": stock}
        )
    files = {"file": (io.BytesIO(image_bytes(size=(800, 600))), "sencha.png")}
    response = owner_client.post(
        f"/products/{sencha['id']}/images",
        data={**files, "alt": "A cup of sencha"},
        content_type="multipart/form-data",
    )
    assert response.status_code == 201, response.json
    for n in range(6):
        made.product(name=f"Black tea {n}", slug=f"black-{n}", category_id=teas["id"])
    featured = made.collection(title="Featured", slug="featured")
    owner_client.put(f"/collections/{featured['id']}", json={"product_ids": [sencha["id"]]})
    made.entry("about", data={"title": "About us", "body": "A small tea shop since 2019."})
    method = {"name": "DHL", "countries": ["DE"], "price_cents": 490}
    assert owner_client.post("/shipping-methods", json=method).status_code == 201
    transfer = {"bank_transfer_instructions": "IBAN DE00 1234 5678"}
    assert owner_client.patch("/settings", json=transfer).status_code == 200
    server = LiveServer(
        {
            "DATABASE_URL": database_url,
            "SHOP_COOKIE_SECURE": "0",
            "SHOP_RATELIMIT_ENABLED": "0",
            "STRIPE_API_KEY": API_KEY,
            "STRIPE_WEBHOOK_SECRET": SECRET,
            "STRIPE_API_BASE": fake_stripe.url,
            "STRIPE_PUBLISHABLE_KEY": "pk_test_shop",
            "SHOP_STRIPE_JS_URL": fake_stripe.url + "/v3/",
        }
    )
    yield server
    server.stop()


def arrive(driver, title: str, in_address: str = "", title_starts: bool = False) -> None:
    """Wait (bounded) until the page titled ``title`` (or, with ``title_starts``, a title
    starting so) whose address holds ``in_address`` has loaded: a click does not wait for
    the page it leads to."""
    from selenium.webdriver.support.wait import WebDriverWait

    def there(d) -> bool:
        named = d.title.startswith(title) if title_starts else d.title == title
        return (
            named
            and in_address in d.current_url
            and d.execute_script("return document.readyState") == "complete"
        )

    WebDriverWait(driver, 20).until(there)


def check_page(driver, name: str) -> None:
    """The page fits the window (no sideways scroll) and axe-core finds nothing serious or
    critical (the console's own checks); a screenshot named ``name``."""
    assert_fits(driver)
    assert_accessible(driver)
    SHOTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SHOTS / f"store-{name}.png"))


@pytest.mark.parametrize(("width", "height"), [(1280, 900), (390, 844)], ids=["desktop", "phone"])
def test_a_visitor_browses_searches_and_picks_a_size(browser, live, width, height):  # noqa: F811
    from selenium.webdriver.common.by import By

    browser.set_window_size(width, height)
    size = "1280" if width == 1280 else "390"
    browser.get(live.url + "/store/")
    assert browser.title == "My Shop"
    check_page(browser, f"home-{size}")

    box = browser.find_element(By.ID, "search-words")
    box.send_keys("sencha")
    box.submit()
    arrive(browser, "Search: sencha · My Shop")
    check_page(browser, f"search-{size}")

    browser.find_element(By.LINK_TEXT, "Sencha").click()
    arrive(browser, "Sencha · My Shop")
    browser.find_element(By.XPATH, "//label[contains(., '250 g')]").click()
    browser.find_element(By.CSS_SELECTOR, "form.variants button[type=submit]").click()
    arrive(browser, "Sencha · My Shop", "variant=")
    checked = browser.find_element(By.CSS_SELECTOR, "form.variants input:checked")
    label = browser.find_element(By.CSS_SELECTOR, f"label[for='{checked.get_attribute('id')}']")
    assert "250 g" in label.text
    assert "Only 3 left" in browser.page_source
    check_page(browser, f"product-{size}")

    browser.find_element(By.LINK_TEXT, "Teas").click()
    arrive(browser, "Teas · My Shop")
    browser.find_element(By.XPATH, "//label[contains(., '100 g')]").click()
    browser.find_element(By.CSS_SELECTOR, "form.filters button[type=submit]").click()
    arrive(browser, "Teas · My Shop", "option.Size=100")
    assert browser.find_element(By.CSS_SELECTOR, ".count").text == "1 product"
    check_page(browser, f"category-{size}")

    browser.find_element(By.LINK_TEXT, "About us").click()
    arrive(browser, "About us · My Shop")
    assert "A small tea shop since 2019." in browser.page_source
    check_page(browser, f"page-{size}")


def fill(driver, values: dict) -> None:
    """Type ``values`` into the inputs of those ids (selects by their visible text)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.select import Select

    for field, value in values.items():
        element = driver.find_element(By.ID, field)
        if element.tag_name == "select":
            Select(element).select_by_visible_text(value)
        else:
            element.clear()
            element.send_keys(value)


def checkout_as_guest(driver, live, size: str) -> None:
    """Product → add to cart → cart → checkout: address, method; up to the payment step."""
    from selenium.webdriver.common.by import By

    driver.get(live.url + "/store/products/sencha")
    driver.find_element(By.XPATH, "//label[contains(., '250 g')]").click()
    driver.find_element(By.CSS_SELECTOR, "form.variants button[type=submit]").click()
    arrive(driver, "Sencha · My Shop", "variant=")
    fill(driver, {"quantity": "2"})
    driver.find_element(By.CSS_SELECTOR, "form.add button[type=submit]").click()
    arrive(driver, "Cart · My Shop")
    assert "250 g" in driver.page_source
    check_page(driver, f"cart-{size}")
    driver.find_element(By.LINK_TEXT, "Check out").click()
    arrive(driver, "Checkout · My Shop")
    fill(driver, {"f-email": "gina@example.com", "f-name": "Gina Guest",
                   "f-line1": "Teeweg 1", "f-postal_code": "10115", "f-city": "Berlin",
                   "f-country": "Germany"})  # fmt: skip
    driver.find_element(By.CSS_SELECTOR, "#details-title + form button[type=submit]").click()
    arrive(driver, "Checkout · My Shop", "#shipping")
    driver.find_element(By.CSS_SELECTOR, "#shipping form button[type=submit]").click()
    arrive(driver, "Checkout · My Shop", "#payment")
    check_page(driver, f"checkout-{size}")


@pytest.mark.parametrize(("width", "height"), [(1280, 900), (390, 844)], ids=["desktop", "phone"])
def test_a_guest_pays_by_card_through_stripe(browser, live, fake_stripe, width, height):  # noqa: F811
    from selenium.webdriver.common.by import By

    browser.set_window_size(width, height)
    size = "1280" if width == 1280 else "390"
    checkout_as_guest(browser, live, size)
    browser.find_element(By.XPATH, "//label[.='Card']").click()
    browser.find_element(By.CSS_SELECTOR, "#payment form button[type=submit]").click()
    arrive(browser, "Pay for order", "/pay", title_starts=True)
    card = browser.find_element(By.ID, "fake-card-number")  # in the Payment Element
    check_page(browser, f"pay-{size}")
    card.send_keys("4242 4242 4242 4242")
    browser.find_element(By.CSS_SELECTOR, "#pay button[type=submit]").click()
    arrive(browser, "Order ", "placed=1", title_starts=True)
    assert "Thank you!" in browser.page_source and "paid" in browser.page_source
    assert len(fake_stripe.browser_confirmed) == 1
    check_page(browser, f"confirmation-{size}")
    status_page = browser.current_url.replace("&placed=1", "").replace("placed=1&", "")
    browser.get(status_page)
    arrive(browser, "Order ", "token=", title_starts=True)
    assert "paid" in browser.find_element(By.CSS_SELECTOR, ".status").text


def test_a_guest_pays_by_bank_transfer(browser, live):  # noqa: F811
    from selenium.webdriver.common.by import By

    browser.set_window_size(390, 844)
    checkout_as_guest(browser, live, "390-transfer")
    browser.find_element(By.XPATH, "//label[.='Bank transfer']").click()
    browser.find_element(By.CSS_SELECTOR, "#payment form button[type=submit]").click()
    arrive(browser, "Order ", "placed=1", title_starts=True)
    assert "IBAN DE00 1234 5678" in browser.page_source
    check_page(browser, "transfer-390")


def test_a_sold_out_variant_cannot_be_added(browser, live, owner_client):  # noqa: F811
    from selenium.webdriver.common.by import By

    product = owner_client.get("/products?slug=sencha").json["items"][0]
    for variant in owner_client.get(f"/products/{product['id']}").json["variants"]:
        owner_client.patch(f"/products/{product['id']}/variants/{variant['id']}", json={"stock": 0})
    browser.get(live.url + "/store/products/sencha")
    button = browser.find_element(By.CSS_SELECTOR, ".buy p button")
    assert button.text == "Sold out" and not button.is_enabled()
    assert not browser.find_elements(By.CSS_SELECTOR, "form.add")
