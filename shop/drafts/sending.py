"""The pay link of a draft order (docs/draft-orders.md, "The pay link").

``send`` mails the draft's customer a link to the storefront's page of the draft,
``/store/drafts/{token}``, where they see it priced and pay it by card (which completes the
draft). The token is 32 random bytes, shown only in that mail: the draft keeps its SHA-256
(``token_hash``), looked up by it. Each send makes a new token: the links mailed before stop
working. A completed draft's link keeps showing its order (and its card step while unpaid).
"""

import secrets

from flask import current_app

from shop import audit, db, mail, money
from shop.actor import Actor
from shop.clock import now_iso
from shop.drafts import store
from shop.errors import Conflict
from shop.site import settings

_TOKEN_MAX = 100


def link(token: str) -> str:
    """The storefront's page of the draft with ``token``; never built from a request's Host."""
    config = current_app.config
    base = config["PUBLIC_URL"] or f"http://127.0.0.1:{config['PORT']}"
    return f"{base}{config['STOREFRONT_PREFIX']}/drafts/{token}"


def send(draft_id: str, actor: Actor) -> dict:
    """Mail the draft's customer a new pay link (the earlier ones stop working); answer the
    draft. A completed draft, one that cannot be priced now, one whose customer has no
    e-mail, or a shop without its storefront (the link is a storefront page): 409. The
    draft's content is unchanged (``updated_at`` too: a completion in flight goes on)."""
    if not current_app.config.get("STOREFRONT"):
        raise Conflict("The pay link is a storefront page, and this shop's storefront is off.")
    token = secrets.token_urlsafe(32)
    with db.transaction():
        row = store.locked(draft_id)
        draft = store.present(row)
        if not draft["email"]:
            raise Conflict("The draft order's customer has no e-mail address (erased).")
        if draft["totals"] is None:
            raise Conflict("The draft order cannot be priced now: " + " ".join(draft["problems"]))
        moment = now_iso()
        db.execute(
            "UPDATE draft_orders SET token_hash = :hash, sent_at = :now"
            " WHERE id = :id AND status = 'open'",
            {"hash": db.sha256(token), "now": moment, "id": draft_id},
        )
        shop = settings.current()
        mail.queue_rendered(
            draft["email"],
            f"Your order at {shop['shop_name']}: ready to pay",
            "draft_order",
            shop_name=shop["shop_name"],
            draft=draft,
            total=money.display(draft["totals"]["total_cents"], draft["currency"]),
            credit=money.display(draft["credit_cents"], draft["currency"]),
            due=money.display(draft["amount_due_cents"], draft["currency"]),
            link=link(token),
        )
        audit.record("draft_order.sent", {"draft_order_id": draft_id}, actor=actor)
    return store.get(draft_id)


def by_token(token: str) -> dict | None:
    """The draft a pay link's token opens (its row), or None."""
    if not token or len(token) > _TOKEN_MAX:
        return None
    row = db.one(store.SELECT + " WHERE d.token_hash = :hash", {"hash": db.sha256(token)})
    return row
