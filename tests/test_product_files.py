"""Catalogue import and export (issue 25), CSV and JSON Lines, through the API, on both
engines: the round trip, money by the currency's exponent, one transaction, dry runs, the
body limit and permissions."""

import csv
import io
import json

import pytest

from shop.services.catalogue_export import HEADER

SIZES = {"name": "Size", "values": ["S", "M", "L"]}
HARD_TEXT = 'Tea "Sencha", first flush,\nsecond line — 煎茶 ✓'


@pytest.fixture
def catalogue(owner_client):
    """A category, a shirt with 3 sizes (3 variants) and a teapot whose text is hard to quote."""
    category = owner_client.post("/categories", json={"name": "Tops"}).json
    shirt = owner_client.post(
        "/products",
        json={
            "name": "Shirt",
            "price_cents": 2000,
            "stock": 5,
            "sku": "SHIRT-S",
            "options": [SIZES],
            "category_id": category["id"],
            "low_stock_threshold": 2,
        },
    ).json
    made = owner_client.post(
        f"/products/{shirt['id']}/variants/generate", json={"price_cents": 2500, "stock": 1}
    )
    assert made.status_code == 200, made.json
    tea = owner_client.post(
        "/products",
        json={"name": "Teapot", "description": HARD_TEXT, "price_cents": 3361, "sku": "茶-1"},
    )
    assert tea.status_code == 201, tea.json
    return {"shirt": shirt, "tea": tea.json, "category": category}


def export(client, kind="csv"):
    response = client.get(f"/products/export?format={kind}")
    assert response.status_code == 200, response.data[:300]
    return response.data


def parse_csv(data: bytes) -> list[dict]:
    return list(csv.DictReader(io.StringIO(data.decode())))


def send(client, body, *, kind="text/csv", dry_run=False, query=""):
    return client.post(
        f"/products/import?dry_run={str(dry_run).lower()}{query}",
        data=body,
        content_type=kind,
    )


def test_export_csv_has_the_header_a_row_per_variant_and_money_as_text(owner_client, catalogue):
    rows = parse_csv(export(owner_client))
    assert list(rows[0]) == HEADER
    assert len(rows) == 4
    tea = next(row for row in rows if row["product_slug"] == "teapot")
    assert tea["variant_price"] == "33.61" and tea["currency"] == "EUR"
    assert tea["product_description"] == HARD_TEXT and tea["variant_sku"] == "茶-1"
    shirts = [row for row in rows if row["product_slug"] == "shirt"]
    assert [json.loads(r["variant_options"])["Size"] for r in shirts] == ["S", "M", "L"]
    assert {r["product_category"] for r in shirts} == {"tops"}
    assert [r["variant_price"] for r in shirts] == ["20.00", "25.00", "25.00"]


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_export_then_import_unchanged_is_0_created_0_updated(owner_client, catalogue, kind):
    data = export(owner_client, kind)
    media = {"csv": "text/csv", "jsonl": "application/x-ndjson"}[kind]
    response = send(owner_client, data, kind=media)
    assert response.status_code == 200, response.json
    assert response.json == {
        "created": 0,
        "updated": 0,
        "unchanged": 4,
        "errors": [],
        "dry_run": False,
    }
    assert export(owner_client, kind) == data


def test_import_after_deleting_everything_recreates_the_catalogue(owner_client, catalogue):
    data = export(owner_client)
    response = owner_client.delete(f"/products/{catalogue['shirt']['id']}")
    assert response.status_code == 204
    response = owner_client.delete(f"/products/{catalogue['tea']['id']}")
    assert response.status_code == 204
    response = send(owner_client, data)
    assert response.status_code == 200, response.json
    assert (response.json["created"], response.json["updated"]) == (4, 0)
    assert parse_csv(export(owner_client)) == parse_csv(data)
    again = send(owner_client, data)
    assert (again.json["created"], again.json["updated"], again.json["unchanged"]) == (0, 0, 4)
