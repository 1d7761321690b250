"""``RefundRequest``: the one command to refund an order, from the API or the console.

Each field is None when not given (the body's stored hash is made of the given ones, so a
replay with the same body matches). ``checked`` applies the limits the API's schema states
(``api/refunds.py``), so a form handler copies none of them.
"""

from dataclasses import dataclass

from shop.errors import Invalid

MOST_LINES = 1000
MOST_UNITS = 1_000_000
REASON_LENGTH = 500


@dataclass(frozen=True)
class RefundRequest:
    """Money back (``amount_cents``, or ``lines`` and/or ``shipping``) and/or units back on
    the shelf (``restock``); ``lines`` and ``restock`` are ``[{"line", "quantity"}]``.
    ``to_credit``: the money is not given back but kept as a credit (a return's exchange,
    ``returns/exchange``): recorded as refunded, no provider asked, no money moves."""

    amount_cents: int | None = None
    lines: list[dict] | None = None
    shipping: bool | None = None
    reason: str | None = None
    restock: list[dict] | None = None
    to_credit: bool | None = None

    def checked(self) -> dict:
        """The request as a body (the given fields only); 400 when a limit is broken."""
        amount = self.amount_cents
        if amount is not None and (not _whole(amount) or amount < 1):
            raise Invalid("amount_cents: give more than zero.")
        for name in ("lines", "restock"):
            _check_lines(name, getattr(self, name))
        if self.shipping is not None and not isinstance(self.shipping, bool):
            raise Invalid("shipping: give true or false.")
        if self.to_credit is not None and not isinstance(self.to_credit, bool):
            raise Invalid("to_credit: give true or false.")
        if self.reason is not None and (
            not isinstance(self.reason, str) or len(self.reason) > REASON_LENGTH
        ):
            raise Invalid(f"reason: at most {REASON_LENGTH} characters.")
        fields = ("amount_cents", "lines", "shipping", "reason", "restock", "to_credit")
        return {name: getattr(self, name) for name in fields if getattr(self, name) is not None}


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_lines(name: str, items: list[dict] | None) -> None:
    """At most ``MOST_LINES`` lines, each named once, each a line number and a quantity of
    1 to ``MOST_UNITS`` units."""
    if items is None:
        return
    if len(items) > MOST_LINES:
        raise Invalid(f"{name}: give at most {MOST_LINES} lines.")
    seen = set()
    for item in items:
        line, quantity = item.get("line"), item.get("quantity")
        if not _whole(line) or line < 1:
            raise Invalid(f"{name}: a line is a number from 1.")
        if not _whole(quantity) or not 1 <= quantity <= MOST_UNITS:
            raise Invalid(f"{name}: line {line}: give 1 to {MOST_UNITS} units.")
        if line in seen:
            raise Invalid(f"{name}: name each line once.")
        seen.add(line)
