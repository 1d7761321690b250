"""Order edits before fulfilment (issue 41): the arithmetic, and through HTTP on both engines
the repricing (= the quote of the new basket), the stock, the money, the invoices, the
permissions and the event."""

import threading

import pytest

from shop import db
from shop.errors import Invalid
from shop.orders import edits
from shop.orders.edits import EditRequest
from tests.fake_stripe import deliver, settings
from tests.orders_helpers import ADDRESS, add_product, product_row
from tests.webhook_helpers import Receiver, create_hook, verify, work

# -- the pure rules -----------------------------------------------------------------------------

LINES = [
    {"line": 1, "variant_id": "a", "quantity": 2},
    {"line": 2, "variant_id": "b", "quantity": 1},
    {"line": 3, "variant_id": "c", "quantity": 3},
]


def test_new_lines_remove_set_and_add_keeping_line_numbers():
    request = EditRequest(
        remove=[{"line": 2}],
        set_quantity=[{"line": 1, "quantity": 5}],
        add=[{"variant_id": "d", "quantity": 1}],
    )
    after, changes = edits.new_lines(LINES, request)
    assert after == [
        {"line": 1, "variant_id": "a", "quantity": 5},
        {"line": 3, "variant_id": "c", "quantity": 3},
        {"line": 4, "variant_id": "d", "quantity": 1},
    ]
    assert [(c["kind"], c["line"], c["from"], c["to"]) for c in changes] == [
        ("remove", 2, 1, 0),
        ("set_quantity", 1, 2, 5),
        ("add", 4, 0, 1),
    ]
    assert edits.stock_moves(LINES, after) == {"a": 3, "b": -1, "d": 1}


@pytest.mark.parametrize(
    "request_, words",
    [
        (EditRequest(remove=[{"line": 9}]), "remove: the order has no line 9"),
        (EditRequest(remove=[{"line": 1}], set_quantity=[{"line": 1, "quantity": 1}]), "twice"),
        (EditRequest(add=[{"variant_id": "b", "quantity": 1}]), "add: variant b is line 2"),
        (EditRequest(set_quantity=[{"line": 1, "quantity": 2}]), "already has 2"),
        (EditRequest(remove=[{"line": 1}, {"line": 2}, {"line": 3}]), "at least one line"),
    ],
)
def test_new_lines_refuses_naming_the_field(request_, words):
    with pytest.raises(Invalid, match=words):
        edits.new_lines(LINES, request_)


@pytest.mark.parametrize(
    "request_, words",
    [
        (EditRequest(), "Nothing to change"),
        (EditRequest(set_quantity=[{"line": 1, "quantity": 0}]), "set_quantity: give 1"),
        (EditRequest(add=[{"variant_id": "x", "quantity": 10001}]), "add: give 1"),
        (EditRequest(remove=[{"line": 0}]), "remove: a line"),
        (EditRequest(discount_code="NEW"), "discount_code"),
        (EditRequest(remove=[{"line": 1}], note="x" * 501), "note"),
    ],
)
def test_a_request_out_of_limits_is_refused(request_, words):
    with pytest.raises(Invalid, match=words):
        request_.checked()


def test_settle_refunds_under_what_was_received_and_leaves_the_rest_due():
    assert edits.settle(False, 3000, 0, 1000) == (0, 0)  # unpaid: only the total changes
    assert edits.settle(True, 3000, 0, 1000) == (2000, 0)
    assert edits.settle(True, 3000, 0, 4500) == (0, 1500)
    # Paid 3000, edited up to 4500 (1500 due), then down to 3500: 500 still due, no refund.
    assert edits.settle(True, 4500, 1500, 3500) == (0, 500)
    assert edits.settle(True, 4500, 1500, 2000) == (1000, 0)


# -- through HTTP -------------------------------------------------------------------------------


@pytest.fixture
def app(make_app, fake_stripe):
    return make_app(WEBHOOKS_ALLOW_PRIVATE=True, WEBHOOKS_ALLOW_HTTP=True, **settings(fake_stripe))


def created(response):
    assert response.status_code == 201, response.json
    return response.json


def variant_of(app, product_id) -> str:
    with app.app_context():
        return db.value(
            "SELECT id FROM product_variants WHERE product_id = :id", {"id": product_id}
        )


def stock(app, product_id) -> int:
    return product_row(app, product_id)["stock"]


