"""The console's catalogue and content pages in a real headless Chromium (issue 37).

An owner's day: create a product with two options, generate its variants, set their prices
and stock, upload an image and see it, import a CSV with one bad row (the preview names it,
nothing is written), fix it and import it; make a category, a collection and a content
entry. An editor's day: lands on the products, edits one, cannot see orders. Every page is
checked at 1280 and 390 px (no sideways scroll) and by axe-core (no serious or critical
violation). Screenshots go to docs/console/ (the owner's guide, docs/console.md).
"""

import pytest
from conftest import PASSWORD
from live import LiveServer

from tests.admin.catalogue_browser_helpers import check_page, shoot
from tests.admin.test_admin_browser import (  # noqa: F401 - fixtures
    arrive,
    browser,
    database_url,
    pytestmark,
    submit,
)
from tests.catalogue_helpers import image_bytes

pytestmark = pytestmark  # live, and skipped where Chromium is missing


@pytest.fixture
def shop_live(make_app, database_url):  # noqa: F811 - the fixture above
    """A live gunicorn with an owner, an editor and one product the editor will change."""
    from shop.auth.users import create_user

    app = make_app()
    with app.app_context():
        create_user("owner@example.com", "Olive Owner", PASSWORD, "owner")
        create_user("editor@example.com", "Eddie Editor", PASSWORD, "editor")
    owner = app.test_client()
    owner.post("/auth/login", json={"email": "owner@example.com", "password": PASSWORD})
    body = {"name": "Enamel mug", "price_cents": 1200, "stock": 4}
    assert owner.post("/products", json=body).status_code == 201
    server = LiveServer(
        {"DATABASE_URL": database_url, "SHOP_COOKIE_SECURE": "0", "SHOP_RATELIMIT_ENABLED": "0"}
    )
    server.api = owner
    yield server
    server.stop()


def sign_in_as(driver, url: str, email: str, path: str = "") -> None:
    from selenium.webdriver.common.by import By

    driver.get(url + "/admin/login" + (f"?next={path}" if path else ""))
    arrive(driver, "Sign in")
    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.ID, "password").send_keys(PASSWORD)
    driver.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()


def fill(driver, field_id: str, value: str) -> None:
    from selenium.webdriver.common.by import By

    field = driver.find_element(By.ID, field_id)
    field.clear()
    field.send_keys(value)


def alert(driver) -> str:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, ".alert").text


