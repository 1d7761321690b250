"""A product's images: stored, listed, ordered, served and resized once.

Images live in the database (``product_images``), so every node serves them and
``flask db backup`` keeps them (docs/catalogue-and-content.md#images says why), or in the
folder ``SHOP_IMAGE_DIR`` when the operator names one (``image_files``). The bytes of
an image id never change, so a served image is cached for a year. Each width of ``WIDTHS``
is made on its first request from the stored original, kept in ``product_image_sizes`` and
never recomputed; two first requests at once both make it and the second insert is a no-op.
Positions run 1..n in a product's order, as Shopify numbers them.
"""

from flask import current_app

from shop import db
from shop.catalogue import image_files, stock
from shop.clock import now_iso
from shop.errors import Conflict, Invalid, NotFound, TooLarge

WIDTHS = (160, 320, 640, 1280)
MAX_PER_PRODUCT = 250  # Shopify's limit per product
MAX_ALT = 512

_FIELDS = "id, content_type, width, height, bytes, alt, position"
COLUMNS = tuple(_FIELDS.split(", "))  # what the product detail embeds (services/catalogue)


def url_of(image_id: str) -> str:
    """Where anyone fetches the image's bytes."""
    return f"/images/{image_id}"


def present(row: dict) -> dict:
    """An image row as the API shows it."""
    return {**row, "url": url_of(row["id"])}


def list_for(product_id: str) -> list[dict]:
    """The product's images in order (none when there are none or no such product)."""
    rows = db.query(
        f"SELECT {_FIELDS} FROM product_images WHERE product_id = :pid ORDER BY position",
        {"pid": product_id},
    )
    return [present(row) for row in rows]


def one(product_id: str, image_id: str) -> dict:
    """One image of the product; 404 when the product has no image of that id."""
    row = db.one(
        f"SELECT {_FIELDS} FROM product_images WHERE id = :id AND product_id = :pid",
        {"id": image_id, "pid": product_id},
    )
    if row is None:
        raise NotFound("Image not found.")
    return present(row)


def check_image(product_id: str, image_id: str | None, field: str = "image_id") -> None:
    """400 naming ``field`` unless ``image_id`` is None or an image of that product."""
    if image_id is not None and not db.value(
        "SELECT 1 FROM product_images WHERE id = :id AND product_id = :pid",
        {"id": image_id, "pid": product_id},
    ):
        raise Invalid(f"{field}: no image {image_id!r} of this product.")


def prepare(upload: bytes) -> dict:
    """The upload checked and cleaned (``image_codec.prepare``), before any transaction:
    decoding takes time that no lock should wait for."""
    limit = current_app.config["MAX_IMAGE_BYTES"]
    if len(upload) > limit:
        raise TooLarge(too_large(limit))
    if not upload:
        raise Invalid("file: the file is empty.")
    from shop.catalogue import image_codec  # Pillow: loaded by the first image decoded

    image = image_codec.prepare(upload, current_app.config["MAX_IMAGE_PIXELS"])
    return {**image, "data": image_files.keep(image)}


def too_large(limit: int) -> str:
    """The 413 message of an upload over ``limit`` bytes."""
    return f"file: an image may have at most {limit:,} bytes (SHOP_MAX_IMAGE_BYTES)."


def add(product_id: str, image: dict, alt: str) -> dict:
    """Store a prepared ``image`` as the product's last; call inside a transaction that
    holds the products lock (so the product cannot be deleted meanwhile)."""
    if not db.value("SELECT 1 FROM products WHERE id = :id", {"id": product_id}):
        raise NotFound("Product not found.")
    count = db.value(
        "SELECT COUNT(*) FROM product_images WHERE product_id = :pid", {"pid": product_id}
    )
    if count >= MAX_PER_PRODUCT:
        raise Conflict(f"This product has {count} images, the most it may have; delete one first.")
    image_id = db.new_id()
    db.execute(
        "INSERT INTO product_images (id, product_id, position, alt, content_type, width,"
        " height, bytes, sha256, data, created_at) VALUES (:id, :pid, :position, :alt,"
        " :content_type, :width, :height, :bytes, :sha256, :data, :now)",
        {
            **image,
            "id": image_id,
            "pid": product_id,
            "position": count + 1,
            "alt": alt,
            "now": now_iso(),
        },
    )
    return one(product_id, image_id)


