"""A draft order and its lines: create, read, change, delete (docs/draft-orders.md).

A draft belongs to a customer (``customer_id``) or to an e-mail without an account
(``email``). Its lines name variants (a one-variant product's line is stored as its
variant); it takes no stock. Every write prices the draft as it would then stand by the
quote's function (``checkout.quoting.quote``): a refusal is a 400 naming its field and
nothing is written. A completed draft is read-only (409). Each write is one transaction
under the draft's lock, and bumps ``updated_at``, which completing checks it priced.

``credit_cents`` (with ``credit_note``): value the customer has already given (an
exchange's returned goods); the order's total stays the pricing function's, the credit
counts as paid (``completing``).
"""

import json

from shop import audit, db, webhooks
from shop.actor import Actor
from shop.carts import store as carts
from shop.checkout import quoting
from shop.clock import now_iso
from shop.errors import Conflict, Invalid, NotFound
from shop.pricing import baskets
from shop.site import settings

MAX_LINES = 100
NOT_FOUND = "Draft order not found."
READ_ONLY = "This draft order is completed: it is read-only."
# What ``update`` may change, as ``PATCH /draft-orders/{id}`` names it.
DETAILS = (
    "items",
    "shipping_address",
    "shipping_method_id",
    "discount_code",
    "note",
    "credit_cents",
    "credit_note",
)
_COLUMNS = (
    "d.id, d.status, d.customer_id, d.email, d.shipping_address, d.shipping_method_id,"
    " d.discount_code, d.note, d.credit_cents, d.credit_note, d.sent_at, d.order_id,"
    " d.created_at, d.updated_at, c.email AS customer_email, c.name AS customer_name"
)
SELECT = f"SELECT {_COLUMNS} FROM draft_orders d LEFT JOIN customers c ON c.id = d.customer_id"


class Buyer:
    """A draft's customer as the quote asks about them (their once-per-customer codes)."""

    kind = "customer"

    def __init__(self, customer_id: str):
        self.id = customer_id


def create(data: dict, actor: Actor) -> dict:
    """A new draft from ``data``: ``customer_id`` (an existing customer) or ``email`` (an
    e-mail without an account, kept lower-case), ``items`` (``variant_id`` or
    ``product_id``, ``quantity``), ``shipping_address``, and optionally
    ``shipping_method_id``, ``discount_code``, ``note``, ``credit_cents``, ``credit_note``.
    Priced before it is written (a refusal: 400 naming the field, nothing written);
    audited as ``actor``'s. Answer the draft (``present``). The returns' exchange calls it.
    """
    customer_id, email = data.get("customer_id"), data.get("email")
    if (customer_id is None) == (email is None):
        raise Invalid("customer_id: give customer_id (an existing customer) or email, not both.")
    if customer_id is not None and not _customer_exists(customer_id):
        raise Invalid(f"customer_id: there is no customer {customer_id}.")
    values = _values({key: data.get(key) for key in DETAILS}, customer_id)
    draft_id, moment = db.new_id(), now_iso()
    with db.transaction():
        db.execute(
            "INSERT INTO draft_orders (id, status, customer_id, email, shipping_address,"
            " shipping_method_id, discount_code, note, credit_cents, credit_note, created_at,"
            " updated_at) VALUES (:id, 'open', :customer_id, :email, :address, :method, :code,"
            " :note, :credit, :credit_note, :now, :now)",
            {
                **values,
                "id": draft_id,
                "customer_id": customer_id,
                "email": email.strip().lower() if email else None,
                "now": moment,
            },
        )
        _write_lines(draft_id, values["lines"])
        audit.record("draft_order.created", {"draft_order_id": draft_id}, actor=actor)
        webhooks.emit("draft_order.created", draft_id, get)
    return get(draft_id)


def get(draft_id: str) -> dict:
    """The draft as the API shows it (``present``); 404 when there is none."""
    return present(find(draft_id))


def find(draft_id: str) -> dict:
    """The draft's row as stored (with its customer's e-mail and name); 404 when none."""
    row = db.one(SELECT + " WHERE d.id = :id", {"id": draft_id}) if len(draft_id) <= 64 else None
    if row is None:
        raise NotFound(NOT_FOUND)
    return row


def locked(draft_id: str) -> dict:
    """Inside a transaction: the draft, locked and open; 404 as ``find``, 409 once completed."""
    db.lock(f"draft_order:{draft_id}")
    row = find(draft_id)
    if row["status"] != "open":
        raise Conflict(READ_ONLY)
    return row


