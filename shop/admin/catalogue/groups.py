"""The console's categories and collections pages (issue 37): list, create, edit and delete
through ``shop.catalogue.categories`` and ``shop.catalogue.collections``, the functions
``/categories`` and ``/collections`` call, so every rule and message is the API's (a
category used by products cannot be deleted; a collection's products stay when it goes).

Each needs its resource's permission: ``categories.read``/``create``/``update``/``delete``,
``collections.…`` likewise.
"""

from flask import g, redirect, render_template, request, url_for
from werkzeug.exceptions import HTTPException

from shop import db
from shop.admin.catalogue.forms import checked, number, optional, refusal, text
from shop.admin.views import ID_RE, _require, bp
from shop.catalogue import categories, collections
from shop.catalogue.present import SELECT, present
from shop.errors import ShopError
from shop.http.errors import abort

CATEGORY_LABELS = {
    "name": "Name",
    "slug": "URL slug",
    "description": "Description",
    "parent_id": "Parent",
    "position": "Position",
}
COLLECTION_LABELS = {
    "title": "Title",
    "slug": "URL slug",
    "description": "Description",
    "product_ids": "Products",
}
_DONE = {"created": "Created.", "saved": "Saved.", "deleted": "Deleted."}


def _done() -> str | None:
    return _DONE.get(request.args.get("done", ""))


def _posted() -> dict:
    return {key: request.form.get(key, "") for key in request.form if key != "csrf_token"}


# --- Categories -----------------------------------------------------------------------


def _category_form() -> dict:
    data = {
        "name": text("name"),
        "description": text("description"),
        "parent_id": optional("parent_id"),
        "position": number("position", "Position") or 0,
    }
    if text("slug"):  # left empty: derived from the name, or the one it has kept
        data["slug"] = text("slug")
    return data


def _categories_page(error=None, status=200, values=None):
    page = render_template(
        "admin/catalogue/categories.html",
        categories=categories.every(),
        values=values if values is not None else {},
        done=_done(),
        error=error,
    )
    return page, status


@bp.route("/categories", methods=["GET", "POST"])
def categories_list():
    """Every category in its tree's order, and the form for a new one."""
    if request.method == "GET":
        _require("categories.read")
        return _categories_page()
    _require("categories.create")
    try:
        categories.create(_category_form(), g.caller.actor)
    except (HTTPException, ShopError) as caught:
        return _categories_page(*refusal(caught, CATEGORY_LABELS), values=_posted())
    return redirect(url_for("admin.categories_list", done="created"), 303)


def _category_page(category: dict, error=None, status=200, values=None, form="edit"):
    page = render_template(
        "admin/catalogue/category.html",
        category=category,
        values=values if values is not None else category,
        parents=[c for c in categories.every() if c["id"] != category["id"]],
        done=_done(),
        error=error,
        error_form=form,
    )
    return page, status


def _category(category_id: str) -> dict:
    try:
        return categories.get(category_id)
    except ShopError:
        abort(404, "Category not found.")


@bp.route("/categories/<id:category_id>", methods=["GET", "POST"])
def category_page(category_id):
    """One category: its form, and its delete button."""
    _require("categories.read")
    category = _category(category_id)
    if request.method == "GET":
        return _category_page(category)
    _require("categories.update")
    try:
        categories.update(category_id, _category_form(), g.caller.actor)
    except (HTTPException, ShopError) as caught:
        return _category_page(category, *refusal(caught, CATEGORY_LABELS), values=_posted())
    return redirect(url_for("admin.category_page", category_id=category_id, done="saved"), 303)


@bp.route("/categories/<id:category_id>/delete", methods=["POST"])
def category_delete(category_id):
    """Delete a category (refused while products or sub-categories use it)."""
    _require("categories.delete")
    category = _category(category_id)
    try:
        categories.delete(category_id, g.caller.actor)
    except ShopError as caught:
        return _category_page(category, *refusal(caught, CATEGORY_LABELS), form="delete")
    return redirect(url_for("admin.categories_list", done="deleted"), 303)


