"""The facets of a product list: counts per category, price band and option value.

``GET /products/facets`` takes the list's filters (``product_query.ProductQuery``). Each
facet group (``categories``, ``price_bands`` from ``PRICE_BANDS``, ``options`` up to
``MAX_FACET_VALUES`` values a name) is counted with every filter but its own, so a count is
the ``total`` the list answers when that value replaces the group's filter
(docs/catalogue-and-content.md, "Search and facets"): exact from the kept counts, or over
at most ``FACET_COUNT_CAP`` matches (``counts_are_exact``).
"""

from flask import current_app

from shop import db
from shop.catalogue.facet_counts import PRICE_BANDS
from shop.catalogue.facets.sample import Sample
from shop.catalogue.product_query import (
    CATEGORY_REF_TREE,
    CATEGORY_TREE,
    ProductQuery,
    tree_ids,
)
from shop.db.pages import Where

# An option facet answers at most this many values, the most common first: a catalogue of
# many distinct values (a value per product) would otherwise send them all to every visitor.
MAX_FACET_VALUES = 100


# The filters the kept counts tell apart (``shop.catalogue.facet_counts``): a category and
# the state. A facet group whose other filters are among them is read from the counts.
_KEPT = {"category", "category_id", "active", "options"}


def _kept(args: dict) -> bool:
    """Whether the kept counts answer for the products ``args`` select."""
    return (
        set(args) <= _KEPT
        and not args.get("options")
        and not ("category" in args and "category_id" in args)
    )


def facets(
    args: dict,
    *,
    only_active: bool,
    categories: bool = True,
    cap: int | None = None,
    trees: dict | None = None,
) -> dict:
    """The facets of the products ``args`` select (see the module's docstring). A group
    whose other filters name at most a category and the state (the whole catalogue, a
    category page, a category page with a price band or one option chosen) is read from
    the counts the writes keep (``_Kept``): exact. Any other group is counted from its
    first ``cap`` matching products at most (``FACET_COUNT_CAP``, ``SHOP_FACET_COUNT_CAP``),
    so its cost has a bound whatever the matches: with fewer matches the counts are exact,
    else ``counts_are_exact`` is false (as Algolia's ``exhaustiveFacetsCount``). ``total``
    is the list's when exact; from the sample, past the cap it is the cap, a lower bound
    (``total_is_exact`` false, as a list says of its capped total).
    ``categories=False`` leaves out the category group (every category of the shop: a
    page that shows no category counts does not pay for them). ``trees``: the category
    trees a query of the same answer read (``ProductQuery.trees``), read once for all."""
    kept = _Kept(only_active, {} if trees is None else trees)
    sample = Sample(cap or current_app.config["FACET_COUNT_CAP"])
    priced_args = _without(args, "min_price", "max_price")
    unfiltered = None  # the option values of a page with no price or option chosen
    if _kept(args):  # both groups from the counts, by the same filters: one statement
        bands, unfiltered = kept.bands_and_values(args)
    elif _kept(priced_args):
        bands = kept.bands(priced_args)
    else:
        bands = sample.bands(kept.query(priced_args))
    total_is_exact = True
    if _kept(args):  # the bands of all its products when no price filters
        total = sum(n or 0 for n in bands) if args == priced_args else kept.total(args)
    else:  # the sample of every filter: exact below the cap, else the cap (at least)
        total = len(sample.products(kept.query(args)))
        total_is_exact = total < sample.cap
    found = {"total": total, "total_is_exact": total_is_exact}
    if categories:
        found["categories"] = _categories(_direct(args, kept, sample))
    found["price_bands"] = [
        {"min_price": low, "max_price": high, "count": bands[i] or 0}
        for i, (low, high) in enumerate(PRICE_BANDS)
    ]
    found["options"] = _option_facets(args, kept, sample, unfiltered)
    found["counts_are_exact"] = sample.exact
    return found


def _direct(args: dict, kept: "_Kept", sample: "Sample") -> dict[str, int]:
    """The products per category of their own (not counting sub-categories'), with every
    filter of ``args`` but the category."""
    placed_args = _without(args, "category_id", "category")
    if _kept(placed_args):
        return kept.direct(placed_args)
    return sample.direct(kept.query(placed_args))


