"""A product's variants and images on its console page (issue 37), through the API's own
functions: ``variants.generate``, ``update_variant`` and ``delete_variant`` (as
``/products/{id}/variants``), ``images.prepare``/``add``/``change``/``remove`` (as
``/products/{id}/images``). Every change needs ``products.update``.

The variants form edits the SKU, price, compare-at price, stock, weight and active flag of
every variant at once, in one transaction: a refusal of any variant names it and writes
nothing. Only the fields that changed are written.
"""

from flask import current_app, g, redirect, request, url_for
from werkzeug.exceptions import HTTPException

from shop import db
from shop.admin.catalogue.forms import checked, money, number, optional, refusal, shop_currency
from shop.admin.catalogue.products import load, render_product
from shop.admin.views import ID_RE, _require, bp
from shop.catalogue import images, products, variants
from shop.errors import Invalid, ShopError

VARIANT_LABELS = {
    "price_cents": "Price",
    "compare_at_price_cents": "Compare-at price",
    "stock": "Stock",
    "weight_grams": "Weight (g)",
    "sku": "SKU",
    "generate": "Generate",
}
_UPLOAD_SLACK = 64 * 1024  # the form's boundaries, its token and the alt text


@bp.url_value_preprocessor
def _upload_limits(endpoint, _values):
    """An image upload or a catalogue import may exceed the usual body limit (their routes
    only), set before the gate reads the form for its token."""
    if endpoint == "admin.product_image_upload":
        request.max_content_length = current_app.config["MAX_IMAGE_BYTES"] + _UPLOAD_SLACK
    elif endpoint in ("admin.products_import", "admin.products_import_confirm"):
        # The confirm form carries the file base64-encoded: a third larger.
        request.max_content_length = current_app.config["IMPORT_MAX_BYTES"] * 3 // 2


def _back(product_id: str, done: str):
    return redirect(url_for("admin.product_page", product_id=product_id, done=done), 303)


def _refused(product: dict, caught, form: str, labels=VARIANT_LABELS):
    message, status = refusal(caught, labels)
    return render_product(product, message, status, error_form=form)


def _named(variant: dict) -> str:
    """How the form names a variant: its option values, or its SKU, or 'The variant'."""
    values = " / ".join(variant["options"].values())
    return values or variant["sku"] or "The variant"


def _changes(variant: dict, currency: str) -> dict:
    """The variant's row of the form as a ``PATCH`` body: only the fields that changed."""
    prefix = f"v-{variant['id']}-"
    name = _named(variant)
    form = {
        "sku": optional(prefix + "sku"),
        "price_cents": money(prefix + "price", f"{name}: Price", currency),
        "compare_at_price_cents": money(prefix + "compare", f"{name}: Compare-at price", currency),
        "stock": number(prefix + "stock", f"{name}: Stock"),
        "weight_grams": number(prefix + "weight", f"{name}: Weight (g)"),
        "active": checked(prefix + "active"),
    }
    if form["price_cents"] is None:
        raise Invalid(f"{name}: Price: give a price, such as 12.50.")
    if form["stock"] is None:
        raise Invalid(f"{name}: Stock: give the number in stock (0 when none).")
    return {key: value for key, value in form.items() if value != variant[key]}


@bp.route("/products/<id:product_id>/variants", methods=["POST"])
def product_variants_save(product_id):
    """Save the variants table: every changed variant, in one transaction."""
    _require("products.update")
    product = load(product_id)
    currency = shop_currency()
    try:
        with db.transaction():
            db.lock("products")
            for variant in product["variants"]:
                changes = _changes(variant, currency)
                if not changes:
                    continue
                try:
                    variants.update_variant(product_id, variant["id"], changes, announce=False)
                except ShopError as caught:
                    caught.message = f"{_named(variant)}: {caught.message}"
                    raise
            variants.product_changed(product_id)
    except (HTTPException, ShopError) as caught:
        return _refused(product, caught, "variants")
    return _back(product_id, "variants")


