"""Idempotency keys (shop/idempotency.py): one canonical hash of a body, and refunds' keys
stored before it (non-ASCII escaped) still replaying."""

import hashlib
import json

from shop import db, idempotency
from tests.orders_helpers import add_product, basket


def test_a_body_hashes_in_one_canonical_form_and_the_old_escaped_form_still_matches():
    body = {"reason": "Zoë's parcel", "restock": [{"line": 1, "quantity": 2}]}
    canonical = '{"reason":"Zoë\'s parcel","restock":[{"line":1,"quantity":2}]}'
    assert idempotency.body_hash(body) == hashlib.sha256(canonical.encode()).hexdigest()
    assert idempotency.body_hash(dict(reversed(body.items()))) == idempotency.body_hash(body)
    escaped = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode())
    assert escaped.hexdigest() != idempotency.body_hash(body)
    assert idempotency.same_body(escaped.hexdigest(), body)
    assert idempotency.same_body(idempotency.body_hash(body), body)
    assert not idempotency.same_body(idempotency.body_hash(body), {**body, "reason": "Zoe"})


def test_a_refund_key_stored_in_the_old_escaped_form_replays(app, customer_client, owner_client):
    product = add_product(app, price_cents=1000, stock=10)
    order = customer_client.post("/payments/checkout", json=basket((product, 3))).json
    owner_client.patch(f"/orders/{order['id']}/status", json={"status": "paid"})
    url, key = f"/orders/{order['id']}/refunds", {"Idempotency-Key": "zoe-1"}
    body = {"amount_cents": 500, "reason": "Zoë's parcel came late"}
    first = owner_client.post(url, json=body, headers=key)
    assert first.status_code == 201, first.json
    escaped = json.dumps(body, sort_keys=True, separators=(",", ":"))  # as refunds hashed
    with app.app_context(), db.transaction():
        stored = db.value("SELECT request_hash FROM refunds WHERE id = :id", first.json)
        assert stored == idempotency.body_hash(body)
        db.execute(
            "UPDATE refunds SET request_hash = :hash WHERE id = :id",
            {"hash": db.sha256(escaped), "id": first.json["id"]},
        )

    again = owner_client.post(url, json=body, headers=key)
    other = owner_client.post(url, json={**body, "reason": "Zoe"}, headers=key)

    assert again.status_code == 200 and again.json["id"] == first.json["id"]
    assert other.status_code == 409
    assert [r["amount_cents"] for r in owner_client.get(url).json["items"]] == [500]