def update(draft_id: str, changes: dict, actor: Actor) -> dict:
    """Change the details given (``DETAILS``; None clears an optional one; ``items``
    replaces every line), priced as the draft then stands; audited as ``actor``'s."""
    with db.transaction():
        row = locked(draft_id)
        current = {
            "items": [
                {"variant_id": line["variant_id"], "quantity": line["quantity"]}
                for line in lines(draft_id)
            ],
            **{key: row[key] for key in DETAILS if key != "items"},
            "shipping_address": json.loads(row["shipping_address"]),
        }
        values = _values({**current, **changes}, row["customer_id"])
        db.execute(
            "UPDATE draft_orders SET shipping_address = :address, shipping_method_id = :method,"
            " discount_code = :code, note = :note, credit_cents = :credit,"
            " credit_note = :credit_note, updated_at = :now WHERE id = :id AND status = 'open'",
            {**values, "now": now_iso(), "id": draft_id},
        )
        if "items" in changes:
            db.execute("DELETE FROM draft_order_lines WHERE draft_id = :id", {"id": draft_id})
            _write_lines(draft_id, values["lines"])
        audit.record(
            "draft_order.updated",
            {"draft_order_id": draft_id, "fields": sorted(changes)},
            actor=actor,
        )
    return get(draft_id)


def delete(draft_id: str, actor: Actor) -> None:
    """Delete an open draft (its lines go with it); a completed one is kept (409)."""
    with db.transaction():
        locked(draft_id)
        db.execute("DELETE FROM draft_orders WHERE id = :id AND status = 'open'", {"id": draft_id})
        audit.record("draft_order.deleted", {"draft_order_id": draft_id}, actor=actor)


def erase(customer_id: str, email: str | None) -> int:
    """A customer being erased (``customers.accounts.ERASED_WITH``, in the erasure's
    transaction): delete their open drafts, theirs by account or by their e-mail, and keep
    their completed ones without e-mail, note, pay link or address (only its country and
    region, its tax, stay). An open draft holding credit refuses (``Conflict``): it is value
    the customer is owed, settled by completing or deleting it. Answer how many changed."""
    mine = "(customer_id = :id OR (:email <> '' AND customer_id IS NULL AND email = :email))"
    params = {"id": customer_id, "email": (email or "").strip().lower()}
    owed = db.value(
        f"SELECT id FROM draft_orders WHERE {mine} AND status = 'open' AND credit_cents > 0"
        " ORDER BY created_at, id LIMIT 1",
        params,
    )
    if owed:
        raise Conflict(
            f"This customer's draft order {owed} holds credit (an exchange's returned goods):"
            " complete or delete it before erasing the customer."
        )
    count = db.execute(f"DELETE FROM draft_orders WHERE {mine} AND status = 'open'", params)
    for row in db.query(f"SELECT id, shipping_address FROM draft_orders WHERE {mine}", params):
        address = json.loads(row["shipping_address"])
        kept = {name: None for name in ("name", "line1", "line2", "city", "postal_code")}
        kept |= {"country": address.get("country"), "region": address.get("region")}
        count += db.execute(
            "UPDATE draft_orders SET email = NULL, note = NULL, token_hash = NULL,"
            " shipping_address = :address WHERE id = :id",
            {"address": json.dumps(kept, sort_keys=True), "id": row["id"]},
        )
    return count


def lines(draft_id: str) -> list[dict]:
    """The draft's lines with what a reader needs of their variants (price, whether for
    sale), in order."""
    return db.query(
        "SELECT l.line, l.variant_id, l.quantity, v.product_id, v.sku, v.options,"
        " v.price_cents, v.stock, v.active * p.active AS active, p.name"
        " FROM draft_order_lines l JOIN product_variants v ON v.id = l.variant_id"
        " JOIN products p ON p.id = v.product_id WHERE l.draft_id = :id ORDER BY l.line",
        {"id": draft_id},
    )


def variant_of(text: str) -> str | None:
    """The variant a person names by its SKU or its id (the console's lines), or None."""
    row = db.one(
        "SELECT id FROM product_variants WHERE sku = :text OR id = :text ORDER BY sku = :text"
        " DESC, id LIMIT 1",
        {"text": text},
    )
    return row["id"] if row else None


def customer_by_email(email: str) -> str | None:
    """The id of the customer (not erased) with ``email``, or None."""
    return db.value(
        "SELECT id FROM customers WHERE email = :email AND erased_at IS NULL",
        {"email": email.strip().lower()},
    )


def basket(rows: list[dict]) -> list[dict]:
    """The lines as the quote and the checkout take them."""
    return [{"variant_id": r["variant_id"], "quantity": r["quantity"]} for r in rows]


