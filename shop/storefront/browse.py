"""The pages a visitor browses: home, every product, a category, a collection, a search,
a product, and the shop's own pages (about, terms...). Each reads through the catalogue's
own functions (``shop/catalogue/listing.py`` is the API's list too)."""

import re

from flask import current_app, g, render_template, request, url_for

from shop.catalogue import browse, images
from shop.catalogue.facet_counts import PRICE_BANDS
from shop.catalogue.facets import facets
from shop.catalogue.product_query import (
    MAX_OPTION_NAMES,
    MAX_OPTION_TEXT,
    MAX_OPTION_VALUES,
    ProductQuery,
    list_page,
)
from shop.errors import Invalid
from shop.site import pages
from shop.storefront import frame, seo
from shop.storefront.frame import bp

PAGE_SIZE = 24
# The sorts a visitor picks from (list.html labels them).
SORTS = ("-created_at", "price", "-price", "name")
OPTION = "option."
# A slug an address holds as it is (no character to quote): what the catalogue's slugs are.
_PLAIN_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


@bp.get("/")
def home():
    """The front page: the featured collection (the one at the slug ``featured``, else the
    first by title; none: the newest products) and the top categories."""
    collections = browse.collections()
    featured = next((c for c in collections if c["slug"] == "featured"), None)
    featured = featured or (collections[0] if collections else None)
    args = {"collection_id": featured["id"]} if featured else {}
    found = list_page(ProductQuery(args, only_active=True), _paging({}, 8))
    return render_template(
        "store/home.html",
        shop=frame.shop_settings(),
        featured=featured,
        products=_with_pictures(found["items"]),
        categories=_with_addresses("store.category", browse.top_categories()),
        canonical=url_for("store.home", _external=True),
    )


@bp.get("/products")
def products():
    """Every product for sale, with the filters and paging of a category page."""
    return _listing("store/list.html", {}, title=None)


@bp.get("/categories/<slug>")
def category(slug: str):
    """A category's products (its sub-categories' too), filtered by the visitor's form."""
    found, trail, trees = browse.category_page(slug)
    return _listing(
        "store/list.html",
        {"category_id": found["id"]},
        title=found["name"],
        description=found["description"],
        trail=trail,
        trees=trees,
    )


@bp.get("/collections/<slug>")
def collection(slug: str):
    """A collection's products, filtered by the visitor's form."""
    found = browse.collection_by_slug(slug)
    return _listing(
        "store/list.html",
        {"collection_id": found["id"]},
        title=found["title"],
        description=found["description"],
    )


@bp.get("/search")
def search():
    """The shop's search (the API's full-text search), best matches first."""
    words = request.args.get("q", "").strip()[:200]
    if not words:
        return render_template(
            "store/search.html", shop=frame.shop_settings(), words="", found=None
        )
    args = {"q": words}
    page_number = _page_number()
    found = list_page(
        ProductQuery(args, only_active=True),
        {"page": page_number, "page_size": PAGE_SIZE, "sort": "relevance"},
    )
    more = page_number * PAGE_SIZE < found["total"]
    return render_template(
        "store/search.html",
        shop=frame.shop_settings(),
        words=words,
        found=found,
        products=_with_pictures(found["items"]),
        next_page=page_number + 1 if more else None,
    )


@bp.get("/products/<slug>")
def product(slug: str):
    """A product: its pictures, a variant picker (a plain form), price and availability."""
    return product_page(slug, request.args.get("variant"))


def product_page(slug: str, variant: str | None, problem: str | None = None, status: int = 200):
    """The product page with ``variant`` chosen, and a refusal to show (``problem``)."""
    found = browse.product_by_slug(slug)
    shop = frame.shop_settings()
    chosen = _chosen_variant(found["variants"], variant)
    trail = browse.trail(browse.category_by_id(found["category_id"]))
    return render_template(
        "store/product.html",
        shop=shop,
        product=found,
        variant=chosen,
        trail=trail,
        pictures=[_picture(image) for image in found["images"]],
        structured=seo.product_data(found, shop, trail),
        canonical=url_for("store.product", slug=slug, _external=True),
        problem=problem,
    ), status


@bp.get("/pages/<key>")
def page(key: str):
    """One of the shop's own pages from the content registry (about, terms...)."""
    found = pages.page(key)
    return render_template(
        "store/page.html",
        shop=frame.shop_settings(),
        page=found,
        canonical=url_for("store.page", key=key, _external=True),
    )


@bp.app_template_global()
def footer_pages() -> list[dict]:
    """The published pages the footer links to, in ``pages.FOOTER`` order (read with the
    page's settings, ``frame.shop_settings``)."""
    published = g.get("store_pages")
    if published is None:
        published = pages.published()
    found = {p["key"]: p for p in published}
    return [found[key] for key in pages.FOOTER if key in found]


