"""The admin console: server-rendered pages a shop is run from (docs/console.md)."""

# Each module registers its pages on bp.
from shop.admin import (  # noqa: F401
    account,
    catalogue,
    dashboard,
    drafts,
    invoices,
    keys,
    order_edits,
    orders,
    returns,
    signin,
    store,
    webhooks,
)
from shop.admin.views import bp, routing_error_page

__all__ = ["bp", "routing_error_page"]
