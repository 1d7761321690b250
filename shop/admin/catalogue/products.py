"""The console's product pages (issue 37): the list (the API's search, filters and cursor
pages, ``product_query.list_page``), bulk activate/deactivate, and a product's create, edit
and delete through ``shop.catalogue.products``: the same functions and checks as
``POST``/``PUT``/``DELETE /products``, so a page never allows what the API refuses.

Reading needs ``products.read``; creating ``products.create``; editing and bulk changes
``products.update``; deleting ``products.delete``. Its collections are set from the product's
form with ``collections.update`` (``shop.catalogue.collections``, as ``PUT /collections/{id}``).
"""

from urllib.parse import urlencode

from flask import g, redirect, render_template, request, url_for
from werkzeug.exceptions import HTTPException

from shop import db
from shop.admin.catalogue.forms import (
    amount,
    checked,
    money,
    number,
    optional,
    refusal,
    shop_currency,
    text,
)
from shop.admin.views import ID_RE, _require, bp
from shop.catalogue import categories, collections, images, products
from shop.catalogue.present import get_product
from shop.catalogue.product_query import ProductQuery, list_page
from shop.db.pages import ASKED
from shop.errors import Invalid, ShopError
from shop.http.errors import abort
from shop.money import display

PAGE_SIZE = 25
MAX_OPTIONS = 3
LABELS = {
    "name": "Name",
    "slug": "URL slug",
    "description": "Description",
    "category_id": "Category",
    "tax_class": "Tax class",
    "low_stock_threshold": "Low-stock alert at",
    "price_cents": "Price",
    "stock": "Stock",
    "sku": "SKU",
    "options": "Options",
    **{f"options.{i}.name": f"Option {i + 1} name" for i in range(MAX_OPTIONS)},
    **{f"options.{i}.values": f"Option {i + 1} values" for i in range(MAX_OPTIONS)},
}
_DONE = {
    "created": "Product created. Add its variants and images below.",
    "saved": "Product saved.",
    "deleted": "Product deleted.",
    "variants": "Variants saved.",
    "generated": "Variants generated.",
    "variant_deleted": "Variant deleted.",
    "image": "Image uploaded.",
    "images": "Images saved.",
    "image_deleted": "Image deleted.",
    "activated": "Products activated.",
    "deactivated": "Products deactivated.",
}


def done_message() -> str | None:
    return _DONE.get(request.args.get("done", ""))


# --- The list -------------------------------------------------------------------------


def _filters() -> dict:
    """The list's filters from the query string, as ``ProductQuery`` takes them (unknown
    values are left out rather than refused: a filter link is never an error page)."""
    args = {}
    q = request.args.get("q", "").strip()[:200]
    if q:
        args["q"] = q
    category = request.args.get("category", "")
    if ID_RE.fullmatch(category):
        args["category_id"] = category
    active = request.args.get("active")
    if active in ("1", "0"):
        args["active"] = active == "1"
    if request.args.get("low_stock") == "1":
        args["low_stock"] = True
    return args


@bp.route("/products")
def products_list():
    """Products by name: search (the API's full-text search), filters, cursor pages."""
    _require("products.read")
    filters = _filters()
    shown = {
        "q": filters.get("q", ""),
        "category": filters.get("category_id", ""),
        "active": request.args.get("active") if "active" in filters else "",
        "low_stock": "1" if filters.get("low_stock") else "",
    }
    cursor = request.args.get("cursor", "")[:4096] or None
    args = {
        **filters,
        "sort": "name",
        "page": 1,
        "page_size": PAGE_SIZE,
        "cursor": cursor,
        ASKED: [url_for("admin.products_list"), sorted(shown.items())],
        "options": {},
    }
    error, status = None, 200
    try:
        result = list_page(ProductQuery(args, only_active=False), args)
    except ShopError as caught:  # a cursor from another list or a hand-made one
        error, status = refusal(caught)
        result = {"items": [], "total": 0, "next_cursor": None, "total_is_exact": True}

    def list_url(**changes):
        query = {k: v for k, v in {**shown, **changes}.items() if v}
        return url_for("admin.products_list") + "?" + urlencode(query)

    page = render_template(
        "admin/catalogue/products.html",
        result=result,
        shown=shown,
        filtered=any(shown.values()),
        cursor=cursor,
        list_url=list_url,
        categories=categories.every(),
        money=display,
        done=done_message(),
        error=error,
    )
    return page, status


@bp.route("/products/bulk", methods=["POST"])
def products_bulk():
    """Activate or deactivate the ticked products, all in one transaction."""
    _require("products.update")
    action = request.form.get("action")
    if action not in ("activate", "deactivate"):
        abort(400, "Choose Activate or Deactivate.")
    ids = [i for i in request.form.getlist("ids")[:500] if ID_RE.fullmatch(i)]
    if not ids:
        abort(400, "Tick at least one product first.")
    with db.transaction():
        for product_id in ids:
            products.update_product(product_id, {"active": action == "activate"}, g.caller.actor)
    back = request.form.get("back", "")
    target = back if back.startswith("/admin/products") else url_for("admin.products_list")
    joiner = "&" if "?" in target else "?"
    return redirect(f"{target}{joiner}done={action}d", 303)


# --- Create and edit ------------------------------------------------------------------


def _options_form() -> list[dict]:
    """The option rows of the form (a name and its comma-separated values each); rows
    left empty are left out."""
    options = []
    for i in range(1, MAX_OPTIONS + 1):
        name = text(f"option-{i}-name")[:1000]
        values = [v.strip() for v in text(f"option-{i}-values").split(",") if v.strip()]
        if name or values:
            options.append({"name": name, "values": values})
    return options


