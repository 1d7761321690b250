"""Refunding an order paid partly or wholly with credit (a draft's ``credit_cents``: a
return's exchange), through HTTP on both engines: only what was paid with money is paid back
(per line, the shipping and in total), never the credit; the credit goes back as credit by
an exchange, whole."""

import pytest
from admin_helpers import console_client

from tests.fake_stripe import deliver, settings
from tests.orders.test_order_json import created
from tests.orders_helpers import ADDRESS, add_product


@pytest.fixture
def app(make_app, fake_stripe):
    return make_app(**settings(fake_stripe))


@pytest.fixture
def goods(app, owner_client):
    """Tea at 10.00, a cup at 5.00, shipping 6.00 to FR, no tax: 2 teas and a cup cost 31.00."""
    method = created(
        owner_client.post(
            "/shipping-methods", json={"name": "Colissimo", "countries": ["FR"], "price_cents": 600}
        )
    )
    return {
        "tea": add_product(app, "Tea", price_cents=1000, stock=20),
        "cup": add_product(app, "Cup", price_cents=500, stock=20),
        "method": method["id"],
    }


def _credited_order(owner_client, goods, credit, payment_method="manual"):
    draft = created(
        owner_client.post(
            "/draft-orders",
            json={
                "email": "buyer@example.com",
                "items": [
                    {"product_id": goods["tea"], "quantity": 2},
                    {"product_id": goods["cup"], "quantity": 1},
                ],
                "shipping_address": ADDRESS,
                "shipping_method_id": goods["method"],
                "credit_cents": credit,
            },
        )
    )
    assert draft["totals"]["total_cents"] == 3100
    done = owner_client.post(
        f"/draft-orders/{draft['id']}/complete", json={"payment_method": payment_method}
    )
    assert done.status_code == 201, done.json
    return done.json["order"]


ALL = {"lines": [{"line": 1, "quantity": 2}, {"line": 2, "quantity": 1}], "shipping": True}


def test_a_card_paid_remainder_refunds_only_the_money(app, owner_client, goods, fake_stripe):
    order = _credited_order(owner_client, goods, 1000, "stripe")
    intent = order["payment"]["reference"]
    assert fake_stripe.intents[intent]["amount"] == 2100
    assert deliver(app.test_client(), fake_stripe.succeed(intent)).status_code == 200
    url = f"/orders/{order['id']}/refunds"
    preview = owner_client.get(f"{url}/preview").json
    assert preview["paid_cents"] == 2100 and preview["credit_cents"] == 1000
    assert preview["refundable_cents"] == 2100
    # Each line's share of the money, in proportion: 21/31 of 20.00, 5.00 and 6.00.
    shares = [line["refundable_cents"] for line in preview["lines"]]
    assert shares == [1355, 339] and preview["shipping_refundable_cents"] == 406
    assert sum(shares) + preview["shipping_refundable_cents"] == 2100
    one = owner_client.post(url, json={"lines": [{"line": 1, "quantity": 1}]})
    assert one.status_code == 201, one.json
    assert one.json["amount_cents"] == 677 and one.json["status"] == "succeeded"
    rest = owner_client.post(
        url,
        json={"lines": [{"line": 1, "quantity": 1}, {"line": 2, "quantity": 1}], "shipping": True},
    )
    assert rest.status_code == 201, rest.json
    assert rest.json["amount_cents"] == 2100 - 677
    assert sum(r["amount"] for r in fake_stripe.refunds.values()) == 2100
    assert owner_client.get(f"/orders/{order['id']}").json["status"] == "refunded"
    after = owner_client.get(f"{url}/preview").json
    assert after["refundable_cents"] == 0 and after["refunded_cents"] == 2100
    more = owner_client.post(url, json={"amount_cents": 1})
    assert more.status_code in (400, 409)


def test_an_amount_is_capped_at_the_money(app, owner_client, goods):
    order = _credited_order(owner_client, goods, 1000)
    url = f"/orders/{order['id']}/refunds"
    unpaid = owner_client.get(f"{url}/preview").json
    assert (unpaid["paid_cents"], unpaid["credit_cents"], unpaid["refundable_cents"]) == (
        0,
        1000,
        0,
    )
    owner_client.patch(f"/orders/{order['id']}/status", json={"status": "paid"})
    too_much = owner_client.post(url, json={"amount_cents": 2101})
    assert too_much.status_code == 400 and "2100" in too_much.json["message"]
    page = console_client(app, owner_client.email).get(f"/admin/orders/{order['id']}").text
    assert "and €10.00 with credit, which goes back only as credit" in page
    whole = owner_client.post(url, json=ALL)
    assert whole.status_code == 201 and whole.json["amount_cents"] == 2100


