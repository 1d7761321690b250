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

MAX_LINES = 100
MAX_QUANTITY = 10_000
# The details a cart keeps, as ``PATCH /carts/{id}`` names them.
DETAILS = ("email", "shipping_address", "shipping_method_id", "discount_code", "note", "reminders")
_COLUMNS = (
    "id, customer_id, status, email, shipping_address, shipping_method_id, discount_code,"
    " note, reminders, reminded_at, order_id, created_at, updated_at"
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
    """The cart ``holder`` may reach, as stored; a 404 otherwise."""
    row = None
    if 0 < len(cart_id) <= 64:
        row = db.one(f"SELECT {_COLUMNS} FROM carts WHERE id = :id", {"id": cart_id})
    if row is None or row["customer_id"] not in (None, holder.customer_id):
        raise NotFound(NOT_FOUND)
    return row


def locked(cart_id: str, holder: Holder) -> dict:
    """Inside a transaction: the cart, locked, open; 404 as ``find``, 409 once completed."""
    db.lock(f"cart:{cart_id}")
    row = find(cart_id, holder)
    if row["status"] != "open":
        raise Conflict("This cart is completed: it is read-only. Start a new cart.")
    return row


def touch(cart_id: str) -> None:
    """Mark the cart changed now (in the caller's transaction)."""
    db.execute(
        "UPDATE carts SET updated_at = :now WHERE id = :id", {"now": now_iso(), "id": cart_id}
    )


def lines(cart_id: str) -> list[dict]:
    """The cart's lines with what a reader needs of their variants: price, stock, and
    whether it is for sale (``active``), in the order they were added."""
    return db.query(
        "SELECT l.id, l.variant_id, l.quantity, v.product_id, v.sku, v.options,"
        " v.price_cents, v.stock, v.active * p.active AS active, p.name"
        " FROM cart_lines l JOIN product_variants v ON v.id = l.variant_id"
        " JOIN products p ON p.id = v.product_id"
        " WHERE l.cart_id = :id ORDER BY l.created_at, l.id",
        {"id": cart_id},
    )


def _variant(item: dict) -> dict:
    """The variant a line names (``variant_id``, or ``product_id`` of a one-variant
    product), with its stock; a 400 naming the field when it is not for sale."""
    field = "variant_id" if "variant_id" in item else "product_id"
    try:
        variant_id = baskets.with_variants([item])[0]["variant_id"]
    except Invalid as refusal:  # the quote's words name its own field, items
        raise Invalid(str(refusal).replace("items:", f"{field}:", 1)) from None
    row = db.one(
        "SELECT v.id, v.product_id, v.stock, v.active * p.active AS active, p.name"
        " FROM product_variants v JOIN products p ON p.id = v.product_id WHERE v.id = :id",
        {"id": variant_id},
    )
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


def add_line(cart_id: str, holder: Holder, item: dict) -> None:
    """Add ``item`` (``variant_id`` or ``product_id``, ``quantity``) to the cart; the same
    variant again adds to its line."""
    with db.transaction():
        locked(cart_id, holder)
        variant = _variant(item)
        line = db.one(
            "SELECT id, quantity FROM cart_lines WHERE cart_id = :cart AND variant_id = :variant",
            {"cart": cart_id, "variant": variant["id"]},
        )
        quantity = item["quantity"] + (line["quantity"] if line else 0)
        if quantity > MAX_QUANTITY:
            raise Invalid(f"quantity: at most {MAX_QUANTITY} of one variant in a cart.")
        _check_stock(variant, quantity)
        moment = now_iso()
        if line:
            db.execute(
                "UPDATE cart_lines SET quantity = :quantity, updated_at = :now WHERE id = :id",
                {"quantity": quantity, "now": moment, "id": line["id"]},
            )
        else:
            count = db.value("SELECT COUNT(*) FROM cart_lines WHERE cart_id = :id", {"id": cart_id})
            if count >= MAX_LINES:
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
        touch(cart_id)


def _line(cart_id: str, line_id: str) -> dict:
    row = db.one(
        "SELECT id, variant_id, quantity FROM cart_lines WHERE id = :id AND cart_id = :cart",
        {"id": line_id, "cart": cart_id},
    )
    if row is None:
        raise NotFound("Cart line not found.")
    return row


def change_line(cart_id: str, holder: Holder, line_id: str, quantity: int) -> None:
    """Set a line's quantity (within the variant's stock)."""
    with db.transaction():
        locked(cart_id, holder)
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
        touch(cart_id)


def remove_line(cart_id: str, holder: Holder, line_id: str) -> None:
    """Take a line out of the cart."""
    with db.transaction():
        locked(cart_id, holder)
        _line(cart_id, line_id)
        db.execute("DELETE FROM cart_lines WHERE id = :id", {"id": line_id})
        touch(cart_id)


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
            " reminders = :reminders, updated_at = :now WHERE id = :id",
            {
                "email": values["email"],
                "address": address,
                "method": values["shipping_method_id"],
                "code": values["discount_code"],
                "note": values["note"],
                "reminders": 1 if values["reminders"] else 0,
                "now": now_iso(),
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
