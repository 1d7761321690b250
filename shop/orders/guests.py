"""Guest orders (issue 38): an order placed without an account belongs to the e-mail it was
placed with (``orders.guest_email``, ``customer_id`` NULL) and is read with a token of 32
random bytes shown once, whose SHA-256 is ``orders.token_hash``.

``GET /orders/{id}?token=...`` and ``POST /orders/{id}/cancel?token=...`` check it here, in
constant time; a missing or wrong token is the 404 of an order that does not exist. When a
customer verifies an e-mail address, the guest orders placed with it become theirs
(``attach``), and so do those placed with it later (``attach_to_verified``): docs/orders.md,
"Guest orders".
"""

from flask import current_app

from shop import db


def status_link(order_id: str, token: str) -> str:
    """Where a guest follows an order (its confirmation mail): ``SHOP_ORDER_STATUS_URL``
    with ``{id}`` and ``{token}`` filled; by default the storefront's order page, or this
    API's ``GET /orders/{id}`` when the storefront is off. Never built from a request's
    Host."""
    config = current_app.config
    base = config["PUBLIC_URL"] or f"http://127.0.0.1:{config['PORT']}"
    # The storefront's order page when the shop has one, else the API's order.
    page = config["STOREFRONT_PREFIX"] if config.get("STOREFRONT") else ""
    template = config.get("ORDER_STATUS_URL") or base + page + "/orders/{id}?token={token}"
    return template.replace("{id}", order_id).replace("{token}", token)


def holds(order_id: str, token: str | None) -> bool:
    """Whether ``token`` is the token of the guest order ``order_id`` (constant time)."""
    if not token or len(token) > 100:
        return False
    stored = db.value("SELECT token_hash FROM orders WHERE id = :id", {"id": order_id})
    return db.hash_matches(stored, token)


# The customer who has verified a guest order's e-mail (none while unverified or erased).
_VERIFIED = (
    "SELECT c.id FROM customers c WHERE c.email = orders.guest_email"
    " AND c.email_verified_at IS NOT NULL AND c.erased_at IS NULL"
)


def attach_to_verified(order_id: str) -> bool:
    """A guest order placed with an address a customer has verified becomes theirs at
    once; answer whether it did. In the caller's transaction."""
    return bool(
        db.execute(
            f"UPDATE orders SET customer_id = ({_VERIFIED}) WHERE id = :id"
            f" AND customer_id IS NULL AND EXISTS ({_VERIFIED})",
            {"id": order_id},
        )
    )


def attach(customer_id: str, email: str) -> int:
    """Make the guest orders placed with ``email`` the customer's (who has just proved they
    hold it); answer how many. In the caller's transaction."""
    return db.execute(
        "UPDATE orders SET customer_id = :customer_id"
        " WHERE customer_id IS NULL AND guest_email = :email",
        {"customer_id": customer_id, "email": email.strip().lower()},
    )


def open_order_number(email: str) -> str | None:
    """The number of a guest order placed with ``email`` still pending, paid or shipped."""
    return db.value(
        "SELECT number FROM orders WHERE customer_id IS NULL AND guest_email = :email"
        " AND status IN ('pending', 'paid', 'partially_shipped', 'shipped')"
        " ORDER BY created_at LIMIT 1",
        {"email": email},
    )


def erase(email: str) -> int:
    """Erase the personal data of the guest orders placed with ``email`` (its address, the
    e-mail itself, the e-mail naming the guest in their histories and in the audit log, with
    the address and browser there), as a customer's erasure
    does for their orders; the orders stay, anonymous. Answer how many. In the caller's
    transaction."""
    db.execute(
        "UPDATE order_status_history SET by_label = NULL"
        " WHERE by_kind = 'anonymous' AND by_label = :email",
        {"email": email},
    )
    db.execute(
        "UPDATE audit_log SET actor_label = NULL, ip = NULL, user_agent = NULL"
        " WHERE actor_kind = 'anonymous' AND actor_label = :email",
        {"email": email},
    )
    return db.execute(
        "UPDATE orders SET guest_email = NULL, shipping_address = NULL"
        " WHERE customer_id IS NULL AND guest_email = :email",
        {"email": email},
    )
