"""Which products a list shows: its filters and search as SQL, and a page of them.

``GET /products`` and ``GET /products/facets`` (``shop.catalogue.facets``) take the same
filters and build them here (docs/catalogue-and-content.md, "Search and facets").
"""

from shop import db
from shop.catalogue import search
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
    "option_pairs": _KEYS.format(  # two names, the first in code point order (0044)
        t="op", table="option_pairs",
        where="op.name = :opt0 AND op.value = :opt0v0"
        " AND op.other_name = :opt1 AND op.other_value = :opt1v0",
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


def tree_ids(tree: str, key: str, value: str, trees: dict) -> list[str]:
    """The ids of the category ``value`` names and of every category below it, read once
    and kept in ``trees`` (the facets build several queries of one category: four reads of
    its tree were a tenth of their statements' CPU)."""
    ids = trees.get((tree, key, value))
    if ids is None:
        ids = trees[(tree, key, value)] = [row["id"] for row in db.query(tree, {key: value})]
    return ids


def _in_tree(tree: str, key: str, value: str, trees: dict) -> tuple[str, dict]:
    """The condition (and its values) that a product is in the category ``value`` names or
    below it: the tree's ids, read now; nothing matches an unknown category."""
    ids = tree_ids(tree, key, value, trees)
    if not ids:
        return "1 = 0", {}
    marks, params = db.in_list(key, ids)
    return f"p.category_id IN {marks}", params


def option_variants(options: dict[str, list[str]], tag: str) -> tuple[str, str, dict]:
    """The tables (``o0``, ``o1``... of ``variant_option_values``), the conditions and their
    parameters (named with ``tag``) of the active variants that have one of the values of
    every option name given: ``o0`` is each such variant's row of the first name.

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
    conditions.append(
        "o0.variant_id NOT IN (SELECT v.id FROM product_variants v WHERE v.active = 0)"
    )
    # CROSS JOIN keeps SQLite's join order: the first name's values lead.
    return " CROSS JOIN ".join(tables), " AND ".join(conditions), params


def _option_products(options: dict[str, list[str]], tag: str) -> tuple[str, dict]:
    """SQL of the ids of the products with an active variant that has one of the values of
    every option name given, and its parameters (named with ``tag``): two names from
    ``option_pairs`` (0044: a row per product and pair of values one active variant has),
    so that no variant of the first value is tested for the second; more from the
    variants."""
    if len(options) != 2:
        tables, conditions, params = option_variants(options, tag)
        return f"SELECT o0.product_id FROM {tables} WHERE {conditions}", params
    (first, values), (other, others) = sorted(options.items())  # code point order, as kept
    marks, params = db.in_list(f"{tag}0v", values)
    other_marks, other_params = db.in_list(f"{tag}1v", others)
    return (
        f"SELECT op.product_id FROM option_pairs op WHERE op.name = :{tag}0"
        f" AND op.value IN {marks} AND op.other_name = :{tag}1 AND op.other_value IN"
        f" {other_marks}",
        {**params, **other_params, f"{tag}0": first, f"{tag}1": other},
    )


class ProductQuery:
    """The filters of a product list: ``where`` (every filter but the search) and ``match``
    (the search, or None); ``sql()`` is what follows ``FROM products p``."""

    def __init__(self, args: dict, *, only_active: bool, trees: dict | None = None):
        """``trees``: the category trees read so far, shared with other queries of the same
        answer (``tree_ids``); kept as ``self.trees``."""
        self.args = args
        self.trees = trees = {} if trees is None else trees
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
                condition, params = _in_tree(tree, key, args[key], trees)
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
        """For a page of one collection, one option value or one value of each of two option
        names (with the state and no other filter) sorted by a column ``KEYED_SOURCES``
        holds: what to page instead of ``products p`` and its filters (the state); otherwise
        None."""
        state = [c for c in self.where.conditions if c in ("p.active = 1", "p.active = :active")]
        rest = [c for c in self.where.conditions if c not in state]
        keys = {IN_COLLECTION_ID: "collection_id", IN_COLLECTION: "collection"}
        options = self.args.get("options") or {}
        if len(options) in (1, 2) and all(len(v) == 1 for v in options.values()):  # a value each
            keys[self._options] = "options" if len(options) == 1 else "option_pairs"
        if self.match is not None or not state or len(rest) != 1 or rest[0] not in keys:
            return None
        if SORTS[sort].split()[0].rstrip(",") not in _KEYED_SORTS:
            return None
        key = keys[rest[0]]
        named = ("active", key, "opt0", "opt0v0", "opt1", "opt1v0")
        return KEYED_SOURCES[key], Where(
            *state, **{k: v for k, v in self.where.params.items() if k in named}
        )

    def count_sql(self) -> str:
        return "SELECT COUNT(*) FROM products p" + self.sql()

    def sampled(self) -> str:
        """``sql()`` for a few of the matches in no order (the facets' sample): the search
        joined, so that its index leads and the engine stops at the LIMIT, and one option
        name read from ``option_products`` (a row per product and value of an active
        variant) instead of every variant of the value, as ``IN`` lists the matches first;
        a collection joined by its key, for the same reason."""
        conditions = list(self.where.conditions)
        join = ""
        if self.match is not None and self.match.empty:
            conditions.append("1 = 0")
        elif self.match is not None:
            join = self.match.driving_join
        for condition, collection in (
            (IN_COLLECTION_ID, "= :collection_id"),
            (IN_COLLECTION, f"IN ({BY_ID_OR_SLUG['collections']})"),
        ):
            if condition in conditions:  # one row a product: its key (collection_id, product_id)
                conditions.remove(condition)
                join += (
                    " JOIN collection_products fc ON fc.product_id = p.id"
                    f" AND fc.collection_id {collection}"
                )
        options = self.args.get("options") or {}
        if len(options) == 1:
            (values,) = options.values()
            marks = db.in_list("opt0v", values)[0]
            conditions[conditions.index(self._options)] = (
                "p.id IN (SELECT op.product_id FROM option_products op"
                f" WHERE op.name = :opt0 AND op.value IN {marks})"
            )
        return join + Where(*conditions).sql()


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
