"""A cart and its lines: who may reach it, and every change to it.

A cart's id is 32 random bytes (``new_cart_id``): whoever holds it reaches a guest's cart; a
signed-in customer's cart (``customer_id``) is a 404 to anybody else, as an unknown id is.
A completed cart is read-only (409). Each change runs in one transaction under the cart's
lock, and bumps ``updated_at`` (what the reminders and the expiry count from, and what a
completion checks it priced). A line holds one variant: adding it again adds to the line;
a quantity beyond the variant's stock is a 409 saying how many are left.
"""

import json
import secrets
from dataclasses import dataclass

from shop import db
from shop.clock import now_iso
from shop.customers import addresses
from shop.discounts import codes as discounts
from shop.errors import Conflict, Invalid, NotFound
from shop.pricing import baskets
from shop.site import settings

MAX_LINES = 100
MAX_QUANTITY = 10_000
# The details a cart keeps, as ``PATCH /carts/{id}`` names them.
DETAILS = ("email", "shipping_address", "shipping_method_id", "discount_code", "note", "reminders")
_NAMES = (
    "id",
    "customer_id",
    "status",
    "email",
    "shipping_address",
    "shipping_method_id",
    "discount_code",
    "note",
    "reminders",
    "reminded_at",
    "order_id",
    "created_at",
    "updated_at",
)
# The cart's row as ``find`` and ``locked`` answer it: its columns and the shop's currency
# (``shop_currency``, read by ``present.currency``), so showing it needs no other statement.
_ROW = f"{', '.join(_NAMES)}, {settings.CURRENCY_SQL} AS shop_currency"
# A line as ``lines`` answers it: what a reader needs of its variant (price, stock, whether
# it is for sale) and what pricing needs (``baskets.pricing_line``).
_LINE = {
    "id": "l.id",
    "variant_id": "l.variant_id",
    "quantity": "l.quantity",
    "product_id": "v.product_id",
    "sku": "v.sku",
    "options": "v.options",
    "price_cents": "v.price_cents",
    "stock": "v.stock",
    "active": "v.active * p.active",
    "name": "p.name",
    "weight_grams": "v.weight_grams",
    "tax_class": "p.tax_class",
    "category_id": "p.category_id",
}
_LINES_FROM = (
    "cart_lines l JOIN product_variants v ON v.id = l.variant_id"
    " JOIN products p ON p.id = v.product_id"
)
_LINES = (
    f"SELECT {', '.join(f'{sql} AS {name}' for name, sql in _LINE.items())}"
    f" FROM {_LINES_FROM} WHERE l.cart_id = :id ORDER BY l.created_at, l.id"
)
# The cart's row and its lines in one statement (``find_with_lines``): a row per line (one
# with null lines for an empty cart), the line's columns named ``line_*``. Outer joins each
# (a line always has its variant and product): a parenthesised join on the right of a LEFT
# JOIN made SQLite join every line to its variant first (67 ms a read at 2,000 carts).
_WITH_LINES = (
    f"SELECT {', '.join(f'c.{name}' for name in _NAMES)},"
    f" {settings.CURRENCY_SQL} AS shop_currency,"
    f" {', '.join(f'{sql} AS line_{name}' for name, sql in _LINE.items())}"
    " FROM carts c LEFT JOIN cart_lines l ON l.cart_id = c.id"
    " LEFT JOIN product_variants v ON v.id = l.variant_id"
    " LEFT JOIN products p ON p.id = v.product_id"
    " WHERE c.id = :id ORDER BY l.created_at, l.id"
)
NOT_FOUND = "Cart not found."


def new_cart_id() -> str:
    """A cart's id: 32 random bytes, URL-safe (256 bits: the capability of a guest)."""
    return secrets.token_urlsafe(32)


@dataclass(frozen=True)
class Holder:
    """Who reaches a cart: a signed-in customer's id, or None for anyone holding its id."""

    customer_id: str | None = None


def create(holder: Holder) -> str:
    """A new, empty cart, bound to ``holder``'s customer if any; answer its id."""
    cart_id, moment = new_cart_id(), now_iso()
    db.execute(
        "INSERT INTO carts (id, customer_id, status, reminders, created_at, updated_at)"
        " VALUES (:id, :customer_id, 'open', 0, :now, :now)",
        {"id": cart_id, "customer_id": holder.customer_id, "now": moment},
    )
    return cart_id


def find(cart_id: str, holder: Holder) -> dict:
    """The cart ``holder`` may reach, as stored (and ``shop_currency``); a 404 otherwise."""
    row = None
    if 0 < len(cart_id) <= 64:
        row = db.one(f"SELECT {_ROW} FROM carts WHERE id = :id", {"id": cart_id})
    if row is None or row["customer_id"] not in (None, holder.customer_id):
        raise NotFound(NOT_FOUND)
    return row


