"""Which products a list shows: its filters and search as SQL, and the facets of that set.

``GET /products`` and ``GET /products/facets`` take the same filters and build them here.
Each facet group (``categories``, ``price_bands`` from ``PRICE_BANDS``, ``options`` up to
``MAX_FACET_VALUES`` values a name) is counted with every filter but its own, so a count is
the ``total`` the list answers when that value replaces the group's filter
(docs/catalogue-and-content.md, "Search and facets").
"""

from shop import db
from shop.catalogue import search
from shop.catalogue.facet_counts import PRICE_BANDS
from shop.catalogue.present import SELECT, present
from shop.clock import iso
from shop.db import totals
from shop.db.pages import IF_FEW, Where, paginate
from shop.errors import Invalid

# The category :category_id and every category below it. A list reads the tree's ids first
# and filters on them as values: the planners then estimate the category's products from
# their statistics (PostgreSQL guessed 900 categories in any tree and read every product).
CATEGORY_TREE = """
    WITH RECURSIVE tree (id) AS (
        SELECT id FROM categories WHERE id = :category_id
        UNION
        SELECT c.id FROM categories c JOIN tree t ON c.parent_id = t.id
    )
    SELECT id FROM tree ORDER BY id"""

# The ``category`` and ``collection`` filters name one by id or by slug: the id wins should
# one row's slug be another's id (a slug may be 24 hex digits too). An unknown one matches
# nothing, as an unknown ``category_id`` does: an empty list, not an error.
BY_ID_OR_SLUG = {
    table: f"""SELECT id FROM {table} WHERE id = :{key} OR (slug = :{key}
        AND NOT EXISTS (SELECT 1 FROM {table} WHERE id = :{key}))"""
    for table, key in (("categories", "category"), ("collections", "collection"))
}
CATEGORY_REF_TREE = CATEGORY_TREE.replace(
    "SELECT id FROM categories WHERE id = :category_id", BY_ID_OR_SLUG["categories"]
)
# A collection's products from its own key (collection_id, product_id): the EXISTS form
# tested every product of the sort's index in turn (15 ms of CPU at 100,000 products).
IN_COLLECTION_ID = """p.id IN (SELECT cp.product_id FROM collection_products cp
    WHERE cp.collection_id = :collection_id)"""
IN_COLLECTION = f"""p.id IN (SELECT cp.product_id FROM collection_products cp
    WHERE cp.collection_id IN ({BY_ID_OR_SLUG["collections"]}))"""

# A collection's products, or one option value's, as a table of their own keys (0039: each
# row of collection_products and option_products carries its product's state and sort
# keys, kept by triggers), under the names the sorts use: a page of one collection or
# option value by any sort but ``updated_at`` is one range of an index, not every match
# collected and sorted.
_KEYS = """(SELECT {t}.product_id AS id, {t}.product_active AS active,
    {t}.product_created_at AS created_at, {t}.product_price_cents AS price_cents,
    {t}.product_name AS name FROM {table} {t} WHERE {where}) p"""
KEYED_SOURCES = {
    "collection_id": _KEYS.format(
        t="cp", table="collection_products", where="cp.collection_id = :collection_id"
    ),
    "collection": _KEYS.format(  # the subquery answers one row at most
        t="cp", table="collection_products",
        where=f"cp.collection_id = ({BY_ID_OR_SLUG['collections']})",
    ),
    "options": _KEYS.format(
        t="op", table="option_products", where="op.name = :opt0 AND op.value = :opt0v0"
    ),
}  # fmt: skip
_KEYED_SORTS = ("p.created_at", "p.price_cents", "p.name")

