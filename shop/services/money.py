"""Amounts as text: integer minor units of a currency <-> plain decimal strings ("33.61").

The catalogue's CSV/JSON Lines import and export write money this way. The number of
decimals is the currency's minor-unit exponent as Babel's copy of ISO 4217 (CLDR) gives it:
EUR 2, JPY 0, KWD 3. We go through ``Decimal`` and a strict pattern, never ``float``, so
``33.61`` is 3361 and never 3360 or 336100, and ``33.615`` in euros is refused rather than
rounded.

The pricing work (branch ``pricing``) adds ``shop/money.py`` with the same ``exponent``,
``to_text`` and ``from_text``; when both are on main this module folds into that one.
"""

import re
from decimal import Decimal

from babel.numbers import get_currency_precision

_AMOUNT = re.compile(r"(\d{1,15})(?:\.(\d{1,15}))?")


def exponent(currency: str) -> int:
    """The number of decimals of ``currency``'s minor unit (JPY 0, EUR 2, KWD 3)."""
    return get_currency_precision(currency)


def to_text(minor: int, currency: str) -> str:
    """``minor`` units as a decimal string with the currency's decimals ("33.61", "1200")."""
    places = exponent(currency)
    return str(Decimal(minor).scaleb(-places).quantize(Decimal(1).scaleb(-places)))


def from_text(text: str, currency: str) -> int:
    """A decimal string as minor units; ValueError, in words a shop owner reads, if it is not
    a plain non-negative number ("abc", "1e3", "-1") or has more decimals than the currency."""
    match = _AMOUNT.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not an amount: write it like 33.61, with a dot.")
    whole, fraction = match.group(1), (match.group(2) or "").rstrip("0")
    places = exponent(currency)
    if len(fraction) > places:
        raise ValueError(
            f"{text!r} has more decimals than {currency} has ({places})."
            if places
            else f"{text!r}: {currency} amounts have no decimals."
        )
    return int(whole) * 10**places + int(fraction.ljust(places, "0") or 0)
