"""Placing an order: ``place_order(PlaceOrder, actor)`` turns a basket into an order, its
payment, its stock movements and its code's use, in one transaction, then runs the payment
provider's after-commit step.

The transaction takes the stock (guarded decrements, in (product, variant) order so two
checkouts never deadlock), prices the order from the rows it took (``pricing``, the quote's
function), writes the order, its items, payment, first history entry, mail, audit entry and
event, and claims the discount code last. An ``Idempotency-Key`` replays (``idempotency``).
Why it is built so (locks, order numbers, statements) and its walk: docs/checkout.md.
"""

import json
import secrets
from dataclasses import dataclass, field
from typing import Protocol

from shop import audit, db, idempotency, mail, webhooks
from shop.actor import Actor
from shop.catalogue import present as catalogue
from shop.catalogue import variants
from shop.clock import iso, now
from shop.customers import addresses
from shop.discounts import codes as discounts
from shop.errors import Conflict, Invalid
from shop.orders import guests
from shop.orders import lifecycle as orders
from shop.payments import providers as payments
from shop.pricing import baskets


@dataclass(frozen=True)
class PlaceOrder:
    """A checkout as the customer asked for it (``POST /payments/checkout``'s body, parsed).

    ``items`` are ``{"variant_id", "quantity"}``, or ``{"product_id", "quantity"}`` for a
    product with one variant, each once. The address is ``shipping_address``, or one of
    the customer's saved ones by ``shipping_address_id``. ``body`` is the request's body as
    sent: with an ``idempotency_key`` its hash tells a replay from another order.
    """

    items: list[dict]
    shipping_address: dict | None
    payment_method: str
    shipping_address_id: str | None = None
    shipping_method_id: str | None = None
    discount_code: str | None = None
    idempotency_key: str | None = None
    body: dict | None = None
    # Where the basket comes from when it is kept (a cart: ``shop/carts``), told inside the
    # transaction: it may answer the order it already made (a second complete), and hears
    # of the new one.
    source: "Source | None" = None
    # Value the buyer has already given (a draft order's credit, shop/drafts): it counts as
    # paid, so the payment asks for the total less it; a credit covering the total makes the
    # order paid at once (a manual payment of 0). ``credit_note`` says what it is.
    credit_cents: int = 0
    credit_note: str | None = None


class Source(Protocol):
    """A kept basket the order is placed from (``PlaceOrder.source``)."""

    def claim(self) -> str | None:
        """First in the checkout's transaction: lock the basket; answer the order it already
        made (placing then answers that order, writing nothing), or None."""

    def placed(self, order_id: str, token: str | None) -> None:
        """Last in the checkout's transaction: the order placed from it, and a guest
        order's token (shown once; only its hash is kept)."""


@dataclass(frozen=True)
class Guest:
    """A buyer without an account (``place_order``'s actor for a guest checkout): the order
    belongs to ``email`` and is read with its token (``shop/orders/guests.py``)."""

    email: str
    actor: Actor = field(default_factory=Actor)
    id: None = None
    name: None = None


# The parts of the priced breakdown an order keeps in ``orders.pricing`` (JSON); the amounts
# have their own columns.
PRICING_KEYS = (
    "tax_lines",
    "shipping_tax_cents",
    "prices_include_tax",
    "shipping_method",
    "discount_code",
    "applied",
)

# Take a variant's stock, guarded. Its product's row is locked first (PostgreSQL: the
# sub-select runs before the variant's row is reached), then the variant's, and the trigger
# product_variants_stock (migration 0020) brings the product's stock up to date in the same
# statement: lines taken in (product, variant) order lock rows in one order in every checkout,
# so two never deadlock. It answers what pricing needs, the product's low-stock threshold and
# the variant's stock after it. Not its product's: on PostgreSQL a sub-select here reads the
# other variants as of the statement's start, before it waited for the product's row, so a
# checkout that waited for another's would miss that one's decrement (``_take_stock`` reads
# the product's stock, kept by the trigger, when a variant runs out).
_TAKE = """
    UPDATE product_variants SET stock = stock - :quantity
    WHERE {which} AND stock >= :quantity AND active = 1
      AND product_id = (SELECT id FROM products WHERE id = :product_id AND active = 1{lock})
    RETURNING id, product_id, sku, options, price_cents, weight_grams,
        (SELECT name FROM products p WHERE p.id = product_variants.product_id) AS name,
        (SELECT tax_class FROM products p WHERE p.id = product_variants.product_id) AS tax_class,
        (SELECT category_id FROM products p WHERE p.id = product_variants.product_id)
            AS category_id,
        (SELECT low_stock_threshold FROM products p WHERE p.id = product_variants.product_id)
            AS low_stock_threshold,
        stock"""