def test_an_order_the_credit_paid_gives_no_money_back(app, owner_client, goods):
    order = _credited_order(owner_client, goods, 10**6)
    assert order["status"] == "paid" and order["payment"]["amount_cents"] == 0
    url = f"/orders/{order['id']}/refunds"
    preview = owner_client.get(f"{url}/preview").json
    assert preview["paid_cents"] == 0 and preview["credit_cents"] == 3100
    assert preview["refundable_cents"] == 0 and preview["shipping_refundable_cents"] == 0
    assert [line["refundable_cents"] for line in preview["lines"]] == [0, 0]
    refused = owner_client.post(url, json=ALL)
    assert refused.status_code == 400, refused.json
    assert "credit" in refused.json["message"]
    assert owner_client.post(url, json={"amount_cents": 100}).status_code == 400
    # Stock can still come back, without money.
    restock = owner_client.post(url, json={"restock": [{"line": 1, "quantity": 2}]})
    assert restock.status_code == 201 and restock.json["amount_cents"] == 0
    assert owner_client.get(f"{url}/preview").json["refunded_cents"] == 0
    assert owner_client.get(f"/orders/{order['id']}").json["status"] == "paid"


def _shipped_return(owner_client, order):
    """Ship ``order`` whole, and receive a return of its two teas (staff ask for it)."""
    shipped = owner_client.post(
        f"/orders/{order['id']}/shipments", json={"carrier": "UPS", "tracking_number": "1Z"}
    )
    assert shipped.status_code == 201, shipped.json
    body = {"lines": [{"line": 1, "quantity": 2}]}
    ret = created(owner_client.post(f"/orders/{order['id']}/returns", json=body))
    assert owner_client.post(f"/returns/{ret['id']}/approve", json={}).status_code == 200
    return ret


def test_a_credit_goes_back_whole_as_credit_by_an_exchange(app, owner_client, goods):
    order = _credited_order(owner_client, goods, 10**6)
    ret = _shipped_return(owner_client, order)
    # Receiving it with a money refund gives nothing back: the teas were paid with credit.
    refused = owner_client.post(
        f"/returns/{ret['id']}/receive", json={"restock": True, "refund": True}
    )
    assert refused.status_code == 400 and "credit" in refused.json["message"]
    received = owner_client.post(
        f"/returns/{ret['id']}/receive", json={"restock": True, "refund": False}
    )
    assert received.status_code == 200, received.json
    made = owner_client.post(
        f"/returns/{ret['id']}/exchange",
        json={"lines": [{"product_id": goods["cup"], "quantity": 1}]},
    )
    assert made.status_code == 201, made.json
    assert made.json["draft_order"]["credit_cents"] == 2000  # the teas' whole value
    refunds = owner_client.get(f"/orders/{order['id']}/refunds").json["items"]
    assert [(r["provider"], r["amount_cents"]) for r in refunds if r["amount_cents"]] == [
        ("credit", 2000)
    ]


def test_an_edit_never_pays_the_credit_out_as_money(app, owner_client, goods):
    covered = _credited_order(owner_client, goods, 10**6)
    down = owner_client.post(f"/orders/{covered['id']}/edits", json={"remove": [{"line": 2}]})
    assert down.status_code == 409 and "credit" in down.json["message"]
    assert owner_client.get(f"/orders/{covered['id']}/refunds").json["items"] == []
    # Part credit, part money: an edit down gives back money only, above the credit.
    order = _credited_order(owner_client, goods, 1000)
    assert order["payment"]["amount_cents"] == 2100
    pending = owner_client.post(f"/orders/{order['id']}/edits", json={"remove": [{"line": 2}]})
    assert pending.status_code == 201, pending.json
    assert pending.json["order"]["payment"]["amount_cents"] == 2600 - 1000
    owner_client.patch(f"/orders/{order['id']}/status", json={"status": "paid"})
    url = f"/orders/{order['id']}/refunds"
    preview = owner_client.get(f"{url}/preview").json
    assert (preview["paid_cents"], preview["credit_cents"]) == (1600, 1000)
    assert preview["refundable_cents"] == 1600
    whole = owner_client.post(url, json={"lines": [{"line": 1, "quantity": 2}], "shipping": True})
    assert whole.status_code == 201 and whole.json["amount_cents"] == 1600
    assert owner_client.get(f"/orders/{order['id']}").json["status"] == "refunded"
