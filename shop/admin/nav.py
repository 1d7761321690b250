"""The console's navigation: each link with the permission it needs, in sections.

A link shows only to a staff member whose permissions include its ``permission`` (``None``:
every signed-in administrator). The first link one may use is where one lands after sign-in
(``landing``). Each section is its own list so that the pages of one area add their links in
one place.
"""

from typing import NamedTuple


class Link(NamedTuple):
    """One link of the navigation: its label, the endpoint it opens, the permission it needs."""

    label: str
    endpoint: str
    permission: str | None


# The shop's daily work: orders first.
ORDERS: list[Link] = [
    Link("Orders", "admin.orders_list", "orders.read"),
    Link("Invoices", "admin.invoices_list", "orders.read"),
]
# The catalogue and its content.
CATALOGUE: list[Link] = []
# The shop's customers, prices and rules, and its staff.
STORE: list[Link] = []
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
