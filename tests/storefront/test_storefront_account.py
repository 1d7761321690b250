"""A customer's account through the storefront's forms (HTTP, both engines): register, sign
in (the guest cart claimed), check out with a saved address, the order in "my orders";
another customer's order a 404; the address book; a new password by e-mail; a wrong
password that does not say which part was wrong; forms without the token refused."""

import re

import pytest

from shop import db
from tests.conftest import PASSWORD
from tests.mail_helpers import deliver, link_in
from tests.storefront.test_storefront_checkout import ADDRESS, post, shop, token_of  # noqa: F401

NEW_PASSWORD = "a brand new passphrase"


def register(client, email="gina@example.com", name="Gina Buyer", password=PASSWORD):
    page = client.get("/store/account/register")
    assert page.status_code == 200 and 'name="robots" content="noindex"' in page.text
    return post(client, "/store/account/register", page, name=name, email=email, password=password)


def sign_in(client, email="gina@example.com", password=PASSWORD, **extra):
    page = client.get("/store/account/sign-in")
    return post(client, "/store/account/sign-in", page, email=email, password=password, **extra)


def add_to_cart(client, variant_id: str, quantity: int = 1):
    product = client.get("/store/products/sencha")
    added = post(client, "/store/cart/lines", product, variant_id=variant_id, quantity=quantity)
    assert added.status_code == 303, added.text


def test_register_sign_in_check_out_with_a_saved_address_then_my_orders(app, client, shop):  # noqa: F811
    home = client.get("/store/")
    assert "Sign in" in home.text and ">Account<" not in home.text
    made = register(client)
    assert made.status_code == 303 and made.headers["Location"].endswith("/store/account")
    cookie = " ".join(made.headers.getlist("Set-Cookie"))
    assert "shop_customer_session=" in cookie and "HttpOnly" in cookie
    assert "SameSite=Strict" in cookie and "Secure" in cookie
    account = client.get("/store/account")
    assert account.status_code == 200 and "No orders yet." in account.text
    assert ">Account<" in account.text and account.headers["Cache-Control"] == "no-store"

    book = client.get("/store/account/addresses")
    added = post(client, "/store/account/addresses", book, **ADDRESS)
    assert added.status_code == 303
    book = client.get("/store/account/addresses")
    assert "Teeweg 1" in book.text and "(default)" in book.text
    signed_out = post(client, "/store/account/sign-out", book)
    assert signed_out.status_code == 303 and "signed_out=1" in signed_out.headers["Location"]
    assert client.get("/store/account").status_code == 303  # to the sign-in page

    add_to_cart(client, shop["small"]["id"], 2)  # a guest's cart, then signing in claims it
    guest_cart = client.get_cookie("shop_cart", path="/store").value
    signed_in = sign_in(client, next="/store/checkout")
    assert signed_in.status_code == 303 and signed_in.headers["Location"] == "/store/checkout"
    with app.app_context():
        owner = db.value("SELECT customer_id FROM carts WHERE id = :id", {"id": guest_cart})
    assert owner is not None

    page = client.get("/store/checkout")
    assert 'value="gina@example.com"' in page.text  # the e-mail prefilled
    saved_id = re.search(r'name="shipping_address_id" value="(\w+)"', page.text).group(1)
    chosen = post(client, "/store/checkout/saved", page, shipping_address_id=saved_id,
                  email="gina@example.com")  # fmt: skip
    assert chosen.status_code == 303, chosen.text
    page = client.get("/store/checkout")
    post(client, "/store/checkout/shipping", page, shipping_method_id=shop["method"]["id"])
    page = client.get("/store/checkout")
    placed = post(client, "/store/checkout/place", page, payment_method="manual")
    assert placed.status_code == 303
    order_id = re.search(r"/store/orders/(\w+)", placed.headers["Location"]).group(1)
    order = client.get(f"/store/orders/{order_id}")  # no token: the customer's own
    assert order.status_code == 200
    number = client.get(f"/orders/{order_id}").json["number"]
    assert client.get(f"/orders/{order_id}").json["shipping_address"]["line1"] == "Teeweg 1"

    mine = client.get("/store/account")
    assert f"Order {number}" in mine.text and f"/store/orders/{order_id}" in mine.text
    assert "€" in mine.text

    # Back from Stripe's site, the browser leaves the session cookie (SameSite=Strict) out:
    # a page of ours sends it on to the same address, cookie and all.
    stranger = app.test_client()
    back = stranger.get(f"/store/orders/{order_id}/paid?redirect_status=succeeded",
                        headers={"Sec-Fetch-Site": "cross-site"})  # fmt: skip
    assert back.status_code == 200 and 'http-equiv="refresh"' in back.text
    assert f"url=/store/orders/{order_id}/paid?redirect_status=succeeded" in back.text
    assert number not in back.text and back.headers["Cache-Control"] == "no-store"
    assert stranger.get(f"/store/orders/{order_id}/paid").status_code == 404

    other = app.test_client()
    assert register(other, email="otto@example.com", name="Otto").status_code == 303
    assert other.get(f"/store/orders/{order_id}").status_code == 404
    assert number not in other.get("/store/account").text
    gina_address = saved_id
    assert other.get(f"/store/account/addresses/{gina_address}").status_code == 404
    page = other.get("/store/account/addresses")
    refused = post(other, f"/store/account/addresses/{gina_address}/delete", page)
    assert refused.status_code == 404


