"""Product images (issue 25): upload, list, order, describe and delete a product's images;
anyone fetches their bytes at ``url``.

Images are part of the product: reading follows the product (the public sees the images of
active products; ``products.read`` sees all), every write needs ``products.update`` (an API
key: ``write:product``) and is a ``product.updated`` event. The bytes at ``/images/{id}``
are public, whatever the product's state, as a shop's image CDN serves them.
"""

import io

from flask import current_app, g, request
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from shop import db
from shop.api.common import Blueprint
from shop.api.schemas import ImageSchema
from shop.catalogue import images, products
from shop.http.context import current_actor
from shop.http.decorators import require_permission, shows_more_with
from shop.http.errors import abort
from shop.http.openapi import responds

blp = Blueprint(
    "images", __name__, url_prefix="", description="Product images: upload, order, serve."
)

_WIDTH_LIST = ", ".join(map(str, images.WIDTHS))
_MULTIPART_SLACK = 64 * 1024  # room for the form's boundaries, headers and `alt`
_FORMATS_TEXT = "JPEG, PNG, WebP or GIF, recognised by its content (not its name or type)"


class ImageListSchema(Schema):
    items = fields.List(fields.Nested(ImageSchema), required=True)


class ImageUpdateSchema(Schema):
    alt = fields.String(validate=validate.Length(max=images.MAX_ALT))
    position = fields.Integer(
        strict=True,
        validate=validate.Range(min=1, max=images.MAX_PER_PRODUCT),
        metadata={"description": "Move the image there (1 is first); past the end is last."},
    )


class ImageFileQuerySchema(Schema):
    w = fields.Integer(
        validate=validate.OneOf(
            images.WIDTHS, error=f"Use one of the widths {_WIDTH_LIST} (pixels)."
        ),
        error_messages={"invalid": f"Use one of the widths {_WIDTH_LIST} (pixels)."},
        metadata={
            "description": "A narrower copy, this many pixels wide (never wider than the"
            " original: a narrower original is served as it is)."
        },
    )


_UPLOAD_BODY = {
    "required": True,
    "content": {
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "required": ["file"],
                "properties": {
                    "file": {
                        "type": "string",
                        "format": "binary",
                        "description": f"The image: {_FORMATS_TEXT}; at most"
                        " `SHOP_MAX_IMAGE_BYTES` (10 MiB by default).",
                    },
                    "alt": {"type": "string", "maxLength": images.MAX_ALT},
                },
            }
        }
    },
}

_IMAGE_TYPES = ("image/jpeg", "image/png", "image/webp", "image/gif")
_FILE_RESPONSES = {
    "200": {
        "description": "The image's bytes, of the image's `content_type`. The generic"
        " `application/octet-stream` is listed for client generators that read only it"
        " as bytes; the answer always names the image's own type.",
        "headers": {
            "ETag": {"required": True, "schema": {"type": "string"}},
            "Cache-Control": {"required": True, "schema": {"type": "string"}},
        },
        "content": {
            t: {"schema": {"type": "string", "format": "binary"}}
            for t in ("application/octet-stream", *_IMAGE_TYPES)
        },
    },
    "304": {"description": "Not modified: the `If-None-Match` ETag is current."},
}
_IMMUTABLE = "public, max-age=31536000, immutable"  # an id's bytes never change


@blp.url_value_preprocessor
def _upload_body_limit(endpoint, _values):
    """An upload may exceed the usual body limit (its route only). This runs before the app's
    hooks read the form. A body over the limit is read away first, up to twice the limit,
    so the client sees the 413 rather than a connection reset; a chunked body is read here
    whole (werkzeug would cut it at the limit without a word, losing the file)."""
    if endpoint != "images.ProductImages" or request.method != "POST":
        return
    limit = current_app.config["MAX_IMAGE_BYTES"]
    allowed = request.max_content_length = limit + _MULTIPART_SLACK
    environ = request.environ
    if "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower():
        body = _read(environ["wsgi.input"], allowed + 1)
        if len(body) > allowed:
            _read(environ["wsgi.input"], 2 * limit - len(body), keep=False)
            abort(413, images.too_large(limit))
        environ.pop("HTTP_TRANSFER_ENCODING")
        environ.update({"wsgi.input": io.BytesIO(body), "CONTENT_LENGTH": str(len(body))})
        return
    length = request.content_length
    if length is not None and length > allowed:
        if length <= 2 * limit:
            _read(environ["wsgi.input"], length, keep=False)
        abort(413, images.too_large(limit))


def _read(stream, size: int, keep: bool = True) -> bytes:
    """Up to ``size`` bytes of ``stream`` (fewer at its end); thrown away unless ``keep``."""
    chunks = []
    while size > 0 and (chunk := stream.read(min(size, 1 << 16))):
        size -= len(chunk)
        if keep:
            chunks.append(chunk)
    return b"".join(chunks)


