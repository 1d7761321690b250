"""The events a webhook may subscribe to, and the read right each one needs.

A webhook receives an event only while its owner holds the right (within the scopes of the
key that made it, if one did) and, where the resource has a rule of its own
(``worker.RECORD_RULES``: api keys), could read that very record through the API: no data
leaves through a webhook that its owner could not read.
"""

EVENTS = {
    "order.placed": "orders.read",
    "order.status_changed": "orders.read",
    "order.cancelled": "orders.read",
    "order.paid": "orders.read",
    "order.refunded": "orders.read",
    "order.payment_review": "orders.read",
    "order.shipped": "orders.read",
    # An order edited before it ships (shop/checkout/editing.py): the order and its edit.
    "order.edited": "orders.read",
    # A balance an edit left due, paid by the pay link (shop/payments/stripe/balance.py): the
    # order and the payment (amount, currency, reference).
    "order.balance_paid": "orders.read",
    # A cart left behind, reminded (shop/carts/reminders.py): its e-mail and lines are what
    # an order would show, so the same right.
    "cart.abandoned": "orders.read",
    # A return (shop/returns) as GET /returns/{id} shows it: its lines name the order's.
    "return.requested": "returns.read",
    "return.approved": "returns.read",
    "return.rejected": "returns.read",
    "return.received": "returns.read",
    # A draft order staff made, and its completion (shop/drafts): the draft as the API shows it.
    "draft_order.created": "draft_orders.read",
    "draft_order.completed": "draft_orders.read",
    "product.created": "products.read",
    "product.updated": "products.read",
    "product.deleted": "products.read",
    "product.out_of_stock": "products.read",
    "variant.stock_low": "products.read",
    "content.synced": "content.read",
    "customer.registered": "customers.read",
    # A customer erased (shop/customers/accounts.py): only their id and when, for receivers
    # to erase what they keep (as Shopify's customers/redact).
    "customer.erased": "customers.read",
    "api_key.created": "api_key.read",
    "api_key.revoked": "api_key.read",
    "api_key.expiring": "api_key.read",
}
ALL_EVENTS = tuple(EVENTS)

# Sent by POST /webhooks/{id}/ping only; nobody subscribes to it and it needs no right.
PING = "webhook.ping"


def allowed_events(rights) -> list[str]:
    """The events whose right is among ``rights``, in catalogue order."""
    return [event for event, permission in EVENTS.items() if permission in rights]