# The list's sorts: a column with ``id`` as the tie-break, so the order is stable.
SORTS = {
    "name": "p.name, p.id",
    "-name": "p.name DESC, p.id DESC",
    "price": "p.price_cents, p.id",
    "-price": "p.price_cents DESC, p.id DESC",
    "created_at": "p.created_at, p.id",
    "-created_at": "p.created_at DESC, p.id DESC",
    "updated_at": "p.updated_at, p.id",
    "-updated_at": "p.updated_at DESC, p.id DESC",
    "relevance": None,  # the search's rank: the default with q, refused without
}
# The console's ``low_stock`` filter (not the API's): a variant at or under its product's
# low-stock threshold (``stock_low``, kept by ``variants.mark_low_stock``) or sold out.
LOW_STOCK = """p.id IN (SELECT v.product_id FROM product_variants v
    WHERE v.active = 1 AND (v.stock_low = 1 OR v.stock = 0))"""

# The filters that pick out few products through an index of their own. Not a category: it
# may hold a large part of the catalogue, and PostgreSQL found a big one's page quicker by
# the sort's index (19-31 ms) than by collecting its products first (160-200 ms, 100,000
# products); so a category's count decides (below).
_NARROWING = ("slug", "sku", "collection_id", "collection")
# The filters that may select a few products or most: the count decides (``IF_FEW``).
_COUNT_DECIDES = ("category_id", "category")

# The bounds of the ``option.<name>=<value>`` filters.
MAX_OPTION_NAMES = 10
MAX_OPTION_VALUES = 100
MAX_OPTION_TEXT = 200
# An option facet answers at most this many values, the most common first: a catalogue of
# many distinct values (a value per product) would otherwise send them all to every visitor.
MAX_FACET_VALUES = 100


def _variant_condition(options: dict[str, list[str]], variant: str, tag: str) -> tuple:
    """SQL that the variant ``variant`` (an alias of ``product_variants``) has one of the
    values of every option name given, and its parameters (named with ``tag``)."""
    conditions, params = [], {}
    for i, (name, values) in enumerate(sorted(options.items())):
        marks, named = db.in_list(f"{tag}{i}v", values)
        params.update(named)
        params[f"{tag}{i}"] = name
        conditions.append(
            f"{variant}.id IN (SELECT o.variant_id FROM variant_option_values o"
            f" WHERE o.name = :{tag}{i} AND o.value IN {marks})"
        )
    return conditions, params


def _tree_ids(tree: str, key: str, value: str) -> list[str]:
    """The ids of the category ``value`` names and of every category below it."""
    return [row["id"] for row in db.query(tree, {key: value})]


def _in_tree(tree: str, key: str, value: str) -> tuple[str, dict]:
    """The condition (and its values) that a product is in the category ``value`` names or
    below it: the tree's ids, read now; nothing matches an unknown category."""
    ids = _tree_ids(tree, key, value)
    if not ids:
        return "1 = 0", {}
    marks, params = db.in_list(key, ids)
    return f"p.category_id IN {marks}", params


def _option_products(options: dict[str, list[str]], tag: str) -> tuple[str, dict]:
    """SQL of the ids of the products with an active variant that has one of the values of
    every option name given, and its parameters (named with ``tag``).

    Read from the lookup index alone, no variant's row per match (measured in
    docs/performance.md, "The product filters at 100,000 products")."""
    tables, conditions, params = [], [], {}
    for i, (name, values) in enumerate(sorted(options.items())):
        marks, named = db.in_list(f"{tag}{i}v", values)
        params.update(named)
        params[f"{tag}{i}"] = name
        tables.append(f"variant_option_values o{i}")
        conditions.append(f"o{i}.name = :{tag}{i} AND o{i}.value IN {marks}")
        if i:  # the same variant: its key (variant_id, name)
            conditions.append(f"o{i}.variant_id = o0.variant_id")
    # CROSS JOIN keeps SQLite's join order: the first name's values lead.
    return (
        f"SELECT o0.product_id FROM {' CROSS JOIN '.join(tables)} WHERE "
        + " AND ".join(conditions)
        + " AND o0.variant_id NOT IN (SELECT v.id FROM product_variants v WHERE v.active = 0)"
    ), params