def shop_with_pricing(owner_client):
    """A shipping method, a 20% tax rate and a 10% code with a 40.00 minimum."""
    method = created(
        owner_client.post(
            "/shipping-methods", json={"name": "Colissimo", "countries": ["FR"], "price_cents": 490}
        )
    )
    created(owner_client.post("/tax-rates", json={"country": "FR", "rate": "20", "name": "TVA"}))
    code = {"code": "SAVE10", "kind": "percent", "value": "10", "min_subtotal_cents": 4000}
    created(owner_client.post("/discounts", json=code))
    return method["id"]


def place(client, lines, method_id=None, code=None, payment="manual"):
    body = {
        "items": [{"product_id": p, "quantity": q} for p, q in lines],
        "shipping_address": dict(ADDRESS),
        "payment_method": payment,
    }
    if method_id:
        body["shipping_method_id"] = method_id
    if code:
        body["discount_code"] = code
    return created(client.post("/payments/checkout", json=body))


def quote(client, app, basket, method_id, code):
    body = {
        "items": [{"variant_id": variant_of(app, p), "quantity": q} for p, q in basket],
        "shipping_address": dict(ADDRESS),
        "shipping_method_id": method_id,
    }
    if code:
        body["discount_code"] = code
    response = client.post("/payments/quote", json=body)
    assert response.status_code == 200, response.json
    return response.json


TOTALS = ("subtotal_cents", "discount_cents", "shipping_cents", "tax_cents", "total_cents")


def totals(answer) -> dict:
    return {key: answer[key] for key in TOTALS}


def edit(client, order_id, body, status=201, key=None):
    headers = {"Idempotency-Key": key} if key else {}
    response = client.post(f"/orders/{order_id}/edits", json=body, headers=headers)
    assert response.status_code == status, response.json
    return response.json


def test_an_edit_removing_and_changing_lines_is_repriced_as_the_quote_with_stock_moved(
    app, owner_client, customer_client
):
    method = shop_with_pricing(owner_client)
    tea = add_product(app, "Tea", price_cents=2000, stock=10)
    cup = add_product(app, "Cup", price_cents=900, stock=10)
    book = add_product(app, "Book", price_cents=1500, stock=10)
    kettle = add_product(app, "Kettle", price_cents=3000, stock=5)
    order = place(customer_client, [(tea, 3), (cup, 2), (book, 1)], method, "SAVE10")
    assert [stock(app, p) for p in (tea, cup, book, kettle)] == [7, 8, 9, 5]

    body = {
        "remove": [{"line": 2}],
        "set_quantity": [{"line": 1, "quantity": 1}],
        "add": [{"variant_id": variant_of(app, kettle), "quantity": 2}],
        "note": "Customer called",
    }
    preview = owner_client.post(f"/orders/{order['id']}/edits/preview", json=body)
    assert preview.status_code == 200, preview.json
    made = edit(owner_client, order["id"], body)
    expected = quote(customer_client, app, [(tea, 1), (book, 1), (kettle, 2)], method, "SAVE10")
    edited = made["order"]
    assert totals(edited) == totals(expected) == totals(preview.json)
    assert edited["tax_lines"] == expected["tax_lines"]
    assert [(i["line"], i["quantity"], i["total_cents"]) for i in edited["items"]] == [
        (1, 1, expected["items"][0]["total_cents"]),
        (3, 1, expected["items"][1]["total_cents"]),
        (4, 2, expected["items"][2]["total_cents"]),
    ]
    assert edited["discount_code"] == "SAVE10" and edited["balance_due_cents"] == 0
    assert edited["payment"]["amount_cents"] == expected["total_cents"]  # unpaid: just the total
    assert [stock(app, p) for p in (tea, cup, book, kettle)] == [9, 10, 9, 3]
    assert made["before"]["total_cents"] == order["total_cents"]
    assert made["after"]["total_cents"] == expected["total_cents"]
    assert made["refund"] is None and made["note"] == "Customer called"
    assert owner_client.get(f"/orders/{order['id']}").json == edited
    listed = owner_client.get(f"/orders/{order['id']}/edits").json["items"]
    assert [e["id"] for e in listed] == [made["id"]]
    assert {c["kind"] for c in listed[0]["changes"]} == {"remove", "set_quantity", "add"}
    assert edited["status_history"][-1]["note"].startswith("Edited: ")
    with app.app_context():
        audit = db.value("SELECT COUNT(*) FROM audit_log WHERE event = 'order.edited'")
    assert audit == 1
    # The customer reads the edited order; the edits are staff's.
    assert (
        customer_client.get(f"/orders/{order['id']}").json["total_cents"] == edited["total_cents"]
    )
    assert customer_client.post(f"/orders/{order['id']}/edits", json=body).status_code == 403


