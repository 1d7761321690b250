"""Guest orders after the fact (issue 38), on both engines: a customer who signs up and
verifies the e-mail of their guest orders sees them (and the guest orders placed with it
later); an unverified sign-up with the same e-mail sees nothing; erasing a customer erases
their carts and the guest orders placed with their e-mail."""

import pytest

from shop import db
from tests.mail_helpers import link_in
from tests.orders.test_order_json import created, ok
from tests.orders_helpers import ADDRESS, add_product


@pytest.fixture
def app(make_app, smtp):
    return make_app(SMTP_URL=smtp.url, PUBLIC_URL="https://shop.example")


def guest_order(app, product_id, email) -> dict:
    """A guest's cart of one unit, completed; answer the completion's body."""
    guest = app.test_client()
    cart = created(guest.post("/carts"))
    created(
        guest.post(f"/carts/{cart['id']}/lines", json={"product_id": product_id, "quantity": 1})
    )
    ok(guest.patch(f"/carts/{cart['id']}", json={"email": email, "shipping_address": ADDRESS}))
    return created(guest.post(f"/carts/{cart['id']}/complete", json={"payment_method": "manual"}))


def verify(client, smtp, app) -> None:
    """Ask for the verification e-mail and follow its link's token."""
    assert client.post("/auth/email-verification").status_code == 204
    from tests.mail_helpers import deliver

    deliver(app)
    [message] = [m for m in smtp.messages if m["Subject"] == "Confirm your e-mail address"]
    link = link_in(message)
    assert link.startswith("https://shop.example/verify-email?token=")
    token = link.split("token=", 1)[1]
    assert (
        app.test_client()
        .post("/auth/email-verification/confirm", json={"token": token})
        .status_code
        == 204
    )
    again = app.test_client().post("/auth/email-verification/confirm", json={"token": token})
    assert again.status_code == 400 and again.json["message"].startswith("token")


def own_orders(client) -> list[str]:
    return [order["id"] for order in ok(client.get("/orders"))["items"]]


def test_a_customer_sees_their_guest_orders_once_they_verify_the_email(app, make_customer, smtp):
    teapot = add_product(app, "Teapot", stock=10)
    first = guest_order(app, teapot, "ada@example.com")["order"]
    guest_order(app, teapot, "someone.else@example.com")
    ada = make_customer(email="ada@example.com")
    assert own_orders(ada) == []  # signed up, not verified: nothing yet
    assert ada.get(f"/orders/{first['id']}").status_code == 404
    verify(ada, smtp, app)
    assert own_orders(ada) == [first["id"]]
    shown = ok(ada.get(f"/orders/{first['id']}"))
    assert shown["customer"]["id"] == ada.user["id"]
    # A guest order placed with the verified address later is theirs at once.
    later = guest_order(app, teapot, "ADA@example.com")
    assert later["order"]["customer"]["id"] == ada.user["id"] and later["order_token"]
    assert set(own_orders(ada)) == {first["id"], later["order"]["id"]}


def test_erasing_a_customer_erases_their_carts_and_guest_orders(app, owner_client, make_customer):
    teapot = add_product(app, "Teapot", stock=10)
    placed = guest_order(app, teapot, "gone@example.com")["order"]
    gone = make_customer(email="gone@example.com")
    cart = created(gone.post("/carts"))
    guest_cart = created(app.test_client().post("/carts"))
    ok(app.test_client().patch(f"/carts/{guest_cart['id']}", json={"email": "gone@example.com"}))
    customer_id = gone.user["id"]
    refused = owner_client.delete(f"/customers/{customer_id}")
    assert refused.status_code == 409 and placed["number"] in refused.json["message"]
    assert (
        owner_client.patch(
            f"/orders/{placed['id']}/status", json={"status": "cancelled"}
        ).status_code
        == 200
    )
    assert owner_client.delete(f"/customers/{customer_id}").status_code == 204
    with app.app_context():
        assert (
            db.value(
                "SELECT COUNT(*) FROM carts WHERE id IN (:a, :b)",
                {"a": cart["id"], "b": guest_cart["id"]},
            )
            == 0
        )
        row = db.one("SELECT guest_email, shipping_address FROM orders WHERE id = :id", placed)
        labels = db.query("SELECT by_label FROM order_status_history WHERE order_id = :id", placed)
        audited = db.value("SELECT COUNT(*) FROM audit_log WHERE actor_label = 'gone@example.com'")
    assert row == {"guest_email": None, "shipping_address": None}
    assert all(label["by_label"] != "gone@example.com" for label in labels)
    assert audited == 0
    shown = ok(owner_client.get(f"/orders/{placed['id']}"))
    assert shown["customer"] == {"id": None, "email": None, "name": None}
