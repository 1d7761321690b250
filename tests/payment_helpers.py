"""Helpers for the card payment tests: orders paid by card, reads of what was recorded, and
requests run in lockstep from threads (tests/fake_stripe.py is the Stripe they talk to)."""

import threading

from shop import db
from tests.fake_stripe import deliver
from tests.orders_helpers import add_product, basket


def like(app, client):
    """Another test client with ``client``'s cookies (one per thread)."""
    twin = app.test_client()
    for cookie in client._cookies.values():
        twin.set_cookie(cookie.key, cookie.value, domain=cookie.domain, path=cookie.path)
    return twin


def card_order(app, customer, price=1000, quantity=1, stock=50) -> dict:
    """A pending order paid by card (its PaymentIntent made at the fake); answer it."""
    product = add_product(app, price_cents=price, stock=stock)
    response = customer.post(
        "/payments/checkout", json=basket((product, quantity), method="stripe")
    )
    assert response.status_code == 201, response.json
    return {**response.json, "product_id": product}


def paid_card_order(app, customer, fake, **kwargs) -> dict:
    """A card order whose ``payment_intent.succeeded`` was delivered; answer it."""
    order = card_order(app, customer, **kwargs)
    event = fake.succeed(order["payment"]["reference"])
    assert deliver(app.test_client(), event).status_code == 200
    return order


def subscribe(owner, *events) -> None:
    """A webhook receiving ``events`` (so that they are recorded)."""
    hook = {"url": "http://127.0.0.1:9/hook", "events": list(events)}
    assert owner.post("/webhooks", json=hook).status_code == 201


def emitted(app, kind: str, order_id: str) -> int:
    """Webhook events of ``kind`` emitted about one order (``subscribe`` first)."""
    with app.app_context():
        return db.value(
            "SELECT COUNT(*) FROM webhook_events WHERE type = :t AND subject_id = :id",
            {"t": kind, "id": order_id},
        )


def audited(app, event: str, order_id: str) -> int:
    """Audit entries of ``event`` about one order."""
    with app.app_context():
        return db.value(
            "SELECT COUNT(*) FROM audit_log WHERE event = :e AND details LIKE :id",
            {"e": event, "id": f"%{order_id}%"},
        )


def row(app, sql: str, **params) -> dict | None:
    with app.app_context():
        return db.one(sql, params)


def in_lockstep(rounds: int, *jobs) -> list[list]:
    """Run each job (``job(round)``) in a thread of its own, all released together by a
    barrier in every round; answer each round's results in job order (an exception is
    re-raised). The same threads serve every round, so each keeps one database connection."""
    barrier = threading.Barrier(len(jobs))
    results = [[None] * len(jobs) for _ in range(rounds)]
    errors = []

    def run(n, job):
        try:
            for r in range(rounds):
                barrier.wait(timeout=60)
                results[r][n] = job(r)
        except BaseException as error:  # noqa: BLE001 - handed to the test's thread
            errors.append(error)
            barrier.abort()

    threads = [threading.Thread(target=run, args=(n, job)) for n, job in enumerate(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    if errors:
        raise errors[0]
    return results