def _visible(product_id: str) -> None:
    """404 unless the caller may see the product (inactive ones need ``products.read``)."""
    active = db.value("SELECT active FROM products WHERE id = :id", {"id": product_id})
    staff = g.caller is not None and g.caller.can("products.read")
    if active is None or not (active or staff):
        abort(404, "Product not found.")


def _upload() -> tuple[bytes, str]:
    """The multipart form's ``file`` and ``alt``; 400 for anything else."""
    if request.mimetype != "multipart/form-data":
        abort(400, "Send the image as multipart/form-data, in the field `file`.")
    unknown = [n for n in request.form if n != "alt"] + [n for n in request.files if n != "file"]
    if unknown:
        abort(400, " ".join(f"{name}: Unknown field." for name in unknown))
    upload = request.files.get("file")
    if upload is None:
        abort(400, "file: Missing data for required field.")
    alt = request.form.get("alt", "")
    if len(alt) > images.MAX_ALT:
        abort(400, f"alt: Longer than maximum length {images.MAX_ALT}.")
    return upload.read(current_app.config["MAX_IMAGE_BYTES"] + 1), alt


def _changed(product_id: str, event: str, details: dict) -> None:
    products.image_changed(product_id, event, details, current_actor())


@blp.route("/products/<id:product_id>/images")
class ProductImages(MethodView):
    @blp.doc(operationId="listProductImages")
    @shows_more_with("products.read", "the images of inactive products")
    @blp.response(200, ImageListSchema)
    def get(self, product_id):
        """A product's images, in order"""
        _visible(product_id)
        return {"items": images.list_for(product_id)}

    @blp.doc(operationId="uploadProductImage", requestBody=_UPLOAD_BODY)
    @responds(
        409,
        413,
        415,
        e409=f"The product has {images.MAX_PER_PRODUCT} images already.",
        e413="The image exceeds `SHOP_MAX_IMAGE_BYTES`.",
        e415="The file is not a JPEG, PNG, WebP or GIF image.",
    )
    @blp.response(201, ImageSchema)
    @require_permission("products.update")
    def post(self, product_id):
        """Add an image to a product

        One image per request, as `multipart/form-data`: the field `file` holds a JPEG,
        PNG, WebP or GIF (recognised by its content: anything else is a 415), `alt` an
        optional text. Its EXIF data (GPS position, camera) is removed and its orientation
        applied; it goes last. More pixels than `SHOP_MAX_IMAGE_PIXELS` (a decompression
        bomb) is a 400.
        """
        if not db.value("SELECT 1 FROM products WHERE id = :id", {"id": product_id}):
            abort(404, "Product not found.")  # before the work of decoding
        data, alt = _upload()
        image = images.prepare(data)
        with db.transaction():
            db.lock("products")  # so the product cannot be deleted meanwhile
            created = images.add(product_id, image, alt)
            _changed(product_id, "product.image_added", {"image_id": created["id"]})
        return created


@blp.route("/products/<id:product_id>/images/<id:image_id>")
class ProductImageById(MethodView):
    @blp.doc(operationId="updateProductImage")
    @blp.arguments(ImageUpdateSchema)
    @blp.response(200, ImageSchema)
    @require_permission("products.update")
    def patch(self, data, product_id, image_id):
        """Change an image's alt text or position

        Moving an image renumbers the others, so positions stay 1 to n.
        """
        with db.transaction():
            db.lock("products")
            changed = images.change(product_id, image_id, data)
            _changed(product_id, "product.image_updated", {"image_id": image_id, **data})
        return changed

    @blp.doc(operationId="deleteProductImage")
    @blp.response(204)
    @require_permission("products.update")
    def delete(self, product_id, image_id):
        """Delete an image

        The images after it move up one place.
        """
        with db.transaction():
            db.lock("products")
            images.remove(product_id, image_id)
            _changed(product_id, "product.image_deleted", {"image_id": image_id})


@blp.route("/images/<id:image_id>")
class ImageFile(MethodView):
    @blp.doc(operationId="getImageFile", responses=_FILE_RESPONSES)
    @blp.arguments(ImageFileQuerySchema, location="query")
    def get(self, args, image_id):
        """An image's bytes (public)

        Cached for a year (`immutable`: the bytes of an image id never change); send the
        `ETag` back in `If-None-Match` for a 304. `w` gives a narrower copy, made on the
        first request and kept.
        """
        stored = images.served(image_id, args.get("w"))
        etag = stored["sha256"][:32]
        headers = {"ETag": f'"{etag}"', "Cache-Control": _IMMUTABLE}
        if request.if_none_match.contains_weak(etag):
            return current_app.response_class(status=304, headers=headers)
        data = images.bytes_of(image_id, stored["width"])
        return current_app.response_class(data, mimetype=stored["content_type"], headers=headers)