def test_too_little_stock_or_a_code_no_longer_applying_writes_nothing(
    app, owner_client, customer_client
):
    method = shop_with_pricing(owner_client)
    tea = add_product(app, "Tea", price_cents=2000, stock=10)
    kettle = add_product(app, "Kettle", price_cents=3000, stock=1)
    order = place(customer_client, [(tea, 3)], method, "SAVE10")
    before = owner_client.get(f"/orders/{order['id']}").json
    too_many = {
        "set_quantity": [{"line": 1, "quantity": 1}],
        "add": [{"variant_id": variant_of(app, kettle), "quantity": 2}],
    }
    refused = edit(owner_client, order["id"], too_many, status=409)
    assert (
        "Not enough stock" in refused["message"] and variant_of(app, kettle) in refused["message"]
    )
    # 1 tea = 20.00 is under the code's 40.00 minimum: the code is named.
    under = edit(owner_client, order["id"], {"set_quantity": [{"line": 1, "quantity": 1}]}, 400)
    assert under["message"].startswith("discount_code:") and "SAVE10" in under["message"]
    assert owner_client.get(f"/orders/{order['id']}").json == before
    assert [stock(app, tea), stock(app, kettle)] == [7, 1]
    assert owner_client.get(f"/orders/{order['id']}/edits").json["items"] == []
    # Removing the code in the same edit prices it without, and gives its use back.
    body = {"set_quantity": [{"line": 1, "quantity": 1}], "discount_code": None}
    made = edit(owner_client, order["id"], body)
    expected = quote(customer_client, app, [(tea, 1)], method, None)
    assert totals(made["order"]) == totals(expected) and made["order"]["discount_code"] is None
    assert made["before"]["discount_code"] == "SAVE10" and made["after"]["discount_code"] is None
    assert owner_client.get("/discounts").json["items"][0]["times_used"] == 0
    assert stock(app, tea) == 9


def test_refused_once_shipped_and_for_cancelled_orders(app, owner_client, customer_client):
    tea = add_product(app, "Tea", price_cents=2000, stock=10)
    shipped = place(customer_client, [(tea, 2)])
    owner_client.patch(f"/orders/{shipped['id']}/status", json={"status": "paid"})
    ship = {"lines": [{"line": 1, "quantity": 1}], "carrier": "DHL", "tracking_number": "T1"}
    assert owner_client.post(f"/orders/{shipped['id']}/shipments", json=ship).status_code == 201
    refused = edit(owner_client, shipped["id"], {"set_quantity": [{"line": 1, "quantity": 1}]}, 409)
    assert "shipped" in refused["message"]
    cancelled = place(customer_client, [(tea, 1)])
    owner_client.patch(f"/orders/{cancelled['id']}/status", json={"status": "cancelled"})
    refused = edit(
        owner_client, cancelled["id"], {"set_quantity": [{"line": 1, "quantity": 2}]}, 409
    )
    assert "cancelled" in refused["message"]
    assert stock(app, tea) == 8  # 10 - 2 shipped order; the cancelled one's unit is back
    assert edit(owner_client, "nope", {"remove": [{"line": 1}]}, 404)


def paid_order(app, customer_client, owner_client, lines, payment="manual", fake=None):
    order = place(customer_client, lines, payment=payment)
    if payment == "stripe":
        assert deliver(app.test_client(), fake.succeed(order["payment"]["reference"])).json
    else:
        owner_client.patch(f"/orders/{order['id']}/status", json={"status": "paid"})
    shown = owner_client.get(f"/orders/{order['id']}").json
    assert shown["status"] == "paid"
    return shown


