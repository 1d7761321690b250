"""A Python client generated from our OpenAPI description works, as an integrator uses it.

openapi-python-client (requirements-dev.txt) turns ``/openapi.json`` into a package, with no
warning; then a shop's day runs through it against a live gunicorn: the owner signs in, makes
a category, products (one with an uploaded image) and an API key used as Bearer, a customer
registers and checks out twice with one Idempotency-Key, the order moves on, another is
cancelled, lists page and filter, and 401, 403, 404, 409, 415 and 429 come back parsed as the
documented ``Error``. The owner is a signed-in cookie client typed ``AuthenticatedClient``
(docs/openapi.md), and a script that calls every operation taking a body with its minimal
body passes ``mypy --strict``.
"""

import importlib
import io
import json
import os
import shutil
import subprocess
import sys
import uuid
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from PIL import Image

from tests import minimal_bodies
from tests.catalogue_helpers import image_bytes
from tests.conftest import PASSWORD
from tests.live import LiveServer

pytestmark = pytest.mark.live  # a process of its own: ./dev test -m 'not live' skips it

PACKAGE = "shop_client"
CONFIG = "content_type_overrides:\n  application/pdf: application/octet-stream\n"


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """The generated client package, imported."""
    generator = Path(sys.executable).with_name("openapi-python-client")
    if not generator.exists():
        found = shutil.which("openapi-python-client")
        if found is None:
            pytest.skip("openapi-python-client is not installed (requirements-dev.txt)")
        generator = Path(found)
    from shop import create_app

    folder = tmp_path_factory.mktemp("client")
    app = create_app({"TESTING": True, "DATABASE_URL": f"sqlite:///{folder / 'unused.db'}"})
    (folder / "openapi.json").write_bytes(app.test_client().get("/openapi.json").data)
    # The invoices' PDFs are files to the generator, as docs/openapi.md tells integrators.
    (folder / "config.yml").write_text(CONFIG)
    result = subprocess.run(
        [str(generator), "generate", "--path", "openapi.json", "--meta", "none"]
        + ["--config", "config.yml", "--output-path", PACKAGE],
        cwd=folder,
        # Its post-generation hooks run ruff, from our venv.
        env={**os.environ, "PATH": f"{generator.parent}{os.pathsep}{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "warning" not in output.lower(), output
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(folder))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]


@pytest.fixture
def server(make_app, database_url):
    """A live gunicorn with rate limits on (memory storage) and an owner to sign in."""
    from shop.auth.users import create_user

    app = make_app()
    with app.app_context():
        create_user("owner@example.com", "Owner", PASSWORD, "owner", [])
    live = LiveServer({"DATABASE_URL": database_url, "SHOP_COOKIE_SECURE": "0"})
    yield live
    live.stop()


class api:  # noqa: N801 - reads as the generated package's path
    """``api("orders").cancel_order``: a module of the generated package, by tag."""

    def __init__(self, tag: str):
        self.tag = tag

    def __getattr__(self, operation: str):
        return importlib.import_module(f"{PACKAGE}.api.{self.tag}.{operation}")