class _Kept:
    """The facet groups read from the counts the writes keep (``facet_prices``,
    ``facet_options``): a few hundred rows, not every product; for ``args`` that ``_kept``
    accepts."""

    def __init__(self, only_active: bool, trees: dict):
        self.only_active = only_active
        self.trees = trees

    def query(self, args: dict) -> ProductQuery:
        """The products ``args`` select, for a group the counts cannot answer (the trees
        shared)."""
        return ProductQuery(args, only_active=self.only_active, trees=self.trees)

    def _where(self, args: dict, tree: bool = True) -> Where:
        where = Where()
        if "active" in args:
            where.add("active = :active", active=int(args["active"]))
        elif self.only_active:
            where.add("active = 1")
        for key, query in (("category_id", CATEGORY_TREE), ("category", CATEGORY_REF_TREE)):
            if tree and key in args:
                ids = tree_ids(query, key, args[key], self.trees)
                marks, params = db.in_list("tree", ids or [""])
                where.add(f"category_id IN {marks}", **params)
        return where

    def bands(self, args: dict) -> list:
        where = self._where(args)
        return _banded(
            db.query(
                f"SELECT low, SUM(n) AS n FROM facet_prices{where.sql()} GROUP BY low",
                where.params,
            )
        )

    def bands_and_values(self, args: dict) -> tuple[list, list[dict]]:
        """``bands(args)`` and ``values(args, "name IS NOT NULL", {})`` in one statement
        (a category page's two groups, one round trip less on PostgreSQL)."""
        bands, values = self._where(args), self._where(args)  # the same parameters
        values.add("name IS NOT NULL")
        rows = db.query(
            f"SELECT 1 AS band, low, NULL AS name, NULL AS value, SUM(n) AS n"
            f" FROM facet_prices{bands.sql()} GROUP BY low"
            " UNION ALL"
            f" SELECT 0 AS band, NULL AS low, name, value, SUM(n) AS n"
            f" FROM facet_options{values.sql()} GROUP BY name, value HAVING SUM(n) > 0",
            {**bands.params, **values.params},
        )
        return _banded([r for r in rows if r["band"]]), [r for r in rows if not r["band"]]

    def total(self, args: dict) -> int:
        return sum(n or 0 for n in self.bands(args))

    def direct(self, args: dict) -> dict[str, int]:
        where = self._where(args, tree=False)
        where.add("category_id <> ''")
        rows = db.query(
            f"SELECT category_id, SUM(n) AS n FROM facet_prices{where.sql()} GROUP BY category_id",
            where.params,
        )
        return {row["category_id"]: row["n"] for row in rows if row["n"]}

    def values(self, args: dict, condition: str, named: dict) -> list[dict]:
        """Per name (those ``condition`` on ``name`` selects) and value, the products."""
        where = self._where(args)
        where.add(condition, **named)
        return db.query(
            f"SELECT name, value, SUM(n) AS n FROM facet_options{where.sql()}"
            " GROUP BY name, value HAVING SUM(n) > 0",
            where.params,
        )


def _banded(rows: list[dict]) -> list:
    """Per band of ``PRICE_BANDS``, its products from ``rows`` (``low``, ``n``), or None."""
    found = {row["low"]: row["n"] for row in rows}
    return [found.get(low) for low, _ in PRICE_BANDS]


def _option_facets(
    args: dict, kept: _Kept, sample: Sample, unfiltered: list[dict] | None = None
) -> list[dict]:
    """Per option name, per value, the products with an active variant of that value that
    also meets the other names' filters (the same variant) and every other filter; from the
    kept counts when those filters are a category and the state alone, else from ``sample``.
    ``unfiltered``: the kept values of every name, read already (``bands_and_values``)."""
    chosen = args.get("options") or {}
    others = {**args, "options": {}}
    # The names without a filter of their own share one query; each filtered name has its own.
    groups = [(None, chosen)] + [
        (name, {n: v for n, v in chosen.items() if n != name}) for name in sorted(chosen)
    ]
    counts: dict[str, dict[str, int]] = {}
    for own, applied in groups:
        if own is None:
            marks, named = db.in_list("fx", list(chosen))
            names = f"name NOT IN {marks}" if chosen else "name IS NOT NULL"
        else:
            names, named = "name = :fown", {"fown": own}
        if own is None and unfiltered is not None:
            rows = unfiltered
        elif not applied and _kept(others):
            rows = kept.values(others, names, named)
        else:
            query = kept.query({**others, "options": applied})
            rows = sample.values(query, applied, names, named)
        for row in rows:
            counts.setdefault(row["name"], {})[row["value"]] = row["n"]
    return _most_common(counts)


def _most_common(counts: dict[str, dict[str, int]]) -> list[dict]:
    """The option facets of ``counts`` (name: value: count): per name its values, the most
    common first, ``MAX_FACET_VALUES`` at most."""
    return [
        {
            "name": name,
            "values": [
                {"value": value, "count": n}
                for value, n in sorted(values.items(), key=lambda item: (-item[1], item[0]))[
                    :MAX_FACET_VALUES
                ]
            ],
        }
        for name, values in sorted(counts.items())
    ]


def _without(args: dict, *names: str) -> dict:
    return {key: value for key, value in args.items() if key not in names}


def _categories(direct: dict[str, int]) -> list[dict]:
    """Counts per category with its sub-categories' added, most first (then by name)."""
    if not direct:
        return []
    rows = db.query("SELECT id, name, slug, parent_id FROM categories")
    by_id = {row["id"]: row for row in rows}
    counts: dict[str, int] = {}
    for category_id, n in direct.items():
        seen = set()
        while category_id in by_id and category_id not in seen:  # a loop would be a bug
            seen.add(category_id)
            counts[category_id] = counts.get(category_id, 0) + n
            category_id = by_id[category_id]["parent_id"]
    found = [
        {"id": cid, "name": by_id[cid]["name"], "slug": by_id[cid]["slug"], "count": n}
        for cid, n in counts.items()
    ]
    return sorted(found, key=lambda c: (-c["count"], c["name"], c["id"]))