def _listing(template: str, fixed: dict, *, title, description="", trail=(), trees=None):
    """A list page: ``fixed`` (its category or collection) and the visitor's filters;
    ``trees``: its category's tree, when read already (``ProductQuery``)."""
    chosen = _filters()
    args = {**fixed, **chosen}
    sort = request.args.get("sort", "-created_at")
    if sort not in SORTS:
        raise Invalid(f"sort: choose one of {', '.join(SORTS)}.")
    query = ProductQuery(args, only_active=True, trees=trees)
    found = list_page(query, {**_paging(request.args, PAGE_SIZE), "sort": sort})
    counted = facets(args, only_active=True, categories=False, trees=query.trees)  # none shown
    kept = {key: value for key, value in request.args.items(multi=True) if key != "cursor"}
    return render_template(
        template,
        shop=frame.shop_settings(),
        title=title,
        description=description,
        trail=trail,
        found=found,
        products=_with_pictures(found["items"]),
        facets=counted,
        chosen=chosen,
        sort=sort,
        sorts=SORTS,
        bands=PRICE_BANDS,
        next_args={**kept, "cursor": found["next_cursor"]} if found["next_cursor"] else None,
        canonical=request.base_url,
    )


def _filters() -> dict:
    """The visitor's filters from the form: option values, a price band, in stock only."""
    args: dict = {}
    options = {}
    for key, values in request.args.lists():
        if key.startswith(OPTION):
            name = key.removeprefix(OPTION)[:MAX_OPTION_TEXT]
            kept = sorted({v[:MAX_OPTION_TEXT] for v in values if v})[:MAX_OPTION_VALUES]
            if name and kept and len(options) < MAX_OPTION_NAMES:
                options[name] = kept
    args["options"] = options
    band = request.args.get("price", "")
    low, _, high = band.partition("-")
    if low.isascii() and low.isdigit():
        args["min_price"] = int(low)
        if high.isascii() and high.isdigit():
            args["max_price"] = int(high)
    if request.args.get("in_stock") == "1":
        args["in_stock"] = True
    return args


def _paging(source, size: int) -> dict:
    """The page's size and cursor (a cursor from another list or sort is a 400)."""
    args = {"page": 1, "page_size": size}
    cursor = source.get("cursor") if source else None
    if cursor:
        args["cursor"] = cursor[:500]
    return args


def _page_number() -> int:
    """A search's page number (a relevance rank pages by number): 1 to 100."""
    raw = request.args.get("page", "1")
    return min(int(raw), 100) if raw.isascii() and raw.isdigit() and int(raw) > 0 else 1


def _chosen_variant(variants: list[dict], wanted: str | None) -> dict | None:
    """The variant the visitor picked (by id), else the first one in stock, else the first."""
    for variant in variants:
        if variant["id"] == wanted:
            return variant
    return next((v for v in variants if v["stock"] > 0), variants[0] if variants else None)


def _picture(image: dict) -> dict:
    """An image with its ``srcset`` of the widths the shop makes (never wider than it is)."""
    widths = [w for w in images.WIDTHS if w < image["width"]] + [image["width"]]
    srcset = ", ".join(
        f"{image['url']}?w={w} {w}w" if w != image["width"] else f"{image['url']} {w}w"
        for w in widths
    )
    return {**image, "srcset": srcset, "small": f"{image['url']}?w={widths[0]}"}


def _with_pictures(products: list[dict]) -> list[dict]:
    """Each product of a page of cards with its address (``url``) and first picture
    (``picture``, or None)."""
    found = browse.first_images([p["id"] for p in products])
    urls = _addresses("store.product", [p["slug"] for p in products])
    return [
        {**p, "url": url, "picture": _picture(found[p["id"]]) if p["id"] in found else None}
        for p, url in zip(products, urls, strict=True)
    ]


def _with_addresses(endpoint: str, rows: list[dict]) -> list[dict]:
    """Each of ``rows`` (with a ``slug``) with its page's address at ``endpoint`` (``url``)."""
    urls = _addresses(endpoint, [row["slug"] for row in rows])
    return [{**row, "url": url} for row, url in zip(rows, urls, strict=True)]


def _addresses(endpoint: str, slugs: list[str]) -> list[str]:
    """``url_for(endpoint, slug=...)`` of each slug: built once, then a plain slug (what
    ``shop.catalogue.slugs`` lets through: nothing to quote) appended to the address's
    stem; any other slug through ``url_for``. A page of cards built each of its dozens of
    addresses through the routing map (docs/performance.md, "The category page at 10k")."""
    stem = url_for(endpoint, slug="-")[:-1]
    return [
        stem + slug if _PLAIN_SLUG.fullmatch(slug) else url_for(endpoint, slug=slug)
        for slug in slugs
    ]


@bp.get("/theme.css")
def theme():
    """The shop's own colours as CSS variables (settings), after the built-in stylesheet."""
    shop = frame.shop_settings()
    brand = shop["brand_color"]
    light = _luminance(brand)
    # Text on the brand colour: white or near-black, whichever contrasts more (WCAG); links
    # on white keep the brand colour only while it reads (4.5:1), else the default green.
    text = "#ffffff" if light < 0.203 else "#1c1c1c"
    link = brand if light <= 0.183 else "#1f5f4a"
    body = f":root {{ --brand: {brand}; --brand-text: {text}; --link: {link}; }}\n"
    return current_app.response_class(body, mimetype="text/css")


def _luminance(colour: str) -> float:
    """The relative luminance of ``#rrggbb`` (WCAG), 0 (black) to 1 (white)."""
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