def change(product_id: str, image_id: str, data: dict) -> dict:
    """Set ``alt`` and/or move the image to ``position`` (1 is first; past the end is last),
    renumbering the others; inside a transaction holding the products lock."""
    one(product_id, image_id)
    if "alt" in data:
        db.execute("UPDATE product_images SET alt = :alt WHERE id = :id", {**data, "id": image_id})
    if "position" in data:
        order = _order(product_id)
        order.remove(image_id)
        order.insert(min(data["position"], len(order) + 1) - 1, image_id)
        _renumber(order)
    return one(product_id, image_id)


def remove(product_id: str, image_id: str) -> None:
    """Delete the image and its sizes, closing the gap in the positions; variants that
    showed it show none (``image_id`` null). Inside a transaction holding the products
    lock."""
    one(product_id, image_id)
    stock.lock_products([product_id])  # before its variants' rows, as checkout does
    db.execute(
        "UPDATE product_variants SET image_id = NULL, updated_at = :now"
        " WHERE product_id = :pid AND image_id = :id",
        {"pid": product_id, "id": image_id, "now": now_iso()},
    )
    db.execute("DELETE FROM product_image_sizes WHERE image_id = :id", {"id": image_id})
    db.execute("DELETE FROM product_images WHERE id = :id", {"id": image_id})
    _renumber(_order(product_id))


def _order(product_id: str) -> list[str]:
    rows = db.query(
        "SELECT id FROM product_images WHERE product_id = :pid ORDER BY position, id",
        {"pid": product_id},
    )
    return [row["id"] for row in rows]


def _renumber(order: list[str]) -> None:
    db.execute_many(
        "UPDATE product_images SET position = :position WHERE id = :id AND position <> :position",
        [{"id": image_id, "position": n} for n, image_id in enumerate(order, 1)],
    )


def served(image_id: str, width: int | None) -> dict:
    """``{content_type, sha256, width}`` of what ``GET {url}?w=width`` serves: the stored
    ``width`` rendition (made on the first request and kept), or the original (``width``
    None) when none is asked for or it is not wider. No bytes: a 304 needs none."""
    if width is not None:
        stored = _size(image_id, width)
        if stored is not None:
            return {**stored, "width": width}
    original = db.one(
        "SELECT content_type, sha256, width FROM product_images WHERE id = :id", {"id": image_id}
    )
    if original is None:
        raise NotFound("Image not found.")
    if width is None or original["width"] <= width:
        return {**original, "width": None}
    stored = db.one("SELECT sha256, data FROM product_images WHERE id = :id", {"id": image_id})
    if stored is None:
        raise NotFound("Image not found.")  # deleted meanwhile
    from shop.catalogue import image_codec  # Pillow: loaded by the first image decoded

    made = image_codec.resize(image_files.read(stored["sha256"], stored["data"]), width)
    # Two first requests may both get here: the first insert wins, the other does nothing,
    # and both serve what is stored. An image deleted meanwhile inserts nothing.
    db.execute(
        "INSERT INTO product_image_sizes (image_id, width, content_type, height, bytes, sha256,"
        " data) SELECT :image_id, :width, :content_type, :height, :bytes, :sha256, :data"
        " WHERE EXISTS (SELECT 1 FROM product_images WHERE id = :image_id)"
        " ON CONFLICT (image_id, width) DO NOTHING",
        {**made, "image_id": image_id, "data": image_files.keep(made)},
    )
    stored = _size(image_id, width)
    if stored is None:
        raise NotFound("Image not found.")  # deleted meanwhile
    return {**stored, "width": width}


def bytes_of(image_id: str, width: int | None) -> bytes:
    """The bytes ``served`` described (404 when the image was deleted since)."""
    if width is None:
        row = db.one("SELECT sha256, data FROM product_images WHERE id = :id", {"id": image_id})
    else:
        row = db.one(
            "SELECT sha256, data FROM product_image_sizes WHERE image_id = :id AND width = :width",
            {"id": image_id, "width": width},
        )
    if row is None:
        raise NotFound("Image not found.")
    return image_files.read(row["sha256"], row["data"])


def _size(image_id: str, width: int) -> dict | None:
    return db.one(
        "SELECT content_type, sha256 FROM product_image_sizes"
        " WHERE image_id = :id AND width = :width",
        {"id": image_id, "width": width},
    )
