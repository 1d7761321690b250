"""The priced checkout and the quote (issue 26): what pricing costs against today's checkout.

``POST /payments/checkout (priced)`` checks out with a shipping method, a discount code and
two tax rates (the line at a reduced rate, the shipping at the standard one); its ratio is
taken against ``POST /payments/checkout`` of the same run (target 0.9). ``POST
/payments/quote`` prices the same basket and writes nothing (target 2x checkout). Their data
is present only while they run (``data``): a shop with active shipping methods requires one
at checkout, so today's checkout must run without them.
"""

import json
from contextlib import contextmanager

from shop import db
from shop.clock import now_iso

METHOD_ID = "be0c4a5e0000000000000001"
CODE = "BENCH10"
ADDRESS = {
    "name": "Bench Customer",
    "line1": "1 High Street",
    "city": "Bath",
    "postal_code": "BA1 1AA",
    "country": "GB",
}


@contextmanager
def data():
    """A shipping method to GB, VAT at 20 % and 5 % (reduced, on every product), a 10 % code;
    removed afterwards (in an app context on the shop's database)."""
    moment = now_iso()
    with db.transaction():
        db.execute(
            "INSERT INTO shipping_methods (id, name, countries, price_cents, weight_bands,"
            " tax_class, active, position, created_at, updated_at) VALUES (:id, 'Royal Mail',"
            " '[\"GB\"]', 390, '[]', 'standard', 1, 0, :now, :now)",
            {"id": METHOD_ID, "now": moment},
        )
        db.execute_many(
            "INSERT INTO tax_rates (id, country, region, tax_class, rate, name, created_at,"
            " updated_at) VALUES (:id, 'GB', '', :class, :rate, 'VAT', :now, :now)",
            [
                {
                    "id": "be0c4a5e0000000000000002",
                    "class": "standard",
                    "rate": "20",
                    "now": moment,
                },
                {"id": "be0c4a5e0000000000000003", "class": "reduced", "rate": "5", "now": moment},
            ],
        )
        db.execute(
            "INSERT INTO discounts (id, code, code_key, kind, value, created_at, updated_at)"
            " VALUES ('be0c4a5e0000000000000004', :code, :key, 'percent', '10', :now, :now)",
            {"code": CODE, "key": CODE.lower(), "now": moment},
        )
        db.execute("UPDATE products SET tax_class = 'reduced'")
    try:
        yield
    finally:
        with db.transaction():
            db.execute("UPDATE products SET tax_class = 'standard'")
            db.execute("DELETE FROM discounts WHERE code = :code", {"code": CODE})
            db.execute("DELETE FROM tax_rates WHERE id LIKE 'be0c4a5e%'")
            db.execute("DELETE FROM shipping_methods WHERE id = :id", {"id": METHOD_ID})


def bodies(product_ids: list[str], payment: bool = True) -> list[str]:
    """One-line baskets with the method and the code, as JSON."""
    extra = {"payment_method": "manual"} if payment else {}
    return [
        json.dumps(
            {
                "items": [{"product_id": pid, "quantity": 1}],
                "shipping_address": ADDRESS,
                "shipping_method_id": METHOD_ID,
                "discount_code": CODE,
                **extra,
            },
            separators=(",", ":"),
        )
        for pid in product_ids
    ]