def test_a_paid_order_edited_down_refunds_the_difference_once_under_four_concurrent_edits(
    app, owner_client, customer_client
):
    tea = add_product(app, "Tea", price_cents=1000, stock=10)
    cup = add_product(app, "Cup", price_cents=500, stock=10)
    order = paid_order(app, customer_client, owner_client, [(tea, 3), (cup, 2)])
    assert order["total_cents"] == 4000 and order["invoice_number"]
    body = {"remove": [{"line": 2}], "set_quantity": [{"line": 1, "quantity": 2}]}
    answers = []

    def one():
        client = app.test_client()
        client.environ_base.update(owner_client.environ_base)
        client._cookies = owner_client._cookies
        response = client.post(
            f"/orders/{order['id']}/edits", json=body, headers={"Idempotency-Key": "edit-1"}
        )
        answers.append((response.status_code, response.json["id"]))

    threads = [threading.Thread(target=one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(status for status, _ in answers) == [200, 200, 200, 201]
    assert len({edit_id for _, edit_id in answers}) == 1
    refunds = owner_client.get(f"/orders/{order['id']}/refunds").json["items"]
    assert [(r["amount_cents"], r["status"], r["provider"]) for r in refunds] == [
        (2000, "succeeded", "manual")
    ]
    assert refunds[0]["edit_id"] == answers[0][1]
    shown = owner_client.get(f"/orders/{order['id']}").json
    assert shown["total_cents"] == 2000 and shown["status"] == "paid"
    assert shown["payment_status"] == "paid" and shown["balance_due_cents"] == 0
    assert [stock(app, tea), stock(app, cup)] == [8, 10]
    # What is left to refund is the order as it stands, once.
    preview = owner_client.get(f"/orders/{order['id']}/refunds/preview").json
    assert preview["refundable_cents"] == 2000
    # The old invoice is credited in full and a new one issued for the edited order.
    assert shown["invoice_number"] and shown["invoice_number"] != order["invoice_number"]
    with app.app_context():
        notes = db.query("SELECT total_cents, edit_id, refund_id FROM credit_notes")
        invoices = db.query("SELECT total_cents, superseded_at FROM invoices ORDER BY number")
    assert [(n["total_cents"], n["refund_id"]) for n in notes] == [(4000, None)]
    assert [(i["total_cents"], bool(i["superseded_at"])) for i in invoices] == [
        (4000, True),
        (2000, False),
    ]
    # A later refund of the rest refunds the order fully, its credit note on the new invoice.
    rest = owner_client.post(f"/orders/{order['id']}/refunds", json={"amount_cents": 2000})
    assert rest.status_code == 201, rest.json
    assert owner_client.get(f"/orders/{order['id']}").json["status"] == "refunded"
    assert owner_client.get(f"/orders/{order['id']}/invoice").status_code == 200


def test_a_card_order_edited_down_is_refunded_at_stripe(
    app, owner_client, customer_client, fake_stripe
):
    tea = add_product(app, "Tea", price_cents=1000, stock=10)
    order = paid_order(app, customer_client, owner_client, [(tea, 3)], "stripe", fake_stripe)
    made = edit(owner_client, order["id"], {"set_quantity": [{"line": 1, "quantity": 1}]})
    assert made["refund"]["amount_cents"] == 2000 and made["refund"]["status"] == "succeeded"
    assert made["refund"]["provider"] == "stripe"
    (refund,) = owner_client.get(f"/orders/{order['id']}/refunds").json["items"]
    assert refund["reference"] and refund["edit_id"] == made["id"]
    assert made["order"]["status"] == "paid" and made["order"]["total_cents"] == 1000


def test_a_higher_total_leaves_a_balance_due_recorded_by_hand_for_manual_only(
    app, owner_client, customer_client, fake_stripe
):
    tea = add_product(app, "Tea", price_cents=1000, stock=20)
    order = paid_order(app, customer_client, owner_client, [(tea, 1)])
    made = edit(owner_client, order["id"], {"set_quantity": [{"line": 1, "quantity": 3}]})
    assert made["refund"] is None and made["balance_due_cents"] == 2000
    assert made["order"]["balance_due_cents"] == 2000 and made["order"]["total_cents"] == 3000
    preview = owner_client.get(f"/orders/{order['id']}/refunds/preview").json
    assert preview["refundable_cents"] == 1000  # what was received
    # Down again, still above what was received: less due, nothing refunded.
    made = edit(owner_client, order["id"], {"set_quantity": [{"line": 1, "quantity": 2}]})
    assert made["refund"] is None and made["order"]["balance_due_cents"] == 1000
    paid = owner_client.post(f"/orders/{order['id']}/balance", json={"note": "cash"})
    assert paid.status_code == 200, paid.json
    assert paid.json["balance_due_cents"] == 0 and paid.json["payment"]["amount_cents"] == 2000
    assert owner_client.post(f"/orders/{order['id']}/balance", json={}).status_code == 409
    card = paid_order(app, customer_client, owner_client, [(tea, 1)], "stripe", fake_stripe)
    made = edit(owner_client, card["id"], {"set_quantity": [{"line": 1, "quantity": 2}]})
    assert made["order"]["balance_due_cents"] == 1000
    refused = owner_client.post(f"/orders/{card['id']}/balance", json={})
    assert refused.status_code == 409 and "pay link" in refused.json["message"]


def test_permissions_and_the_keys_ceiling(app, owner_client, customer_client, make_key, make_admin):
    tea = add_product(app, "Tea", price_cents=1000, stock=20)
    order = place(customer_client, [(tea, 2)])
    url = f"/orders/{order['id']}/edits"
    body = {"set_quantity": [{"line": 1, "quantity": 1}]}
    assert app.test_client().post(url, json=body).status_code == 401
    assert make_key("read:order").post(url, json=body).status_code == 403
    writer = make_key("write:order")
    assert writer.post(url, json=body).status_code == 204  # may write, not read: no body
    assert writer.get(url).status_code == 403
    orders_rights = ["orders.read", "orders.update_status", "orders.refund"]
    packer_rights = [*orders_rights, "orders.edit", "api_key.create"]
    role = owner_client.post("/roles", json={"name": "packer", "permissions": packer_rights})
    assert role.status_code == 201, role.json
    packer = make_admin("packer")
    assert packer.post(url, json={"set_quantity": [{"line": 1, "quantity": 2}]}).status_code == 201
    packers_key = make_key("read:order", "write:order", by=packer)
    assert packers_key.post(url, json=body).status_code == 201
    # The role loses orders.edit: the packer, and the key the packer made, are refused.
    kept = [*orders_rights, "api_key.create"]
    changed = owner_client.put(f"/roles/{role.json['id']}", json={"permissions": kept})
    assert changed.status_code == 200, changed.json
    assert packer.post(url, json=body).status_code == 403
    again = {"set_quantity": [{"line": 1, "quantity": 2}]}
    refused = packers_key.post(url, json=again)
    assert refused.status_code == 403 and "orders.edit" in refused.json["message"]
    assert len(owner_client.get(url).json["items"]) == 3


def test_concurrent_different_edits_each_refund_their_own_difference_once(
    app, owner_client, customer_client
):
    tea = add_product(app, "Tea", price_cents=1000, stock=10)
    cup = add_product(app, "Cup", price_cents=500, stock=10)
    order = paid_order(app, customer_client, owner_client, [(tea, 3), (cup, 4)])
    bodies = [
        {"set_quantity": [{"line": 1, "quantity": 2}]},
        {"set_quantity": [{"line": 2, "quantity": 1}]},
    ]
    answers = []

    def one(body):
        client = app.test_client()
        client._cookies = owner_client._cookies
        answers.append(client.post(f"/orders/{order['id']}/edits", json=body).status_code)

    threads = [threading.Thread(target=one, args=(body,)) for body in bodies]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert answers == [201, 201]
    made = owner_client.get(f"/orders/{order['id']}/edits").json["items"]
    refunds = owner_client.get(f"/orders/{order['id']}/refunds").json["items"]
    assert sorted(r["amount_cents"] for r in refunds) == [1000, 1500]
    assert {r["edit_id"] for r in refunds} == {e["id"] for e in made}
    shown = owner_client.get(f"/orders/{order['id']}").json
    assert shown["total_cents"] == 2500 and [stock(app, tea), stock(app, cup)] == [8, 9]


def test_a_kept_line_keeps_the_price_it_was_sold_at(app, owner_client, customer_client):
    tea = add_product(app, "Tea", price_cents=1000, stock=10)
    cup = add_product(app, "Cup", price_cents=500, stock=10)
    order = place(customer_client, [(tea, 2)])
    changed = owner_client.put(f"/products/{tea}", json={"price_cents": 1500})
    assert changed.status_code == 200, changed.json
    body = {"add": [{"variant_id": variant_of(app, cup), "quantity": 1}]}
    made = edit(owner_client, order["id"], body)
    assert [i["unit_price_cents"] for i in made["order"]["items"]] == [1000, 500]
    assert made["order"]["total_cents"] == 2500


def test_a_webhook_receiver_gets_order_edited_signed(app, owner_client, customer_client):
    tea = add_product(app, "Tea", price_cents=1000, stock=20)
    order = place(customer_client, [(tea, 2)])
    receiver = Receiver()
    try:
        hook = create_hook(owner_client, receiver.url, "order.edited")
        made = edit(owner_client, order["id"], {"set_quantity": [{"line": 1, "quantity": 1}]})
        work(app)
        (request,) = receiver.requests
        payload = verify(hook["secret"], request)
    finally:
        receiver.stop()
    assert payload["type"] == "order.edited"
    assert payload["data"]["total_cents"] == made["order"]["total_cents"]
    assert payload["data"]["edit"]["id"] == made["id"]