class ProductQuery:
    """The filters of a product list: ``where`` (every filter but the search) and ``match``
    (the search, or None); ``sql()`` is what follows ``FROM products p``."""

    def __init__(self, args: dict, *, only_active: bool):
        self.args = args
        self.where = Where()
        self.match = search.Match(args["q"]) if "q" in args else None
        where = self.where
        if "active" in args:
            where.add("p.active = :active", active=args["active"])
        elif only_active:
            where.add("p.active = 1")
        if self.match:
            where.params.update(self.match.params)
        if "slug" in args:
            where.add("p.slug = :slug", slug=args["slug"])
        if "sku" in args:
            where.add(
                "p.id IN (SELECT v.product_id FROM product_variants v WHERE v.sku = :sku)",
                sku=args["sku"],
            )
        # A category as its tree's ids (counted and collected by the planners' estimates),
        # and as the tree's query for a walk of the sort's index (``dense_filters``).
        self._walked = {}
        for key, tree in (("category_id", CATEGORY_TREE), ("category", CATEGORY_REF_TREE)):
            if key in args:
                condition, params = _in_tree(tree, key, args[key])
                where.add(condition, **params)
                if params:  # an unknown category matches nothing either way
                    self._walked[condition] = (f"p.category_id IN ({tree})", {key: args[key]})
        if "collection_id" in args:
            where.add(IN_COLLECTION_ID, collection_id=args["collection_id"])
        if "collection" in args:
            where.add(IN_COLLECTION, collection=args["collection"])
        if "min_price" in args:
            where.add("p.price_cents >= :min_price", min_price=args["min_price"])
        if "max_price" in args:
            where.add("p.price_cents <= :max_price", max_price=args["max_price"])
        if "in_stock" in args:
            where.add("p.stock > 0" if args["in_stock"] else "p.stock = 0")
        self._options = None
        if args.get("options"):
            sql, params = _option_products(args["options"], "opt")
            self._options = f"p.id IN ({sql})"
            where.add(self._options, **params)
        if args.get("low_stock"):
            where.add(LOW_STOCK)
        if "updated_after" in args:
            where.add("p.updated_at >= :updated_after", updated_after=iso(args["updated_after"]))
        if "created_after" in args:
            where.add("p.created_at >= :created_after", created_after=iso(args["created_after"]))

    @property
    def narrow(self) -> bool | str:
        """Whether a filter picks out few products through an index of its own (a search,
        a collection, an option, a slug or SKU, out of stock): a page then sorts those
        (``shop.db.pages.paginate``'s ``narrow``); ``IF_FEW`` for a category,
        which may hold a few products or most of them: their count decides."""
        if (
            self.match is not None
            or any(name in self.args for name in _NARROWING)
            or (self.args.get("in_stock") is False or bool(self.args.get("options")))
            or bool(self.args.get("low_stock"))
        ):
            return True
        if any(name in self.args for name in _COUNT_DECIDES):
            return IF_FEW
        return False

    @property
    def filtered(self) -> bool:
        """Whether anything but ``active`` filters the list (its total is then counted)."""
        return self.match is not None or any(
            condition not in ("p.active = 1", "p.active = :active")
            for condition in self.where.conditions
        )

    def sql(self, ranked: bool = False) -> str:
        """What follows ``FROM products p``: joins and ``WHERE ...``; ``ranked`` joins what
        the search's rank needs."""
        if self.match and ranked and not self.match.empty:
            conditions = [*self.where.conditions, self.match.ranked_condition]
            return self.match.ranked_join + Where(*filter(None, conditions)).sql()
        return self.filters().sql()

    def filters(self) -> Where:
        """Every filter, the search's match included, as one ``Where`` on ``products p``
        (what a list sorted by a column pages with)."""
        filters = Where(*self.where.conditions, **self.where.params)
        if self.match and self.match.empty:
            filters.add("1 = 0")  # a search without a word finds nothing
        elif self.match:
            filters.add(self.match.condition)
        return filters

    def dense_filters(self) -> Where | None:
        """``filters()`` for a page that walks the sort's index testing each product (a
        category past the count's cap, ``shop.db.pages.IF_FEW``), or None: the category as
        its tree's query, not its ids as values (why: docs/performance.md, "The product
        filters at 100,000 products", item 4)."""
        if not self._walked:
            return None
        filters = self.filters()
        dense = Where(**filters.params)
        for condition in filters.conditions:
            condition, params = self._walked.get(condition, (condition, {}))
            dense.add(condition, **params)
        return dense

    def counts_in_order(self, sort: str) -> bool:
        """Whether the capped total is counted along the page's own order: stock alone (with
        the state) by creation time, so that the partial stock indexes (active, created_at,
        id), which hold that filter, count it without a row; in no order SQLite counted it
        through another index of ``active`` reading a row per match (1.4 ms at 100,000
        products, 53 µs along the order: docs/performance.md, "List filters at 100k,
        continued")."""
        stock = {"p.stock > 0", "p.stock = 0"}
        state = {"p.active = 1", "p.active = :active"}
        return (
            self.match is None
            and sort in ("-created_at", "created_at")
            and bool(stock & set(self.where.conditions))
            and set(self.where.conditions) <= stock | state
        )

    def keyed(self, sort: str) -> tuple[str, Where] | None:
        """For a page of one collection or one option value (with the state and no other
        filter) sorted by a column ``KEYED_SOURCES`` holds: what to page instead of
        ``products p`` and its filters (the state); otherwise None."""
        state = [c for c in self.where.conditions if c in ("p.active = 1", "p.active = :active")]
        rest = [c for c in self.where.conditions if c not in state]
        keys = {IN_COLLECTION_ID: "collection_id", IN_COLLECTION: "collection"}
        options = self.args.get("options") or {}
        if len(options) == 1 and len(next(iter(options.values()))) == 1:  # one value
            keys[self._options] = "options"
        if self.match is not None or not state or len(rest) != 1 or rest[0] not in keys:
            return None
        if SORTS[sort].split()[0].rstrip(",") not in _KEYED_SORTS:
            return None
        key = keys[rest[0]]
        named = ("active", key, "opt0", "opt0v0")
        return KEYED_SOURCES[key], Where(
            *state, **{k: v for k, v in self.where.params.items() if k in named}
        )

    def count_sql(self) -> str:
        return "SELECT COUNT(*) FROM products p" + self.sql()


