"""The store pages' browser tests (issue 37): one record of each page's address. The page
checks (axe-core, no sideways scroll, screenshots) are ``tests/admin/browser_helpers.py``'s,
re-exported here for those tests."""

from tests.admin.browser_helpers import (  # noqa: F401 - re-exported
    assert_accessible,
    assert_fits,
    check_page,
    shoot,
)
from tests.orders_helpers import ADDRESS


def store_records(app) -> dict:
    """One record of each store page's address (a discount code, a shipping method, a tax
    rate, a draft order; the customer, the staff member and the role already there), made
    through the domain, for the console-wide page checks: ``{"discount_id": ..., ...}``."""
    from shop import db
    from shop.actor import NOBODY
    from shop.discounts import store as discounts
    from shop.drafts import store as drafts
    from shop.pricing import tax_rates
    from shop.shipping import store as shipping

    with app.app_context():
        discount = discounts.create({"code": "WELCOME10", "kind": "percent", "value": "10"}, NOBODY)
        bands = [{"up_to_grams": 2000, "price_cents": 490}]
        method = shipping.create(
            {"name": "Parcel", "price_cents": 0, "weight_bands": bands}, NOBODY
        )
        rate = tax_rates.create({"country": "FR", "rate": "20", "name": "TVA"}, NOBODY)
        variant = db.value("SELECT id FROM product_variants WHERE active = 1 LIMIT 1")
        draft = drafts.create(
            {
                "email": "phone@example.com",
                "items": [{"variant_id": variant, "quantity": 1}],
                "shipping_address": ADDRESS,
                "shipping_method_id": method["id"],
            },
            NOBODY,
        )
        return {
            "draft_id": draft["id"],
            "discount_id": discount["id"],
            "method_id": method["id"],
            "rate_id": rate["id"],
            "customer_id": db.value("SELECT id FROM customers ORDER BY created_at LIMIT 1"),
            "user_id": db.value("SELECT id FROM users ORDER BY created_at LIMIT 1"),
            "role_id": db.value("SELECT id FROM roles WHERE name = 'support'"),
        }
