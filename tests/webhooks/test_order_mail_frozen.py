"""An order's e-mail is rendered by the worker from a snapshot frozen at its event (issue 42):
the request writes no body, and what the customer reads is the order as it was then."""

import functools
import json

from shop import db, mail
from shop.orders import lifecycle
from tests.mail_helpers import deliver, html_of, outbox_mails, text_of
from tests.orders_helpers import add_product, basket, set_setting


def test_the_confirmation_shows_the_order_as_placed_whatever_happens_before_it_is_sent(
    app, smtp, customer_client, owner_client
):
    app.config["SMTP_URL"] = smtp.url
    set_setting(app, "shop_name", "Tea & Co")
    teapot = add_product(app, "Teapot <large>", price_cents=2550, stock=5)
    order = customer_client.post("/payments/checkout", json=basket((teapot, 2))).json
    with app.app_context():
        [queued] = db.query("SELECT * FROM mail_outbox")
    # Nothing rendered in the request: the template's name and the frozen fields only.
    assert queued["text_body"] == "" and queued["html_body"] is None
    assert queued["template"] == "order"
    frozen = json.loads(queued["context"])
    assert frozen["shop_name"] == "Tea & Co" and frozen["link"] is None
    assert set(frozen["order"]) == {
        "number", "status", "currency", "created_at", "customer", "items", "subtotal_cents",
        "discount_cents", "discount_code", "shipping_method", "shipping_cents", "tax_lines",
        "prices_include_tax", "total_cents",
    }  # fmt: skip

    # Before the worker sends it: the order is cancelled and the shop renamed.
    moved = owner_client.patch(f"/orders/{order['id']}/status", json={"status": "cancelled"})
    assert moved.status_code == 200, moved.json
    set_setting(app, "shop_name", "Other name")
    assert deliver(app) == 2
    confirmed, cancelled = smtp.messages
    assert confirmed["Subject"] == f"Tea & Co: order {order['number']} confirmed"
    text = text_of(confirmed)
    assert "we have your order and are waiting for its payment" in text
    assert "Status: pending" in text and "2 x Teapot <large>  €51.00" in text
    assert "Thank you for shopping with Tea & Co." in text and "Other name" not in text
    assert "Teapot &lt;large&gt;" in html_of(confirmed)
    assert "Status: cancelled" in text_of(cancelled)
    with app.app_context():
        sent = db.query("SELECT text_body, html_body, context FROM mail_outbox")
    assert sent == [{"text_body": "", "html_body": None, "context": None}] * 2


def test_the_worker_renders_what_the_request_rendered_before(app, customer_client):
    """Byte for byte what ``queue_rendered`` wrote from the whole order at the event."""
    teapot = add_product(app, "Teapot", price_cents=2550, stock=5)
    cup = add_product(app, "Cup & saucer", price_cents=1299, stock=5)
    order = customer_client.post("/payments/checkout", json=basket((teapot, 1), (cup, 3))).json
    with app.app_context():
        [deferred] = outbox_mails()
        with db.transaction():
            full = lifecycle.load(order["id"])
            mail.queue_rendered(
                "x@example.com",
                "then",
                "order",
                order=full,
                headline=mail.ORDER_HEADLINES[full["status"]],
                money=functools.partial(mail.money.display, currency=full["currency"]),
                link=None,
            )
        [then] = db.query("SELECT text_body, html_body FROM mail_outbox WHERE subject = 'then'")
    assert deferred["text_body"] == then["text_body"]
    assert deferred["html_body"] == then["html_body"]
