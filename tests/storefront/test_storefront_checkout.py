"""A guest's cart and checkout through the storefront's forms (HTTP, both engines): add to
cart, change a line, a code, an estimate; contact, address, method; the order placed with
the manual method, its page read with the order's token; the page totals equal the quote's;
a sold-out variant refused; forged forms refused."""

import re

import pytest

from tests.catalogue_helpers import Catalogue
from tests.fake_stripe import deliver as deliver_event
from tests.fake_stripe import settings as stripe_settings


def token_of(page) -> str:
    return re.search(r'name="csrf_token" value="([0-9a-f]+)"', page.text).group(1)


def post(client, path: str, page, **form):
    """Submit a form of ``page`` (its token) to ``path``, as a browser of this shop does."""
    headers = {"Origin": "http://localhost", "Sec-Fetch-Site": "same-origin"}
    return client.post(path, data={"csrf_token": token_of(page), **form}, headers=headers)


@pytest.fixture
def shop(owner_client):
    made = Catalogue(owner_client)
    tea = made.product(
        name="Sencha",
        slug="sencha",
        options=[{"name": "Size", "values": ["100 g", "250 g"]}],
        generate=True,
    )
    variants = {
        v["options"]["Size"]: v for v in owner_client.get(f"/products/{tea['id']}").json["variants"]
    }
    for size, (price, stock) in {"100 g": (990, 5), "250 g": (1890, 0)}.items():
        changed = owner_client.patch(
            f"/products/{tea['id']}/variants/{variants[size]['id']}",
            json={"price_cents": price, "stock": stock},
        )
        assert changed.status_code == 200, changed.json
    method = owner_client.post(
        "/shipping-methods", json={"name": "Post", "countries": ["DE", "AT"], "price_cents": 490}
    )
    assert method.status_code == 201, method.json
    rate = owner_client.post("/tax-rates", json={"country": "DE", "rate": "19", "name": "MwSt"})
    assert rate.status_code == 201, rate.json
    code = owner_client.post("/discounts", json={"code": "TEA10", "kind": "percent", "value": "10"})
    assert code.status_code == 201, code.json
    settings = owner_client.patch(
        "/settings", json={"bank_transfer_instructions": "IBAN DE00 1234\nBIC TESTDEFF"}
    )
    assert settings.status_code == 200, settings.json
    return {"small": variants["100 g"], "large": variants["250 g"], "method": method.json}


ADDRESS = {"name": "Gina Guest", "line1": "Teeweg 1", "postal_code": "10115", "city": "Berlin",
           "country": "DE"}  # fmt: skip


def test_a_guest_fills_a_cart_checks_out_and_follows_the_order(client, shop):
    product = client.get("/store/products/sencha")
    added = post(client, "/store/cart/lines", product, variant_id=shop["small"]["id"], quantity=2)
    assert added.status_code == 303 and added.headers["Location"].endswith("/store/cart")
    cookie = added.headers["Set-Cookie"]
    assert "shop_cart=" in cookie and "HttpOnly" in cookie and "SameSite=Lax" in cookie
    cart = client.get("/store/cart")
    assert "Sencha" in cart.text and 'value="2"' in cart.text and "€19.80" in cart.text
    assert cart.headers["Cache-Control"] == "no-store"

    line = re.search(r'action="/store/cart/lines/(\w+)"', cart.text).group(1)
    assert post(client, f"/store/cart/lines/{line}", cart, quantity=3).status_code == 303
    cart = client.get("/store/cart")
    assert "€29.70" in cart.text
    assert post(client, "/store/cart/code", cart, discount_code="tea10").status_code == 303
    estimate = client.get("/store/cart", query_string={"country": "DE"})
    assert "Post: €4.90" in estimate.text

    page = client.get("/store/checkout")
    assert page.status_code == 200 and "Contact and address" in page.text
    assert "Shipping method" not in page.text  # no address yet
    details = post(client, "/store/checkout/details", page, email="Gina@Example.com", **ADDRESS)
    assert details.status_code == 303, details.text
    page = client.get("/store/checkout")
    assert "Post — €4.90" in page.text
    chosen = post(client, "/store/checkout/shipping", page, shipping_method_id=shop["method"]["id"])
    assert chosen.status_code == 303
    page = client.get("/store/checkout")
    cart_id = client.get_cookie("shop_cart", path="/store").value
    api_cart = client.get(f"/carts/{cart_id}").json
    quote = client.post(
        "/payments/quote",
        json={
            "items": [{"variant_id": shop["small"]["id"], "quantity": 3}],
            "shipping_address": ADDRESS,
            "shipping_method_id": shop["method"]["id"],
            "discount_code": "TEA10",
        },
    ).json
    assert api_cart["totals"]["total_cents"] == quote["total_cents"]
    total = f"€{quote['total_cents'] // 100}.{quote['total_cents'] % 100:02}"
    assert re.search(rf'class="grand">.*?{re.escape(total)}', page.text, re.S)

    placed = post(client, "/store/checkout/place", page, payment_method="manual")
    assert placed.status_code == 303
    target = placed.headers["Location"]
    order_id, token = re.search(r"/store/orders/(\w+)\?token=([\w-]+)", target).groups()
    assert "shop_cart=;" in placed.headers["Set-Cookie"]  # the cart is done: cookie cleared
    confirmation = client.get(target)
    assert confirmation.status_code == 200
    assert "Thank you!" in confirmation.text and "IBAN DE00 1234" in confirmation.text
    order = client.get(f"/orders/{order_id}", query_string={"token": token}).json
    assert order["total_cents"] == quote["total_cents"] and order["status"] == "pending"
    assert order["number"] in confirmation.text
    assert client.get(f"/store/orders/{order_id}").status_code == 404
    assert client.get(f"/store/orders/{order_id}?token=wrong").status_code == 404
    assert client.get("/store/cart").text.count("Your cart is empty.") == 1


