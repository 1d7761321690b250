"""The storefront: the shop's public pages under ``/store`` (docs/storefront.md).

Server-rendered like the console, no JavaScript needed; the same domain functions as the
API behind every page.
"""

# Each module registers its pages on the blueprints.
from shop.storefront import (  # noqa: F401
    account,
    addressbook,
    balance,
    browse,
    cart,
    drafts,
    orders,
    seo,
)
from shop.storefront.frame import bp, not_found_page, register

__all__ = ["bp", "not_found_page", "register"]
