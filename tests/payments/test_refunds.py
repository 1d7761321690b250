"""Refunds (issue 27): priced from the order's lines, capped, once, restock independent."""

import threading

import pytest

from shop import db
from tests.fake_stripe import deliver, settings
from tests.orders_helpers import add_product, basket, product_row


@pytest.fixture
def app(make_app, fake_stripe):
    return make_app(**settings(fake_stripe))


def _paid_order(app, customer, owner, lines=((1000, 3),), method="manual", fake=None):
    """A paid order of ``(unit price, quantity)`` lines; answer (order, product ids)."""
    products = [add_product(app, price_cents=price, stock=10) for price, _ in lines]
    body = basket(*[(p, qty) for p, (_, qty) in zip(products, lines, strict=True)], method=method)
    order = customer.post("/payments/checkout", json=body).json
    if method == "stripe":
        assert deliver(app.test_client(), fake.succeed(order["payment"]["reference"])).json
    else:
        owner.patch(f"/orders/{order['id']}/status", json={"status": "paid"})
    return owner.get(f"/orders/{order['id']}").json, products


def _stock(app, product_id):
    return product_row(app, product_id)["stock"]


def test_lines_then_the_rest_partially_then_refunded(app, customer_client, owner_client, make_key):
    order, (product,) = _paid_order(app, customer_client, owner_client)
    url = f"/orders/{order['id']}/refunds"
    preview = owner_client.get(url + "/preview").json
    assert preview["refundable_cents"] == preview["paid_cents"] == order["total_cents"] == 3000
    assert preview["lines"][0]["refundable_cents"] == 3000
    first = owner_client.post(url, json={"lines": [{"line": 1, "quantity": 1}], "reason": "Dent"})
    assert first.status_code == 201, first.json
    assert first.json["amount_cents"] == 1000 and first.json["provider"] == "manual"
    shown = owner_client.get(f"/orders/{order['id']}").json
    assert shown["status"] == "partially_refunded"
    assert shown["payment"]["status"] == "partially_refunded"
    assert _stock(app, product) == 7  # refund without restock: 10 - 3 stays
    preview = owner_client.get(url + "/preview").json
    assert preview["lines"][0]["refundable_quantity"] == 2 and preview["refundable_cents"] == 2000
    # Over the cap by one minor unit: 400 saying the maximum.
    over = owner_client.post(url, json={"amount_cents": 2001})
    assert over.status_code == 400 and "maximum is 2000" in over.json["message"]
    reader = make_key("read:order")
    assert reader.post(url, json={"amount_cents": 2000}).status_code == 403
    rest = make_key("write:order").post(url, json={"amount_cents": 2000})
    assert rest.status_code == 204  # write without read: nothing answered
    assert owner_client.get(f"/orders/{order['id']}").json["status"] == "refunded"
    listed = owner_client.get(url).json["items"]
    assert [r["amount_cents"] for r in listed] == [1000, 2000]
    with app.app_context():
        mails = db.value("SELECT COUNT(*) FROM mail_outbox WHERE subject LIKE '%refunded'")
    assert mails == 2
    assert customer_client.post(url, json={"amount_cents": 1}).status_code == 403
    assert owner_client.post(url, json={"amount_cents": 1}).status_code == 409  # all refunded