def test_a_shops_day_through_the_generated_client(generated, server):
    m = importlib.import_module(f"{PACKAGE}.models")
    products, categories, orders = api("products"), api("categories"), api("orders")
    auth, keys, payments = api("auth"), api("api_keys"), api("payments")
    variants = api("variants")
    customers = api("customers")
    client_module = importlib.import_module(f"{PACKAGE}.client")
    Client, Authenticated = client_module.Client, client_module.AuthenticatedClient

    def anonymous():
        return Client(base_url=server.url, raise_on_unexpected_status=True)

    # The owner signs in: the session cookie stays in the client, typed for every operation.
    owner = Authenticated(base_url=server.url, token="", prefix="", raise_on_unexpected_status=True)
    me = auth.login.sync(client=owner, body=m.Login(email="owner@example.com", password=PASSWORD))
    assert isinstance(me, m.Human) and me.kind == m.HumanKind.ADMIN and me.role == "owner"

    category = categories.create_category.sync(client=owner, body=m.CategoryCreate(name="Tea"))
    assert isinstance(category, m.Category) and category.parent_id is None
    made = [
        products.create_product.sync(
            client=owner,
            body=m.ProductCreate(
                name=name, price_cents=price, stock=10, category_id=category.id, active=active
            ),
        )
        for name, price, active in [
            ("Sencha", 900, True),
            ("Oolong", 1200, True),
            ("Draft", 5, False),
        ]
    ]
    assert all(isinstance(p, m.ProductDetail) and p.images == [] for p in made)
    assert made[0].created_at.tzinfo is not None  # a real date-time

    # A product with options starts with its first variant; generate makes the others.
    shirt = products.create_product.sync(
        client=owner,
        body=m.ProductCreate(
            name="Shirt", price_cents=2000, stock=1, options=[m.Option("Size", ["S", "M"])]
        ),
    )
    assert [v.options.additional_properties for v in shirt.variants] == [{"Size": "S"}]
    generated_variants = variants.generate_variants.sync(
        shirt.id, client=owner, body=m.Generate(stock=4, price_cents=2200)
    )
    assert isinstance(generated_variants, m.VariantList) and generated_variants.total == 1
    medium = generated_variants.items[0]
    assert medium.options.additional_properties == {"Size": "M"} and medium.stock == 4
    renamed = variants.update_variant.sync(
        shirt.id, medium.id, client=owner, body=m.VariantUpdate(sku="SHIRT-M")
    )
    assert isinstance(renamed, m.Variant) and renamed.sku == "SHIRT-M"

    # An image, uploaded as multipart/form-data; its bytes are public, in fixed widths.
    images, files = api("images"), importlib.import_module(f"{PACKAGE}.types")

    def image_file(data: bytes, name: str):
        return files.File(payload=io.BytesIO(data), file_name=name, mime_type="image/jpeg")

    image = images.upload_product_image.sync(
        shirt.id,
        client=owner,
        body=m.UploadProductImageBody(file=image_file(image_bytes(size=(400, 200)), "a.png")),
    )
    assert isinstance(image, m.Image) and (image.content_type, image.position) == ("image/png", 1)
    pictured = variants.update_variant.sync(
        shirt.id, medium.id, client=owner, body=m.VariantUpdate(image_id=image.id)
    )
    assert isinstance(pictured, m.Variant) and pictured.image_id == image.id
    shown = products.get_product.sync(shirt.id, client=anonymous())
    assert [i.id for i in shown.images] == [image.id]
    small = images.get_image_file.sync(image.id, client=anonymous(), w=m.GetImageFileW.VALUE_160)
    assert isinstance(small, files.File) and Image.open(small.payload).size == (160, 80)
    pdf = images.upload_product_image.sync_detailed(
        shirt.id,
        client=owner,
        body=m.UploadProductImageBody(file=image_file(b"%PDF-1.4 not an image", "x.jpg")),
    )
    assert pdf.status_code == 415 and isinstance(pdf.parsed, m.Error)

    # An API key, used as Bearer: it sees inactive products (optional security).
    created = keys.create_api_key.sync(
        client=owner,
        body=m.ApiKeyCreate(
            label="sync", scopes=[m.ScopeName.READ_PRODUCT, m.ScopeName.WRITE_PRODUCT]
        ),
    )
    assert isinstance(created, m.ApiKeyCreated) and created.status == m.ApiKeyStatus.ACTIVE
    assert created.owner is not None and created.expires_at is None
    key = Authenticated(base_url=server.url, token=created.secret, raise_on_unexpected_status=True)
    drafts = products.list_products.sync(client=key, active=False)
    assert [p.name for p in drafts.items] == ["Draft"]
    forbidden = customers.list_customers.sync(client=key)
    assert isinstance(forbidden, m.Error) and "scope" in forbidden.message  # 403

    # A customer registers (signed in at once) and checks out twice with one key.
    customer = anonymous()
    email = f"casey-{uuid.uuid4().hex[:6]}@example.com"
    casey = auth.register_customer.sync(
        client=customer, body=m.Register(email=email, password=PASSWORD, name="Casey")
    )
    assert casey.kind == m.HumanKind.CUSTOMER and casey.role is None
    address = m.ShippingAddress(
        name="Casey",
        line1="1 Main St",
        city="Berlin",
        postal_code="10115",
        country=m.CountryCode.DE,
    )
    body = m.Checkout(
        items=[m.CheckoutItem(product_id=made[0].id, quantity=2)],
        shipping_address=address,
        payment_method=m.CheckoutPaymentMethod.MANUAL,
    )
    first = payments.checkout.sync_detailed(client=customer, body=body, idempotency_key="k-1")
    again = payments.checkout.sync_detailed(client=customer, body=body, idempotency_key="k-1")
    assert (first.status_code, again.status_code) == (201, 200)
    order = first.parsed
    assert isinstance(order, m.Order) and again.parsed.id == order.id
    assert order.status == m.OrderStatusValue.PENDING and order.total_cents == 1800
    assert (
        isinstance(order.shipping_address, m.OrderAddress) and order.shipping_address.line2 is None
    )
    assert order.status_history[0].status == m.OrderStatusValue.PENDING

    # The owner moves it on; a move the lifecycle does not allow is a 409 Error.
    change = orders.change_order_status
    paid = change.sync(
        order.id, client=owner, body=m.OrderStatusChange(status=m.OrderStatusValue.PAID)
    )
    assert isinstance(paid, m.Order) and paid.status == m.OrderStatusValue.PAID
    refused = change.sync_detailed(
        order.id, client=owner, body=m.OrderStatusChange(status=m.OrderStatusValue.DELIVERED)
    )
    assert refused.status_code == 409 and isinstance(refused.parsed, m.Error)

    # The customer cancels a second order; cancelling it again is a 409.
    body.items = [m.CheckoutItem(product_id=made[1].id, quantity=1)]
    second = payments.checkout.sync(client=customer, body=body, idempotency_key="k-2")
    cancelled = orders.cancel_order.sync(second.id, client=customer)
    assert cancelled.status == m.OrderStatusValue.CANCELLED
    assert isinstance(orders.cancel_order.sync(second.id, client=customer), m.Error)

    # A variant bought by its id: the line names it, its SKU and its options.
    body.items = [m.CheckoutItem(variant_id=medium.id, quantity=1)]
    third = payments.checkout.sync(client=customer, body=body, idempotency_key="k-3")
    assert isinstance(third, m.Order) and third.total_cents == 2200
    line = third.items[0]
    assert (line.variant_id, line.sku) == (medium.id, "SHIRT-M")
    assert line.options.additional_properties == {"Size": "M"}

    # Lists: paginated, filtered, sorted.
    page = products.list_products.sync(
        client=anonymous(),
        page=1,
        page_size=1,
        category_id=category.id,
        sort=m.ProductSort.PRICE_DESC,
    )
    assert isinstance(page, m.ProductPage) and (page.total, page.page_size) == (2, 1)
    assert [p.name for p in page.items] == ["Oolong"]
    mine = orders.list_orders.sync(client=customer, status=m.OrderStatusValue.CANCELLED)
    assert isinstance(mine, m.OrderPage) and [o.id for o in mine.items] == [second.id]
    assert orders.list_orders.sync(client=owner, created_after=date(2000, 1, 1)).total == 3
    later = datetime.now(UTC) + timedelta(days=1)
    assert orders.list_orders.sync(client=owner, created_after=later).total == 0

    # Errors, each the documented Error: 401, 404, 429 (with Retry-After).
    nobody = orders.list_orders.sync_detailed(client=anonymous())
    assert nobody.status_code == 401 and isinstance(nobody.parsed, m.Error)
    bad_key = Authenticated(base_url=server.url, token="eck_" + "x" * 43)
    refused = products.list_products.sync_detailed(client=bad_key)
    assert refused.status_code == 401 and refused.headers["WWW-Authenticate"].startswith("Bearer")
    missing = products.get_product.sync_detailed("0" * 24, client=anonymous())
    assert missing.status_code == 404 and isinstance(missing.parsed, m.Error)
    statuses = []
    for i in range(4):  # registration allows 3 a minute per address
        other = m.Register(email=f"n{i}-{email}", password=PASSWORD, name="N")
        statuses.append(auth.register_customer.sync_detailed(client=anonymous(), body=other))
    limited = statuses[-1]
    assert limited.status_code == 429 and isinstance(limited.parsed, m.Error)
    assert int(limited.headers["Retry-After"]) >= 1


