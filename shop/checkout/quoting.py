"""The quote: a basket priced as its checkout would price it, writing nothing."""

from shop.discounts import codes as discounts
from shop.pricing import baskets


def quote(
    items: list[dict],
    address: dict,
    shipping_method_id: str | None,
    discount_code: str | None,
    actor=None,
) -> dict:
    """The breakdown the order of ``items`` to ``address`` would get, by the checkout's own
    pricing; a signed-in customer's once-per-customer codes are checked against their orders
    (``actor``: the Caller, None for a guest)."""
    customer_id = actor.id if actor is not None and actor.kind == "customer" else None
    discount = discounts.find(discount_code, customer_id) if discount_code else None
    priced = baskets.price_basket(
        baskets.product_lines(items), address, shipping_method_id, discount, require_method=False
    )
    return {**priced, "items": priced["lines"]}
