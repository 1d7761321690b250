"""The console's content pages (issue 37): the content registry's entries (pages, blocks,
banners: JSON keyed by a slug), listed, created, edited and deleted through
``shop.site.content``, the functions ``PUT``/``DELETE /content/{key}`` call, so every
rule and message is the API's. The editor role holds ``content.*``.

An entry's data is edited as JSON text; the form shows it indented and keeps what was typed
when it is refused.
"""

import json

from flask import g, redirect, render_template, request, url_for
from werkzeug.exceptions import HTTPException

from shop.admin.catalogue.forms import checked, refusal, text
from shop.admin.views import _require, bp
from shop.auth.caller import require
from shop.errors import Invalid, ShopError
from shop.http.errors import abort
from shop.site import content

LABELS = {"key": "Key", "type": "Type", "data": "Data", "published": "Published"}
_DONE = {"created": "Entry created.", "saved": "Entry saved.", "deleted": "Entry deleted."}
_KEY_TEXT = 200  # longer than any key: the domain refuses it with its own words


def _entry_form() -> dict:
    """The form as ``PUT /content/{key}``'s body; the data's JSON parsed."""
    raw = request.form.get("data", "")[: content.MAX_DATA_BYTES * 2]
    try:
        data = json.loads(raw or "{}")
    except (ValueError, RecursionError) as error:
        raise Invalid(f"Data: not valid JSON ({str(error)[:120]}).") from None
    if not isinstance(data, dict):
        raise Invalid('Data: write a JSON object, such as {"title": "About us"}.')
    return {"type": text("type"), "data": data, "published": checked("published")}


def _values(row: dict | None) -> dict:
    if request.method == "POST":
        return {
            "key": request.form.get("key", "")[:_KEY_TEXT],
            "type": request.form.get("type", ""),
            "data": request.form.get("data", ""),
            "published": checked("published"),
        }
    if row is None:
        return {"type": "page", "data": '{\n  "title": ""\n}', "published": False}
    entry = content.present(row)
    return {**entry, "data": json.dumps(entry["data"], indent=2, ensure_ascii=False)}


def _entry_page(row: dict | None, error=None, status=200, form="edit"):
    page = render_template(
        "admin/catalogue/content_entry.html",
        entry=row,
        values=_values(row),
        done=_DONE.get(request.args.get("done", "")),
        error=error,
        error_form=form,
    )
    return page, status


def _create() -> None:
    require(g.caller, "content.create", purpose="create entries")


def _list_page(error=None, status=200):
    """The entries, and the form of a new one (kept as typed after a refusal)."""
    page = render_template(
        "admin/catalogue/content.html",
        entries=content.every(),
        values=_values(None),
        done=_DONE.get(request.args.get("done", "")),
        error=error,
    )
    return page, status


@bp.route("/content", methods=["GET", "POST"])
def content_list():
    """Every entry of the registry by key (type, published or draft, last change), and
    the form of a new one. (The new entry's form is on this page, not at
    ``/content/new``: ``new`` is a key an entry may have.)"""
    if request.method == "GET":
        _require("content.read")
        return _list_page()
    _require("content.create")
    key = request.form.get("key", "").strip()[:_KEY_TEXT]
    try:
        if key and content.get(key):
            raise Invalid(f"Key: an entry {key!r} exists already; open it to change it.")
        content.put(key, _entry_form(), g.caller.actor, _create)
    except (HTTPException, ShopError) as caught:
        return _list_page(*refusal(caught, LABELS))
    return redirect(url_for("admin.content_entry", key=key, done="created"), 303)


def _row(key: str) -> dict:
    row = content.get(key)
    if row is None:
        abort(404, "Content entry not found.")
    return row


@bp.route("/content/<content_key:key>", methods=["GET", "POST"])
def content_entry(key):
    """One entry: its form and its delete button."""
    _require("content.read")
    row = _row(key)
    if request.method == "GET":
        return _entry_page(row)
    _require("content.update")
    try:
        content.put(key, _entry_form(), g.caller.actor, _create)
    except (HTTPException, ShopError) as caught:
        return _entry_page(row, *refusal(caught, LABELS))
    return redirect(url_for("admin.content_entry", key=key, done="saved"), 303)


@bp.route("/content/<content_key:key>/delete", methods=["POST"])
def content_delete(key):
    """Delete an entry, once confirmed."""
    _require("content.delete")
    row = _row(key)
    if not checked("confirm"):
        return _entry_page(row, "Tick “Yes, delete this entry” to delete it.", 400, "delete")
    try:
        content.delete(key, g.caller.actor)
    except ShopError as caught:
        return _entry_page(row, *refusal(caught, LABELS), form="delete")
    return redirect(url_for("admin.content_list", done="deleted"), 303)
