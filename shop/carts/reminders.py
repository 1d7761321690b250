"""Carts left behind (the worker's jobs, ``shop/cli/jobs.py``).

``remind_due``: an open cart with an e-mail and lines, unchanged for
``SHOP_CART_REMINDER_AFTER`` seconds, gets one reminder e-mail through the mail outbox, with
a link that brings the cart back (``SHOP_CART_URL``), and the webhook event
``cart.abandoned``: only while the shop's setting ``cart_reminders`` is on and only if the
visitor agreed (``reminders`` on the cart; consent, as the EU asks). ``reminded_at`` is set
with the mail, guarded, so a cart is reminded once, whatever runs twice.

``expire``: an open cart unchanged for ``SHOP_CART_TTL_DAYS`` days is deleted with its
lines; a completed cart, whose order keeps what was bought, after the same time.
"""

from datetime import timedelta

from flask import current_app

from shop import db, mail, webhooks
from shop.carts import present
from shop.clock import iso, now, now_iso
from shop.site import settings

BATCH = 100


def cart_link(cart_id: str) -> str:
    """The link of a reminder: ``SHOP_CART_URL`` with ``{id}`` filled (a storefront's cart
    page), by default this API's ``GET /carts/{id}``; never from a request's Host."""
    config = current_app.config
    base = config["PUBLIC_URL"] or f"http://127.0.0.1:{config['PORT']}"
    template = config.get("CART_URL") or base + "/carts/{id}"
    return template.replace("{id}", cart_id)


def remind_due() -> int:
    """Queue the reminders due now; answer how many."""
    shop = settings.current()
    if not shop["cart_reminders"]:
        return 0
    before = iso(now() - timedelta(seconds=current_app.config["CART_REMINDER_AFTER"]))
    due = db.query(
        "SELECT id FROM carts c WHERE status = 'open' AND reminders = 1"
        " AND reminded_at IS NULL AND email IS NOT NULL AND updated_at <= :before"
        " AND EXISTS (SELECT 1 FROM cart_lines l WHERE l.cart_id = c.id)"
        " ORDER BY updated_at LIMIT :limit",
        {"before": before, "limit": BATCH},
    )
    sent = 0
    for row in due:
        with db.transaction():
            marked = db.execute(
                "UPDATE carts SET reminded_at = :now WHERE id = :id AND reminded_at IS NULL"
                " AND status = 'open' AND reminders = 1 AND updated_at <= :before",
                {"now": now_iso(), "id": row["id"], "before": before},
            )
            if not marked:  # changed, completed or reminded meanwhile
                continue
            cart = present.present(db.one("SELECT * FROM carts WHERE id = :id", row))
            mail.queue_rendered(
                cart["email"],
                f"{shop['shop_name']}: your cart is waiting",
                "cart_reminder",
                cart=cart,
                link=cart_link(row["id"]),
                shop_name=shop["shop_name"],
            )
            # The event carries no id: a guest's cart id is their key to it.
            webhooks.emit("cart.abandoned", None, lambda _, cart=cart: {**cart, "id": None})
            sent += 1
    return sent


def expire() -> int:
    """Delete the carts unchanged for ``SHOP_CART_TTL_DAYS``; answer how many."""
    before = iso(now() - timedelta(days=current_app.config["CART_TTL_DAYS"]))
    with db.transaction():
        return db.execute("DELETE FROM carts WHERE updated_at <= :before", {"before": before})