# (engine, the variant named or the product's lone one) -> the statement. A line naming a
# product takes its lone variant in the same statement (the quote's rule,
# ``baskets.with_variants``: exactly one variant, active or not).
_DECREMENT = {
    (engine, lone): _TAKE.format(
        which="(SELECT COUNT(*) FROM product_variants c WHERE c.product_id = :product_id) = 1"
        if lone
        else "id = :variant_id",
        lock=" FOR UPDATE" if engine == "postgresql" else "",  # SQLite: one writer anyway
    )
    for engine in ("postgresql", "sqlite")
    for lone in (True, False)
}


def place_order(command: PlaceOrder, actor) -> tuple[dict, bool]:
    """Place the order ``command`` asks for, for ``actor`` (a customer's ``Caller``, or a
    ``Guest``); answer the order as the API shows it and whether it is new (False: a replay
    of its key, or the order its ``source`` already made).

    Once the order has committed (or is replayed), its provider's ``after_commit`` runs
    (a card payment is started there, and may answer 503). An unknown or inactive variant is
    a 400, too little stock a 409, both naming it; a code that cannot be used a 400.
    """
    provider = payments.get(command.payment_method)
    since = idempotency.cutoff() if command.idempotency_key is not None else ""
    replayed, placed = _replay(command, actor.id, since), None
    if replayed is None:
        replayed, placed = _place(command, actor, provider, since)
    order = placed or orders.load(replayed, actor.id)  # a replay: the order as it stands now
    if order["payment"]["provider"] != provider.name:  # a credit paid it (``PlaceOrder``)
        provider = payments.get(order["payment"]["provider"], every=True) or provider
    return provider.after_commit(order, actor.actor), placed is not None


def _replay(command: PlaceOrder, customer_id: str, since: str) -> str | None:
    """The order a live key of the command already placed (same body), a 409, or None."""
    if command.idempotency_key is None:
        return None
    return idempotency.replay(customer_id, command.idempotency_key, command.body, since)


