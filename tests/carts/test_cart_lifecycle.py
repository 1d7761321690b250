"""A cart's life beside its order (issue 38), on both engines: a guest cart claimed and
merged at sign-in, the one reminder of a cart left behind (with consent only), its
``cart.abandoned`` event, and the expiry of old carts through the job scheduler. Time moves
by the test clock, never by sleeping."""

import json

import pytest

from shop import db
from tests.conftest import login
from tests.mail_helpers import text_of
from tests.orders.test_order_json import created, ok
from tests.orders_helpers import ADDRESS, add_product, set_setting
from tests.payments.test_unpaid_orders import run_jobs
from tests.webhook_helpers import create_hook

HOUR = 3600


@pytest.fixture
def app(make_app, smtp):
    """Reminders after an hour, carts kept 2 days, mail to a local SMTP server; webhooks to
    this machine allowed."""
    return make_app(
        SMTP_URL=smtp.url,
        PUBLIC_URL="https://shop.example",
        CART_REMINDER_AFTER=HOUR,
        CART_TTL_DAYS=2,
        WEBHOOKS_ALLOW_PRIVATE=True,
        WEBHOOKS_ALLOW_HTTP=True,
    )


def cart_of(client, *lines, **details) -> dict:
    cart = created(client.post("/carts"))
    for product_id, quantity in lines:
        body = {"product_id": product_id, "quantity": quantity}
        cart = created(client.post(f"/carts/{cart['id']}/lines", json=body))
    if details:
        cart = ok(client.patch(f"/carts/{cart['id']}", json=details))
    return cart


def quantities(cart) -> dict:
    return {line["name"]: line["quantity"] for line in cart["lines"]}


def test_signing_in_claims_the_guest_cart_and_merges_the_open_one(app, make_customer):
    tea = add_product(app, "Tea", stock=5)
    cup = add_product(app, "Cup", stock=10)
    pot = add_product(app, "Pot", stock=10)
    customer = make_customer()
    older = cart_of(customer, (tea, 3), (cup, 1), shipping_address=ADDRESS)
    # Signed out, on another device: a guest cart.
    device = app.test_client()
    guest = cart_of(device, (tea, 4), (pot, 2))
    assert device.post(f"/carts/{guest['id']}/claim").status_code == 401
    login(device, customer.email)
    merged = ok(device.post(f"/carts/{guest['id']}/claim"))
    assert merged["id"] == guest["id"] and merged["customer_id"] == customer.user["id"]
    # Tea: 4 + 3 capped at the 5 in stock; the lines of both carts, one per variant.
    assert quantities(merged) == {"Tea": 5, "Pot": 2, "Cup": 1}
    assert merged["shipping_address"]["city"] == ADDRESS["city"]  # from the older cart
    assert customer.get(f"/carts/{older['id']}").status_code == 404  # merged, gone
    assert app.test_client().get(f"/carts/{guest['id']}").status_code == 404  # theirs now
    # Another customer cannot claim it.
    other = make_customer()
    assert other.post(f"/carts/{guest['id']}/claim").status_code == 404


def test_merged_quantities_are_summed_and_capped_at_stock():
    from shop.carts.claiming import merged_quantity

    assert merged_quantity(2, 3, 10) == 5
    assert merged_quantity(4, 3, 5) == 5
    assert merged_quantity(4, 3, 2) == 4  # never below what a cart already held
    assert merged_quantity(1, 1, 0) == 1


def reminders_sent(smtp) -> list[dict]:
    """The reminders the SMTP server received: recipient and text."""
    return [
        {"recipient": m["To"], "text_body": text_of(m)}
        for m in smtp.messages
        if m["Subject"].endswith("your cart is waiting")
    ]


def test_a_cart_left_behind_is_reminded_once_and_only_with_consent(app, clock, owner_client, smtp):
    tea = add_product(app, "Tea", stock=5)
    hook = create_hook(owner_client, "http://127.0.0.1:9/hook", "cart.abandoned")
    agreed = cart_of(app.test_client(), (tea, 2), email="yes@example.com", reminders=True)
    cart_of(app.test_client(), (tea, 1), email="no@example.com")  # no consent
    cart_of(app.test_client(), reminders=True, email="empty@example.com")  # no lines
    cart_of(app.test_client(), (tea, 1), reminders=True)  # no e-mail
    clock.advance(HOUR + 1)
    run_jobs(app)
    assert reminders_sent(smtp) == []  # the shop has not turned reminders on

    set_setting(app, "cart_reminders", True)
    fresh = cart_of(app.test_client(), (tea, 1), email="fresh@example.com", reminders=True)
    run_jobs(app)
    [mail] = reminders_sent(smtp)
    assert mail["recipient"] == "yes@example.com"
    assert (
        f"https://shop.example/carts/{agreed['id']}" in mail["text_body"]
        and "2 x Tea" in mail["text_body"]
    )
    run_jobs(app)
    clock.advance(HOUR + 1)
    run_jobs(app)  # once per cart: the fresh one now, the first never again
    assert sorted(m["recipient"] for m in reminders_sent(smtp)) == [
        "fresh@example.com",
        "yes@example.com",
    ]
    with app.app_context():
        events = db.query(
            "SELECT subject_id, payload FROM webhook_events WHERE type = 'cart.abandoned'"
        )
    assert len(events) == 2 and all(event["subject_id"] is None for event in events)
    payloads = [json.loads(event["payload"])["data"] for event in events]
    assert {p["email"] for p in payloads} == {"yes@example.com", "fresh@example.com"}
    assert all(p["id"] is None for p in payloads)  # the cart's key never leaves
    assert agreed["id"] not in json.dumps(payloads) and fresh["id"] not in json.dumps(payloads)
    assert hook["events"] == ["cart.abandoned"]


def test_a_completed_cart_is_never_reminded(app, clock, smtp):
    set_setting(app, "cart_reminders", True)
    tea = add_product(app, "Tea", stock=5)
    guest = app.test_client()
    cart = cart_of(
        guest, (tea, 1), email="done@example.com", reminders=True, shipping_address=ADDRESS
    )
    created(guest.post(f"/carts/{cart['id']}/complete", json={"payment_method": "manual"}))
    clock.advance(HOUR + 1)
    run_jobs(app)
    assert reminders_sent(smtp) == []


def test_carts_expire_after_their_lifetime(app, clock):
    tea = add_product(app, "Tea", stock=5)
    guest = app.test_client()
    old = cart_of(guest, (tea, 1))
    clock.advance(HOUR)
    kept = cart_of(guest, (tea, 1))
    clock.advance(2 * 24 * HOUR - HOUR + 1)  # the first is 2 days old, the second not
    run_jobs(app)
    assert guest.get(f"/carts/{old['id']}").status_code == 404
    assert ok(guest.get(f"/carts/{kept['id']}"))["lines"][0]["quantity"] == 1
    with app.app_context():
        assert db.value("SELECT COUNT(*) FROM cart_lines") == 1