def fetch(ids: list[str]) -> list[dict]:
    """The products of ``ids``, in that order, as the list shows them."""
    marks, params = db.in_list("id", ids)
    rows = {row["id"]: row for row in db.query(SELECT + f" WHERE p.id IN {marks}", params)}
    return [present(rows[i]) for i in ids if i in rows]


def list_page(query: ProductQuery, args: dict) -> dict:
    """A page of the product list (``GET /products`` and the console's): ``args`` holds
    ``sort`` (``SORTS``; by default ``relevance`` with a search, else ``-created_at``) and
    the page (``page``, ``page_size``, ``cursor``; a search by relevance pages by number)."""
    sort = args.get("sort") or ("relevance" if "q" in args else "-created_at")
    if sort == "relevance":
        if query.match is None:
            raise Invalid("sort: relevance needs q (a search).")
        if args.get("cursor"):
            raise Invalid("cursor: a search by relevance pages with `page`; or sort by a column.")
        return ranked_page(query, args, fetch, SELECT, present)
    keyed = query.keyed(sort)
    if keyed is not None:  # the total is exact, as when the matches were collected
        source, where = keyed
        return paginate(
            SELECT, source, where, SORTS[sort], args, convert=present,
            exact_total=f"SELECT COUNT(*) FROM {source}{where.sql()}", total_in_page=True,
        )  # fmt: skip
    kept = None
    if not query.filtered and not query.where.conditions:
        kept = totals.SQL[totals.PRODUCTS]
    elif not query.filtered and args.get("active", True):
        kept = totals.SQL[totals.ACTIVE_PRODUCTS]
    return paginate(
        SELECT,
        "products p",
        query.filters(),
        SORTS[sort],
        args,
        convert=present,
        exact_total=kept,
        narrow=query.narrow,
        dense=query.dense_filters(),
        count_in_order=query.counts_in_order(sort),
    )


