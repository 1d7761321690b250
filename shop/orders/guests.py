"""Guest orders (issue 38): an order placed without an account belongs to the e-mail it was
placed with (``orders.guest_email``, ``customer_id`` NULL) and is read with a token of 32
random bytes shown once, whose SHA-256 is ``orders.token_hash``.

``GET /orders/{id}?token=...`` and ``POST /orders/{id}/cancel?token=...`` check it here, in
constant time; a missing or wrong token is the 404 of an order that does not exist. When a
customer verifies an e-mail address, the guest orders placed with it become theirs
(``attach``): docs/orders.md, "Guest orders".
"""

import hmac

from flask import current_app

from shop import db


def status_link(order_id: str, token: str) -> str:
    """Where a guest follows an order (its confirmation mail): ``SHOP_ORDER_STATUS_URL``
    with ``{id}`` and ``{token}`` filled, by default this API's ``GET /orders/{id}``. Never
    built from a request's Host."""
    config = current_app.config
    base = config["PUBLIC_URL"] or f"http://127.0.0.1:{config['PORT']}"
    template = config.get("ORDER_STATUS_URL") or base + "/orders/{id}?token={token}"
    return template.replace("{id}", order_id).replace("{token}", token)


def holds(order_id: str, token: str | None) -> bool:
    """Whether ``token`` is the token of the guest order ``order_id`` (constant time)."""
    if not token or len(token) > 100:
        return False
    stored = db.value("SELECT token_hash FROM orders WHERE id = :id", {"id": order_id})
    return stored is not None and hmac.compare_digest(stored, db.sha256(token))


def attach(customer_id: str, email: str) -> int:
    """Make the guest orders placed with ``email`` the customer's (who has just proved they
    hold it); answer how many. In the caller's transaction."""
    return db.execute(
        "UPDATE orders SET customer_id = :customer_id"
        " WHERE customer_id IS NULL AND guest_email = :email",
        {"customer_id": customer_id, "email": email.strip().lower()},
    )
