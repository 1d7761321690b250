"""Catalogue import and export (issue 25), CSV and JSON Lines, through the API, on both
engines: the round trip, money by the currency's exponent, one transaction, dry runs, the
body limit and permissions."""

import csv
import io
import json
import shutil
import subprocess

import pytest

from shop import db
from shop.catalogue.files.export import HEADER
from tests.live import LiveServer
from tests.ops.test_readme import readme_block

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


def csv_of(*rows: dict) -> bytes:
    """A CSV file of the columns the rows give (the others are left out)."""
    columns = list(dict.fromkeys(name for row in rows for name in row))
    out = io.StringIO()
    writer = csv.DictWriter(out, columns, lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode()


def new_row(slug: str, price: str, **more) -> dict:
    return {"product_slug": slug, "product_name": slug.title(), "variant_price": price, **more}


def product_count(client) -> int:
    return (
        client.get("/products?active=true").json["total"]
        + client.get("/products?active=false").json["total"]
    )


def test_money_33_61_is_3361_and_bad_amounts_name_their_rows(owner_client):
    good = {"product_slug": "mug", "product_name": "Mug", "variant_price": "33.61"}
    assert send(owner_client, csv_of(good)).status_code == 200
    (mug,) = owner_client.get("/products").json["items"]
    assert mug["price_cents"] == 3361
    found = owner_client.get("/products?q=mug").json["items"]  # the write hook indexed it
    assert [p["id"] for p in found] == [mug["id"]]
    bad = csv_of(
        {"product_slug": "cup", "product_name": "Cup", "variant_price": "12.00"},
        {"product_slug": "jug", "product_name": "Jug", "variant_price": "33.615"},
        {"product_slug": "pot", "product_name": "Pot", "variant_price": "abc"},
        {"product_slug": "pan", "product_name": "Pan", "variant_price": "-1"},
    )
    for dry_run in (True, False):
        response = send(owner_client, bad, dry_run=dry_run)
        assert response.status_code == 400, response.json
        assert [(e["row"], e["field"]) for e in response.json["errors"]] == [
            (2, "variant_price"),
            (3, "variant_price"),
            (4, "variant_price"),
        ]
        assert response.json["message"] == "3 row(s) have errors; nothing was written."
    assert product_count(owner_client) == 1  # the good row was not written either


def test_service_rules_apply_per_row_and_any_error_writes_nothing(owner_client, catalogue):
    rows = csv_of(
        {"product_slug": "new-one", "product_name": "New", "variant_price": "1.00"},
        {"product_slug": "shirt", "variant_sku": "茶-1", "variant_price": "9.99"},
        {"product_slug": "shirt", "variant_options": '{"Size": "XL"}', "variant_price": "1"},
        {"product_slug": "teapot", "variant_sku": "茶-1", "variant_stock": "-3"},
        {"product_slug": "teapot", "product_category": "nope", "variant_sku": "茶-1"},
    )
    before = export(owner_client)
    response = send(owner_client, rows)
    assert response.status_code == 400, response.json
    found = {(e["row"], e["field"]) for e in response.json["errors"]}
    assert {(2, "variant_sku"), (3, "variant_options"), (4, "variant_stock")} <= found
    assert (5, "product_category") in found
    assert export(owner_client) == before


def planner_knows_the_products(app) -> bool:
    """Whether the planner has statistics of ``products`` (gathered after a bulk write)."""
    with app.app_context():
        if db.get_db().engine == "sqlite":
            if not db.value("SELECT COUNT(*) FROM sqlite_master WHERE name = 'sqlite_stat1'"):
                return False
            return bool(db.value("SELECT COUNT(*) FROM sqlite_stat1 WHERE tbl = 'products'"))
        return db.value("SELECT reltuples FROM pg_class WHERE oid = 'products'::regclass") >= 0


def test_dry_run_answers_the_counts_and_writes_nothing(app, owner_client, catalogue):
    rows = parse_csv(export(owner_client))
    rows[0]["variant_price"] = "19.99"
    rows.append({**rows[-1], "product_slug": "kettle", "product_name": "Kettle", "variant_sku": ""})
    data = csv_of(*rows)
    before = export(owner_client)
    dry = send(owner_client, data, dry_run=True)
    assert dry.status_code == 200, dry.json
    assert dry.json == {"created": 1, "updated": 1, "unchanged": 3, "errors": [], "dry_run": True}
    assert export(owner_client) == before
    assert not planner_knows_the_products(app)
    real = send(owner_client, data)
    assert {**real.json, "dry_run": True} == dry.json
    assert export(owner_client) != before
    assert planner_knows_the_products(app)  # an import that wrote analyzes what it wrote


def test_jpy_has_no_decimals(owner_client):
    assert owner_client.patch("/settings", json={"currency": "JPY"}).status_code == 200
    response = send(owner_client, csv_of(new_row("a", "1200")))
    assert response.status_code == 200, response.json
    assert parse_csv(export(owner_client))[0]["variant_price"] == "1200"
    bad = send(owner_client, csv_of(new_row("b", "12.5")))
    assert bad.json["errors"][0]["field"] == "variant_price"
    other = send(
        owner_client,
        csv_of(new_row("c", "1", currency="EUR")),
    )
    assert other.json["errors"][0]["field"] == "currency"


def test_rows_of_one_product_must_agree_and_json_amounts_are_strings(owner_client):
    lines = [
        {"product_slug": "mug", "product_name": "Mug", "variant_price": "1.00"},
        {"product_slug": "mug", "product_name": "Cup", "variant_price": "2.00"},
        {"product_slug": "jar", "product_name": "Jar", "variant_price": 2.5},
        {"product_slug": "box", "product_name": "Box", "variant_price": 3, "variant_stock": "x"},
        {"product_slug": "nul", "product_name": "A\u0000B", "variant_price": "1"},
        {"product_slug": "sur", "product_name": "\ud800", "variant_price": "1"},
    ]
    body = "".join(json.dumps(line) + "\n" for line in lines).encode()
    response = send(owner_client, body, kind="application/x-ndjson")
    assert response.status_code == 400, response.json
    assert [(e["row"], e["field"]) for e in response.json["errors"]] == [
        (2, "product_name"),
        (3, "variant_price"),
        (4, "variant_stock"),
        (5, "product_name"),
        (6, "product_name"),
    ]
    assert response.json["errors"][0]["message"] == "differs from row 1 of the same product."
    assert product_count(owner_client) == 0


def test_options_json_in_a_csv_cell_is_checked_like_a_body(owner_client):
    row = new_row("deep", "1.00", product_options="[" * 5000 + "]" * 5000)
    nul = new_row("nul", "1.00", product_options='[{"name": "A\\u0000", "values": ["x"]}]')
    response = send(owner_client, csv_of(row, nul))
    assert response.status_code == 400, response.json
    assert [(e["row"], e["field"]) for e in response.json["errors"]] == [
        (1, "product_options"),
        (2, "product_options"),
    ]
    assert "NUL" in response.json["errors"][1]["message"]


def test_multipart_file_and_jsonl_with_non_latin_text(owner_client):
    line = {
        "product_slug": "kyusu",
        "product_name": '急須 «Kyūsu», "fine"',
        "product_options": [{"name": "Цвет", "values": ["чёрный", "白"]}],
        "variant_options": {"Цвет": "白"},
        "variant_price": "40.00",
        "variant_sku": "KY-白",
    }
    body = (json.dumps(line, ensure_ascii=False) + "\n").encode()
    response = owner_client.post(
        "/products/import",
        data={"file": (io.BytesIO(body), "catalogue.jsonl")},
        content_type="multipart/form-data",
    )
    assert response.status_code == 200, response.json
    assert response.json["created"] == 1
    (row,) = [json.loads(x) for x in export(owner_client, "jsonl").splitlines()]
    assert {k: row[k] for k in line} == line
    assert row["product_options"] == line["product_options"]


def test_a_body_over_the_import_limit_is_a_413_that_says_so(owner_client):
    owner_client.application.config["IMPORT_MAX_BYTES"] = 2048  # read on each request
    row = {"product_slug": "big", "product_name": "Big", "variant_price": "1"}
    big = csv_of({**row, "product_description": "x" * 3000})
    response = send(owner_client, big)
    assert response.status_code == 413
    assert response.json["message"] == "Request body too large: the limit is 2048 bytes."
    assert send(owner_client, csv_of(row)).status_code == 200  # under the limit


def test_cli_export_then_import_with_dry_run_and_row_errors(app, catalogue, tmp_path):
    runner = app.test_cli_runner()
    path = tmp_path / "catalogue.csv"
    done = runner.invoke(args=["products", "export", str(path)])
    assert done.exit_code == 0, done.output
    assert "Exported 4 row(s)" in done.output
    unchanged = runner.invoke(args=["products", "import", str(path)])
    assert unchanged.exit_code == 0, unchanged.output
    assert "0 created, 0 updated, 4 unchanged." in unchanged.output
    rows = parse_csv(path.read_bytes())
    rows[0]["variant_price"] = "21.50"
    path.write_bytes(csv_of(*rows))
    dry = runner.invoke(args=["products", "import", str(path), "--dry-run"])
    assert "Dry run, nothing written: 0 created, 1 updated, 3 unchanged." in dry.output
    rows[1]["variant_price"] = "abc"
    path.write_bytes(csv_of(*rows))
    refused = runner.invoke(args=["products", "import", str(path)])
    assert refused.exit_code == 1
    assert "Row 2, variant_price: 'abc' is not a decimal amount" in refused.output
    assert "nothing was written" in refused.output
    rows[1]["variant_price"] = "25.00"
    path.write_bytes(csv_of(*rows))
    applied = runner.invoke(args=["products", "import", str(path)])
    assert "0 created, 1 updated, 3 unchanged." in applied.output
    jsonl = tmp_path / "catalogue.jsonl"
    assert runner.invoke(args=["products", "export", str(jsonl)]).exit_code == 0
    prices = [json.loads(line)["variant_price"] for line in jsonl.read_text().splitlines()]
    assert "21.50" in prices


def test_permissions_export_is_staff_import_needs_write_product(
    client, make_key, catalogue, customer_client, owner_client, make_admin
):
    assert client.get("/products/export").status_code == 401
    assert customer_client.get("/products/export").status_code == 403
    owner_client.post("/roles", json={"name": "updater", "permissions": ["products.update"]})
    updater = make_admin("updater")
    assert updater.get("/products/export").status_code == 403
    new = send(updater, csv_of(new_row("fresh", "1.00")))
    assert new.status_code == 403 and "products.create" in new.json["message"]
    price = send(updater, csv_of({"product_slug": "teapot", "variant_price": "30.00"}))
    assert price.status_code == 200 and price.json["updated"] == 1, price.json
    reader = make_key("read:product")
    assert reader.get("/products/export").status_code == 200
    data = csv_of({"product_slug": "x", "product_name": "X", "variant_price": "1"})
    assert send(reader, data).status_code == 403
    writer = make_key("write:product")
    assert send(writer, data).status_code == 200


@pytest.mark.live
@pytest.mark.skipif(shutil.which("curl") is None, reason="the guide's example needs curl")
def test_the_guide_imports_a_file_into_a_fresh_shop_twice(tmp_path, database_url, make_key):
    key = make_key("read:product", "write:product")
    server = LiveServer({"DATABASE_URL": database_url, "SHOP_RATELIMIT_ENABLED": "0"})
    outputs = []
    try:
        for _ in range(2):
            result = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", readme_block("catalogue-import")],
                cwd=tmp_path,
                env={"PATH": "/usr/bin:/bin", "SHOP_URL": server.url, "SHOP_KEY": key.secret},
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
            assert result.returncode == 0, result.stderr + result.stdout
            outputs.append(result.stdout)
    finally:
        server.stop()
    first = [json.loads(line) for line in outputs[0].splitlines()[:2]]
    assert first == [
        {"created": 3, "updated": 0, "unchanged": 0, "errors": [], "dry_run": True},
        {"created": 3, "updated": 0, "unchanged": 0, "errors": [], "dry_run": False},
    ]
    again = json.loads(outputs[1].splitlines()[1])
    assert (again["created"], again["updated"], again["unchanged"]) == (0, 0, 3)
    rows = parse_csv((tmp_path / "products.csv").read_bytes())
    shirts = [
        (r["variant_sku"], r["variant_price"]) for r in rows if r["product_slug"] == "t-shirt"
    ]
    assert shirts == [("TS-S", "19.90"), ("TS-M", "19.90")]
    (sencha,) = [r for r in rows if r["product_slug"] == "sencha"]
    assert sencha["product_name"] == "Sencha 煎茶"
    assert sencha["product_description"] == "Green tea,\n100 g"
    assert sencha["variant_price"] == "8.50"


def test_new_variants_made_together_still_name_their_bad_rows(owner_client):
    size = json.dumps([SIZES])
    row = {"product_slug": "cap", "product_name": "Cap", "product_options": size}
    rows = [
        {**row, "variant_options": '{"Size": "S"}', "variant_sku": "CAP", "variant_price": "5"},
        {**row, "variant_options": '{"Size": "M"}', "variant_sku": "CAP-M", "variant_price": "5"},
        {**row, "variant_options": '{"Size": "L"}', "variant_sku": "CAP-M", "variant_price": "5"},
        {**row, "variant_options": '{"Size": "M"}', "variant_sku": "CAP-2", "variant_price": "5"},
    ]
    response = send(owner_client, csv_of(*rows))
    assert response.status_code == 400, response.json
    assert [(e["row"], e["field"]) for e in response.json["errors"]] == [
        (3, "variant_sku"),
        (4, "variant_options"),
    ]
    assert product_count(owner_client) == 0
    fixed = send(owner_client, csv_of(*rows[:2]))
    assert fixed.json["created"] == 2
    (cap,) = owner_client.get("/products").json["items"]
    detail = owner_client.get(f"/products/{cap['id']}").json
    assert [(v["sku"], v["options"], v["position"]) for v in detail["variants"]] == [
        ("CAP", {"Size": "S"}, 1),
        ("CAP-M", {"Size": "M"}, 2),
    ]


UNREADABLE = [
    (b"product_slug,colour\r\nmug,red\r\n", "colour: not a column of the import"),
    (b"product_slug\r\n" + b"a" * 140_000 + b"\r\n", "field larger than field limit"),
    (b"product_slug\r\n\xff\xfe\r\n", "not UTF-8"),
    (b'{"product_slug": "a"}\n{oops\n', "jsonl: not valid JSONL"),
    (b"", "the file has no rows"),
]


def test_a_file_that_cannot_be_read_is_a_400(owner_client):
    """In one test: each case costs a request, a fresh database would cost seconds."""
    for body, words in UNREADABLE:
        response = owner_client.post(
            "/products/import", data=body, content_type="application/octet-stream"
        )
        assert response.status_code == 400, (words, response.json)
        assert words in response.json["message"], response.json


def test_csv_export_defuses_formulas_and_imports_back_unchanged(owner_client):
    """A cell a spreadsheet would run (`=HYPERLINK(...)`, `+`, `-`, `@`, tab, CR) gets a
    leading `'` in CSV (OWASP's CSV injection advice); the import takes it off again."""
    names = ['=HYPERLINK("http://evil.example","x")', "+1", "-dash", "@SUM(A1)", "'=quoted"]
    for name in names:
        made = owner_client.post("/products", json={"name": name, "price_cents": 100})
        assert made.status_code == 201, made.json
    data = export(owner_client)
    cells = sorted(row["product_name"] for row in parse_csv(data))
    assert cells == sorted(["'" + name for name in names])
    assert sorted(
        json.loads(line)["product_name"] for line in export(owner_client, "jsonl").splitlines()
    ) == sorted(names)
    response = send(owner_client, data)
    assert response.status_code == 200, response.json
    assert (response.json["unchanged"], response.json["updated"]) == (5, 0)
    assert export(owner_client) == data