def ranked_page(query: ProductQuery, args: dict, fetch, select: str, convert) -> dict:
    """A page of a search sorted by relevance: the ids of the page, ranked, with the total of
    the matches in the same pass (the rank sorts every match anyway), then ``fetch(ids)``
    for their records, so that only the page's rows are built; a search of the whole
    catalogue (``Match.quick_page``) reads the page's rows of ``select`` in the same
    statement, each through ``convert``. Its total is exact and it has no ``next_cursor``:
    a rank is no keyset (docs/openapi.md#lists)."""
    page, page_size = args["page"], args["page_size"]
    done = {"page": page, "page_size": page_size, "total_is_exact": True, "next_cursor": None}
    if query.match.empty:  # no word: nothing found
        return {"items": [], "total": 0, **done}
    conditions = query.where.conditions
    if conditions in ([], ["p.active = 1"]) or conditions == ["p.active = :active"]:
        active = None if not conditions else bool(query.where.params.get("active", True))
        quick = query.match.quick_page(active, (page - 1) * page_size, page_size, select)
        if quick is not None:
            rows, total = quick
            return {"items": [convert(row) for row in rows], "total": total, **done}
    rows = db.query(
        "SELECT p.id, COUNT(*) OVER () AS total FROM products p"
        + query.sql(ranked=True)
        + f" ORDER BY {query.match.order} LIMIT :limit OFFSET :offset",
        {**query.where.params, "limit": page_size, "offset": (page - 1) * page_size},
    )
    if rows:
        total = rows[0]["total"]
    else:  # an empty first page tells the total itself
        total = 0 if page == 1 else db.value(query.count_sql(), query.where.params)
    items = fetch([row["id"] for row in rows]) if rows else []
    return {"items": items, "total": total, **done}


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


def facets(args: dict, *, only_active: bool, categories: bool = True) -> dict:
    """The facets of the products ``args`` select (see the module's docstring). A group
    whose other filters name at most a category and the state (the whole catalogue, a
    category page, a category page with a price band or one option chosen) is read from
    the counts the writes keep (``_Kept``); any other is counted from the products.
    ``categories=False`` leaves out the category group (every category of the shop: a
    page that shows no category counts does not pay for them)."""
    kept = _Kept(only_active)
    priced_args = _without(args, "min_price", "max_price")
    if _kept(priced_args):
        bands = kept.bands(priced_args)
    else:
        bands = _counted_bands(ProductQuery(priced_args, only_active=only_active))
    if _kept(args):  # the bands of all its products when no price filters
        total = sum(n or 0 for n in bands) if args == priced_args else kept.total(args)
    else:
        query = ProductQuery(args, only_active=only_active)
        total = db.value(query.count_sql(), query.where.params)
    found = {"total": total}
    if categories:
        found["categories"] = _categories(_direct(args, only_active, kept))
    found["price_bands"] = [
        {"min_price": low, "max_price": high, "count": bands[i] or 0}
        for i, (low, high) in enumerate(PRICE_BANDS)
    ]
    found["options"] = _option_facets(args, only_active, kept)
    return found


