"""Stock goes back at most once per unit sold, whichever path comes first (issue 35,
finding 1): a refund's restock, a move to ``refunded`` or ``cancelled``."""

import pytest

from tests.fake_stripe import settings
from tests.orders_helpers import add_product, basket, product_row
from tests.payment_helpers import in_lockstep, like


@pytest.fixture
def app(make_app, fake_stripe):
    return make_app(**settings(fake_stripe))


def _paid(app, customer, owner, quantity=3, stock=10, lines=1) -> tuple[dict, list]:
    products = [add_product(app, price_cents=1000, stock=stock) for _ in range(lines)]
    body = basket(*[(product, quantity) for product in products])
    order = customer.post("/payments/checkout", json=body).json
    moved = owner.patch(f"/orders/{order['id']}/status", json={"status": "paid"})
    assert moved.status_code == 200, moved.json
    return order, products


def _stock(app, product) -> int:
    return product_row(app, product)["stock"]


def test_a_refunds_restock_then_refunded_puts_back_only_the_rest(
    app, customer_client, owner_client
):
    order, (teapot, cup) = _paid(app, customer_client, owner_client, lines=2)
    assert (_stock(app, teapot), _stock(app, cup)) == (7, 7)
    url = f"/orders/{order['id']}"
    body = {"lines": [{"line": 1, "quantity": 1}], "restock": [{"line": 1, "quantity": 3}]}
    body["restock"].append({"line": 2, "quantity": 1})
    assert owner_client.post(url + "/refunds", json=body).status_code == 201
    assert (_stock(app, teapot), _stock(app, cup)) == (10, 8)
    moved = owner_client.patch(url + "/status", json={"status": "refunded"})
    assert moved.status_code == 200, moved.json
    assert (_stock(app, teapot), _stock(app, cup)) == (10, 10)  # not 13 and 10
    assert owner_client.patch(url + "/status", json={"status": "refunded"}).status_code == 409
    assert (_stock(app, teapot), _stock(app, cup)) == (10, 10)


def test_a_refunded_order_restocks_nothing_more_through_a_refund(
    app, customer_client, owner_client
):
    order, (teapot,) = _paid(app, customer_client, owner_client)
    url = f"/orders/{order['id']}"
    assert owner_client.patch(url + "/status", json={"status": "refunded"}).status_code == 200
    assert _stock(app, teapot) == 10
    again = owner_client.post(url + "/refunds", json={"restock": [{"line": 1, "quantity": 1}]})
    assert again.status_code == 409
    assert _stock(app, teapot) == 10


def test_the_preview_counts_what_went_back_by_every_path(app, customer_client, owner_client):
    order, _ = _paid(app, customer_client, owner_client)
    url = f"/orders/{order['id']}/refunds"
    assert owner_client.post(url, json={"restock": [{"line": 1, "quantity": 2}]}).status_code == 201
    assert owner_client.get(url + "/preview").json["lines"][0]["restocked_quantity"] == 2
    over = owner_client.post(url, json={"restock": [{"line": 1, "quantity": 2}]})
    assert over.status_code == 400 and "1 units left" in over.json["message"]


def test_a_restock_and_a_move_to_refunded_at_once_put_back_each_unit_once(
    app, customer_client, owner_client
):
    orders = [_paid(app, customer_client, owner_client) for _ in range(12)]
    refunder, mover = like(app, owner_client), like(app, owner_client)
    restock = {"restock": [{"line": 1, "quantity": 3}], "amount_cents": 1000}
    answers = in_lockstep(
        len(orders),
        lambda r: refunder.post(f"/orders/{orders[r][0]['id']}/refunds", json=restock).status_code,
        lambda r: (
            mover.patch(
                f"/orders/{orders[r][0]['id']}/status", json={"status": "refunded"}
            ).status_code
        ),
    )
    for (_order, (teapot,)), (refunded, moved) in zip(orders, answers, strict=True):
        assert moved == 200 and refunded in (201, 409)
        assert _stock(app, teapot) == 10


def test_cancelling_puts_back_what_is_out(app, customer_client, owner_client):
    teapot = add_product(app, stock=10)
    order = customer_client.post("/payments/checkout", json=basket((teapot, 4))).json
    assert _stock(app, teapot) == 6
    assert customer_client.post(f"/orders/{order['id']}/cancel").status_code == 200
    assert _stock(app, teapot) == 10
    refused = owner_client.post(
        f"/orders/{order['id']}/refunds", json={"restock": [{"line": 1, "quantity": 1}]}
    )
    assert refused.status_code == 409 and _stock(app, teapot) == 10
