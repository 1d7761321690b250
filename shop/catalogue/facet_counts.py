"""The facets' kept counts: products per state, category and price band, and per option value
of an active variant (tables ``facet_prices``, ``facet_options``, migration 0027).

The database's triggers keep them in the transaction of every write that moves one, so the
facets of the whole catalogue or of a category tree (what a storefront's category page asks
for) add up a few hundred rows instead of reading every product (``product_query.facets``).
``recount()`` rebuilds them from the products when the bands are new or changed
(``recount_if_changed``, at ``flask db upgrade``): it locks the catalogue's tables, so it
never runs at a routine start beside live writes. Why: docs/performance.md, "Lists and
facets at 100k (issue 42)".
"""

from shop import db

# Price bands of the facets, in minor units: (min_price, max_price), both inclusive as the
# list's filters are; the last band has no upper end. Chosen for a shop whose currency has
# cents (EUR, USD): 0-9.99, 10-24.99, 25-49.99, 50-99.99, 100-249.99, 250 and up. Each band
# starts where the one before ends: the counts key a product by its band's lower end.
PRICE_BANDS = (
    (0, 999),
    (1000, 2499),
    (2500, 4999),
    (5000, 9999),
    (10000, 24999),
    (25000, None),
)

_OPTIONS = """
    INSERT INTO facet_options (active, category_id, name, value, n)
    SELECT p.active, COALESCE(p.category_id, ''), d.name, d.value, COUNT(*)
    FROM (SELECT DISTINCT o.product_id, o.name, o.value
          FROM variant_option_values o JOIN product_variants v ON v.id = o.variant_id
          WHERE v.active = 1) d
    JOIN products p ON p.id = d.product_id
    GROUP BY p.active, COALESCE(p.category_id, ''), d.name, d.value"""


def recount_if_changed() -> bool:
    """``recount`` when the bands are not ``PRICE_BANDS`` (a new database, or bands changed
    in a release); answer whether it ran. Otherwise the triggers have kept every count, and
    a node starting beside live writes takes no lock on the catalogue."""
    kept = {row["low"] for row in db.query("SELECT low FROM facet_bands")}
    if kept == {low for low, _ in PRICE_BANDS}:
        return False
    recount()
    return True


def recount() -> None:
    """Write the bands and count every product again, in the caller's transaction.

    The tables are locked first (PostgreSQL), so a catalogue write either committed before
    (and is counted) or waits for this transaction (and its triggers add to the new counts).
    """
    if db.get_db().engine == "postgresql":
        db.execute("LOCK TABLE products, product_variants, variant_option_values IN SHARE MODE")
    lows = [low for low, _ in PRICE_BANDS]
    marks, params = db.in_list("low", lows)
    db.execute(f"DELETE FROM facet_bands WHERE low NOT IN {marks}", params)
    db.execute_many(
        "INSERT INTO facet_bands (low) VALUES (:low) ON CONFLICT DO NOTHING",
        [{"low": low} for low in lows],
    )
    db.execute("DELETE FROM facet_prices")
    # Grouped by price first, then summed per band: one band lookup per distinct price.
    db.execute(
        "INSERT INTO facet_prices (active, category_id, low, n)"
        " SELECT active, category_id, low, SUM(n) FROM (SELECT p.active,"
        " COALESCE(p.category_id, '') AS category_id,"
        " (SELECT MAX(b.low) FROM facet_bands b WHERE b.low <= p.price_cents) AS low,"
        " COUNT(*) AS n FROM products p"
        " GROUP BY p.active, COALESCE(p.category_id, ''), p.price_cents) priced"
        " GROUP BY active, category_id, low"
    )
    db.execute("DELETE FROM facet_options")
    db.execute(_OPTIONS)
