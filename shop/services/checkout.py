"""Checkout: turn a customer's basket into an order, its payment and its stock movements.

One transaction holds the stock decrements, the order number, the order, its items, its
payment, its first history entry, the idempotency record and the audit entry: either all of
them happen or none. Overselling is impossible on both engines because each decrement is a
guarded ``UPDATE ... WHERE stock >= :quantity`` on the variant (a row lock on PostgreSQL, the
one writer on SQLite); a decrement that matches no row rolls the whole order back. Variants
are taken in id order, then their products' list columns refreshed in product id order, so
that two baskets holding the same variants never deadlock.

An ``Idempotency-Key`` replays: the same key with the same body within 24 hours answers the
first order and writes nothing; with another body it is a 409. Concurrent requests with one
key are serialised by a lock on (customer, key) and the primary key of ``idempotency_keys``.
"""

import hashlib
import json
from datetime import timedelta

from shop import audit, db, mail, settings, totals, webhooks
from shop.clock import iso, now
from shop.errors import abort
from shop.services import catalogue, orders, payments, variants
from shop.services.orders import record_history

IDEMPOTENCY_WINDOW = timedelta(hours=24)

_DECREMENT = """
    UPDATE product_variants SET stock = stock - :quantity
    WHERE id = :id AND stock >= :quantity AND active = 1
      AND product_id IN (SELECT id FROM products WHERE active = 1)
    RETURNING product_id, sku, options, price_cents"""

_NEXT_NUMBER = "UPDATE counters SET value = value + 1 WHERE name = 'order_number' RETURNING value"


def request_hash(body) -> str:
    """SHA-256 of a JSON body in canonical form (sorted keys, no spaces)."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def place_order(
    customer,
    items: list[dict],
    shipping_address: dict,
    payment_method: str,
    idempotency_key: str | None = None,
    body_hash: str | None = None,
) -> tuple[str, bool, dict | None]:
    """Place an order for ``customer`` (a Caller); answer its id, whether it is new and the
    order as the API shows it when the ``order.placed`` event rendered it (else None).

    ``items`` are ``{"variant_id", "quantity"}``, or ``{"product_id", "quantity"}`` for a
    product with one variant, each variant once. An unknown or inactive variant is a 400,
    too little stock a 409, both naming it.
    """
    cutoff = iso(now() - IDEMPOTENCY_WINDOW)
    if idempotency_key is not None:
        replayed = _replay(customer.id, idempotency_key, body_hash, cutoff)
        if replayed:
            return replayed, False, None
    provider = payments.get(payment_method)
    shop = settings.current()
    with db.transaction():
        if idempotency_key is not None:
            db.lock(f"checkout:{customer.id}:{idempotency_key}")
            replayed = _replay(customer.id, idempotency_key, body_hash, cutoff)
            if replayed:  # a concurrent request with the key won the race
                return replayed, False, None
        lines = _take_stock(items)
        order_id, moment = db.new_id(), iso(now())
        number = f"{shop['order_number_prefix']}{_next_number():06d}"
        totals.bump(totals.ORDERS)
        subtotal = sum(line["line_total_cents"] for line in lines)
        total = subtotal
        started = provider.start(
            {"id": order_id, "number": number, "total_cents": total, "currency": shop["currency"]}
        )
        status = "paid" if started.status == "paid" else "pending"
        db.execute(
            "INSERT INTO orders (id, number, customer_id, status, subtotal_cents, total_cents,"
            " currency, shipping_address, created_at, updated_at) VALUES (:id, :number,"
            " :customer_id, :status, :subtotal, :total, :currency, :address, :now, :now)",
            {
                "id": order_id,
                "number": number,
                "customer_id": customer.id,
                "status": status,
                "subtotal": subtotal,
                "total": total,
                "currency": shop["currency"],
                "address": json.dumps(shipping_address, sort_keys=True),
                "now": moment,
            },
        )
        db.execute_many(
            "INSERT INTO order_items (order_id, line, product_id, variant_id, name, sku, options,"
            " unit_price_cents, quantity, line_total_cents) VALUES (:order_id, :line,"
            " :product_id, :variant_id, :name, :sku, :options_text, :unit_price_cents,"
            " :quantity, :line_total_cents)",
            [
                {**line, "order_id": order_id, "options_text": json.dumps(line["options"])}
                for line in lines
            ],
        )
        db.execute(
            "INSERT INTO payments (id, order_id, provider, amount_cents, status, reference,"
            " created_at, updated_at) VALUES (:id, :order_id, :provider, :amount, :status,"
            " :reference, :now, :now)",
            {
                "id": db.new_id(),
                "order_id": order_id,
                "provider": provider.name,
                "amount": total,
                "status": started.status,
                "reference": started.reference,
                "now": moment,
            },
        )
        record_history(order_id, status, None, moment)
        confirmation = {
            "number": number,
            "status": status,
            "currency": shop["currency"],
            "total_cents": total,
            "created_at": moment,
            "items": lines,
            "customer": {"email": customer.email, "name": customer.name},
        }
        mail.queue_order_mail(confirmation, placed=True, shop_name=shop["shop_name"])
        if idempotency_key is not None:
            _remember(customer.id, idempotency_key, body_hash, order_id, moment, cutoff)
        audit.record(
            "order.placed",
            {
                "order_id": order_id,
                "number": number,
                "total_cents": total,
                "currency": shop["currency"],
                "payment_method": provider.name,
            },
        )
        # The last read: all is written.
        rendered = webhooks.emit("order.placed", order_id, orders.load)
    return order_id, True, rendered


def _replay(customer_id: str, key: str, body_hash: str, cutoff: str) -> str | None:
    """The order a live key already placed (same body), a 409 (other body), or None."""
    row = db.one(
        "SELECT request_hash, order_id FROM idempotency_keys"
        " WHERE customer_id = :customer_id AND key = :key AND created_at > :cutoff",
        {"customer_id": customer_id, "key": key, "cutoff": cutoff},
    )
    if row is None:
        return None
    if row["request_hash"] != body_hash:
        abort(
            409,
            "This Idempotency-Key was already used with a different request body;"
            " use a new key for a new order.",
        )
    return row["order_id"]


def _remember(customer_id, key, body_hash, order_id, moment, cutoff) -> None:
    """Store the key for replays, dropping this customer's keys older than the window."""
    db.execute(
        "DELETE FROM idempotency_keys WHERE customer_id = :customer_id AND created_at <= :cutoff",
        {"customer_id": customer_id, "cutoff": cutoff},
    )
    db.execute(
        "INSERT INTO idempotency_keys (customer_id, key, request_hash, order_id, created_at)"
        " VALUES (:customer_id, :key, :hash, :order_id, :now)",
        {
            "customer_id": customer_id,
            "key": key,
            "hash": body_hash,
            "order_id": order_id,
            "now": moment,
        },
    )