def priced(row: dict, rows: list[dict]) -> dict:
    """The quote of the draft as it stands: ``{"totals", "problems"}`` (``totals`` null and
    the refusal in ``problems`` when the quote refuses it now, e.g. a variant no longer for
    sale, which completing would answer as a 400)."""
    try:
        return {"totals": quote(row, basket(rows)), "problems": []}
    except Invalid as refusal:
        return {"totals": None, "problems": [str(refusal)]}


def quote(row: dict, items: list[dict]) -> dict:
    """``POST /payments/quote``'s answer for the draft's basket: the same function."""
    buyer = Buyer(row["customer_id"]) if row["customer_id"] else None
    address = row["shipping_address"]
    if isinstance(address, str):
        address = json.loads(address)
    return quoting.quote(items, address, row["shipping_method_id"], row["discount_code"], buyer)


def present(row: dict) -> dict:
    """The draft as the API shows it (``DraftOrderSchema``)."""
    rows = lines(row["id"])
    # A completed draft's prices are its order's (they may have moved since).
    pricing = priced(row, rows) if row["status"] == "open" else {"totals": None, "problems": []}
    totals = pricing["totals"]
    due = max(totals["total_cents"] - row["credit_cents"], 0) if totals else None
    return {
        "id": row["id"],
        "status": row["status"],
        "customer_id": row["customer_id"],
        "email": row["customer_email"] if row["customer_id"] else row["email"],
        "customer_name": row["customer_name"],
        "shipping_address": {"line2": None, "region": None, **json.loads(row["shipping_address"])},
        "shipping_method_id": row["shipping_method_id"],
        "discount_code": row["discount_code"],
        "note": row["note"],
        "credit_cents": row["credit_cents"],
        "credit_note": row["credit_note"],
        "lines": [
            {
                "line": r["line"],
                "product_id": r["product_id"],
                "variant_id": r["variant_id"],
                "name": r["name"],
                "sku": r["sku"],
                "options": json.loads(r["options"] or "{}"),
                "unit_price_cents": r["price_cents"],
                "quantity": r["quantity"],
                "for_sale": bool(r["active"]),
            }
            for r in rows
        ],
        "currency": settings.current()["currency"],
        **pricing,
        "amount_due_cents": due,
        "sent_at": row["sent_at"],
        "order_id": row["order_id"],
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
    }


def _customer_exists(customer_id: str) -> bool:
    return bool(
        len(customer_id) <= 64
        and db.value(
            "SELECT 1 FROM customers WHERE id = :id AND erased_at IS NULL", {"id": customer_id}
        )
    )


def _values(data: dict, customer_id: str | None) -> dict:
    """The row's columns and lines from a draft's details, priced: ``Invalid`` naming the
    field when the quote refuses them."""
    items = data.get("items") or []
    if not items:
        raise Invalid("items: a draft order needs at least one line.")
    if len(items) > MAX_LINES:
        raise Invalid(f"items: at most {MAX_LINES} lines.")
    if data.get("shipping_address") is None:
        raise Invalid("shipping_address: required.")
    credit = data.get("credit_cents") or 0
    if credit < 0:
        raise Invalid("credit_cents: zero or more.")
    code = data.get("discount_code")
    if code and customer_id is None:  # nothing tells one e-mail's orders apart: as a guest
        carts.check_code(code, guest=True)
    wanted = baskets.with_variants(items)
    if len({item["variant_id"] for item in wanted}) < len(wanted):
        raise Invalid("items: two lines name the same variant; give it one line.")
    row = {
        "customer_id": customer_id,
        "shipping_address": data["shipping_address"],
        "shipping_method_id": data.get("shipping_method_id"),
        "discount_code": code,
    }
    quote(row, [{"variant_id": i["variant_id"], "quantity": i["quantity"]} for i in wanted])
    return {
        "address": json.dumps(data["shipping_address"], sort_keys=True),
        "method": data.get("shipping_method_id"),
        "code": code,
        "note": data.get("note"),
        "credit": credit,
        "credit_note": data.get("credit_note"),
        "lines": wanted,
    }


def _write_lines(draft_id: str, wanted: list[dict]) -> None:
    db.execute_many(
        "INSERT INTO draft_order_lines (draft_id, line, variant_id, quantity)"
        " VALUES (:draft_id, :line, :variant_id, :quantity)",
        [
            {
                "draft_id": draft_id,
                "line": n,
                "variant_id": i["variant_id"],
                "quantity": i["quantity"],
            }
            for n, i in enumerate(wanted, start=1)
        ],
    )