def _place(command: PlaceOrder, customer, provider, since: str) -> tuple[str | None, dict | None]:
    """The checkout's transaction: ``(None, the new order)``, or ``(its id, None)`` when a
    concurrent request with the key placed it first."""
    key, address = command.idempotency_key, command.shipping_address
    if command.shipping_address_id is not None:
        address = addresses.address_for_checkout(customer.id, command.shipping_address_id)
    # The code's terms, read before the transaction (outside SQLite's writer lock): whether
    # it may be used is asked once, when its use is taken (``discounts.claim``).
    discount = discounts.terms(command.discount_code) if command.discount_code else None
    with db.transaction():
        if key is not None:
            db.lock(f"checkout:{customer.id}:{key}")
            replayed = _replay(command, customer.id, since)
            if replayed:  # a concurrent request with the key won the race
                return replayed, None
        if command.source is not None:
            made = command.source.claim()
            if made:  # completed before, or by a concurrent request
                return made, None
        taken = _take_stock(command.items)
        priced, shop, seq = baskets.price_order(
            taken, address, command.shipping_method_id, discount
        )
        lines = [{**line, "line": n} for n, line in enumerate(priced["lines"], start=1)]
        order_id, moment = db.new_id(), iso(now())
        number = f"{shop['order_number_prefix']}{seq:06d}"
        subtotal, total = priced["subtotal_cents"], priced["total_cents"]
        collect = max(total - command.credit_cents, 0)
        if command.credit_cents and not collect:  # the credit pays it all
            provider = payments.get("manual", every=True)
            started = payments.PaymentStart(status="paid", reference=number)
        else:
            started = provider.start(
                {
                    "id": order_id,
                    "number": number,
                    "total_cents": collect,
                    "currency": shop["currency"],
                }
            )
        status = "paid" if started.status == "paid" else "pending"
        # A guest's order is read with a token shown once: only its hash is kept.
        token = secrets.token_urlsafe(32) if customer.id is None else None
        # Encoded once: the row and the answer (``orders.open_order`` reads them back) alike.
        address_json = json.dumps(address, sort_keys=True)
        pricing_json = json.dumps({k: priced[k] for k in PRICING_KEYS}, sort_keys=True)
        # The writes from here to the commit are sent (``db.send``): on PostgreSQL they and
        # the COMMIT are one round trip (docs/checkout.md); the one read among them, the
        # webhooks ``emit`` needs, is made first.
        webhooks.read_subscriptions()
        order = {
            "credit": total - collect,  # what the credit paid: never refunded as money
            "guest_email": customer.email if customer.id is None else None,
            "token_hash": token and db.sha256(token),
            "order_id": order_id,
            "number": number,
            "customer_id": customer.id,
            "status": status,
            "subtotal": subtotal,
            "total": total,
            "currency": shop["currency"],
            "address": address_json,
            "now": moment,
            "discount": priced["discount_cents"],
            "shipping": priced["shipping_cents"],
            "tax": priced["tax_cents"],
            "pricing": pricing_json,
            "discount_id": discount["id"] if discount else None,
            "seq": seq,
        }
        payment = {
            "provider": provider.name,
            "amount_cents": collect,
            "status": started.status,
            "reference": started.reference,
        }
        credit = (
            command.credit_cents
            and f"Credit of {command.credit_cents}: {command.credit_note or ''}"
        )
        paid = {
            **payment,
            "payment_id": db.new_id(),
            "payment_status": started.status,
            "order_id": order_id,
            "now": moment,
            "note": credit or None,
        }
        items = [
            {**line, "order_id": order_id, "options_text": json.dumps(line["options"])}
            for line in lines
        ]
        _write_order(order, paid, items)
        # Its first history entry, and the order as orders.load would read it back: the
        # answer and the event's payload.
        placed = orders.open_order(
            {
                "id": order_id,
                "number": number,
                "customer_id": customer.id,
                "customer_email": customer.email,
                "customer_name": customer.name,
                "status": status,
                "subtotal_cents": subtotal,
                "total_cents": total,
                "currency": shop["currency"],
                "shipping_address": address_json,
                "created_at": moment,
                "updated_at": moment,
                "discount_cents": priced["discount_cents"],
                "shipping_cents": priced["shipping_cents"],
                "tax_cents": priced["tax_cents"],
                "pricing": pricing_json,
            },
            payment,
            lines,
            customer.actor,
        )
        link = token and guests.status_link(order_id, token)
        mail.queue_order_mail(placed, placed=True, shop_name=shop["shop_name"], link=link)
        if key is not None:
            idempotency.remember(customer.id, key, command.body, order_id, moment, since)
        audit.record(
            "order.placed",
            {
                "order_id": order_id,
                "number": number,
                "total_cents": total,
                "currency": shop["currency"],
                "payment_method": provider.name,
            },
            actor=customer.actor,
        )
        webhooks.emit("order.placed", order_id, lambda _: placed)
        if command.source is not None:
            command.source.placed(order_id, token)
        if discount:  # last: every checkout locks products, then the code's row until commit
            discounts.claim(command.discount_code, discount, customer.id, order_id)
    return None, placed


# The order, its payment and its items: one statement on PostgreSQL, three on SQLite
# (``_write_order``). Their parameters' names are distinct but for the order's id and moment.
_ORDER = (
    "INSERT INTO orders (id, number, customer_id, status, subtotal_cents, total_cents,"
    " currency, shipping_address, created_at, updated_at, discount_cents, shipping_cents,"
    " tax_cents, pricing, discount_id, seq, guest_email, token_hash, credit_cents) VALUES"
    " (:order_id, :number, :customer_id, :status, :subtotal, :total, :currency, :address,"
    " :now, :now, :discount, :shipping, :tax, :pricing, :discount_id, :seq, :guest_email,"
    " :token_hash, :credit)"
)
_PAYMENT = (
    "INSERT INTO payments (id, order_id, provider, amount_cents, status, reference,"
    " created_at, updated_at, note) VALUES (:payment_id, :order_id, :provider, :amount_cents,"
    " :payment_status, :reference, :now, :now, :note)"
)
_ITEM = (
    "INSERT INTO order_items (order_id, line, product_id, variant_id, name, sku, options,"
    " unit_price_cents, quantity, line_total_cents, discount_cents, tax_cents, tax_rate,"
    " total_cents) VALUES (:order_id, :line, :product_id, :variant_id, :name, :sku,"
    " :options_text, :unit_price_cents, :quantity, :line_total_cents, :discount_cents,"
    " :tax_cents, :tax_rate, :total_cents)"
)
# PostgreSQL: the order and its payment by one statement (data-modifying WITH: the foreign
# keys are checked at its end), with the order's item when it has one.
_ORDER_AND_PAYMENT = f"WITH placed AS ({_ORDER}) {_PAYMENT}"
_ORDER_PAYMENT_AND_ITEM = f"WITH placed AS ({_ORDER}), paid AS ({_PAYMENT}) {_ITEM}"


