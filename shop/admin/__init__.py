"""The admin console: server-rendered pages for API keys, webhooks and one's own sessions."""

from shop.admin import webhooks  # noqa: F401 - registers the Webhooks pages on bp
from shop.admin.views import bp, routing_error_page

__all__ = ["bp", "routing_error_page"]
