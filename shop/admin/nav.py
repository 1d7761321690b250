"""The console's navigation: each link with the permission it needs, in sections.

A link shows only to a staff member whose permissions include its ``permission`` (``None``:
every signed-in administrator). The first link one may use is where one lands after sign-in
(``landing``): the dashboard for who may read orders, otherwise the first link of the
catalogue, the store or one's account that one may use. Each section is its own list so
that the pages of one area add their links in one place.
"""

from typing import NamedTuple


class Link(NamedTuple):
    """One link of the navigation: its label, the endpoint it opens, the permission it needs."""

    label: str
    endpoint: str
    permission: str | None


# The shop's daily work: orders first.
ORDERS: list[Link] = [
    Link("Dashboard", "admin.home", "orders.read"),
    Link("Orders", "admin.orders_list", "orders.read"),
    Link("Invoices", "admin.invoices_list", "orders.read"),
    Link("Returns", "admin.returns_list", "returns.read"),
    Link("Draft orders", "admin.drafts_list", "draft_orders.read"),
]
# The catalogue and its content.
CATALOGUE: list[Link] = [
    Link("Products", "admin.products_list", "products.read"),
    Link("Categories", "admin.categories_list", "categories.read"),
    Link("Collections", "admin.collections_list", "collections.read"),
    Link("Content", "admin.content_list", "content.read"),
]
# The shop's customers, prices and rules, and its staff.
STORE: list[Link] = [
    Link("Customers", "admin.customer_list", "customers.read"),
    Link("Discounts", "admin.discounts", "discounts.read"),
    Link("Shipping", "admin.shipping_methods", "shipping.read"),
    Link("Tax rates", "admin.tax_rate_list", "tax.read"),
    Link("Settings", "admin.settings_page", "settings.read"),
    Link("Staff", "admin.staff_list", "users.read"),
    Link("Roles", "admin.role_list", "roles.read"),
]
# Integrations and one's own account.
ACCOUNT: list[Link] = [
    Link("API keys", "admin.keys", "api_key.read"),
    Link("New key", "admin.new_key", "api_key.create"),
    Link("Webhooks", "admin.webhooks", "webhooks.read"),
    Link("My sessions", "admin.my_sessions", None),
    Link("Two-factor sign-in", "admin.two_factor", None),
]


def links(caller) -> list[Link]:
    """The links ``caller`` may use, in the order they are shown."""
    return [
        link
        for link in (*ORDERS, *CATALOGUE, *STORE, *ACCOUNT)
        if link.permission is None or caller.can(link.permission)
    ]


def landing(caller) -> str:
    """The endpoint ``caller`` lands on after sign-in: the first link they may use."""
    usable = links(caller)
    return usable[0].endpoint if usable else "admin.my_sessions"
