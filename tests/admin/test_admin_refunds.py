"""The refund action of the console's order page (issue 27) through the test client: by lines
with restock, by amount, over the maximum, a double-submitted form, and ``orders.refund``."""

import pytest
from admin_helpers import console_client, hidden_fields

from tests.fake_stripe import settings
from tests.orders_helpers import add_product, basket, product_row
from tests.payments.test_refunds import _paid_order


@pytest.fixture
def app(make_app, fake_stripe):
    return make_app(**settings(fake_stripe))


@pytest.fixture
def owner(app, owner_client):
    return console_client(app, owner_client.email)


@pytest.fixture
def paid(app, customer_client, owner_client):
    """A paid (manual) order of 2 teapots at 25.00; answer (order, teapot id)."""
    teapot = add_product(app, "Teapot", stock=10)
    order = customer_client.post("/payments/checkout", json=basket((teapot, 2))).json
    marked = owner_client.patch(f"/orders/{order['id']}/status", json={"status": "paid"})
    assert marked.status_code == 200
    return order, teapot


def _refund(client, order, **fields):
    page = client.get(f"/admin/orders/{order['id']}")
    assert page.status_code == 200
    data = {**hidden_fields(page.text), **fields}
    return client.post(f"/admin/orders/{order['id']}/refunds", data=data)


def _refunds(owner_client, order):
    return owner_client.get(f"/orders/{order['id']}/refunds").json["items"]


def test_refund_lines_with_restock_then_an_amount_then_over_the_max(app, owner, owner_client, paid):
    order, teapot = paid
    done = _refund(owner, order, **{"refund-1": "1", "restock-1": "1"}, reason="Chipped")
    assert done.status_code == 303, done.text
    assert product_row(app, teapot)["stock"] == 9  # 10 - 2 + 1 back
    page = owner.get(done.headers["Location"]).text
    assert "Refund recorded." in page and 'id="refunds"' in page and "Chipped" in page
    assert "partially refunded" in page and "1 × Teapot" in page
    assert _refund(owner, order, amount="10.00").status_code == 303
    assert [r["amount_cents"] for r in _refunds(owner_client, order)] == [2500, 1000]
    left = order["total_cents"] - 3500
    form = {**hidden_fields(owner.get(f"/admin/orders/{order['id']}").text)}
    form["amount"] = f"{(left + 1) / 100:.2f}"
    over = owner.post(f"/admin/orders/{order['id']}/refunds", data=form)
    assert over.status_code == 400 and f"maximum is {left}" in over.text
    assert 'id="action-error"' in over.text and len(_refunds(owner_client, order)) == 2
    # The refused form keeps its key, so resending it cannot start a second refund.
    assert hidden_fields(over.text)["idempotency_key"] == form["idempotency_key"]


def test_the_amount_is_plain_ascii_decimal_digits(owner, owner_client, paid):
    """Decimal() reads an exponent, underscores and other scripts' digits: the form takes
    only what a person reads as the amount (shop.money.from_text, as the import does)."""
    order, _ = paid
    for amount in ("1e1", "１０", "١٠", "1_0", "10e-0", "Infinity", "1,5", "+10"):
        refused = _refund(owner, order, amount=amount)
        assert refused.status_code == 400, (amount, refused.text)
        assert "is not a decimal amount: write digits 0-9 and at most one point" in refused.text
        assert 'id="action-error"' in refused.text
    assert "EUR amounts have at most 2 decimals" in _refund(owner, order, amount="1.005").text
    assert _refunds(owner_client, order) == []
    assert _refund(owner, order, amount=" 10.5 ").status_code == 303
    assert _refund(owner, order, amount=".25").status_code == 303
    assert [r["amount_cents"] for r in _refunds(owner_client, order)] == [1050, 25]


def test_a_double_submitted_form_refunds_once(owner, owner_client, paid):
    order, _ = paid
    page = owner.get(f"/admin/orders/{order['id']}").text
    form = {**hidden_fields(page), "amount": "5.00"}
    for _ in range(2):
        sent = owner.post(f"/admin/orders/{order['id']}/refunds", data=form)
        assert sent.status_code == 303, sent.text
    assert [r["amount_cents"] for r in _refunds(owner_client, order)] == [500]


def test_without_orders_refund_no_form_and_403(app, make_admin, owner_client, paid):
    order, _ = paid
    clerk = make_admin("editor", permissions=["orders.read", "orders.update_status"])
    client = console_client(app, clerk.email)
    page = client.get(f"/admin/orders/{order['id']}")
    assert page.status_code == 200 and 'id="refund"' not in page.text
    refused = _refund(client, order, amount="5.00")
    assert refused.status_code == 403 and "orders.refund" in refused.text
    assert _refunds(owner_client, order) == []


def test_stripe_unreachable_then_the_same_form_again_refunds_once(
    app, owner, customer_client, owner_client, fake_stripe
):
    order, _ = _paid_order(
        app, customer_client, owner_client, lines=((1500, 2),), method="stripe", fake=fake_stripe
    )
    form = {**hidden_fields(owner.get(f"/admin/orders/{order['id']}").text), "amount": "5.00"}
    fake_stripe.mode = "down"
    down = owner.post(f"/admin/orders/{order['id']}/refunds", data=form)
    assert down.status_code == 503 and down.headers["Retry-After"]
    assert "kept as pending" in down.text
    fake_stripe.mode = None
    again = {**hidden_fields(down.text), "amount": "5.00"}  # the page the 503 showed
    assert owner.post(f"/admin/orders/{order['id']}/refunds", data=again).status_code == 303
    refunds = _refunds(owner_client, order)
    assert [(r["amount_cents"], r["status"]) for r in refunds] == [(500, "succeeded")]
    assert len(fake_stripe.refunds) == 1


def test_the_console_keeps_the_apis_limits(app, owner, owner_client, paid):
    """The form's refund goes through the API's command: its unit limit and the reason's
    length are the API's, said with the form's labels, and nothing is refunded."""
    order, _teapot = paid
    many = _refund(owner, order, **{"refund-1": "1000001"})
    assert many.status_code == 400 and "give 1 to 1000000 units" in many.text
    long = _refund(owner, order, amount="1.00", reason="x" * 501)
    assert long.status_code == 400 and "Reason: at most 500 characters." in long.text
    zero = _refund(owner, order, amount="0.00")
    assert zero.status_code == 400 and "Amount: give more than zero." in zero.text
    assert _refunds(owner_client, order) == []
