"""Site settings: one row per key in ``settings``, over these defaults.

The settings API (``shop/api/settings.py``) and the console change them with ``change``;
every other module reads them with ``current()``.
"""

import functools
import json

from shop import audit, db
from shop.actor import Actor
from shop.clock import now_iso
from shop.errors import Conflict, Invalid

DEFAULTS = {
    "shop_name": "My Shop",
    "currency": "EUR",
    "contact_email": None,
    "contact_phone": None,
    "address": None,
    "order_number_prefix": "SO-",
    # Administrators must sign in with a second factor (they can only set it up until then).
    "require_two_factor": False,
    # Prices (products, shipping) are entered with tax included (VAT shops) or without it
    # (US-style sales tax): shop/pricing/rules.py extracts or adds it.
    "prices_include_tax": False,
    # Invoices (docs/invoicing.md): the seller's VAT id printed on them, the prefixes of the
    # two gap-free series (the year and a six-digit count follow), when an order is invoiced
    # ("paid" or "shipment": its first shipment) and the locale amounts are written in.
    "vat_id": None,
    "invoice_prefix": "INV-",
    "credit_note_prefix": "CN-",
    "invoice_on": "paid",
    # The invoice's PDF goes with the e-mail of the move that issues it (off by default).
    "invoice_attach_to_mail": False,
    "locale": "en_US",
    # What a buyer who chose the manual method is told (bank details, reference), shown on
    # the storefront's confirmation and order pages.
    "bank_transfer_instructions": None,
    # The storefront's look: its brand colour (#rrggbb; the text on it is chosen to contrast)
    # and a logo (an image address: one of the shop's /images/{id}, or https://...).
    "brand_color": "#1f5f4a",
    "logo_url": None,
    # One reminder e-mail for a cart left behind, to visitors who agreed (``reminders`` on
    # the cart): shop/carts/reminders.py, docs/orders.md.
    "cart_reminders": False,
}

# The subset anybody may read at GET /settings/public.
PUBLIC = ("shop_name", "currency", "prices_include_tax", "cart_reminders")

# The shop currency as a scalar subquery, so a list query can carry it without a second
# statement. Read the column with ``currency_of``.
CURRENCY_SQL = "(SELECT value FROM settings WHERE key = 'currency')"

# Active ISO 4217 currency codes (funds, metals and test codes left out).
_ISO_4217 = """
    AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN
    BWP BYN BZD CAD CDF CHF CLP CNY COP CRC CUC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR
    FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD
    JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT
    MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG
    QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN SVC SYP SZL THB
    TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VED VES VND VUV WST XAF XCD XCG XOF
    XPF YER ZAR ZMW ZWG
"""
CURRENCIES = frozenset(_ISO_4217.split())


_KEPT = "site.settings"  # the name ``current`` keeps them under in a transaction


def current() -> dict:
    """Every setting, stored values over defaults; read once per transaction (a status
    move's invoice and mail both read them: on PostgreSQL one round trip less)."""
    return dict(db.get_db().once_in_transaction(_KEPT, _read))


def _read() -> dict:
    """Every setting, read now."""
    return from_rows(db.query("SELECT key, value FROM settings"))


def from_rows(rows) -> dict:
    """Every setting from the ``key``/``value`` rows of ``settings`` (read by the caller,
    maybe beside other rows: the checkout's one read), stored values over defaults."""
    values = dict(DEFAULTS)
    for row in rows:
        if row["key"] in DEFAULTS:
            values[row["key"]] = json.loads(row["value"])
    return values


@functools.lru_cache(maxsize=64)
def currency_of(stored: str | None) -> str:
    """The shop currency from the value ``CURRENCY_SQL`` selected (each list row has it)."""
    return json.loads(stored) if stored is not None else DEFAULTS["currency"]


def update(changes: dict) -> None:
    """Store the given settings (inside the caller's transaction)."""
    moment = now_iso()
    db.get_db().forget_in_transaction(_KEPT)
    db.execute_many(
        "INSERT INTO settings (key, value, updated_at) VALUES (:key, :value, :now)"
        " ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        [{"key": k, "value": json.dumps(v), "now": moment} for k, v in sorted(changes.items())],
    )


def change(changes: dict, actor: Actor) -> None:
    """Store the settings given (audited as ``actor``'s), in one transaction: ``Invalid``
    when none is, ``Conflict`` when the currency would change once an order exists (amounts
    are minor units of it and orders keep theirs; changing it converts no price)."""
    if not changes:
        raise Invalid("Send at least one setting to change.")
    with db.transaction():
        currency = current()["currency"]
        if changes.get("currency", currency) != currency and currency_locked():
            raise Conflict(
                f"currency: the shop has orders in {currency}; the currency is fixed once an"
                " order exists."
            )
        update(changes)
        audit.record("settings.updated", changes, actor=actor)


def currency_locked() -> bool:
    """Whether the currency is fixed: an order exists."""
    return bool(db.value("SELECT 1 FROM orders LIMIT 1"))