@bp.route("/products/<id:product_id>/variants/generate", methods=["POST"])
def product_variants_generate(product_id):
    """Create every missing combination of the option values (``POST .../generate``)."""
    _require("products.update")
    product = load(product_id)
    try:
        data = {"stock": number("stock", "Stock") or 0}
        price = money("price", "Price", shop_currency())
        if price is not None:
            data["price_cents"] = price
        with db.transaction():
            db.lock("products")
            variants.generate(product_id, data)
    except (HTTPException, ShopError) as caught:
        return _refused(product, caught, "generate")
    return _back(product_id, "generated")


@bp.route("/products/<id:product_id>/variants/<id:variant_id>/delete", methods=["POST"])
def product_variant_delete(product_id, variant_id):
    """Delete one variant (a product keeps at least one, as the API says)."""
    _require("products.update")
    product = load(product_id)
    try:
        with db.transaction():
            db.lock("products")
            variants.delete_variant(product_id, variant_id)
    except ShopError as caught:
        return _refused(product, caught, "variants")
    return _back(product_id, "variant_deleted")


@bp.route("/products/<id:product_id>/images", methods=["POST"])
def product_image_upload(product_id):
    """Upload one image (JPEG, PNG, WebP or GIF, recognised by its content), with its alt
    text; it goes last. EXIF is removed, as through the API."""
    _require("products.update")
    product = load(product_id)
    try:
        upload = request.files.get("file")
        if upload is None or not upload.filename:
            raise Invalid("Image: choose a file to upload.")
        alt = request.form.get("alt", "").strip()
        if len(alt) > images.MAX_ALT:
            raise Invalid(f"Alt text: Longer than maximum length {images.MAX_ALT}.")
        image = images.prepare(upload.read(current_app.config["MAX_IMAGE_BYTES"] + 1))
        with db.transaction():
            db.lock("products")
            created = images.add(product_id, image, alt)
            products.image_changed(
                product_id, "product.image_added", {"image_id": created["id"]}, g.caller.actor
            )
    except (HTTPException, ShopError) as caught:
        return _refused(product, caught, "upload", {"file": "Image", "alt": "Alt text"})
    return _back(product_id, "image")


@bp.route("/products/<id:product_id>/images/save", methods=["POST"])
def product_images_save(product_id):
    """Save every image's alt text and position, in one transaction."""
    _require("products.update")
    product = load(product_id)
    try:
        with db.transaction():
            db.lock("products")
            for image in product["images"]:
                prefix = f"img-{image['id']}-"
                change = {}
                alt = request.form.get(prefix + "alt")
                if alt is not None and alt.strip() != image["alt"]:
                    change["alt"] = alt.strip()
                position = number(prefix + "position", f"Image {image['position']}: Position")
                if position is not None and position != image["position"]:
                    change["position"] = max(1, min(position, images.MAX_PER_PRODUCT))
                if not change:
                    continue
                if len(change.get("alt", "")) > images.MAX_ALT:
                    raise Invalid(
                        f"Image {image['position']}: Alt text: Longer than maximum length"
                        f" {images.MAX_ALT}."
                    )
                images.change(product_id, image["id"], change)
                products.image_changed(
                    product_id,
                    "product.image_updated",
                    {"image_id": image["id"], **change},
                    g.caller.actor,
                )
    except (HTTPException, ShopError) as caught:
        return _refused(product, caught, "images")
    return _back(product_id, "images")


@bp.route("/products/<id:product_id>/images/<id:image_id>/delete", methods=["POST"])
def product_image_delete(product_id, image_id):
    """Delete one image; the ones after it move up."""
    _require("products.update")
    product = load(product_id)
    if not ID_RE.fullmatch(image_id):
        return _refused(product, Invalid("No such image."), "images")
    try:
        with db.transaction():
            db.lock("products")
            images.remove(product_id, image_id)
            products.image_changed(
                product_id, "product.image_deleted", {"image_id": image_id}, g.caller.actor
            )
    except ShopError as caught:
        return _refused(product, caught, "images")
    return _back(product_id, "image_deleted")