def locked(cart_id: str, holder: Holder) -> dict:
    """Inside a transaction: the cart, locked, open, marked changed now (``updated_at``),
    as ``find`` answers it; 404 as ``find``, 409 once completed. Every caller changes the
    cart: the mark and the read are one statement (issue 42)."""
    db.lock(f"cart:{cart_id}")
    row = db.one(
        "UPDATE carts SET updated_at = :now WHERE id = :id AND status = 'open'"
        f" AND (customer_id IS NULL OR customer_id = :customer) RETURNING {_ROW}",
        {"now": now_iso(), "id": cart_id, "customer": holder.customer_id},
    )
    if row is None:  # unknown, another's (404) or completed (409): read again to tell
        find(cart_id, holder)
        raise Conflict("This cart is completed: it is read-only. Start a new cart.")
    return row


def lines(cart_id: str) -> list[dict]:
    """The cart's lines (``_LINE``: with what readers and pricing need of their variants),
    in the order they were added."""
    return db.query(_LINES, {"id": cart_id})


def find_with_lines(cart_id: str, holder: Holder) -> tuple[dict, list[dict]]:
    """``find(cart_id, holder)`` and the cart's ``lines``, read in one statement."""
    rows = db.query(_WITH_LINES, {"id": cart_id}) if 0 < len(cart_id) <= 64 else []
    if not rows or rows[0]["customer_id"] not in (None, holder.customer_id):
        raise NotFound(NOT_FOUND)
    first = rows[0]
    row = {name: first[name] for name in (*_NAMES, "shop_currency")}
    found = [{name: r[f"line_{name}"] for name in _LINE} for r in rows]
    return row, found if first["line_id"] is not None else []


# A variant a line names, with its line in the cart (if any) and the cart's count of lines:
# by ``variant_id``, or every variant of ``product_id`` (a product with one is the line's).
_VARIANT = (
    "SELECT v.id, v.product_id, v.stock, v.active * p.active AS active, p.name,"
    " l.id AS line_id, l.quantity AS line_quantity,"
    " (SELECT COUNT(*) FROM cart_lines n WHERE n.cart_id = :cart) AS lines"
    " FROM product_variants v JOIN products p ON p.id = v.product_id"
    " LEFT JOIN cart_lines l ON l.cart_id = :cart AND l.variant_id = v.id"
    " WHERE v.{field} = :named ORDER BY v.position, v.id"
)
_VARIANT_BY = {field: _VARIANT.format(field=field) for field in ("id", "product_id")}


def _variant(cart_id: str, item: dict) -> dict:
    """The variant a line names (``variant_id``, or ``product_id`` of a one-variant
    product), with its stock, its line in the cart (``line_id``, ``line_quantity``) and the
    cart's count of ``lines``, in one statement; a 400 naming the field when it is not for
    sale."""
    field = "variant_id" if "variant_id" in item else "product_id"
    rows = db.query(
        _VARIANT_BY["id" if field == "variant_id" else "product_id"],
        {"cart": cart_id, "named": item[field]},
    )
    if field == "product_id" and len(rows) != 1:
        try:  # the quote's rule and words (exactly one variant), its field named
            baskets.with_variants([item])
        except Invalid as refusal:
            raise Invalid(str(refusal).replace("items:", f"{field}:", 1)) from None
    row = rows[0] if len(rows) == 1 else None
    if (
        row is None
        or not row["active"]
        or item.get("product_id", row["product_id"]) != row["product_id"]
    ):
        raise Invalid(f"{field}: {item[field]} does not exist or is not for sale.")
    return row


def _check_stock(variant: dict, quantity: int) -> None:
    """409 when ``quantity`` units of ``variant`` are more than its stock."""
    if quantity > variant["stock"]:
        left = f"only {variant['stock']} left" if variant["stock"] > 0 else "out of stock"
        raise Conflict(
            f"quantity: {variant['name']} (variant {variant['id']}) is {left};"
            f" {quantity} asked for."
        )