def _product_form(currency: str, creating: bool) -> dict:
    """The product form as the API's body (``ProductCreateSchema``/``ProductUpdateSchema``)."""
    data = {
        "name": text("name"),
        "description": text("description"),
        "category_id": optional("category_id"),
        "tax_class": text("tax_class") or "standard",
        "active": checked("active"),
        "low_stock_threshold": number("low_stock_threshold", "Low-stock alert at"),
        "options": _options_form(),
    }
    if text("slug") or creating:
        data["slug"] = text("slug")
        if not data["slug"]:
            del data["slug"]  # derived from the name
    if creating:
        price = money("price", "Price", currency)
        if price is None:
            raise Invalid("Price: give the price, such as 12.50.")
        data.update(price_cents=price, stock=number("stock", "Stock") or 0, sku=optional("sku"))
    return data


def _collections_form() -> list[str] | None:
    """The ticked collections, or None when the viewer may not change collections."""
    if not g.caller.can("collections.update"):
        return None
    return [i for i in request.form.getlist("collections")[:1000] if ID_RE.fullmatch(i)]


def _set_collections(product_id: str, wanted: list[str] | None) -> None:
    """Put the product in the ``wanted`` collections and out of the others, through the
    API's collection update (it goes last in a collection it joins)."""
    if wanted is None:
        return
    every = collections.every()
    unknown = set(wanted) - {c["id"] for c in every}
    if unknown:
        raise Invalid(f"Collections: no collection has the id {sorted(unknown)[0]!r}.")
    for collection in every:
        ids = collection["product_ids"]
        inside, want = product_id in ids, collection["id"] in wanted
        if inside != want:
            new = [*ids, product_id] if want else [i for i in ids if i != product_id]
            collections.update(collection["id"], {"product_ids": new}, g.caller.actor)


def _form_values(product: dict | None, currency: str, posted: bool) -> dict:
    """What the product form shows: the posted values after its refusal, else the product's."""
    if posted:
        form = request.form
        values = {key: form.get(key, "") for key in form if key != "csrf_token"}
        values["active"] = checked("active")
        values["collections"] = form.getlist("collections")
        return values
    if product is None:
        return {"active": True, "tax_class": "standard", "collections": []}
    values = {
        "name": product["name"],
        "slug": product["slug"],
        "description": product["description"],
        "category_id": product["category_id"] or "",
        "tax_class": product["tax_class"],
        "active": product["active"],
        "low_stock_threshold": ""
        if product["low_stock_threshold"] is None
        else str(product["low_stock_threshold"]),
        "collections": product["collection_ids"],
        "price": amount(product["price_cents"], currency),
    }
    for i, option in enumerate(product["options"], start=1):
        values[f"option-{i}-name"] = option["name"]
        values[f"option-{i}-values"] = ", ".join(option["values"])
    return values


def render_product(product: dict | None, error: str | None = None, status: int = 200, **extra):
    """The product's page (``None``: the new product form), with ``error`` on it."""
    currency = shop_currency()
    error_form = extra.pop("error_form", "product")
    posted = request.method == "POST" and error_form == "product"
    page = render_template(
        "admin/catalogue/product.html",
        product=product,
        values=_form_values(product, currency, posted),
        currency=currency,
        max_options=MAX_OPTIONS,
        categories=categories.every(),
        collections=collections.every(),
        money=lambda cents: display(cents, currency),
        amount=lambda cents: amount(cents, currency),
        image_url=images.url_of,
        done=done_message(),
        error=error,
        error_form=error_form,
        **extra,
    )
    return page, status


def load(product_id: str) -> dict:
    """The product as a holder of ``products.read`` sees it (the error page when none)."""
    try:
        return get_product(product_id)
    except ShopError:
        abort(404, "Product not found.")


@bp.route("/products/new", methods=["GET", "POST"])
def product_new():
    """A new product: its details, first price and stock, options and collections."""
    _require("products.create")
    if request.method == "GET":
        return render_product(None)
    try:
        data = _product_form(shop_currency(), creating=True)
        wanted = _collections_form()
        with db.transaction():
            if wanted:
                db.lock("collections")  # collections before products, as the API's PUT
            product_id = products.create_product(data, g.caller.actor)
            _set_collections(product_id, wanted)
    except (HTTPException, ShopError) as caught:
        return render_product(None, *refusal(caught, LABELS))
    return redirect(url_for("admin.product_page", product_id=product_id, done="created"), 303)


@bp.route("/products/<id:product_id>", methods=["GET", "POST"])
def product_page(product_id):
    """One product: its details, variants and images, each its own form."""
    _require("products.read")
    product = load(product_id)
    if request.method == "GET":
        return render_product(product)
    _require("products.update")
    try:
        data = _product_form(shop_currency(), creating=False)
        wanted = _collections_form()
        with db.transaction():
            if wanted is not None:
                db.lock("collections")  # collections before products, as the API's PUT
            products.update_product(product_id, data, g.caller.actor)
            _set_collections(product_id, wanted)
    except (HTTPException, ShopError) as caught:
        return render_product(product, *refusal(caught, LABELS))
    return redirect(url_for("admin.product_page", product_id=product_id, done="saved"), 303)


@bp.route("/products/<id:product_id>/delete", methods=["POST"])
def product_delete(product_id):
    """Delete a product (its variants go with it; orders keep their copy), once confirmed."""
    _require("products.delete")
    product = load(product_id)
    if not checked("confirm"):
        return render_product(
            product,
            "Tick “Yes, delete this product” to delete it.",
            400,
            error_form="delete",
        )
    try:
        with db.transaction():
            products.delete_product(product_id, g.caller.actor)
    except ShopError as caught:
        return render_product(product, *refusal(caught, LABELS), error_form="delete")
    return redirect(url_for("admin.products_list", done="deleted"), 303)