def test_a_new_address_at_checkout_may_be_saved_to_the_book(client, shop):  # noqa: F811
    register(client)
    add_to_cart(client, shop["small"]["id"])
    page = client.get("/store/checkout")
    assert "Save this address to my address book" in page.text
    assert 'name="shipping_address_id"' not in page.text  # no saved address yet
    kept = post(client, "/store/checkout/details", page, email="gina@example.com", save="1",
                **{**ADDRESS, "line1": "Neue Str. 5"})  # fmt: skip
    assert kept.status_code == 303, kept.text
    book = client.get("/store/account/addresses")
    assert "Neue Str. 5" in book.text


def test_the_address_book_adds_changes_defaults_and_deletes(client, shop):  # noqa: F811
    register(client)
    book = client.get("/store/account/addresses")
    assert "No saved addresses yet." in book.text
    post(client, "/store/account/addresses", book, **ADDRESS)
    post(client, "/store/account/addresses", book, **{**ADDRESS, "line1": "Zweite Str. 2"})
    book = client.get("/store/account/addresses")
    first, second = re.findall(r'href="/store/account/addresses/(\w+)"', book.text)
    assert book.text.count("(default)") == 1
    assert post(client, f"/store/account/addresses/{second}/default", book).status_code == 303
    listed = client.get("/auth/me/addresses").json["items"]
    assert {a["id"]: a["default_shipping"] for a in listed} == {first: False, second: True}

    form = client.get(f"/store/account/addresses/{first}")
    assert 'value="Teeweg 1"' in form.text
    bad = post(client, f"/store/account/addresses/{first}", form, **{**ADDRESS, "city": ""})
    assert bad.status_code == 400 and "city" in bad.text
    far = post(client, f"/store/account/addresses/{first}", form, **{**ADDRESS, "country": "FR"})
    assert far.status_code == 400 and "no shipping method ships to FR" in far.text
    changed = post(client, f"/store/account/addresses/{first}", form, **{**ADDRESS, "city": "Wien",
                   "country": "AT"})  # fmt: skip
    assert changed.status_code == 303
    assert "Wien" in client.get("/store/account/addresses").text

    book = client.get("/store/account/addresses")
    assert post(client, f"/store/account/addresses/{first}/delete", book).status_code == 303
    assert [a["id"] for a in client.get("/auth/me/addresses").json["items"]] == [second]


def test_a_wrong_password_does_not_say_which_part_was_wrong(client, shop):  # noqa: F811
    register(client)
    post(client, "/store/account/sign-out", client.get("/store/account"))
    wrong_password = sign_in(client, password="not the password")
    unknown = sign_in(client, email="nobody@example.com")
    assert wrong_password.status_code == unknown.status_code == 401
    message = "That e-mail and password do not match an account."
    assert message in wrong_password.text and message in unknown.text
    assert 'value="nobody@example.com"' in unknown.text  # the input kept, not the password
    assert PASSWORD not in wrong_password.text
    assert client.get("/store/account").status_code == 303
    taken = register(client)
    assert taken.status_code == 400 and "An account with this e-mail exists" in taken.text
    short = register(client, email="new@example.com", password="short")
    assert short.status_code == 400 and "at least" in short.text
    assert sign_in(client).status_code == 303  # the right one still works


