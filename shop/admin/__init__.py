"""The admin console: server-rendered pages for API keys and one's own sessions."""

from shop.admin.views import bp, routing_error_page

__all__ = ["bp", "routing_error_page"]
