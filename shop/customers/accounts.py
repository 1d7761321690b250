"""Administrators' changes to a customer's account, for every caller (the API's
``/customers/{id}``, the console's customer page): rename, deactivate or reactivate, erase;
and what a customer's page shows of them (their orders, addresses and total spent).

Deactivating ends the customer's sessions at once. Erasing removes the personal data (email,
name, password, sessions, the shipping addresses on their orders, their name in order
histories; in the audit log their name, address and browser, and the email typed in failed
sign-ins with their email) and keeps the orders, whose customer is then anonymous; a
customer with an order still on its way (pending, paid or shipped) cannot be erased until
it is settled.
"""

import json

from shop import audit, db, webhooks
from shop.actor import Actor
from shop.auth import sessions
from shop.clock import now_iso
from shop.customers import addresses
from shop.customers.profile import get_customer, present
from shop.errors import Conflict, Invalid


def update(customer_id: str, data: dict, actor: Actor) -> dict:
    """Rename (``name``), deactivate or reactivate (``active``) a customer, audited as
    ``actor``'s (never the name itself: it is personal data); answer them."""
    if not data:
        raise Invalid("Send name or active: there is nothing to change.")
    with db.transaction():
        row = get_customer(customer_id)
        name = data["name"].strip() if "name" in data else row["name"]
        active = data.get("active", bool(row["active"]))
        db.execute(
            "UPDATE customers SET name = :name, active = :active, updated_at = :now WHERE id = :id",
            {"name": name, "active": active, "now": now_iso(), "id": customer_id},
        )
        ended = 0 if active else sessions.end_all(sessions.CUSTOMER, customer_id)
        changes = {k: v for k, v in data.items() if k != "name"}
        if "name" in data:
            changes["renamed"] = True  # the name itself is personal data: not in the log
        audit.record(
            "customer.updated",
            {"customer_id": customer_id, **changes, "sessions_ended": ended},
            actor=actor,
        )
    return present(get_customer(customer_id))


# What a package above this one erases with a customer, in the same transaction: each
# takes the customer's row (before erasure) and may refuse with ``Conflict``. Carts register
# theirs and the guest orders of the customer's e-mail (``shop/carts/__init__.py``).
ERASED_WITH: list = []


def erase(customer_id: str, actor: Actor) -> None:
    """Erase a customer's personal data (``Conflict`` while an order is open), and what
    ``ERASED_WITH`` erases with them, in one transaction."""
    with db.transaction():
        row = get_customer(customer_id)
        open_order = db.value(
            "SELECT number FROM orders WHERE customer_id = :id"
            " AND status IN ('pending', 'paid', 'partially_shipped', 'shipped')"
            " ORDER BY created_at LIMIT 1",
            {"id": customer_id},
        )
        if open_order:
            raise Conflict(
                f"This customer's order {open_order} is still open: deliver, cancel or"
                " refund it before erasing the customer."
            )
        moment = now_iso()
        db.execute(
            "UPDATE customers SET email = NULL, name = NULL, password_hash = NULL,"
            " active = 0, erased_at = :now, updated_at = :now, email_verified_at = NULL"
            " WHERE id = :id",
            {"now": moment, "id": customer_id},
        )
        sessions.end_all(sessions.CUSTOMER, customer_id)
        addresses.erase(customer_id)
        db.execute(
            "UPDATE orders SET shipping_address = NULL WHERE customer_id = :id",
            {"id": customer_id},
        )
        db.execute(
            "UPDATE order_status_history SET by_label = NULL"
            " WHERE by_kind = 'customer' AND by_id = :id",
            {"id": customer_id},
        )
        db.execute(
            "UPDATE audit_log SET actor_label = NULL, ip = NULL, user_agent = NULL"
            " WHERE actor_kind = 'customer' AND actor_id = :id",
            {"id": customer_id},
        )
        db.execute(
            "UPDATE audit_log SET actor_label = NULL, ip = NULL, user_agent = NULL,"
            " details = :erased WHERE event = 'login.failed' AND actor_label = :email",
            {"erased": '{"email": null}', "email": row["email"]},
        )
        db.execute("DELETE FROM idempotency_keys WHERE customer_id = :id", {"id": customer_id})
        db.execute("DELETE FROM email_verifications WHERE customer_id = :id", {"id": customer_id})
        for also in ERASED_WITH:
            also(row)
        webhooks.redact(row["email"])  # the outbox's stored events: pending and replays
        webhooks.emit(
            "customer.erased", customer_id, lambda _: {"id": customer_id, "erased_at": moment}
        )
        audit.record("customer.erased", {"customer_id": customer_id}, actor=actor)


def history(customer_id: str, limit: int = 50) -> dict:
    """A customer's orders (newest first, up to ``limit``), the distinct addresses they
    shipped to, and what they spent per currency (paid orders less refunds)."""
    orders = db.query(
        "SELECT id, number, status, total_cents, refunded_cents, currency, created_at"
        " FROM orders WHERE customer_id = :id ORDER BY created_at DESC, id DESC LIMIT :limit",
        {"id": customer_id, "limit": limit},
    )
    spent = [
        {**row, "cents": int(row["cents"])}  # PostgreSQL's SUM of BIGINT is a numeric
        for row in db.query(
            "SELECT currency, SUM(total_cents - refunded_cents) AS cents FROM orders"
            " WHERE customer_id = :id AND status NOT IN ('pending', 'cancelled')"
            " GROUP BY currency ORDER BY currency",
            {"id": customer_id},
        )
    ]
    addresses, seen = [], set()
    rows = db.query(
        "SELECT shipping_address FROM orders WHERE customer_id = :id"
        " AND shipping_address IS NOT NULL ORDER BY created_at DESC, id DESC LIMIT 200",
        {"id": customer_id},
    )
    for row in rows:
        address = json.loads(row["shipping_address"])
        key = json.dumps(address, sort_keys=True)
        if key not in seen:
            seen.add(key)
            addresses.append(address)
    return {"orders": orders, "spent": spent, "addresses": addresses}
