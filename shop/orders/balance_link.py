"""The pay link of a balance an edit left due on a card order (docs/orders.md, "Collecting a
balance").

The link is the storefront's page ``/store/balance/{token}``: the token is 32 random bytes,
shown only in the mail (and to the staff member who asks for it); the order keeps its SHA-256
(``orders.balance_token_hash``), looked up by it. Each link made replaces the one before.
An edit that leaves a balance on a card order mails one with the customer's edit mail
(``checkout/editing.py``); ``POST /orders/{id}/balance/link`` and the console's order page
make and mail a new one (``send``).
"""

import secrets

from flask import current_app

from shop import audit, db, mail
from shop.actor import Actor
from shop.errors import Conflict, NotFound
from shop.orders import lifecycle as orders
from shop.orders import payment_sides

_TOKEN_MAX = 100
# Order statuses whose balance may be paid (``payments/stripe/balance.py`` takes the same).
OPEN = ("paid", "partially_shipped", "shipped", "delivered", "partially_refunded")
_ORDER = (
    "SELECT o.id, o.number, o.status, o.currency, o.balance_due_cents, p.provider,"
    " COALESCE(c.email, o.guest_email) AS email FROM orders o"
    " JOIN payments p ON p.order_id = o.id LEFT JOIN customers c ON c.id = o.customer_id"
)


def url(token: str) -> str:
    """The storefront's page of the link with ``token``; never built from a request's Host."""
    config = current_app.config
    base = config["PUBLIC_URL"] or f"http://127.0.0.1:{config['PORT']}"
    return f"{base}{config['STOREFRONT_PREFIX']}/balance/{token}"


def collected_online(row: dict) -> bool:
    """Whether the order's balance is paid by the customer online (a card order), with a
    balance due and a storefront to pay it on."""
    return (
        row["balance_due_cents"] > 0
        and row["status"] in OPEN
        and not payment_sides.side(row["provider"], every=True).paid_by_hand
        and bool(current_app.config.get("STOREFRONT"))
    )


def issue(order_id: str) -> str:
    """A new link's token for the order (the one before stops working), in the caller's
    transaction; answer the link."""
    token = secrets.token_urlsafe(32)
    db.execute(
        "UPDATE orders SET balance_token_hash = :hash WHERE id = :id",
        {"hash": db.sha256(token), "id": order_id},
    )
    return url(token)


def send(order_id: str, actor: Actor) -> dict:
    """Make a new pay link of the order's balance and mail it to the customer; answer
    ``{"url", "balance_due_cents", "currency", "mailed"}`` (``mailed`` False when the customer's
    e-mail was erased: give them the link another way). 409 when nothing is due, for an
    order whose balance is recorded by hand, or a shop without its storefront."""
    with db.transaction():
        orders.lock(order_id)
        row = db.one(_ORDER + " WHERE o.id = :id", {"id": order_id})
        if row is None:
            raise NotFound("Order not found.")
        if row["balance_due_cents"] <= 0 or row["status"] not in OPEN:
            raise Conflict(
                f"Order {row['number']} has no balance due.",
                withheld=(orders.READ, "The order has no balance due."),
            )
        if not collected_online(row):
            raise Conflict(
                f"Order {row['number']}'s balance is not paid online: record it received"
                " (POST /orders/{id}/balance), or turn the storefront on.",
                withheld=(orders.READ, "The order's balance has no pay link."),
            )
        link = issue(order_id)
        mailed = row["email"] is not None
        if mailed:
            mail.queue_edit_mail(
                orders.load(order_id),
                row["email"],
                balance_due_cents=row["balance_due_cents"],
                link=link,
            )
        audit.record(
            "order.balance_link_sent",
            {"order_id": order_id, "number": row["number"], "mailed": mailed},
            actor=actor,
        )
    shown = {"balance_due_cents": row["balance_due_cents"], "currency": row["currency"]}
    return shown | {"url": link, "mailed": mailed}


def mail_edit(order_id: str, refund_cents: int, balance_due_cents: int) -> None:
    """The customer's mail of an edit (in the edit's transaction): the new totals, the
    refund, or the balance due with its pay link (a card order: a new link)."""
    row = db.one(_ORDER + " WHERE o.id = :id", {"id": order_id})
    if row["email"] is None:
        return
    link = issue(order_id) if collected_online(row) else None
    mail.queue_edit_mail(
        orders.load(order_id),
        row["email"],
        edited=True,
        refund_cents=refund_cents,
        balance_due_cents=balance_due_cents,
        link=link,
    )


def by_token(token: str) -> str | None:
    """The id of the order a pay link's token opens, or None."""
    if not token or len(token) > _TOKEN_MAX:
        return None
    row = db.one(
        "SELECT id, balance_token_hash FROM orders WHERE balance_token_hash = :hash",
        {"hash": db.sha256(token)},
    )
    return row["id"] if row and db.hash_matches(row["balance_token_hash"], token) else None
