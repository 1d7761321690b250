"""The quote: a basket priced as its checkout would price it, writing nothing."""

from shop.customers import addresses
from shop.discounts import codes as discounts
from shop.pricing import baskets


def quote(
    items: list[dict],
    address: dict | None,
    shipping_method_id: str | None,
    discount_code: str | None,
    actor=None,
    *,
    shipping_address_id: str | None = None,
    lines: list[dict] | None = None,
) -> dict:
    """The breakdown the order of ``items`` to ``address`` would get, by the checkout's own
    pricing; a signed-in customer's once-per-customer codes are checked against their orders
    (``actor``: the Caller, None for a guest), and ``shipping_address_id`` (instead of
    ``address``) names one of their saved addresses. ``lines``: the items' pricing lines
    (``baskets.product_lines``'s answer), when the caller has read them (a cart's)."""
    customer_id = actor.id if actor is not None and actor.kind == "customer" else None
    if shipping_address_id is not None:
        address = addresses.address_for_checkout(customer_id, shipping_address_id)
    discount = discounts.find(discount_code, customer_id) if discount_code else None
    priced = baskets.price_basket(
        baskets.product_lines(items) if lines is None else lines,
        address,
        shipping_method_id,
        discount,
        require_method=False,
    )
    return {**priced, "items": priced["lines"]}
