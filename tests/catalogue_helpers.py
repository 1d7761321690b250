"""Helpers for the catalogue, content and settings tests: records made through the API."""

import io
import itertools

from PIL import Image

from shop import db

_counter = itertools.count(1)


class Catalogue:
    """Creates products, categories, collections and content entries as the owner."""

    def __init__(self, owner):
        self.owner = owner

    def _post(self, path: str, body: dict) -> dict:
        response = self.owner.post(path, json=body)
        assert response.status_code == 201, response.json
        return response.json

    def category(self, **fields) -> dict:
        return self._post("/categories", {"name": f"Category {next(_counter)}", **fields})

    def product(self, generate=False, **fields) -> dict:
        """A product; with ``generate``, every combination of its options as variants."""
        body = {"name": f"Product {next(_counter)}", "price_cents": 1000, "stock": 3, **fields}
        product = self._post("/products", body)
        if generate:
            response = self.owner.post(f"/products/{product['id']}/variants/generate", json={})
            assert response.status_code == 200, response.json
        return product

    def image_path(self) -> str:
        """The path of a new image of a new product."""
        product_id = self.product()["id"]
        response = upload(self.owner, product_id)
        assert response.status_code == 201, response.json
        return f"/products/{product_id}/images/{response.json['id']}"

    def collection(self, **fields) -> dict:
        return self._post("/collections", {"title": f"Collection {next(_counter)}", **fields})

    def entry(self, key: str | None = None, **fields) -> dict:
        key = key or f"entry-{next(_counter)}"
        body = {"type": "page", "data": {"title": key}, "published": True, **fields}
        response = self.owner.put(f"/content/{key}", json=body)
        assert response.status_code in (200, 201), response.json
        return response.json


def option_pairs_of_the_variants(app) -> tuple[list, list]:
    """option_pairs as kept, and as the active variants' values make it (the names of a
    pair in code point order), each sorted."""
    with app.app_context():
        kept = db.query(
            "SELECT name, value, other_name, other_value, product_id, product_active,"
            " product_created_at, product_price_cents, product_name FROM option_pairs"
        )
        values = db.query(
            "SELECT o.variant_id, o.name, o.value, p.id, p.active, p.created_at,"
            " p.price_cents, p.name AS product_name FROM variant_option_values o"
            " JOIN product_variants v ON v.id = o.variant_id"
            " JOIN products p ON p.id = o.product_id WHERE v.active = 1"
        )
    variants: dict[str, list[dict]] = {}
    for row in values:
        variants.setdefault(row["variant_id"], []).append(row)
    made = {
        (a["name"], a["value"], b["name"], b["value"], a["id"], a["active"], a["created_at"],
         a["price_cents"], a["product_name"])
        for rows in variants.values() for a in rows for b in rows if a["name"] < b["name"]
    }  # fmt: skip
    return sorted(tuple(row.values()) for row in kept), sorted(made)


def assert_pages_both_ways(client, sorts, *queries: str) -> None:
    """Every sort of each query, page by page: from the kept keys (collection_products,
    option_products, option_pairs), and from the products (``created_after`` a date before
    any product selects every product, but takes the products' path); the same items,
    totals and cursors' pages."""
    for sort, query in ((sort, query) for sort in sorts for query in queries):
        path = f"/products?{query}&sort={sort}&page_size=2"
        keyed, counted = client.get(path), client.get(path + "&created_after=2000-01-01")
        assert keyed.status_code == counted.status_code == 200, (keyed.json, counted.json)
        assert keyed.json["items"] == counted.json["items"], path
        assert keyed.json["total"] == counted.json["total"], path
        assert keyed.json["total_is_exact"], path
        cursor, seen = keyed.json["next_cursor"], len(keyed.json["items"])
        while cursor:  # the next pages follow the same keys
            page = client.get(f"/products?{query}&sort={sort}&page_size=2&cursor={cursor}")
            assert page.status_code == 200, page.json
            assert page.json["total"] == keyed.json["total"], path
            seen += len(page.json["items"])
            cursor = page.json["next_cursor"]
        assert seen == keyed.json["total"], path


def image_bytes(fmt: str = "PNG", size=(40, 20), colour="teal", **save) -> bytes:
    """A small image of ``fmt``, made here (``save`` goes to Pillow's ``save``)."""
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, fmt, **save)
    return buffer.getvalue()


def upload(client, product_id: str, data: bytes | None = None, name="photo.png", **form):
    """POST an image to the product as multipart/form-data; answer the response."""
    body = {"file": (io.BytesIO(image_bytes() if data is None else data), name), **form}
    return client.post(f"/products/{product_id}/images", data=body)