def test_an_owners_day_in_the_catalogue(browser, shop_live, tmp_path):  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait

    url = shop_live.url
    sign_in_as(browser, url, "owner@example.com", "/admin/products")
    arrive(browser, "Products")
    check_page(browser)
    browser.set_window_size(1280, 900)

    # A product with two options: its first variant, then the combinations generated.
    browser.find_element(By.LINK_TEXT, "New product").click()
    arrive(browser, "New product")
    check_page(browser)
    fill(browser, "name", "Linen shirt")
    fill(browser, "description", "Soft washed linen.")
    fill(browser, "price", "39.00")
    fill(browser, "stock", "5")
    fill(browser, "option-1-name", "Size")
    fill(browser, "option-1-values", "S, M")
    fill(browser, "option-2-name", "Colour")
    fill(browser, "option-2-values", "White, Sand")
    shoot(browser, "product-new")
    submit(browser, "#product", "Linen shirt")
    assert "Product created" in alert(browser)
    fill(browser, "generate-price", "41.00")
    fill(browser, "generate-stock", "2")
    submit(browser, "#generate", "Linen shirt")
    assert "Variants generated" in alert(browser)
    rows = browser.find_elements(By.CSS_SELECTOR, "table.variants tbody tr")
    assert len(rows) == 4
    # Prices and stock of every variant in one form.
    for n, row in enumerate(rows):
        variant = row.get_attribute("id").removeprefix("variant-")
        fill(browser, f"v-{variant}-price", f"{40 + n}.00")
        fill(browser, f"v-{variant}-stock", str(10 + n))
        fill(browser, f"v-{variant}-sku", f"LIN-{n}")
    submit(browser, "#variants-save", "Linen shirt")
    assert "Variants saved" in alert(browser)
    product_id = browser.current_url.split("/admin/products/")[1].split("?")[0]
    variants = shop_live.api.get(f"/products/{product_id}/variants").json["items"]
    assert [(v["price_cents"], v["stock"]) for v in variants] == [
        (4000, 10),
        (4100, 11),
        (4200, 12),
        (4300, 13),
    ]

    # An image, seen on the page once uploaded.
    picture = tmp_path / "shirt.png"
    picture.write_bytes(image_bytes(size=(400, 300), colour="wheat"))
    browser.find_element(By.ID, "file").send_keys(str(picture))
    fill(browser, "alt", "The linen shirt, folded")
    submit(browser, "#upload", "Linen shirt")
    assert "Image uploaded" in alert(browser)
    shown = browser.find_element(By.CSS_SELECTOR, "ul.images img")
    assert shown.get_attribute("alt") == "The linen shirt, folded"
    WebDriverWait(browser, 10).until(  # the preview: the uploaded image, decoded
        lambda d: d.execute_script("return arguments[0].complete", shown)
    )
    assert browser.execute_script("return arguments[0].naturalWidth", shown) > 0
    check_page(browser)
    shoot(browser, "product")
    shoot(browser, "product-390", width=390)

    # A CSV with one bad row: the preview names it and nothing is written.
    browser.get(url + "/admin/products/import")
    arrive(browser, "Import products")
    check_page(browser)
    browser.set_window_size(1280, 900)
    header = "product_slug,product_name,variant_sku,variant_price,variant_stock\n"
    bad = tmp_path / "catalogue.csv"
    bad.write_text(header + "teapot,Teapot,TEA-1,32.00,4\ncup,Cup,CUP-1,nine,12\n")
    browser.find_element(By.ID, "file").send_keys(str(bad))
    submit(browser, "#upload", "Import products")
    assert "1 row(s) have errors" in browser.find_element(By.ID, "preview-errors").text
    errors = browser.find_element(By.ID, "row-errors").text
    assert "Row 2" in errors and "variant_price" in errors
    assert not browser.find_elements(By.ID, "confirm")
    check_page(browser)
    shoot(browser, "import-preview")
    assert shop_live.api.get("/products?q=teapot").json["total"] == 0
    fixed = tmp_path / "catalogue-fixed.csv"
    fixed.write_text(header + "teapot,Teapot,TEA-1,32.00,4\ncup,Cup,CUP-1,9.00,12\n")
    browser.set_window_size(1280, 900)
    browser.find_element(By.ID, "file").send_keys(str(fixed))
    submit(browser, "#upload", "Import products")
    assert browser.find_element(By.ID, "confirm")
    assert shop_live.api.get("/products?q=teapot").json["total"] == 0  # a preview only
    submit(browser, "#confirm", "Import products")
    assert "2 created" in browser.find_element(By.ID, "import-result").text
    assert shop_live.api.get("/products?q=teapot").json["total"] == 1
    check_page(browser)

    # The list: search, then everything.
    browser.get(url + "/admin/products?q=linen")
    arrive(browser, "Products")
    assert len(browser.find_elements(By.CSS_SELECTOR, "table.products tbody tr")) == 1
    browser.get(url + "/admin/products")
    arrive(browser, "Products")
    assert len(browser.find_elements(By.CSS_SELECTOR, "table.products tbody tr")) == 4
    check_page(browser)
    shoot(browser, "products")
    shoot(browser, "products-390", width=390)

    # A category, a collection and a content entry, each page checked.
    browser.get(url + "/admin/categories")
    arrive(browser, "Categories")
    fill(browser, "name", "Shirts")
    submit(browser, "#new-category", "Categories")
    assert "Shirts" in browser.find_element(By.CSS_SELECTOR, "table.categories").text
    check_page(browser)
    browser.find_element(By.LINK_TEXT, "Shirts").click()
    arrive(browser, "Shirts")
    check_page(browser)
    browser.get(url + "/admin/collections")
    arrive(browser, "Collections")
    fill(browser, "title", "Summer")
    submit(browser, "#new-collection", "Summer")
    check_page(browser)
    shoot(browser, "collection")
    browser.get(url + "/admin/collections")
    arrive(browser, "Collections")
    check_page(browser)
    browser.get(url + "/admin/content")
    arrive(browser, "Content")
    check_page(browser)
    browser.set_window_size(1280, 900)
    fill(browser, "key", "about-us")
    fill(browser, "type", "page")
    fill(browser, "data", '{"title": "About us", "body": "We sell linen."}')
    submit(browser, "#new-entry", "about-us")
    assert "Entry created" in alert(browser)
    check_page(browser)
    shoot(browser, "content-entry")
    browser.get(url + "/admin/content")
    arrive(browser, "Content")
    check_page(browser)


def test_an_editors_day(browser, shop_live):  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait

    sign_in_as(browser, shop_live.url, "editor@example.com")
    # Where an editor lands: the first link of the navigation they may use (nav.landing),
    # the products; before the landing follows the navigation, the console's home.
    WebDriverWait(browser, 10).until(lambda d: d.title.endswith("· shop admin"))
    if not browser.title.startswith("Products"):
        browser.find_element(By.LINK_TEXT, "Products").click()
    arrive(browser, "Products")
    nav = browser.find_element(By.CSS_SELECTOR, "nav[aria-label=Console]").text
    assert "Orders" not in nav and nav.split("\n")[0].startswith("Products")
    check_page(browser)
    browser.set_window_size(390, 900)
    browser.find_element(By.LINK_TEXT, "Enamel mug").click()
    arrive(browser, "Enamel mug")
    fill(browser, "description", "Holds 350 ml.")
    row = browser.find_element(By.CSS_SELECTOR, "table.variants tbody tr")
    variant = row.get_attribute("id").removeprefix("variant-")
    submit(browser, "#product", "Enamel mug")
    assert "Product saved" in alert(browser)
    fill(browser, f"v-{variant}-stock", "0")
    submit(browser, "#variants-save", "Enamel mug")
    assert "Variants saved" in alert(browser)
    check_page(browser, widths=(390,))
    product = shop_live.api.get("/products?q=enamel").json["items"][0]
    assert product["description"] == "Holds 350 ml." and product["stock"] == 0
    # Orders are not the editor's: a page that says which permission it needs.
    browser.get(shop_live.url + "/admin/orders")
    arrive(browser, "Error 403")
    assert "orders.read" in browser.find_element(By.CSS_SELECTOR, ".alert").text