def _variant_of(item: dict) -> str:
    """The line's variant: the one named, or the lone variant of the product named."""
    if "variant_id" in item:
        return item["variant_id"]
    product_id = item["product_id"]
    ids = [
        row["id"]
        for row in db.query(
            "SELECT id FROM product_variants WHERE product_id = :id ORDER BY position, id",
            {"id": product_id},
        )
    ]
    if not ids:
        abort(400, f"items: product {product_id} does not exist or is not for sale.")
    if len(ids) > 1:
        abort(
            400,
            f"items: product {product_id} has {len(ids)} variants ({', '.join(ids)});"
            " name one with variant_id.",
        )
    return ids[0]


def _take_stock(items: list[dict]) -> list[dict]:
    """Decrement every variant's stock, or stop the transaction naming the first that fails.

    Answers the order lines, in the basket's order, priced from the database.
    """
    wanted = [{**item, "variant_id": _variant_of(item)} for item in items]
    if len({item["variant_id"] for item in wanted}) < len(wanted):
        abort(400, "items: two lines name the same variant; give it one line.")
    taken = {}
    for item in sorted(wanted, key=lambda item: item["variant_id"]):
        row = db.one(_DECREMENT, {"id": item["variant_id"], "quantity": item["quantity"]})
        if row is None or item.get("product_id", row["product_id"]) != row["product_id"]:
            _refuse(item)
        taken[item["variant_id"]] = row
    names = {}
    for product_id in sorted({row["product_id"] for row in taken.values()}):
        names[product_id] = db.value("SELECT name FROM products WHERE id = :id", {"id": product_id})
        if variants.refresh(product_id) == 0:
            webhooks.emit("product.out_of_stock", product_id, catalogue.load_product)
    lines = []
    for line, item in enumerate(wanted, start=1):
        variant = taken[item["variant_id"]]
        lines.append(
            {
                "line": line,
                "product_id": variant["product_id"],
                "variant_id": item["variant_id"],
                "name": names[variant["product_id"]],
                "sku": variant["sku"],
                "options": json.loads(variant["options"]),
                "unit_price_cents": variant["price_cents"],
                "quantity": item["quantity"],
                "line_total_cents": variant["price_cents"] * item["quantity"],
            }
        )
    return lines


def _refuse(item: dict) -> None:
    """Say why a variant could not be taken: 400 unknown or inactive, 409 too little stock."""
    variant_id = item["variant_id"]
    row = db.one(
        "SELECT p.name, v.stock, v.active * p.active AS active, v.product_id"
        " FROM product_variants v JOIN products p ON p.id = v.product_id WHERE v.id = :id",
        {"id": variant_id},
    )
    wrong_product = row and item.get("product_id", row["product_id"]) != row["product_id"]
    if row is None or not row["active"] or wrong_product:
        named = f"product {item['product_id']}" if "product_id" in item else f"variant {variant_id}"
        abort(400, f"items: {named} does not exist or is not for sale.")
    abort(
        409,
        f"Not enough stock for variant {variant_id} of product {row['product_id']}"
        f" ({row['name']}): {item['quantity']} requested, {row['stock']} available.",
    )


def _next_number() -> int:
    """The next order number, from ``counters`` in the caller's transaction."""
    value = db.value(_NEXT_NUMBER)
    if value is None:  # the shop's first order
        db.execute(
            "INSERT INTO counters (name, value) VALUES ('order_number', 0)"
            " ON CONFLICT (name) DO NOTHING"
        )
        value = db.value(_NEXT_NUMBER)
    return value