# --- Collections ----------------------------------------------------------------------


def _collections_page(error=None, status=200, values=None):
    page = render_template(
        "admin/catalogue/collections.html",
        collections=collections.every(),
        values=values if values is not None else {},
        done=_done(),
        error=error,
    )
    return page, status


@bp.route("/collections", methods=["GET", "POST"])
def collections_list():
    """Every collection by title, and the form for a new one."""
    if request.method == "GET":
        _require("collections.read")
        return _collections_page()
    _require("collections.create")
    data = {"title": text("title"), "description": text("description")}
    if text("slug"):
        data["slug"] = text("slug")
    try:
        created = collections.create(data, g.caller.actor)
    except (HTTPException, ShopError) as caught:
        return _collections_page(*refusal(caught, COLLECTION_LABELS), values=_posted())
    return redirect(url_for("admin.collection_page", collection_id=created, done="created"), 303)


def _members(collection: dict) -> list[dict]:
    """The collection's products in its order, as the product list shows them."""
    ids = collection["product_ids"]
    if not ids:
        return []
    marks, params = db.in_list("id", ids)
    rows = {r["id"]: present(r) for r in db.query(SELECT + f" WHERE p.id IN {marks}", params)}
    return [rows[i] for i in ids if i in rows]


def _collection_page(collection: dict, error=None, status=200, values=None, form="edit"):
    members = _members(collection)
    inside = set(collection["product_ids"])
    others = db.query("SELECT id, name, active FROM products ORDER BY name, id LIMIT 500")
    page = render_template(
        "admin/catalogue/collection.html",
        collection=collection,
        values=values if values is not None else collection,
        members=members,
        others=[row for row in others if row["id"] not in inside],
        done=_done(),
        error=error,
        error_form=form,
    )
    return page, status


def _collection(collection_id: str) -> dict:
    try:
        return collections.get(collection_id)
    except ShopError:
        abort(404, "Collection not found.")


def _product_ids(collection: dict) -> list[str]:
    """The collection's products after the form: the kept ones by their position box
    (ties keep the old order), then the ones added, in the order picked."""
    kept = []
    for index, product_id in enumerate(collection["product_ids"]):
        if checked(f"remove-{product_id}"):
            continue
        position = number(f"position-{product_id}", "Position")
        kept.append((position if position is not None else index + 1, index, product_id))
    added = [i for i in request.form.getlist("add")[:1000] if ID_RE.fullmatch(i)]
    return [product_id for *_order, product_id in sorted(kept)] + [
        i for i in added if i not in collection["product_ids"]
    ]


@bp.route("/collections/<id:collection_id>", methods=["GET", "POST"])
def collection_page(collection_id):
    """One collection: its title, slug, description and products in order."""
    _require("collections.read")
    collection = _collection(collection_id)
    if request.method == "GET":
        return _collection_page(collection)
    _require("collections.update")
    try:
        data = {
            "title": text("title"),
            "description": text("description"),
            "product_ids": _product_ids(collection),
        }
        if text("slug"):
            data["slug"] = text("slug")
        collections.update(collection_id, data, g.caller.actor)
    except (HTTPException, ShopError) as caught:
        message, status = refusal(caught, COLLECTION_LABELS)
        return _collection_page(collection, message, status, values=_posted())
    target = url_for("admin.collection_page", collection_id=collection_id, done="saved")
    return redirect(target, 303)


@bp.route("/collections/<id:collection_id>/delete", methods=["POST"])
def collection_delete(collection_id):
    """Delete a collection; its products stay."""
    _require("collections.delete")
    collection = _collection(collection_id)
    try:
        collections.delete(collection_id, g.caller.actor)
    except ShopError as caught:
        return _collection_page(collection, *refusal(caught, COLLECTION_LABELS), form="delete")
    return redirect(url_for("admin.collections_list", done="deleted"), 303)
