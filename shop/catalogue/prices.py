"""Price history and the EU prior price (Directive 98/6/EC art. 6a, issue 40).

Every price a variant has had is a row of ``variant_prices`` (written by the database's
triggers on every insert and price change of a variant, whatever wrote it: the API, the
console, an import, a product's lone-variant trigger), from the moment it took effect (the
write's ``updated_at``). ``prior_price_cents`` is the lowest price applied during the 30
days before the current price took effect, shown while that price is less than 30 days old;
null when the price has not changed in that window (a new variant, or a price held for 30
days). A product shows its cheapest active variant's (the one its ``price_cents`` comes
from). The worker prunes rows no prior price can need (``prune``); docs/invoicing.md.
"""

from datetime import timedelta

from shop import db
from shop.clock import iso, now, parse
from shop.errors import NotFound

WINDOW = timedelta(days=30)
# Kept: the last two windows (a current price up to 30 days old looks 30 days before it)
# and a day's margin; the row in effect at the start of that span is kept too.
KEPT = 2 * WINDOW + timedelta(days=1)


def prior(history: list[tuple[int, str]], moment) -> int | None:
    """The prior price from a variant's ``(price_cents, at)`` rows, oldest first, at
    ``moment`` (an aware datetime); None when there is none to show. Pure.

    A price superseded in the instant it was set (``at`` equal to the current one's) was
    never applied and does not count.
    """
    if len(history) < 2:
        return None
    current_at = parse(history[-1][1])
    if moment - current_at >= WINDOW:
        return None
    start, applied = current_at - WINDOW, []
    in_effect = None  # the price in effect when the window opened
    for price, at in history[:-1]:
        when = parse(at)
        if when >= current_at:
            continue
        if when <= start:
            in_effect = price
        else:
            applied.append(price)
    if in_effect is not None:
        applied.append(in_effect)
    return min(applied) if applied else None


def _histories(column: str, ids: list[str]) -> dict[str, list]:
    """``(variant_id -> [(price_cents, at)])`` of the variants whose ``column`` is in ``ids``."""
    if not ids:
        return {}
    marks, params = db.in_list("i", ids)
    found: dict[str, list] = {}
    for row in db.query(
        f"SELECT variant_id, price_cents, at FROM variant_prices WHERE {column} IN {marks}"
        " ORDER BY variant_id, at, id",
        params,
    ):
        found.setdefault(row["variant_id"], []).append((row["price_cents"], row["at"]))
    return found


def priors(variant_ids: list[str]) -> dict[str, int | None]:
    """Each variant's prior price, in one statement."""
    moment = now()
    found = _histories("variant_id", variant_ids)
    return {variant_id: prior(found.get(variant_id, []), moment) for variant_id in variant_ids}


def with_variant_priors(variants: list[dict]) -> list[dict]:
    """``variants`` (as the API shows them) with their ``prior_price_cents``."""
    found = priors([variant["id"] for variant in variants])
    for variant in variants:
        variant["prior_price_cents"] = found[variant["id"]]
    return variants


def product_prior(price_cents: int, variants: list[dict]) -> int | None:
    """A product's prior price: the lowest of its active variants at its price (the
    cheapest, whose price the product shows) that have one."""
    shown = [
        variant["prior_price_cents"]
        for variant in variants
        if variant["active"]
        and variant["price_cents"] == price_cents
        and variant["prior_price_cents"] is not None
    ]
    return min(shown) if shown else None


# The variants of a page's products that may show a prior price: active, at a price one of
# the page's products shows (the exact pair is checked in Python), and with a history that
# ``prior`` can answer from: a price newer than the window's start and one set before it.
# The common case (prices unchanged for 30 days, or never changed) reads no row at all: the
# variants at a shown price, two probes of the history each (docs/performance.md, "A list's
# prior prices": an index for them cost a PostgreSQL import more than it saved).
_CANDIDATE_HISTORIES = (
    "SELECT v.id, v.product_id, v.price_cents, h.price_cents AS was, h.at"
    " FROM product_variants v JOIN variant_prices h ON h.variant_id = v.id"
    " WHERE v.product_id IN {products} AND v.active = 1 AND v.price_cents IN {prices}"
    " AND EXISTS (SELECT 1 FROM variant_prices latest JOIN variant_prices earlier"
    " ON earlier.variant_id = latest.variant_id AND earlier.at < latest.at"
    " WHERE latest.variant_id = v.id AND latest.at > :since)"
    " ORDER BY v.id, h.at, h.id"
)


def with_product_priors(products: list[dict]) -> list[dict]:
    """``products`` (as a list shows them, without variants) with their
    ``prior_price_cents``: one statement whatever their number, reading only the histories
    of the variants that may have one (``_CANDIDATE_HISTORIES``)."""
    if not products:
        return products
    moment = now()
    product_marks, params = db.in_list("p", [product["id"] for product in products])
    price_marks, price_params = db.in_list("c", sorted({p["price_cents"] for p in products}))
    sql = _CANDIDATE_HISTORIES.format(products=product_marks, prices=price_marks)
    variants: dict[str, dict] = {}
    for row in db.query(sql, {**params, **price_params, "since": iso(moment - WINDOW)}):
        variant = variants.get(row["id"])
        if variant is None:
            variant = variants[row["id"]] = {**row, "active": True, "history": []}
        variant["history"].append((row["was"], row["at"]))
    by_product: dict[str, list] = {}
    for variant in variants.values():
        variant["prior_price_cents"] = prior(variant["history"], moment)
        by_product.setdefault(variant["product_id"], []).append(variant)
    for product in products:
        product["prior_price_cents"] = product_prior(
            product["price_cents"], by_product.get(product["id"], [])
        )
    return products


def history(product_id: str, variant_id: str) -> list[dict]:
    """A variant's recorded prices, newest first (404 for no such variant of the product)."""
    if not db.value(
        "SELECT 1 FROM product_variants WHERE id = :id AND product_id = :product_id",
        {"id": variant_id, "product_id": product_id},
    ):
        raise NotFound("Variant not found.")
    return db.query(
        "SELECT price_cents, at FROM variant_prices WHERE variant_id = :id"
        " ORDER BY at DESC, id DESC",
        {"id": variant_id},
    )


def prune() -> int:
    """Forget prices no prior price can need (older than ``KEPT``, but the last of each
    variant before that: the one in effect when the kept span opens); answer how many."""
    cutoff = iso(now() - KEPT)
    return db.execute(
        "DELETE FROM variant_prices WHERE at < :cutoff AND EXISTS (SELECT 1 FROM"
        " variant_prices later WHERE later.variant_id = variant_prices.variant_id"
        " AND later.at <= :cutoff AND (later.at > variant_prices.at"
        " OR (later.at = variant_prices.at AND later.id > variant_prices.id)))",
        {"cutoff": cutoff},
    )
