"""Tax rate writes and reads for every caller (the API, the console): a percentage per
destination (country, maybe region) and tax class, one rate per such triple.

Each write opens its own transaction, records its audit entry as the ``actor``'s and refuses
with ``Invalid`` (a region on the any-country rate), ``NotFound`` or ``Conflict`` (``TAKEN``).
"""

from decimal import Decimal

from shop import audit, db
from shop.actor import Actor
from shop.clock import now_iso
from shop.errors import Conflict, Invalid, NotFound

COLUMNS = "id, country, region, tax_class, rate, name, created_at, updated_at"
TAKEN = "A rate for this country, region and tax class exists: change that one."
ORDER = " ORDER BY country, region, tax_class, id"


def present(row: dict) -> dict:
    """A rate as the API shows it, from its row (no region is ``None``)."""
    return {**row, "region": row["region"] or None}


def get(rate_id: str) -> dict:
    """One rate, or ``NotFound``."""
    row = db.one(f"SELECT {COLUMNS} FROM tax_rates WHERE id = :id", {"id": rate_id})
    if row is None:
        raise NotFound("Tax rate not found.")
    return present(row)


def _store(statement: str, values: dict) -> None:
    """Write a rate; ``Conflict`` when its (country, region, class) is taken."""
    if values["country"] == "*" and values["region"]:
        raise Invalid("region: a rate for any country (*) has no region.")
    clash = db.value(
        "SELECT id FROM tax_rates WHERE country = :country AND region = :region"
        " AND tax_class = :tax_class AND id <> :id",
        values,
    )
    if clash:
        raise Conflict(TAKEN)
    db.execute(statement, values)


def _values(data: dict) -> dict:
    return {
        "country": data["country"],
        "region": (data.get("region") or "").upper(),
        "tax_class": data.get("tax_class") or "standard",
        "rate": format(Decimal(data["rate"]).normalize(), "f"),  # "20.0" is "20"
        "name": data["name"],
    }


def create(data: dict, actor: Actor) -> dict:
    """Create a rate from ``data`` (audited as ``actor``'s); answer it."""
    rate_id, moment = db.new_id(), now_iso()
    with db.transaction():
        db.lock("tax_rates")
        _store(
            f"INSERT INTO tax_rates ({COLUMNS}) VALUES (:id, :country, :region,"
            " :tax_class, :rate, :name, :now, :now)",
            {**_values(data), "id": rate_id, "now": moment},
        )
        audit.record("tax_rate.created", {"tax_rate_id": rate_id, **_values(data)}, actor=actor)
    return get(rate_id)


def update(rate_id: str, data: dict, actor: Actor) -> dict:
    """Change the fields given in ``data`` (the others stay), audited as ``actor``'s."""
    with db.transaction():
        db.lock("tax_rates")
        values = _values({**get(rate_id), **data})
        _store(
            "UPDATE tax_rates SET country = :country, region = :region,"
            " tax_class = :tax_class, rate = :rate, name = :name, updated_at = :now"
            " WHERE id = :id",
            {**values, "id": rate_id, "now": now_iso()},
        )
        audit.record("tax_rate.updated", {"tax_rate_id": rate_id, **values}, actor=actor)
    return get(rate_id)


def delete(rate_id: str, actor: Actor) -> None:
    """Delete a rate (audited as ``actor``'s)."""
    with db.transaction():
        get(rate_id)
        db.execute("DELETE FROM tax_rates WHERE id = :id", {"id": rate_id})
        audit.record("tax_rate.deleted", {"tax_rate_id": rate_id}, actor=actor)