def add_line(cart_id: str, holder: Holder, item: dict) -> dict:
    """Add ``item`` (``variant_id`` or ``product_id``, ``quantity``) to the cart; the same
    variant again adds to its line. Answer the cart's row (``find``'s) as it now stands."""
    with db.transaction():
        row = locked(cart_id, holder)
        variant = _variant(cart_id, item)
        quantity = item["quantity"] + (variant["line_quantity"] or 0)
        if quantity > MAX_QUANTITY:
            raise Invalid(f"quantity: at most {MAX_QUANTITY} of one variant in a cart.")
        _check_stock(variant, quantity)
        moment = now_iso()
        if variant["line_id"] is not None:
            db.execute(
                "UPDATE cart_lines SET quantity = :quantity, updated_at = :now WHERE id = :id",
                {"quantity": quantity, "now": moment, "id": variant["line_id"]},
            )
        else:
            if variant["lines"] >= MAX_LINES:
                raise Invalid(f"variant_id: a cart holds at most {MAX_LINES} lines.")
            db.execute(
                "INSERT INTO cart_lines (id, cart_id, variant_id, quantity, created_at,"
                " updated_at) VALUES (:id, :cart, :variant, :quantity, :now, :now)",
                {
                    "id": db.new_id(),
                    "cart": cart_id,
                    "variant": variant["id"],
                    "quantity": quantity,
                    "now": moment,
                },
            )
    return row


def _line(cart_id: str, line_id: str) -> dict:
    row = db.one(
        "SELECT id, variant_id, quantity FROM cart_lines WHERE id = :id AND cart_id = :cart",
        {"id": line_id, "cart": cart_id},
    )
    if row is None:
        raise NotFound("Cart line not found.")
    return row


def change_line(cart_id: str, holder: Holder, line_id: str, quantity: int) -> dict:
    """Set a line's quantity (within the variant's stock); answer the cart's row."""
    with db.transaction():
        row = locked(cart_id, holder)
        line = _line(cart_id, line_id)
        variant = db.one(
            "SELECT v.id, v.stock, p.name FROM product_variants v"
            " JOIN products p ON p.id = v.product_id WHERE v.id = :id",
            {"id": line["variant_id"]},
        )
        if quantity > line["quantity"]:  # fewer is always allowed
            _check_stock(variant, quantity)
        db.execute(
            "UPDATE cart_lines SET quantity = :quantity, updated_at = :now WHERE id = :id",
            {"quantity": quantity, "now": now_iso(), "id": line_id},
        )
    return row


def remove_line(cart_id: str, holder: Holder, line_id: str) -> dict:
    """Take a line out of the cart; answer the cart's row."""
    with db.transaction():
        row = locked(cart_id, holder)
        _line(cart_id, line_id)
        db.execute("DELETE FROM cart_lines WHERE id = :id", {"id": line_id})
    return row


def check_code(code: str, guest: bool) -> None:
    """A 400 naming ``discount_code`` unless it may be used now; a guest cannot use a
    once-per-customer code (nothing tells one guest from another: docs/orders.md)."""
    discount = discounts.find(code, None)
    if guest and discount["once_per_customer"]:
        raise Invalid(
            f"discount_code: once_per_customer: {discount['code']} is once per customer;"
            " sign in to use it."
        )


def update(cart_id: str, holder: Holder, changes: dict, check=None) -> None:
    """Change the cart's details (``DETAILS``; None clears one). ``check(cart_id)`` runs in
    the transaction once they are written (the pricing of the cart as it now stands): its
    refusal undoes the change."""
    with db.transaction():
        row = locked(cart_id, holder)
        values = {key: row[key] for key in DETAILS}
        changes = dict(changes)
        if "shipping_address_id" in changes:  # a saved address: the cart keeps a copy
            saved = addresses.address_for_checkout(
                row["customer_id"], changes.pop("shipping_address_id")
            )
            changes["shipping_address"] = saved
        values.update(changes)
        if changes.get("email"):
            values["email"] = changes["email"].strip().lower()
        if changes.get("discount_code"):  # a signed-in customer is no guest, bound or not
            check_code(changes["discount_code"], holder.customer_id is None)
        address = values["shipping_address"]
        if "shipping_address" in changes and address is not None:
            address = json.dumps(address, sort_keys=True)
        db.execute(
            "UPDATE carts SET email = :email, shipping_address = :address,"
            " shipping_method_id = :method, discount_code = :code, note = :note,"
            " reminders = :reminders WHERE id = :id",  # updated_at: marked by ``locked``
            {
                "email": values["email"],
                "address": address,
                "method": values["shipping_method_id"],
                "code": values["discount_code"],
                "note": values["note"],
                "reminders": 1 if values["reminders"] else 0,
                "id": cart_id,
            },
        )
        if check is not None:
            check(cart_id)


def erase(customer_id: str, email: str | None) -> int:
    """Delete the carts of a customer being erased: theirs, and the guest carts left with
    their e-mail. Answer how many. In the caller's transaction."""
    return db.execute(
        "DELETE FROM carts WHERE customer_id = :id OR (:email <> '' AND email = :email)",
        {"id": customer_id, "email": email or ""},
    )