def test_a_sold_out_variant_cannot_be_added(client, shop):
    page = client.get(f"/store/products/sencha?variant={shop['large']['id']}")
    assert "Add to cart" not in page.text and "disabled" in page.text
    form_page = client.get("/store/products/sencha")
    refused = post(
        client,
        "/store/cart/lines",
        form_page,
        variant_id=shop["large"]["id"],
        quantity=1,
        slug="sencha",
    )
    assert refused.status_code == 409
    assert "Sencha" in refused.text and 'role="alert"' in refused.text


def test_checkout_refusals_keep_the_input_and_name_the_field(client, shop):
    product = client.get("/store/products/sencha")
    post(client, "/store/cart/lines", product, variant_id=shop["small"]["id"], quantity=1)
    page = client.get("/store/checkout")
    bad = post(client, "/store/checkout/details", page, email="gina@example.com",
               **{**ADDRESS, "postal_code": ""})  # fmt: skip
    assert bad.status_code == 400 and "postal_code" in bad.text
    assert 'value="Teeweg 1"' in bad.text
    far = post(client, "/store/checkout/details", page, email="gina@example.com",
               **{**ADDRESS, "country": "FR"})  # fmt: skip
    assert far.status_code == 400 and "no shipping method ships to FR" in far.text
    cart = client.get("/store/cart")
    code = post(client, "/store/cart/code", cart, discount_code="NOPE")
    assert code.status_code == 400 and "discount_code" in code.text


def test_forms_from_elsewhere_or_without_the_token_are_refused(client, shop):
    product = client.get("/store/products/sencha")
    form = {"variant_id": shop["small"]["id"], "quantity": "1"}
    no_token = client.post("/store/cart/lines", data=form)
    assert no_token.status_code == 403 and no_token.mimetype == "text/html"
    foreign = client.post(
        "/store/cart/lines",
        data={"csrf_token": token_of(product), **form},
        headers={"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"},
    )
    assert foreign.status_code == 403
    assert client.get_cookie("shop_cart", path="/store") is None
    post(client, "/store/cart/lines", product, **form)  # now this browser has a cart
    assert post(client, "/store/cart/code", product, discount_code="x").status_code == 403


@pytest.fixture
def card_shop(make_app, fake_stripe, shop):
    """The same shop with the `stripe` method, talking to the fake Stripe."""
    app = make_app(
        prepare=False,
        STRIPE_PUBLISHABLE_KEY="pk_test_shop",
        STRIPE_JS_URL=fake_stripe.url + "/v3/",
        **stripe_settings(fake_stripe),
    )
    return app.test_client()


def test_a_card_order_goes_to_the_card_step_and_is_paid_once(card_shop, fake_stripe, shop):
    client = card_shop
    product = client.get("/store/products/sencha")
    post(client, "/store/cart/lines", product, variant_id=shop["small"]["id"], quantity=1)
    page = client.get("/store/checkout")
    post(client, "/store/checkout/details", page, email="gina@example.com", **ADDRESS)
    page = client.get("/store/checkout")
    post(client, "/store/checkout/shipping", page, shipping_method_id=shop["method"]["id"])
    page = client.get("/store/checkout")
    assert 'value="stripe"' in page.text and "Card" in page.text
    placed = post(client, "/store/checkout/place", page, payment_method="stripe")
    order_id, token = re.search(
        r"/store/orders/(\w+)/pay\?token=([\w-]+)", placed.headers["Location"]
    ).groups()

    pay = client.get(placed.headers["Location"])
    assert pay.status_code == 200 and pay.headers["Cache-Control"] == "no-store"
    intent_id = re.search(r'data-secret="(pi_\w+?)_secret_', pay.text).group(1)
    policy = pay.headers["Content-Security-Policy"]
    assert f"script-src 'self' {fake_stripe.url} https://js.stripe.com" in policy
    assert "unsafe-inline" not in policy
    assert f'<script src="{fake_stripe.url}/v3/"></script>' in pay.text
    assert (
        "frame-src" not in client.get("/store/products/sencha").headers["Content-Security-Policy"]
    )

    event = fake_stripe.succeed(intent_id)  # the buyer paid at Stripe
    back = client.get(f"/store/orders/{order_id}/paid", query_string={"token": token})
    assert back.status_code == 303
    deliver_event(client, event)  # the webhook comes too: nothing more happens
    order = client.get(f"/orders/{order_id}", query_string={"token": token}).json
    assert order["status"] == "paid"
    assert [h["status"] for h in order["status_history"]].count("paid") == 1
    done = client.get(back.headers["Location"])
    assert "Thank you!" in done.text and "How to pay" not in done.text
    again = client.get(placed.headers["Location"])  # a paid order has no card step
    assert again.status_code == 303 and "/pay" not in again.headers["Location"]