def _direct(args: dict, only_active: bool, kept: "_Kept") -> dict[str, int]:
    """The products per category of their own (not counting sub-categories'), with every
    filter of ``args`` but the category."""
    placed_args = _without(args, "category_id", "category")
    if _kept(placed_args):
        return kept.direct(placed_args)
    placed = ProductQuery(placed_args, only_active=only_active)
    rows = db.query(
        "SELECT m.category_id, COUNT(*) AS n"
        f" FROM (SELECT p.category_id FROM products p{placed.sql()}) m"
        " WHERE m.category_id IS NOT NULL GROUP BY m.category_id",
        placed.where.params,
    )
    return {r["category_id"]: r["n"] for r in rows}


def _counted_bands(priced: ProductQuery) -> list:
    """The products per price band, counted from the products ``priced`` selects."""
    bands, params = [], dict(priced.where.params)
    for i, (low, high) in enumerate(PRICE_BANDS):
        params[f"low{i}"], params[f"high{i}"] = low, high
        upper = f" AND p.price_cents <= :high{i}" if high is not None else ""
        bands.append(f"SUM(CASE WHEN p.price_cents >= :low{i}{upper} THEN 1 ELSE 0 END)")
    row = db.one(
        "SELECT "
        + ", ".join(f"{b} AS b{i}" for i, b in enumerate(bands))
        + " FROM products p"
        + priced.sql(),
        params,
    )
    return [row[f"b{i}"] for i in range(len(PRICE_BANDS))]


class _Kept:
    """The facet groups read from the counts the writes keep (``facet_prices``,
    ``facet_options``): a few hundred rows, not every product; for ``args`` that ``_kept``
    accepts."""

    def __init__(self, only_active: bool):
        self.only_active = only_active

    def _where(self, args: dict, tree: bool = True) -> Where:
        where = Where()
        if "active" in args:
            where.add("active = :active", active=int(args["active"]))
        elif self.only_active:
            where.add("active = 1")
        for key, query in (("category_id", CATEGORY_TREE), ("category", CATEGORY_REF_TREE)):
            if tree and key in args:
                marks, params = db.in_list("tree", _tree_ids(query, key, args[key]) or [""])
                where.add(f"category_id IN {marks}", **params)
        return where

    def bands(self, args: dict) -> list:
        where = self._where(args)
        found = {
            row["low"]: row["n"]
            for row in db.query(
                f"SELECT low, SUM(n) AS n FROM facet_prices{where.sql()} GROUP BY low",
                where.params,
            )
        }
        return [found.get(low) for low, _ in PRICE_BANDS]

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


def _option_facets(args: dict, only_active: bool, kept: _Kept) -> list[dict]:
    """Per option name, per value, the products with an active variant of that value that
    also meets the other names' filters (the same variant) and every other filter; from the
    kept counts when those filters are a category and the state alone."""
    chosen = args.get("options") or {}
    others = ProductQuery({**args, "options": {}}, only_active=only_active)
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
        if not applied and _kept(others.args):
            for row in kept.values(others.args, names, named):
                counts.setdefault(row["name"], {})[row["value"]] = row["n"]
            continue
        conditions, params = _variant_condition(applied, "o2v", "fo")
        conditions.append(f"ov.{names}")
        if applied:  # from the few variants with the other names' values, then their products
            tables = "product_variants o2v CROSS JOIN variant_option_values ov"
            joined = "ov.variant_id = o2v.id"
            products = f"EXISTS (SELECT 1 FROM products p{others.sql()} AND p.id = ov.product_id)"
            if not others.where.conditions and not others.match:
                products = "1 = 1"
        else:
            tables = "variant_option_values ov JOIN product_variants o2v ON o2v.id = ov.variant_id"
            joined = "1 = 1"
            products = f"ov.product_id IN (SELECT p.id FROM products p{others.sql()})"
        rows = db.query(
            f"SELECT ov.name, ov.value, COUNT(DISTINCT ov.product_id) AS n FROM {tables}"
            f" WHERE {joined} AND o2v.active = 1 AND "
            + " AND ".join(conditions)
            + f" AND {products} GROUP BY ov.name, ov.value",
            {**others.where.params, **params, **named},
        )
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
