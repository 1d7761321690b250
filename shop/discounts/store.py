"""Discount writes for every caller: create, change and delete a code, with their audit entries.

Each takes the fields as the API reads them (``kind`` one of ``KINDS``; ``value`` a string;
``starts_at``/``ends_at`` a datetime or a stored timestamp) and the ``actor`` who acts, opens
its own transaction and refuses with ``Invalid`` (a value that breaks a rule), ``NotFound``
or ``Conflict`` (``TAKEN``: the code, ignoring case, is another discount's).
"""

import json
from decimal import Decimal, InvalidOperation

from shop import audit, db
from shop.actor import Actor
from shop.clock import iso, now_iso
from shop.discounts import codes
from shop.errors import Conflict, Invalid, NotFound

KINDS = ("percent", "fixed", "free_shipping")
TAKEN = "This code exists (codes ignore case)."


def get(discount_id: str) -> dict:
    """One discount as the API shows it, or ``NotFound``."""
    discount = codes.load(discount_id)
    if discount is None:
        raise NotFound("Discount not found.")
    return discount


def create(data: dict, actor: Actor) -> dict:
    """Create a discount from ``data`` (audited as ``actor``'s); answer it."""
    discount_id, moment = db.new_id(), now_iso()
    values = _values(data)
    with db.transaction():
        db.lock("discounts")
        _check_code_free(values, discount_id)
        db.execute(
            "INSERT INTO discounts (id, code, code_key, kind, value, min_subtotal_cents,"
            " starts_at, ends_at, usage_limit, once_per_customer, product_ids,"
            " category_ids, active, times_used, created_at, updated_at) VALUES (:id, :code,"
            " :code_key, :kind, :value, :min_subtotal_cents, :starts_at, :ends_at,"
            " :usage_limit, :once_per_customer, :product_ids, :category_ids, :active, 0,"
            " :now, :now)",
            {**values, "id": discount_id, "now": moment},
        )
        audit.record(
            "discount.created", {"discount_id": discount_id, "code": data["code"]}, actor=actor
        )
    return get(discount_id)


def update(discount_id: str, data: dict, actor: Actor) -> dict:
    """Change the fields given in ``data`` (None clears an optional one), audited as
    ``actor``'s; answer the discount. ``times_used`` is the shop's count, never set here."""
    with db.transaction():
        db.lock("discounts")
        values = _values({**get(discount_id), **data})
        _check_code_free(values, discount_id)
        db.execute(
            "UPDATE discounts SET code = :code, code_key = :code_key, kind = :kind,"
            " value = :value, min_subtotal_cents = :min_subtotal_cents,"
            " starts_at = :starts_at, ends_at = :ends_at, usage_limit = :usage_limit,"
            " once_per_customer = :once_per_customer, product_ids = :product_ids,"
            " category_ids = :category_ids, active = :active, updated_at = :now"
            " WHERE id = :id",
            {**values, "id": discount_id, "now": now_iso()},
        )
        audit.record(
            "discount.updated",
            {"discount_id": discount_id, "code": values["code"]},
            actor=actor,
        )
    return get(discount_id)


def delete(discount_id: str, actor: Actor) -> None:
    """Delete a discount (audited as ``actor``'s); orders that used it keep its code and the
    amount they got."""
    with db.transaction():
        row = get(discount_id)
        db.execute("DELETE FROM discounts WHERE id = :id", {"id": discount_id})
        audit.record(
            "discount.deleted", {"discount_id": discount_id, "code": row["code"]}, actor=actor
        )


def _check_value(kind: str, value: str | None) -> str:
    """The stored value of a ``kind`` discount given ``value``, or ``Invalid``."""
    if kind == "free_shipping":
        return "0"
    try:
        number = Decimal(value) if value is not None else None
    except InvalidOperation:
        number = None
    if number is not None and not number.is_finite():  # NaN, sNaN, Infinity
        number = None
    if kind == "percent":
        if number is None or not 0 < number <= 100:
            raise Invalid("value: a percent discount takes a decimal string above 0, up to 100.")
        return format(number.normalize(), "f")
    if number is None or number != number.to_integral_value() or not 0 < number <= 10**12:
        raise Invalid("value: a fixed discount takes whole minor units above 0 (500 is 5.00).")
    return str(int(number))


def _values(data: dict) -> dict:
    """The row's columns from a discount's fields, or ``Invalid``."""
    starts, ends = data.get("starts_at"), data.get("ends_at")
    starts = iso(starts) if starts is not None and not isinstance(starts, str) else starts
    ends = iso(ends) if ends is not None and not isinstance(ends, str) else ends
    if starts and ends and ends <= starts:
        raise Invalid("ends_at: must be after starts_at.")
    key = codes.code_key(data["code"])
    if key is None:  # a code stored by hand, outside the API: it must change to be kept
        raise Invalid(f"code: use {codes.CODE_RULE}.")
    return {
        "code": data["code"],
        "code_key": key,
        "kind": data["kind"],
        "value": _check_value(data["kind"], data.get("value")),
        "min_subtotal_cents": data.get("min_subtotal_cents"),
        "starts_at": starts,
        "ends_at": ends,
        "usage_limit": data.get("usage_limit"),
        "once_per_customer": int(bool(data.get("once_per_customer", False))),
        "product_ids": json.dumps(data.get("product_ids") or []),
        "category_ids": json.dumps(data.get("category_ids") or []),
        "active": int(data.get("active", True)),
    }


def _check_code_free(values: dict, discount_id: str) -> None:
    """``Conflict`` when another discount holds the code (ignoring case)."""
    taken = db.value(
        "SELECT id FROM discounts WHERE code_key = :code_key AND id <> :id",
        {"code_key": values["code_key"], "id": discount_id},
    )
    if taken:
        raise Conflict(TAKEN)
