"""The order's shape: every object an order shows (the API, the events, the mails), its
fields in their order. The database's reader (``order_json``) builds its JSON from these
lists; the presenter of a just-placed order (``lifecycle.present_new``) and the API's
``OrderSchema`` are checked against them (tests/orders/test_order_shape.py)."""

# A line of an order: each the ``order_items`` column of its name, but ``options`` and
# ``total_cents``, which ``order_json`` computes for lines written before they were kept.
ITEM = (
    "product_id",
    "variant_id",
    "name",
    "sku",
    "options",
    "unit_price_cents",
    "quantity",
    "line_total_cents",
    "discount_cents",
    "tax_cents",
    "tax_rate",
    "total_cents",
    "line",
)
SHIPMENT_LINE = ("line", "quantity")
SHIPMENT = ("id", "carrier", "tracking_number", "tracking_url", "lines", "created_at")
ACTOR = ("kind", "id", "label")
STATUS_CHANGE = ("status", "at", "by", "note")
SHIPPING_METHOD = ("id", "name")
ADDRESS = ("name", "line1", "line2", "city", "postal_code", "country", "region")
PAYMENT = ("provider", "amount_cents", "status", "reference", "client_secret")
TAX_LINE = ("name", "rate", "amount_cents")
APPLIED = ("rule", "detail")
CUSTOMER = ("id", "email", "name")
ORDER = (
    "items",
    "subtotal_cents",
    "discount_cents",
    "shipping_cents",
    "shipping_tax_cents",
    "tax_cents",
    "total_cents",
    "currency",
    "tax_lines",
    "prices_include_tax",
    "shipping_method",
    "discount_code",
    "applied",
    "shipments",
    "id",
    "number",
    "invoice_number",
    "invoiced_at",
    "customer",
    "status",
    "payment_status",
    "fulfillment_status",
    "shipping_address",
    "payment",
    "balance_due_cents",
    "status_history",
    "created_at",
    "updated_at",
)
# Each object's fields that hold another object (or a list of them), and its shape.
NESTED = {
    ORDER: {
        "items": ITEM,
        "tax_lines": TAX_LINE,
        "shipping_method": SHIPPING_METHOD,
        "applied": APPLIED,
        "shipments": SHIPMENT,
        "customer": CUSTOMER,
        "shipping_address": ADDRESS,
        "payment": PAYMENT,
        "status_history": STATUS_CHANGE,
    },
    SHIPMENT: {"lines": SHIPMENT_LINE},
    STATUS_CHANGE: {"by": ACTOR},
}


def ordered(shape: tuple[str, ...], values: dict) -> list[tuple[str, object]]:
    """``values`` (one per field of ``shape``) as pairs in ``shape``'s order; ValueError
    when a field is missing or one is not in the shape."""
    if set(values) != set(shape) or len(values) != len(shape):
        missing, extra = set(shape) - set(values), set(values) - set(shape)
        raise ValueError(f"not the order's shape: missing {sorted(missing)}, extra {sorted(extra)}")
    return [(name, values[name]) for name in shape]
