"""The product list as every face of the shop reads it: the API's ``GET /products`` and the
storefront's product, category, collection and search pages call ``page`` with the same
filters (``ProductQuery``) and get the same page."""

from shop import db
from shop.catalogue.present import SELECT, present
from shop.catalogue.product_query import ProductQuery, ranked_page
from shop.db import totals
from shop.db.pages import paginate
from shop.errors import Invalid

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


def fetch(ids: list[str]) -> list[dict]:
    """The products of ``ids``, in that order, as the list shows them."""
    marks, params = db.in_list("id", ids)
    rows = {row["id"]: row for row in db.query(SELECT + f" WHERE p.id IN {marks}", params)}
    return [present(rows[i]) for i in ids if i in rows]


def page(query: ProductQuery, args: dict) -> dict:
    """A page of the products ``query`` picks, sorted by ``args["sort"]`` (default: by
    relevance for a search, else newest first), paged by ``page``/``page_size``/``cursor``."""
    sort = args.get("sort") or ("relevance" if "q" in args else "-created_at")
    if sort == "relevance":
        if query.match is None:
            raise Invalid("sort: relevance needs q (a search).")
        if args.get("cursor"):
            raise Invalid("cursor: a search by relevance pages with `page`; or sort by a column.")
        return ranked_page(query, args, fetch, SELECT, present)
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
    )