def test_a_caller_who_may_write_but_not_read_an_order_is_refused_without_its_figures(
    app, customer_client, owner_client, make_key
):
    """Write does not imply read, for refusals as for answers: a ``write:order`` key is told
    why it was refused, not the order's refundable amount, units left, number or status."""
    order, _ = _paid_order(app, customer_client, owner_client, lines=((1000, 3), (500, 2)))
    number, refunds = order["number"], f"/orders/{order['id']}/refunds"
    writer, both = make_key("write:order"), make_key("read:order", "write:order")
    assert writer.post(refunds, json={"amount_cents": 100}).status_code == 204  # 3900 left

    def refused(client, path, body, status=400, method="post"):
        response = getattr(client, method)(path, json=body)
        assert response.status_code == status, response.json
        return response.json["message"]

    def hides_figures(message):
        for figure in (number, "3900", "39.00", "2 units", "3 units", "2 unit", "3 unit"):
            assert figure not in message, (figure, message)
        return message

    cases = [  # (path, body, status, method, the full message's words, the withheld one)
        (
            refunds,
            {"amount_cents": 3901},
            400,
            "post",
            "the maximum is 3900 (€39.00)",
            "amount_cents: more than can be refunded.",
        ),
        (
            refunds,
            {"lines": [{"line": 1, "quantity": 4}]},
            400,
            "post",
            "line 1 has 3 units left to refund; 4 asked",
            "lines: line 1 has fewer units left to refund.",
        ),
        (
            refunds,
            {"restock": [{"line": 2, "quantity": 3}]},
            400,
            "post",
            "line 2 has 2 units left to put back",
            "restock: line 2 has fewer units left to put back.",
        ),
        (
            f"/orders/{order['id']}/shipments",
            {"carrier": "UPS", "tracking_number": "1Z", "lines": [{"line": 2, "quantity": 3}]},
            409,
            "post",
            f"Line 2 of order {number} has 2 unit(s) left to ship",
            "Line 2 has fewer units left to ship than asked.",
        ),
        (
            f"/orders/{order['id']}/shipments",
            {"carrier": "UPS", "tracking_number": "1Z", "lines": [{"line": 9, "quantity": 1}]},
            400,
            "post",
            f"lines: order {number} has no line 9.",
            "lines: the order has no line 9.",
        ),
        (
            f"/orders/{order['id']}/status",
            {"status": "cancelled"},
            409,
            "patch",
            f"Order {number} is partially_refunded: it cannot move to cancelled; allowed next",
            "The order cannot move to cancelled from its status.",
        ),
    ]
    for path, body, status, method, full, withheld in cases:
        assert full in refused(both, path, body, status, method)
        assert hides_figures(refused(writer, path, body, status, method)) == withheld

    assert owner_client.post(refunds, json={"amount_cents": 3900}).status_code == 201
    assert f"Order {number} is refunded" in refused(both, refunds, {"amount_cents": 1}, 409)
    assert hides_figures(refused(writer, refunds, {"amount_cents": 1}, 409)) == (
        "The order's status leaves nothing to refund."
    )
    ship = {"carrier": "UPS", "tracking_number": "1Z"}
    path = f"/orders/{order['id']}/shipments"
    assert f"Order {number} is refunded" in refused(both, path, ship, 409)
    assert "is refunded" not in hides_figures(refused(writer, path, ship, 409))
    # A customer reads their own order: cancelling it is refused with its status.
    mine = customer_client.post(f"/orders/{order['id']}/cancel")
    assert mine.status_code == 409 and f"Order {number} is refunded" in mine.json["message"]


def test_restocking_a_line_without_a_variant_goes_to_the_lone_variant(
    app, customer_client, owner_client
):
    """A line sold by a previous-release node has no variant id (tests/orders/test_orders.py has the
    cancel's twin): a restock puts it back on its product's lone variant."""
    order, (product,) = _paid_order(app, customer_client, owner_client)
    with app.app_context(), db.transaction():
        db.execute("UPDATE order_items SET variant_id = NULL WHERE order_id = :id", order)
    url = f"/orders/{order['id']}/refunds"
    done = owner_client.post(url, json={"restock": [{"line": 1, "quantity": 2}]})
    assert done.status_code == 201, done.json
    read = owner_client.get(f"/products/{product}").json
    assert (read["stock"], read["variants"][0]["stock"]) == (9, 9)  # 10 - 3 + 2


def test_restock_without_refund_and_replays_by_idempotency_key(app, customer_client, owner_client):
    order, (product,) = _paid_order(app, customer_client, owner_client)
    url = f"/orders/{order['id']}/refunds"
    body = {"restock": [{"line": 1, "quantity": 2}]}
    key = {"Idempotency-Key": "restock-1"}
    first = owner_client.post(url, json=body, headers=key)
    assert first.status_code == 201 and first.json["amount_cents"] == 0
    again = owner_client.post(url, json=body, headers=key)
    assert again.status_code == 200 and again.json["id"] == first.json["id"]
    assert _stock(app, product) == 9  # 10 - 3 + 2, once
    shown = owner_client.get(f"/orders/{order['id']}").json
    assert shown["status"] == "paid"  # no money moved
    other = owner_client.post(url, json={"restock": [{"line": 1, "quantity": 1}]}, headers=key)
    assert other.status_code == 409
    too_many = owner_client.post(url, json={"restock": [{"line": 1, "quantity": 2}]})
    assert too_many.status_code == 400 and "1 units left" in too_many.json["message"]


