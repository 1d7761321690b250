"""Draft orders (issue 41): orders staff prepare for a customer, priced by the quote's
function, taking no stock until completed through the checkout's placing (docs/draft-orders.md).
A customer's erasure takes their drafts with it (``store.erase``)."""

from shop.customers import accounts
from shop.drafts import store


def _erase_with(customer: dict) -> None:
    """A customer erased: their drafts, by account or by e-mail (``store.erase``)."""
    store.erase(customer["id"], customer["email"])


accounts.ERASED_WITH.append(_erase_with)
