"""The catalogue as a file in the console (issue 37): export (``GET /products/export``'s
rows) and import as upload → dry-run preview → confirm → result, through the API's
importer (``shop.catalogue.files``), so every row meets the same checks and messages.

The preview is the importer's dry run: it writes nothing and names every bad row. The
confirm form carries the same file back (base64 in a hidden field: the file is kept nowhere
on the server) and runs the real import, which checks the whole file again before writing
anything. Exporting needs ``products.read``; importing ``products.update`` (creating new
products also ``products.create``), as the API says.
"""

import base64
import binascii
from datetime import UTC, datetime

from flask import Response, g, render_template, request, stream_with_context
from werkzeug.exceptions import HTTPException

from shop.admin.catalogue.forms import refusal
from shop.admin.views import _require, bp
from shop.auth.caller import require
from shop.catalogue.files import export as catalogue_export
from shop.catalogue.files import imports as catalogue_import
from shop.catalogue.files.export import HEADER, MEDIA_TYPES, WRITERS
from shop.catalogue.files.imports import read_rows
from shop.errors import ShopError
from shop.http.extensions import caller_key, limiter

# The API's limit on imports per caller (a preview and a confirm each count), counted apart.
_LIMITED = limiter.shared_limit(
    catalogue_import.IMPORT_LIMIT,
    scope="console-product-import",
    key_func=caller_key("console-product-import"),
    methods=["POST"],
)

_KINDS = {"csv": "csv", "jsonl": "jsonl", "ndjson": "jsonl"}


@bp.route("/products/export")
def products_export():
    """The catalogue as a CSV (or ``?format=jsonl``) file, as ``GET /products/export``."""
    _require("products.read")
    kind = request.args.get("format", "csv")
    kind = kind if kind in WRITERS else "csv"
    day = datetime.now(UTC).strftime("%Y-%m-%d")
    return Response(
        stream_with_context(WRITERS[kind](catalogue_export.rows())),
        mimetype=MEDIA_TYPES[kind].split(";")[0],
        headers={"Content-Disposition": f'attachment; filename="products-{day}.{kind}"'},
    )


def _can_create() -> None:
    require(g.caller, "products.create", purpose="create products")


def _page(status: int = 200, **values):
    page = render_template(
        "admin/catalogue/import.html", columns=HEADER, **{"result": None, **values}
    )
    return page, status


def _run(data: bytes, kind: str | None, dry_run: bool) -> dict:
    rows = read_rows(data, kind)
    return catalogue_import.import_rows(
        rows, dry_run=dry_run, can_create=_can_create, actor=g.caller.actor
    )


@bp.route("/products/import", methods=["GET", "POST"])
@_LIMITED
def products_import():
    """Upload a file: its dry run (nothing written) lists each bad row by number, or offers
    to import it."""
    _require("products.update")
    if request.method == "GET":
        return _page()
    upload = request.files.get("file")
    if upload is None or not upload.filename:
        return _page(400, error="File: choose a CSV or JSON Lines file to upload.")
    name = upload.filename
    kind = _KINDS.get(name.rsplit(".", 1)[-1].lower()) if "." in name else None
    data = upload.read()
    try:
        result = _run(data, kind, dry_run=True)
    except (HTTPException, ShopError) as caught:
        message, status = refusal(caught)
        return _page(status, error=message, filename=name)
    json_lines = kind == "jsonl" or (kind is None and data.lstrip()[:1] in (b"{", b"["))
    return _page(
        400 if result["errors"] else 200,
        result=result,
        header_lines=0 if json_lines else 1,  # a CSV's row 1 is on line 2
        filename=name,
        kind=kind or "",
        data=base64.b64encode(data).decode(),
    )


@bp.route("/products/import/confirm", methods=["POST"])
@_LIMITED
def products_import_confirm():
    """Import the file the preview showed: checked again whole, then written."""
    _require("products.update")
    name = request.form.get("filename", "")[:255]
    kind = request.form.get("kind") or None
    kind = kind if kind in WRITERS else None
    try:
        data = base64.b64decode(request.form.get("data", ""), validate=True)
    except (binascii.Error, ValueError):
        data = b""
    if not data:
        return _page(400, error="File: the form was damaged; upload the file again.")
    try:
        result = _run(data, kind, dry_run=False)
    except (HTTPException, ShopError) as caught:
        message, status = refusal(caught)
        return _page(status, error=message, filename=name)
    status = 200 if not result["errors"] else 409 if "written" in result else 400
    return _page(status, result=result, filename=name, imported=True)
