"""Helpers for the catalogue, content and settings tests: records made through the API."""

import itertools

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

    def collection(self, **fields) -> dict:
        return self._post("/collections", {"title": f"Collection {next(_counter)}", **fields})

    def entry(self, key: str | None = None, **fields) -> dict:
        key = key or f"entry-{next(_counter)}"
        body = {"type": "page", "data": {"title": key}, "published": True, **fields}
        response = self.owner.put(f"/content/{key}", json=body)
        assert response.status_code in (200, 201), response.json
        return response.json