def test_three_concurrent_full_refunds_make_exactly_one(app, customer_client, owner_client):
    order, _ = _paid_order(app, customer_client, owner_client, lines=((700, 2), (250, 1)))
    url = f"/orders/{order['id']}/refunds"
    total = order["total_cents"]
    barrier, answers = threading.Barrier(3), []
    clients = [owner_client] + [app.test_client() for _ in range(2)]
    for client in clients[1:]:
        for cookie in owner_client._cookies.values():
            client.set_cookie(cookie.key, cookie.value, domain=cookie.domain, path=cookie.path)

    def run(client):
        barrier.wait(timeout=30)
        answers.append(client.post(url, json={"amount_cents": total}).status_code)

    threads = [threading.Thread(target=run, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(answers) == [201, 409, 409]
    with app.app_context():
        assert db.value("SELECT SUM(amount_cents) FROM refunds") == total
        assert db.value("SELECT refunded_cents FROM orders") == total


def test_stripe_orders_are_refunded_through_stripe_and_dashboard_refunds_recorded_once(
    app, customer_client, owner_client, fake_stripe
):
    order, _ = _paid_order(
        app, customer_client, owner_client, lines=((1500, 2),), method="stripe", fake=fake_stripe
    )
    assert order["status"] == "paid"
    url = f"/orders/{order['id']}/refunds"
    fake_stripe.mode = "down"
    key = {"Idempotency-Key": "r-1"}
    down = owner_client.post(url, json={"amount_cents": 500}, headers=key)
    assert down.status_code == 503 and down.headers["Retry-After"]
    fake_stripe.mode = None
    made = owner_client.post(url, json={"amount_cents": 500}, headers=key)
    assert made.status_code == 200 and made.json["status"] == "succeeded"
    assert made.json["provider"] == "stripe"
    assert made.json["reference"] in fake_stripe.refunds and len(fake_stripe.refunds) == 1
    # Refunded in Stripe's dashboard: recorded once, however often Stripe says so.
    event = fake_stripe.refund_in_dashboard(order["payment"]["reference"], 700)
    for _ in range(3):
        assert deliver(app.test_client(), event).status_code == 200
    listed = owner_client.get(url).json["items"]
    assert [(r["amount_cents"], r["provider"]) for r in listed] == [(500, "stripe")] * 1 + [
        (700, "stripe")
    ]
    preview = owner_client.get(url + "/preview").json
    assert preview["refundable_cents"] == 3000 - 1200
    assert owner_client.get(f"/orders/{order['id']}").json["status"] == "partially_refunded"
    # Done at Stripe but its answer lost: pending, then completed by the webhook, once.
    fake_stripe.mode = "lose"
    lost = owner_client.post(url, json={"amount_cents": 300})
    assert lost.status_code == 503
    fake_stripe.mode = None
    assert owner_client.get(url).json["items"][-1]["status"] == "pending"
    event = fake_stripe.charge_refunded(order["payment"]["reference"])
    assert deliver(app.test_client(), event).status_code == 200
    listed = owner_client.get(url).json["items"]
    assert [(r["amount_cents"], r["status"]) for r in listed] == [
        (500, "succeeded"),
        (700, "succeeded"),
        (300, "succeeded"),
    ]
    assert len(fake_stripe.refunds) == 3


def test_reconcile_reports_and_fixes_a_paid_intent_left_pending(
    app, customer_client, owner_client, fake_stripe
):
    product = add_product(app, price_cents=800, stock=5)
    order = customer_client.post(
        "/payments/checkout", json=basket((product, 1), method="stripe")
    ).json
    fake_stripe.succeed(order["payment"]["reference"])  # its webhook never arrived
    runner = app.test_cli_runner()
    found = runner.invoke(args=["payments", "reconcile", "--since", "2026-01-01"])
    assert found.exit_code == 0, found.output
    assert "paid at Stripe, pending" in found.output and "1 difference(s) found" in found.output
    assert owner_client.get(f"/orders/{order['id']}").json["status"] == "pending"
    fixed = runner.invoke(args=["payments", "reconcile", "--fix"])
    assert fixed.exit_code == 0 and "1 difference(s) fixed" in fixed.output
    assert owner_client.get(f"/orders/{order['id']}").json["status"] == "paid"
    assert "0 difference(s)" in runner.invoke(args=["payments", "reconcile"]).output


def test_a_partially_refunded_order_still_ships_the_rest(app, customer_client, owner_client):
    order, _ = _paid_order(app, customer_client, owner_client)
    url = f"/orders/{order['id']}"
    assert owner_client.post(url + "/refunds", json={"amount_cents": 500}).status_code == 201
    assert owner_client.get(url).json["status"] == "partially_refunded"
    ship = {"carrier": "UPS", "tracking_number": "1Z1"}
    one = {**ship, "lines": [{"line": 1, "quantity": 1}]}
    first = owner_client.post(url + "/shipments", json=one)
    assert first.status_code == 201, first.json
    assert owner_client.get(url).json["status"] == "partially_shipped"
    assert owner_client.post(url + "/shipments", json=ship).status_code == 201
    assert owner_client.get(url).json["status"] == "shipped"
