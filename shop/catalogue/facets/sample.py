"""A facet group counted from the products: its first ``cap`` matches at most, for the
groups the kept counts cannot answer (issue 42; docs/performance.md, "Counted facets: a
capped sample")."""

from shop import db
from shop.catalogue.facet_counts import PRICE_BANDS
from shop.catalogue.product_query import ProductQuery, option_variants


class Sample:
    """The facet groups counted from the products: each from the first ``cap`` products
    its filters select at most, read once per set of filters (the bands, the categories
    and an option group often share one), with their category and price; ``exact`` turns
    false when a group reaches the cap. So a search or a collection of many products costs
    what ``cap`` of them cost (docs/performance.md, "Counted facets: a capped sample")."""

    def __init__(self, cap: int):
        self.cap = cap
        self.exact = True
        self._read: dict[tuple, list[dict]] = {}

    def products(self, query: ProductQuery) -> list[dict]:
        """``id``, ``category_id`` and ``price_cents`` of the products ``query`` selects,
        ``cap`` at most, in no order (the first the engine finds)."""
        sql = (
            "SELECT p.id, p.category_id, p.price_cents FROM products p"
            f"{query.sampled()} LIMIT {self.cap:d}"
        )
        key = (sql, tuple(sorted(query.where.params.items(), key=lambda item: item[0])))
        if key not in self._read:
            self._read[key] = rows = db.query(sql, query.where.params)
            if len(rows) >= self.cap:
                self.exact = False
        return self._read[key]

    def bands(self, priced: ProductQuery) -> list:
        """The products per price band."""
        counts = [0] * len(PRICE_BANDS)
        for row in self.products(priced):
            price = row["price_cents"]
            for i, (low, high) in enumerate(PRICE_BANDS):
                if price >= low and (high is None or price <= high):
                    counts[i] += 1
                    break
        return counts

    def direct(self, placed: ProductQuery) -> dict[str, int]:
        """The products per category of their own."""
        counts: dict[str, int] = {}
        for row in self.products(placed):
            if row["category_id"] is not None:
                counts[row["category_id"]] = counts.get(row["category_id"], 0) + 1
        return counts

    def values(self, chosen: ProductQuery, applied: dict, names: str, named: dict) -> list:
        """Per option name (``names`` selects) and value, the products ``chosen`` selects
        with an active variant of that value which also has the ``applied`` values."""
        products = self.products(chosen)
        if not products:
            return []
        among, params = db.one_of("fp", [row["id"] for row in products])
        if not applied:  # a row per product and value of an active variant (0039)
            return db.query(
                # Grouped by an expression: SQLite otherwise walked a (name, value) index
                # whole to group without sorting (1.2-2.3 ms), not the product's (0042).
                "SELECT op.name || '' AS name, op.value AS value, COUNT(*) AS n"
                f" FROM option_products op WHERE op.product_id {among} AND op.{names}"
                " GROUP BY 1, 2",
                {**params, **named},
            )
        # The variants of these products with the applied values, from the lookup index
        # (name, value, product_id, variant_id), then their other values by their key.
        tables, conditions, applied_params = option_variants(applied, "fo")
        return db.query(
            "SELECT ov.name, ov.value, COUNT(DISTINCT ov.product_id) AS n"
            f" FROM {tables} CROSS JOIN variant_option_values ov WHERE {conditions}"
            f" AND o0.product_id {among} AND ov.variant_id = o0.variant_id AND ov.{names}"
            " GROUP BY ov.name, ov.value",
            {**params, **applied_params, **named},
        )