def test_the_sign_in_goes_back_only_to_the_storefront(client, shop):  # noqa: F811
    register(client)
    post(client, "/store/account/sign-out", client.get("/store/account"))
    for elsewhere in ("https://evil.example/", "//evil.example/store/", "/admin/"):
        assert sign_in(client, next=elsewhere).headers["Location"] == "/store/account"
        post(client, "/store/account/sign-out", client.get("/store/account"))


@pytest.fixture
def mail_app(make_app, smtp, owner_client):
    return make_app(prepare=False, SMTP_URL=smtp.url, PUBLIC_URL="https://shop.example")


def test_a_new_password_by_e_mail_through_the_storefront(mail_app, smtp):
    client = mail_app.test_client()
    register(client)
    page = client.get("/store/account/forgot")
    asked = post(client, "/store/account/forgot", page, email="Gina@Example.com")
    unknown = post(client, "/store/account/forgot", page, email="nobody@example.com")
    assert asked.status_code == unknown.status_code == 200
    assert asked.text == unknown.text and "we have sent it a link" in asked.text
    assert deliver(mail_app) == 1
    link = link_in(smtp.messages[0])
    assert link.startswith("https://shop.example/store/account/password-reset?token=")
    path = link.removeprefix("https://shop.example")
    page = client.get(path)
    assert page.status_code == 200 and 'name="robots" content="noindex"' in page.text
    token = re.search(r'name="token" value="([\w-]+)"', page.text).group(1)
    short = post(client, "/store/account/password-reset", page, token=token, new_password="x")
    assert short.status_code == 400
    done = post(client, "/store/account/password-reset", page, token=token,
                new_password=NEW_PASSWORD)  # fmt: skip
    assert done.status_code == 303 and "reset=1" in done.headers["Location"]
    assert client.get("/store/account").status_code == 303  # every session ended
    page = client.get(path)  # the form's token follows the cookies, now without a session
    again = post(client, "/store/account/password-reset", page, token=token,
                 new_password=NEW_PASSWORD)  # fmt: skip
    assert again.status_code == 400 and "invalid, used or expired" in again.text
    assert sign_in(client).status_code == 401
    assert sign_in(client, password=NEW_PASSWORD).status_code == 303


def test_account_forms_without_the_token_or_from_elsewhere_are_refused(client, shop):  # noqa: F811
    form = {"email": "gina@example.com", "password": PASSWORD, "name": "Gina"}
    assert client.post("/store/account/register", data=form).status_code == 403
    register(client)
    book = client.get("/store/account/addresses")
    token = token_of(book)
    assert client.post("/store/account/addresses", data=ADDRESS).status_code == 403
    foreign = client.post(
        "/store/account/sign-out",
        data={"csrf_token": token},
        headers={"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"},
    )
    assert foreign.status_code == 403
    assert client.get("/store/account").status_code == 200  # still signed in
    assert client.post("/store/account/sign-in", data=form).status_code == 403


def test_account_pages_are_kept_from_crawlers(client, shop):  # noqa: F811
    robots = client.get("/robots.txt").text
    assert "Disallow: /store/account" in robots and "Disallow: /store/orders" in robots
    for path in ("/store/account/sign-in", "/store/account/register", "/store/account/forgot"):
        page = client.get(path)
        assert page.status_code == 200 and 'content="noindex"' in page.text, path
        assert page.headers["Cache-Control"] == "no-store"


def test_sign_in_shares_the_apis_budget_and_lockout(make_app, client, shop):  # noqa: F811
    import secrets

    register(client)
    limited = make_app(prepare=False, RATELIMIT_ENABLED=True,
                       RATELIMIT_KEY_PREFIX=secrets.token_hex(6)).test_client()  # fmt: skip
    for _ in range(4):
        limited.post("/auth/login", json={"email": "gina@example.com", "password": "bad"})
    assert sign_in(limited, password="bad").status_code == 401
    throttled = sign_in(limited)
    assert throttled.status_code == 429 and throttled.mimetype == "text/html"

    locking = make_app(prepare=False, LOCKOUT_THRESHOLD=3).test_client()
    for _ in range(3):
        assert sign_in(locking, password="bad").status_code == 401
    locked = sign_in(locking)  # the right password, while locked: the same answer
    assert locked.status_code == 401
    assert "That e-mail and password do not match an account." in locked.text
