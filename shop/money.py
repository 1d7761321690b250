"""Money: integer minor units of the shop's currency, its ISO 4217 exponent, and the ways
an amount is written.

Every amount the shop stores or answers is an integer number of minor units of the shop's
currency (``price_cents`` keeps its name for compatibility: for JPY it counts yen, for KWD
fils). The exponent (JPY 0, EUR 2, KWD 3) comes from Babel's copy of ISO 4217. Between
minor units and text we go through ``Decimal``, never ``float``: 0.1 + 0.2 is not 0.3.
"""

import functools
import re
from decimal import ROUND_HALF_UP, Decimal

from babel.numbers import format_currency, get_currency_precision


def exponent(currency: str) -> int:
    """The number of decimals of ``currency``'s minor unit (JPY 0, EUR 2, KWD 3)."""
    return get_currency_precision(currency)


def to_decimal(minor: int, currency: str) -> Decimal:
    """``minor`` units as an exact decimal amount of ``currency`` (1999 EUR -> 19.99)."""
    return Decimal(minor).scaleb(-exponent(currency))


def to_text(minor: int, currency: str) -> str:
    """``minor`` units as a plain decimal string with the currency's decimals ("19.99", "1200")."""
    places = exponent(currency)
    return str(to_decimal(minor, currency).quantize(Decimal(1).scaleb(-places)))


# A plain decimal amount: ASCII digits, at most one point, an optional minus. Decimal() takes
# more ("1e2", "1_000", "Infinity", full-width and Arabic-Indic digits), which a person
# reading the form would not take for the same amount.
_PLAIN = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")


def from_text(text: str, currency: str) -> int:
    """A plain decimal string ("19.99") as minor units; ValueError if it is anything else
    (an exponent, a separator, digits other than ASCII 0-9) or has more decimals than the
    currency has (a €103 amount never becomes €10,300 or €1.03). The one parser of an amount
    written by a person: the console's forms and the catalogue import."""
    plain = text.strip() if isinstance(text, str) else ""
    if not _PLAIN.fullmatch(plain):
        example = to_text(1250, currency)
        raise ValueError(
            f"{text!r} is not a decimal amount: write digits 0-9 and at most one point,"
            f" such as {example}."
        )
    minor = Decimal(plain).scaleb(exponent(currency))
    if minor != minor.to_integral_value():
        raise ValueError(f"{currency} amounts have at most {exponent(currency)} decimals.")
    return int(minor)


def display(minor: int, currency: str, locale: str = "en_US") -> str:
    """``minor`` units as a reader sees them ("€19.99", "¥1,200"), as Babel writes them.

    Babel's pattern is learnt once per currency and locale (``_layout``) and applied here;
    a locale whose pattern it cannot learn keeps calling Babel (why: docs/performance.md,
    "Pricing: the priced checkout and the quote").
    """
    layout = _layout(currency, locale)
    if layout is None or minor < 0:
        return format_currency(to_decimal(minor, currency), currency, locale=locale)
    return _apply(layout, minor, exponent(currency))


def _apply(layout: tuple, minor: int, places: int) -> str:
    prefix, group, point, suffix = layout
    whole, fraction = divmod(minor, 10**places) if places else (minor, 0)
    text = f"{whole:,}".replace(",", group)
    if places:
        text += f"{point}{fraction:0{places}d}"
    return f"{prefix}{text}{suffix}"


@functools.cache
def _layout(currency: str, locale: str) -> tuple | None:
    """(prefix, group separator, decimal point, suffix) of Babel's output for ``currency``
    in ``locale``, or None when applying them would not give exactly Babel's text."""
    places = exponent(currency)
    sample = format_currency(Decimal(1234567), currency, locale=locale)
    match = re.fullmatch(r"(\D*)1(\D?)234(\D?)567(?:(\D)0+)?(\D*)", sample)
    if match is None:
        return None
    prefix, group, _second, point, suffix = match.groups()
    layout = (prefix, group, point or "", suffix)
    for minor in (0, 5, 1999, 123456789, 10**12 + 7):
        expected = format_currency(Decimal(minor).scaleb(-places), currency, locale=locale)
        if _apply(layout, minor, places) != expected:
            return None
    return layout


def round_half_up(value: Decimal) -> int:
    """A decimal number of minor units rounded to a whole one, halves away from zero."""
    return int(value.to_integral_value(rounding=ROUND_HALF_UP))
