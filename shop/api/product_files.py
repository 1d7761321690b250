"""The catalogue as a file (issue 25): ``GET /products/export`` and ``POST /products/import``,
CSV or JSON Lines, one row per variant. The columns and the rules live in
``shop/catalogue/files/export.py`` and ``shop/catalogue/files/imports.py``; the guide is
docs/catalogue-and-content.md.
"""

from datetime import UTC, datetime

from flask import Response, current_app, g, jsonify, make_response, request, stream_with_context
from flask.views import MethodView
from marshmallow import Schema, fields

from shop.api.common import Blueprint, RowErrorSchema, read_body
from shop.auth.caller import require
from shop.catalogue.files import export as catalogue_export
from shop.catalogue.files import imports as catalogue_import
from shop.catalogue.files.export import HEADER, MEDIA_TYPES, WRITERS
from shop.catalogue.files.imports import read_rows
from shop.http.context import current_actor
from shop.http.decorators import require_permission
from shop.http.errors import abort
from shop.http.extensions import caller_key, limiter
from shop.http.openapi import enum_field, responds

blp = Blueprint(
    "product_files",
    __name__,
    url_prefix="/products",
    description="The catalogue as a CSV or JSON Lines file, one row per variant.",
)

FORMATS = list(WRITERS)
IMPORT_LIMIT = catalogue_import.IMPORT_LIMIT
_COLUMNS = ", ".join(f"`{name}`" for name in HEADER)
# A body's media type -> its format.
_MEDIA = {
    "text/csv": "csv",
    "application/csv": "csv",
    "application/x-ndjson": "jsonl",
    "application/jsonl": "jsonl",
    "application/json": "jsonl",
}


class ExportQuerySchema(Schema):
    format = enum_field("CatalogueFileFormat", FORMATS, load_default="csv")


class ImportQuerySchema(Schema):
    dry_run = fields.Boolean(
        load_default=False, metadata={"description": "Answer the counts; write nothing."}
    )
    # Of the body; by default from its Content-Type or the file's name (the docstring).
    format = enum_field("CatalogueFileFormat", FORMATS)


class ImportResultSchema(Schema):
    created = fields.Integer(required=True)
    updated = fields.Integer(required=True)
    unchanged = fields.Integer(required=True)
    errors = fields.List(
        fields.Nested(RowErrorSchema), required=True, metadata={"description": "Always empty."}
    )
    dry_run = fields.Boolean(required=True)


@blp.url_value_preprocessor
def _allow_large_import(endpoint, _values):
    """An import carries a whole catalogue: it has its own body limit (its route only).
    Set before any hook runs, so an import refused early still has its body read away
    (``shop.http.hooks.finish_response``)."""
    if endpoint == "product_files.ProductImport":
        request.max_content_length = current_app.config["IMPORT_MAX_BYTES"]


@blp.route("/export")
class ProductExport(MethodView):
    @blp.doc(
        operationId="exportProducts",
        responses={
            "200": {
                "description": f"The file, streamed. Columns: {_COLUMNS}.",
                "content": {
                    "text/csv": {"schema": {"type": "string"}},
                    "application/x-ndjson": {"schema": {"type": "string"}},
                },
            }
        },
    )
    @blp.arguments(ExportQuerySchema, location="query")
    @require_permission("products.read")
    def get(self, args):
        """Export the catalogue

        One row per variant, its product's fields repeated; money as decimal strings in the
        shop currency (`33.61`), never floats. Importing the file unchanged changes nothing.
        """
        kind = args["format"]
        day = datetime.now(UTC).strftime("%Y-%m-%d")
        rows = WRITERS[kind](catalogue_export.rows())
        return Response(
            stream_with_context(rows),
            mimetype=MEDIA_TYPES[kind].split(";")[0],
            headers={
                "Content-Disposition": f'attachment; filename="products-{day}.{kind}"',
                "Cache-Control": "no-store",
            },
        )


def _can_create() -> None:
    require(g.caller, "products.create", key_scopes=("write:product",))


def _body_and_format(args) -> tuple[bytes, str | None]:
    """The file: the multipart field ``file`` or the whole body; and its format."""
    kind = args.get("format")
    if request.mimetype == "multipart/form-data":
        upload = request.files.get("file")
        if upload is None:
            abort(400, "file: send the file in the multipart field `file`.")
        if kind is None and upload.filename and "." in upload.filename:
            kind = {"csv": "csv", "jsonl": "jsonl", "ndjson": "jsonl"}.get(
                upload.filename.rsplit(".", 1)[1].lower()
            )
        return upload.read(), kind
    return read_body(request), kind or _MEDIA.get(request.mimetype)


@blp.route("/import")
class ProductImport(MethodView):
    @blp.doc(
        operationId="importProducts",
        requestBody={
            "required": True,
            "description": "The file as the body (`text/csv` and `application/x-ndjson` are"
            " taken too: the format then comes from the type) or as the multipart field `file`.",
            "content": {
                "application/octet-stream": {"schema": {"type": "string", "format": "binary"}},
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "properties": {"file": {"type": "string", "format": "binary"}},
                        "required": ["file"],
                    }
                },
            },
        },
    )
    @limiter.limit(IMPORT_LIMIT, key_func=caller_key("product-import"))
    @blp.arguments(ImportQuerySchema, location="query")
    @blp.response(200, ImportResultSchema)
    @responds(
        400,
        409,
        413,
        e400="A bad file, or rows with errors: each bad row in `errors`; nothing written.",
        e409="The catalogue changed while the file was written: the refused rows in `errors`.",
        e413="The file is over the import's size limit or row limit.",
    )
    @require_permission("products.update")
    def post(self, args):
        """Import products and variants

        The export's columns (CSV or JSON Lines, as the body or the multipart field `file`),
        upserting products by `product_slug` and variants by `variant_sku` (without a SKU: by
        their option values). The whole file is checked first: any row with an error and
        nothing is written (400); `dry_run=true` is that check alone, answering the same counts
        and writing nothing. Then the changed products are written a chunk at a time, each
        chunk one transaction: should the catalogue change meanwhile so that a chunk is
        refused (409), the chunks before it stay written and importing the file again
        finishes it. At most `SHOP_IMPORT_MAX_ROWS` rows (50,000; 413) and 6 imports a minute
        per caller (429). A column left out keeps what the shop has. Creating products also
        needs `products.create`. `format` is by default the body's `Content-Type`
        (`text/csv`, `application/x-ndjson`) or the file's name (`.csv`, `.jsonl`), else JSON
        Lines when the file starts with `{`.
        """
        data, kind = _body_and_format(args)
        rows = read_rows(data, kind)
        result = catalogue_import.import_rows(
            rows, dry_run=args["dry_run"], can_create=_can_create, actor=current_actor()
        )
        if result["errors"]:
            count = len({error["row"] for error in result["errors"]})
            if "written" not in result:
                message = f"{count} row(s) have errors; nothing was written."
                body = {"message": message, "errors": result["errors"]}
                return make_response(jsonify(body), 400)
            message = (
                f"{count} row(s) were refused: the catalogue changed while the file was"
                f" written; {result['written']} product(s) before them were written, the rest"
                " not. Import the file again to finish."
            )
            body = {"message": message, "errors": result["errors"]}
            return make_response(jsonify(body), 409)
        return result