# The generator's own client.py passes *args to httpx's typed __exit__ (mypy 2 refuses it):
# not ours to fix, and not what an integrator's calls are checked against.
MYPY_CONFIG = f"""[mypy]
strict = True

[mypy-{PACKAGE}.client]
ignore_errors = True
"""


def test_every_body_type_checks_with_mypy_strict(generated):
    """Each operation that takes a body, called with its minimal body (tests/minimal_bodies.py)
    by a cookie client: mypy --strict passes on the script and the models it uses."""
    folder = Path(generated.__file__).parent.parent
    spec = json.loads((folder / "openapi.json").read_text())
    (folder / "bodies.py").write_text(minimal_bodies.python(spec))
    (folder / "mypy.ini").write_text(MYPY_CONFIG)
    assert len(list(minimal_bodies.operations(spec))) >= 30  # every one, not none
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--no-incremental"]
        + ["bodies.py", f"{PACKAGE}/models"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_priced_basket_through_the_generated_client(generated, server):
    """Shipping, tax and a code set up by the owner; a guest's quote equals the order."""
    m = importlib.import_module(f"{PACKAGE}.models")
    client_module = importlib.import_module(f"{PACKAGE}.client")
    owner = client_module.Client(base_url=server.url, raise_on_unexpected_status=True)
    api("auth").login.sync(client=owner, body=m.Login(email="owner@example.com", password=PASSWORD))
    tea = api("products").create_product.sync(
        client=owner, body=m.ProductCreate(name="Sencha", price_cents=1999, stock=10)
    )
    method = api("shipping_methods").create_shipping_method.sync(
        client=owner,
        body=m.ShippingMethodCreate(
            name="DHL",
            price_cents=0,
            countries=[m.CountryCode.DE],
            weight_bands=[m.WeightBand(up_to_grams=500, price_cents=490)],
        ),
    )
    assert isinstance(method, m.ShippingMethod) and method.weight_bands[0].up_to_grams == 500
    rate = api("tax_rates").create_tax_rate.sync(
        client=owner, body=m.TaxRateCreate(country="DE", rate="19", name="MwSt")
    )
    assert isinstance(rate, m.TaxRate) and rate.region is None
    code = api("discounts").create_discount.sync(
        client=owner, body=m.DiscountCreate(code="WELCOME", kind=m.DiscountKind.FIXED, value="500")
    )
    assert isinstance(code, m.Discount) and code.times_used == 0
    offered = api("shipping_methods").list_available_shipping_methods.sync(
        client=client_module.Client(base_url=server.url), country=m.CountryCode.DE
    )
    assert [(o.name, o.price_cents) for o in offered.items] == [("DHL", 490)]

    items = [m.CheckoutItem(product_id=tea.id, quantity=2)]
    quote = api("payments").quote_basket.sync(
        client=client_module.Client(base_url=server.url),
        body=m.QuoteRequest(
            items=items,
            shipping_address=m.ShippingQuoteAddress(country=m.CountryCode.DE),
            shipping_method_id=method.id,
            discount_code="welcome",
        ),
    )
    assert isinstance(quote, m.PriceBreakdown)
    # 3998 - 500 = 3498, + 19 % = 665 (664.62); shipping 490 + 93 (93.1)
    assert (quote.discount_cents, quote.tax_cents, quote.total_cents) == (500, 758, 4746)
    assert [(t.name, t.rate, t.amount_cents) for t in quote.tax_lines] == [("MwSt", "19", 758)]

    customer = client_module.Client(base_url=server.url, raise_on_unexpected_status=True)
    api("auth").register_customer.sync(
        client=customer,
        body=m.Register(email=f"p-{uuid.uuid4().hex[:6]}@example.com", password=PASSWORD, name="P"),
    )
    order = api("payments").checkout.sync(
        client=customer,
        body=m.Checkout(
            items=items,
            shipping_address=m.ShippingAddress(
                name="P", line1="1 Weg", city="Bonn", postal_code="53111", country=m.CountryCode.DE
            ),
            payment_method=m.CheckoutPaymentMethod.MANUAL,
            shipping_method_id=method.id,
            discount_code="WELCOME",
        ),
    )
    assert isinstance(order, m.Order) and order.total_cents == quote.total_cents
    assert order.tax_lines[0].amount_cents == 758 and order.shipping_method.name == "DHL"
    assert order.items[0].discount_cents == 500 and order.discount_code == "WELCOME"


def option_filter(m, **values: str):
    """The ``option`` deepObject filter as openapi-python-client 0.29 sends it: the generator
    ignores ``style: deepObject`` and sends an object parameter's keys as they are, so the
    keys are written as the query string's (``option[Size]``). A plain ``{"Size": "M"}``
    would be sent as ``Size=M`` and refused with a 400 naming ``Size`` (never an empty page).
    """
    return m.ListProductsOption.from_dict({f"option[{name}]": v for name, v in values.items()})


def guest_cart(m, client, variant_id: str) -> None:
    """A guest's cart through the generated client (``/carts``, issue 38): create the cart,
    add ``variant_id``, set the e-mail and address, complete it with ``manual``, then read
    the order by its token, with no account."""
    carts = api("carts")
    cart = carts.create_cart.sync(client=client)
    assert isinstance(cart, m.Cart) and cart.status == m.CartStatus.OPEN
    body = m.CartLineCreate(variant_id=variant_id, quantity=1)
    filled = carts.add_cart_line.sync(cart.id, client=client, body=body)
    assert isinstance(filled, m.Cart) and filled.item_count == 1
    address = m.ShippingAddress(
        name="G", line1="2 Weg", city="Bonn", postal_code="53111", country=m.CountryCode.DE
    )
    priced = carts.update_cart.sync(
        cart.id,
        client=client,
        body=m.CartUpdate(email="guest@example.com", shipping_address=address),
    )
    assert isinstance(priced, m.Cart) and priced.totals.total_cents == 2000
    done = carts.complete_cart.sync(
        cart.id, client=client, body=m.CartComplete(payment_method=m.CheckoutPaymentMethod.MANUAL)
    )
    assert isinstance(done, m.CompletedCart) and done.order_token
    order = api("orders").get_order.sync(done.order.id, client=client, token=done.order_token)
    assert isinstance(order, m.Order) and order.customer.email == "guest@example.com"


def test_a_storefront_through_the_generated_client(generated, server):
    """The option filter, variants on list items, the address book, a checkout to a saved
    address and a guest's cart, as an integrator writes them."""
    m = importlib.import_module(f"{PACKAGE}.models")
    client_module = importlib.import_module(f"{PACKAGE}.client")
    products, addresses, payments = api("products"), api("addresses"), api("payments")
    owner = client_module.Client(base_url=server.url, raise_on_unexpected_status=True)
    api("auth").login.sync(client=owner, body=m.Login(email="owner@example.com", password=PASSWORD))
    shirt = products.create_product.sync(
        client=owner,
        body=m.ProductCreate(
            name="Shirt", price_cents=2000, stock=5, options=[m.Option("Size", ["S", "M"])]
        ),
    )
    api("variants").generate_variants.sync(shirt.id, client=owner, body=m.Generate(stock=3))
    products.update_product.sync(shirt.id, client=owner, body=m.ProductUpdate(description="Cotton"))

    shop = client_module.Client(base_url=server.url, raise_on_unexpected_status=True)
    page = products.list_products.sync(
        client=shop, option=option_filter(m, Size="M"), include=m.ProductInclude.VARIANTS
    )
    assert isinstance(page, m.ProductPage) and [p.description for p in page.items] == ["Cotton"]
    medium = next(
        v for v in page.items[0].variants if v.options.additional_properties["Size"] == "M"
    )
    assert isinstance(medium, m.VariantSummary) and medium.in_stock
    flattened = products.list_products.sync_detailed(
        client=client_module.Client(base_url=server.url),
        option=m.ListProductsOption.from_dict({"Size": "M"}),
    )
    assert flattened.status_code == 400 and "Size: Unknown field" in flattened.parsed.message
    unknown = products.list_products.sync_detailed(
        client=client_module.Client(base_url=server.url), option=option_filter(m, Fit="Slim")
    )
    assert unknown.status_code == 400 and "option[Fit]" in unknown.parsed.message
    facets = products.get_product_facets.sync(client=shop, option=option_filter(m, Size="M"))
    assert facets.total == 1 and facets.price_bands[1].price_min == 1000

    api("auth").register_customer.sync(
        client=shop,
        body=m.Register(email=f"s-{uuid.uuid4().hex[:6]}@example.com", password=PASSWORD, name="S"),
    )
    saved = addresses.add_my_address.sync(
        client=shop,
        body=m.AddressCreate(
            name="S", line1="1 Weg", city="Bonn", postal_code="53111", country=m.CountryCode.DE
        ),
    )
    assert isinstance(saved, m.Address) and saved.default_shipping and saved.default_billing
    book = addresses.list_my_addresses.sync(client=shop)
    assert isinstance(book, m.AddressPage) and [a.id for a in book.items] == [saved.id]
    changed = addresses.update_my_address.sync(
        saved.id, client=shop, body=m.AddressUpdate(city="Köln")
    )
    assert isinstance(changed, m.Address) and changed.city == "Köln"
    order = payments.checkout.sync(
        client=shop,
        body=m.Checkout(
            items=[m.CheckoutItem(variant_id=medium.id, quantity=1)],
            shipping_address_id=saved.id,
            payment_method=m.CheckoutPaymentMethod.MANUAL,
        ),
    )
    assert isinstance(order, m.Order) and order.shipping_address.city == "Köln"
    guest_cart(m, client_module.Client(base_url=server.url), medium.id)
