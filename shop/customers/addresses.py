"""A customer's address book (``/auth/me/addresses``, issue 38): saved shipping addresses with
at most one default for shipping and one for billing.

Every statement names the customer, so another customer's address is a 404, never a 403. An
address holds the checkout's fields (``name``, ``line1``, ``line2``, ``city``,
``postal_code``, ``country``, ``region``), checked at the edge by the checkout's own schema.
Setting a default clears the customer's previous one of that kind in the same transaction;
a customer's first address becomes both defaults unless the flags say otherwise.
``address_for_checkout`` is what the checkout, the quote and carts call to turn a
``shipping_address_id`` into the address they price and keep.
"""

from dataclasses import dataclass, field

from shop import db
from shop.clock import now_iso
from shop.errors import Conflict, Invalid, NotFound

# The address fields, as the checkout takes them (and an order keeps them).
FIELDS = ("name", "line1", "line2", "city", "postal_code", "country", "region")
FLAGS = ("default_shipping", "default_billing")
# Saleor's default cap: enough for any person, not for a table filled by a script.
MAX_ADDRESSES = 100

_COLUMNS = "id, " + ", ".join(FIELDS + FLAGS) + ", created_at, updated_at"
_NOT_FOUND = "Address not found."


@dataclass(frozen=True)
class AddressChange:
    """A new address (every field of ``FIELDS``) or a change of one (the fields given):
    ``fields`` as the checkout's schema loaded them, ``flags`` the defaults given."""

    fields: dict
    flags: dict = field(default_factory=dict)


def present(row: dict) -> dict:
    """An address row as the API shows it."""
    return {**row, **{flag: bool(row[flag]) for flag in FLAGS}}


def list_addresses(customer_id: str) -> list[dict]:
    """The customer's addresses, oldest first (at most ``MAX_ADDRESSES``)."""
    rows = db.query(
        f"SELECT {_COLUMNS} FROM customer_addresses WHERE customer_id = :customer_id"
        " ORDER BY created_at, id",
        {"customer_id": customer_id},
    )
    return [present(row) for row in rows]


def get_address(customer_id: str, address_id: str) -> dict:
    """One of the customer's addresses; 404 when it is not theirs or not there."""
    row = db.one(
        f"SELECT {_COLUMNS} FROM customer_addresses WHERE id = :id AND customer_id = :customer_id",
        {"id": address_id, "customer_id": customer_id},
    )
    if row is None:
        raise NotFound(_NOT_FOUND)
    return present(row)


def _clear_defaults(customer_id: str, flags: dict, keep: str) -> None:
    """Take the flags set in ``flags`` off the customer's other addresses."""
    for flag in FLAGS:
        if flags.get(flag):
            db.execute(
                f"UPDATE customer_addresses SET {flag} = 0, updated_at = :now"
                f" WHERE customer_id = :customer_id AND {flag} = 1 AND id <> :id",
                {"customer_id": customer_id, "id": keep, "now": now_iso()},
            )


def add_address(customer_id: str, change: AddressChange) -> dict:
    """Save a new address for the customer; answer it. 409 past ``MAX_ADDRESSES``."""
    with db.transaction():
        db.lock(f"addresses:{customer_id}")  # the count and the first-address rule
        held = db.value(
            "SELECT COUNT(*) FROM customer_addresses WHERE customer_id = :customer_id",
            {"customer_id": customer_id},
        )
        if held >= MAX_ADDRESSES:
            raise Conflict(f"You have {MAX_ADDRESSES} addresses, the most: delete one first.")
        flags = {flag: change.flags.get(flag, held == 0) for flag in FLAGS}
        address_id, moment = db.new_id(), now_iso()
        _clear_defaults(customer_id, flags, address_id)
        db.execute(
            "INSERT INTO customer_addresses (id, customer_id, "
            + ", ".join(FIELDS + FLAGS)
            + ", created_at, updated_at) VALUES (:id, :customer_id, "
            + ", ".join(f":{name}" for name in FIELDS + FLAGS)
            + ", :now, :now)",
            {
                **{name: change.fields.get(name) for name in FIELDS},
                **{flag: int(bool(flags[flag])) for flag in FLAGS},
                "id": address_id,
                "customer_id": customer_id,
                "now": moment,
            },
        )
        return get_address(customer_id, address_id)


def change_address(customer_id: str, address_id: str, change: AddressChange) -> dict:
    """Change the fields and flags given of one of the customer's addresses; answer it."""
    given = {name: change.fields[name] for name in FIELDS if name in change.fields}
    flags = {flag: int(bool(change.flags[flag])) for flag in FLAGS if flag in change.flags}
    if not given and not flags:
        raise Invalid("Send at least one address field or default flag: nothing to change.")
    with db.transaction():
        db.lock(f"addresses:{customer_id}")
        get_address(customer_id, address_id)  # 404 before anything is written
        _clear_defaults(customer_id, flags, address_id)
        changes = {**given, **flags}
        db.execute(
            "UPDATE customer_addresses SET "
            + ", ".join(f"{name} = :{name}" for name in changes)
            + ", updated_at = :now WHERE id = :id AND customer_id = :customer_id",
            {**changes, "now": now_iso(), "id": address_id, "customer_id": customer_id},
        )
        return get_address(customer_id, address_id)


def delete_address(customer_id: str, address_id: str) -> None:
    """Delete one of the customer's addresses (a default leaves no default of its kind);
    orders keep their own copy of the address they were sent to."""
    deleted = db.execute(
        "DELETE FROM customer_addresses WHERE id = :id AND customer_id = :customer_id",
        {"id": address_id, "customer_id": customer_id},
    )
    if not deleted:
        raise NotFound(_NOT_FOUND)


def erase(customer_id: str) -> int:
    """Delete every address of a customer being erased (in the erasure's transaction)."""
    return db.execute(
        "DELETE FROM customer_addresses WHERE customer_id = :customer_id",
        {"customer_id": customer_id},
    )


def address_for_checkout(customer_id: str | None, address_id: str) -> dict:
    """The shipping address a checkout, a quote or a cart gets for ``shipping_address_id``:
    one of the customer's saved addresses, with the checkout's fields only (``line2`` and
    ``region`` None when empty), as an order keeps it.

    ``customer_id`` is the signed-in customer's (None for a guest or an administrator): a
    400 naming ``shipping_address_id`` when there is none, or the id is not one of theirs.
    """
    if customer_id is None:
        raise Invalid("shipping_address_id: sign in as a customer to use a saved address.")
    row = db.one(
        "SELECT " + ", ".join(FIELDS) + " FROM customer_addresses"
        " WHERE id = :id AND customer_id = :customer_id",
        {"id": address_id, "customer_id": customer_id},
    )
    if row is None:
        raise Invalid(f"shipping_address_id: {address_id} is not one of your saved addresses.")
    return dict(row)