def _write_order(order: dict, payment: dict, items: list[dict]) -> None:
    """Send the order's row, its payment's and its items' (``db.send``): on PostgreSQL in one
    statement for a one-line order, two otherwise (issue 42: each statement sent costs the
    worker ~50-80 us of psycopg); on SQLite, which runs them in process, one each."""
    if db.get_db().engine != "postgresql":
        db.send(_ORDER, order)
        db.send_many(_ITEM, items)
        db.send(_PAYMENT, payment)
    elif len(items) == 1:
        db.send(_ORDER_PAYMENT_AND_ITEM, {**items[0], **payment, **order})
    else:
        db.send(_ORDER_AND_PAYMENT, {**payment, **order})
        db.send_many(_ITEM, items)


def _take_stock(items: list[dict]) -> list[dict]:
    """Decrement every variant's stock, or stop the transaction naming the first that fails.

    Answers the pricing lines (``pricing.price``'s input), in the basket's order, from the
    database. A product left without stock emits ``product.out_of_stock``; one with a
    low-stock threshold gets its variants' marks (``variants.mark_low_stock``).
    """
    engine = db.get_db().engine
    if len(items) == 1 and "variant_id" not in items[0]:  # one statement finds and takes it
        item = {"product_id": items[0]["product_id"], "quantity": items[0]["quantity"]}
        row = db.one(_DECREMENT[engine, True], item)
        if row is None:
            _refuse(baskets.with_variants([item])[0])  # 400 when not exactly one variant
        wanted = [{**item, "variant_id": row["id"]}]
        taken = {row["id"]: row}
    else:
        if any("variant_id" not in item for item in items):  # a product's lone variant
            items = baskets.with_variants(items)
        wanted = _with_products(items)
        if len({item["variant_id"] for item in wanted}) < len(wanted):
            raise Invalid("items: two lines name the same variant; give it one line.")
        taken = {}
        for item in sorted(wanted, key=lambda item: (item["of_product"], item["variant_id"])):
            params = {k: item[k] for k in ("variant_id", "quantity")}
            row = db.one(_DECREMENT[engine, False], {**params, "product_id": item["of_product"]})
            if row is None:
                _refuse(item)
            taken[item["variant_id"]] = row
    # A product ran out only if the variant of it taken last did (then its stock is read).
    products = {row["product_id"]: row for row in taken.values()}
    for product_id in sorted(products):
        row = products[product_id]
        if row["low_stock_threshold"] is not None:
            variants.mark_low_stock(product_id, row["low_stock_threshold"])
        if row["stock"] == 0 and _stock_of(product_id) == 0:  # read only when a variant ran out
            webhooks.emit("product.out_of_stock", product_id, catalogue.load_product)
    lines = []
    for item in wanted:
        variant = product = taken[item["variant_id"]]  # the product's fields come with it
        lines.append(
            {
                "product_id": variant["product_id"],
                "variant_id": item["variant_id"],
                "name": product["name"],
                "sku": variant["sku"],
                "options": json.loads(variant["options"]),
                "unit_price_cents": variant["price_cents"],
                "quantity": item["quantity"],
                "tax_class": product["tax_class"],
                "category_id": product["category_id"],
                "weight_grams": variant["weight_grams"] or 0,
            }
        )
    return lines


def _stock_of(product_id: str) -> int:
    """The product's stock now, as the trigger ``product_variants_stock`` keeps it: read in a
    statement of its own, so on PostgreSQL it sees what other checkouts committed while this
    one waited for the product's row."""
    return db.value("SELECT stock FROM products WHERE id = :id", {"id": product_id})


def _with_products(wanted: list[dict]) -> list[dict]:
    """The lines, each with its product's id in ``of_product`` (the lock order needs it):
    lines naming only a variant read theirs, one statement for all (unless they come with
    it: a cart's lines); an unknown variant is refused."""
    named = sorted(
        {
            item["variant_id"]
            for item in wanted
            if "product_id" not in item and "of_product" not in item
        }
    )
    found = {}
    if named:
        marks, params = db.in_list("v", named)
        rows = db.query(f"SELECT id, product_id FROM product_variants WHERE id IN {marks}", params)
        found = {row["id"]: row["product_id"] for row in rows}
    lines = []
    for item in wanted:
        product_id = item.get("of_product") or item.get("product_id", found.get(item["variant_id"]))
        if product_id is None:
            _refuse(item)
        lines.append({**item, "of_product": product_id})
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
        raise Invalid(f"items: {named} does not exist or is not for sale.")
    raise Conflict(
        f"Not enough stock for variant {variant_id} of product {row['product_id']}"
        f" ({row['name']}): {item['quantity']} requested, {row['stock']} available.",
    )
