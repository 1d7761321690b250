"""The admin console: server-rendered pages for API keys, webhooks and one's own sessions."""

# Each module registers its pages on bp.
from shop.admin import account, invoices, keys, orders, signin, webhooks  # noqa: F401
from shop.admin.views import bp, routing_error_page

__all__ = ["bp", "routing_error_page"]
