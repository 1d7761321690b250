"""Discount codes: their rows, the one form a code is looked up in, and when a code may be used.

A code that cannot be used is refused with ``Invalid`` whose message starts
``discount_code: <reason>:``, a reason a storefront can map (``unknown``, ``not_started``,
``expired``, ``usage_limit_reached``, ``already_used``; pricing adds ``min_subtotal`` and
``not_applicable``). Whether a code may be used is decided in one place, ``_refusal``: the
quote asks it through ``find``; the checkout reads the code's terms (``terms``) to price the
order and asks it once, when it takes the code's use (``claim``) under the row's lock.
"""

import json
import re

from shop import db
from shop.clock import now_iso
from shop.errors import Conflict, Invalid

COLUMNS = (
    "id, code, kind, value, min_subtotal_cents, starts_at, ends_at, usage_limit,"
    " once_per_customer, product_ids, category_ids, active, times_used, created_at, updated_at"
)

# A discount code: 1 to 64 ASCII letters, digits, '-' and '_'. ASCII only, so that no other
# string is read as a code: casefold() and Unicode lower-casing fold look-alikes onto letters
# ("ſ" onto "s", the Kelvin sign onto "k"), and "ſKATE" would apply SKATE.
CODE_PATTERN = "^[A-Za-z0-9_-]{1,64}$"  # as OpenAPI shows it; matched whole (no final newline)
CODE_RULE = "1 to 64 letters, digits, '-' or '_' (ASCII only)"
_CODE = re.compile(CODE_PATTERN[1:-1])


def from_row(row: dict) -> dict:
    """A discount as the API shows it, from its row."""
    return {
        **row,
        "once_per_customer": bool(row["once_per_customer"]),
        "product_ids": json.loads(row["product_ids"]),
        "category_ids": json.loads(row["category_ids"]),
        "active": bool(row["active"]),
    }


def load(discount_id: str) -> dict | None:
    """One discount by id."""
    row = db.one(f"SELECT {COLUMNS} FROM discounts WHERE id = :id", {"id": discount_id})
    return from_row(row) if row else None


def is_code(text: str) -> bool:
    """Whether ``text``, exactly as given, is a discount code a shop may create."""
    return _CODE.fullmatch(text) is not None


def code_key(code: str) -> str | None:
    """The one form a code is unique and looked up in: the code without surrounding white
    space, its ASCII letters in lower case ("SAVE10" and " save10" are one code); None for
    a string that is no code (``is_code``), which then matches none."""
    code = code.strip()
    return code.lower() if is_code(code) else None


def _refuse(reason: str, message: str):
    raise Invalid(f"discount_code: {reason}: {message}")


def terms(code: str) -> dict:
    """The discount stored under ``code`` as it is now, or a 400 ``unknown`` when there is
    none; whether it may be used is not asked (``find``, ``claim``)."""
    key = code_key(code)
    if key is None:
        _refuse("unknown", f"there is no code {code.strip()!r}: a code is {CODE_RULE}.")
    row = db.one(f"SELECT {COLUMNS} FROM discounts WHERE code_key = :key", {"key": key})
    if row is None:
        _refuse("unknown", f"there is no code {code.strip()!r}.")
    return from_row(row)


def find(code: str, customer_id: str | None) -> dict:
    """The usable discount of ``code`` now, or a 400 naming why not (the quote's look).

    ``already_used`` needs a customer; a guest's quote cannot know and the checkout (always
    signed in) decides.
    """
    discount = terms(code)
    _check(code, discount, discount["times_used"], customer_id)
    return discount


def _check(
    code: str, discount: dict, used_before: int, customer_id: str | None, order_id: str = ""
) -> None:
    """Refuse ``discount`` (asked for as ``code``) unless it may be used now: active, started,
    not ended, under its usage limit (``used_before``: the uses other orders hold) and, once
    per customer, not held by another of the customer's orders than ``order_id``."""
    moment = now_iso()
    if not discount["active"]:
        _refuse("unknown", f"there is no code {code.strip()!r}.")
    if discount["starts_at"] and moment < discount["starts_at"]:
        _refuse("not_started", f"{discount['code']} starts at {discount['starts_at']}.")
    if discount["ends_at"] and moment >= discount["ends_at"]:
        _refuse("expired", f"{discount['code']} ended at {discount['ends_at']}.")
    limit = discount["usage_limit"]
    if limit is not None and used_before >= limit:
        _refuse("usage_limit_reached", f"{discount['code']} has been used up.")
    if (
        discount["once_per_customer"]
        and customer_id is not None
        and used_by(discount, customer_id, other_than=order_id)
    ):
        _refuse("already_used", f"you have already used {discount['code']}.")


def used_by(discount: dict, customer_id: str, other_than: str = "") -> bool:
    """Whether a customer holds a use of ``discount``: an order with it (``other_than`` this
    one), not cancelled (a cancelled order gave its use back)."""
    return bool(
        db.value(
            "SELECT 1 FROM orders WHERE discount_id = :id AND customer_id = :customer_id"
            " AND status <> 'cancelled' AND id <> :other_than",
            {"id": discount["id"], "customer_id": customer_id, "other_than": other_than},
        )
    )


# The checkout's claim: one more use counted, the row locked until the commit (PostgreSQL;
# the one writer on SQLite), and the row answered as it then stands for ``_check``. A claim
# that is refused rolls back with its checkout, the count with it.
_CLAIM = f"UPDATE discounts SET times_used = times_used + 1 WHERE id = :id RETURNING {COLUMNS}"


def claim(code: str, discount: dict, customer_id: str, order_id: str) -> None:
    """Take one use of ``code`` for the order ``order_id``, priced with ``discount`` (``terms``'
    answer), in the checkout's transaction: a 400 naming why the code cannot be used now, a
    409 when its terms changed since they were read.

    Must be the checkout's last statement: it locks the code's row, and the check behind
    that lock sees every use committed before (docs/checkout.md, docs/performance.md,
    "Checkout: the writer lock and the code's row").
    """
    row = db.one(_CLAIM, {"id": discount["id"]})
    if row is None:  # deleted since it was read
        _refuse("unknown", f"there is no code {code.strip()!r}.")
    now = from_row(row)
    _check(code, now, now["times_used"] - 1, customer_id, order_id)
    if _terms(now) != _terms(discount):
        raise Conflict(
            f"discount_code: {discount['code']} changed during checkout; check out again."
        )


# What an order priced with a discount relied on (pricing/rules.py, the order's columns).
# Its limits (active, dates, usage limit, once per customer) are not among them: the claim
# applies them as they are when it takes the use, so a limit changed meanwhile is no 409.
_TERMS = ("id", "code", "kind", "value", "min_subtotal_cents", "product_ids", "category_ids")


def _terms(discount: dict) -> dict:
    """The terms an order priced with ``discount`` relied on (``_TERMS``)."""
    return {key: discount[key] for key in _TERMS}


def give_back_use(order_id: str) -> None:
    """A cancelled order's code use back to its discount (cancelled is final: once)."""
    db.execute(
        "UPDATE discounts SET times_used = times_used - 1 WHERE times_used > 0"
        " AND id = (SELECT discount_id FROM orders WHERE id = :id)",
        {"id": order_id},
    )
