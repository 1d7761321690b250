"""The catalogue as rows: one per variant, its product's fields repeated (issue 25).

``GET /products/export`` and ``flask products export`` write these rows as CSV or JSON Lines;
the importer (``catalogue_import``) reads the same columns back, so an export imported
unchanged changes nothing. ``COLUMNS`` is the documented header (docs/catalogue-and-content.md).

Money is a decimal string in the shop currency by its exponent (``33.61``; JPY ``1200``),
never a float. In CSV a boolean is ``true``/``false``, an empty cell is null, and the options
are JSON text; in JSON Lines each value keeps its JSON type (options as an array and an object,
money still a string). Products are identified by ``product_slug`` and variants by
``variant_sku`` (or, without one, by their option values); ids are not exported, since they
mean nothing to another shop. Images are not exported.
"""

import csv
import io
import json

from shop import db
from shop.money import to_text
from shop.site import settings

# The header, in order: (column, kind). Kinds tell the importer how to read a cell.
COLUMNS = (
    ("product_slug", "text"),
    ("product_name", "text"),
    ("product_description", "text"),
    ("product_active", "bool"),
    ("product_category", "text_null"),
    ("product_low_stock_threshold", "int_null"),
    ("product_options", "options"),
    ("variant_sku", "text_null"),
    ("variant_options", "values"),
    ("variant_price", "money"),
    ("variant_compare_at_price", "money_null"),
    ("variant_stock", "int"),
    ("variant_weight_grams", "int_null"),
    ("variant_active", "bool"),
    ("variant_position", "int"),
    ("currency", "text"),
)
HEADER = [name for name, _kind in COLUMNS]
MONEY = {name for name, kind in COLUMNS if kind.startswith("money")}

_PAGE = 500  # products per statement: the export streams in steps of this size

_PRODUCTS = """
    SELECT p.id, p.slug, p.name, p.description, p.active, c.slug AS category,
           p.low_stock_threshold, p.options
    FROM products p LEFT JOIN categories c ON c.id = p.category_id
    WHERE p.id > :after ORDER BY p.id LIMIT :limit"""

_VARIANTS = (
    "SELECT product_id, sku, options, price_cents, compare_at_price_cents, stock, weight_grams,"
    " active, position FROM product_variants WHERE product_id IN ({ids}) ORDER BY position, id"
)


def variant_row(product: dict, variant: dict, currency: str) -> dict:
    """One product row and one variant row (as selected here) as typed export values:
    money in minor units, options decoded; ``money_cells`` makes them text."""
    return {
        "product_slug": product["slug"],
        "product_name": product["name"],
        "product_description": product["description"],
        "product_active": bool(product["active"]),
        "product_category": product["category"],
        "product_low_stock_threshold": product["low_stock_threshold"],
        "product_options": json.loads(product["options"]),
        "variant_sku": variant["sku"],
        "variant_options": json.loads(variant["options"]),
        "variant_price": variant["price_cents"],
        "variant_compare_at_price": variant["compare_at_price_cents"],
        "variant_stock": variant["stock"],
        "variant_weight_grams": variant["weight_grams"],
        "variant_active": bool(variant["active"]),
        "variant_position": variant["position"],
        "currency": currency,
    }


def money_cells(row: dict) -> dict:
    """A typed row with its amounts as decimal strings in its currency."""
    return {
        **row,
        **{k: None if row[k] is None else to_text(row[k], row["currency"]) for k in MONEY},
    }


def shop_currency() -> str:
    """The shop currency, every amount's."""
    return settings.current()["currency"]


def rows():
    """Every variant of every product as a typed row, products in id order, each product's
    variants in their ``position`` order; read a page of products at a time."""
    currency, after = shop_currency(), ""
    while True:
        products = db.query(_PRODUCTS, {"after": after, "limit": _PAGE})
        if not products:
            return
        names = {f"p{i}": row["id"] for i, row in enumerate(products)}
        found = {}
        for variant in db.query(
            _VARIANTS.format(ids=", ".join(f":{name}" for name in names)), names
        ):
            found.setdefault(variant["product_id"], []).append(variant)
        for product in products:
            for variant in found.get(product["id"], []):
                yield variant_row(product, variant, currency)
        after = products[-1]["id"]


# A CSV text cell a spreadsheet would run as a formula starts with one of these; it gets a
# leading ``'`` (OWASP's advice on CSV injection), and so does one that already starts with
# ``'`` before them, so that ``csv_text`` gives back exactly what was exported.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def defused(text: str) -> str:
    """``text`` as a CSV cell a spreadsheet will not run as a formula."""
    return "'" + text if text.lstrip("'").startswith(_FORMULA_START) else text


def csv_text(cell: str) -> str:
    """The text of a CSV cell ``defused`` wrote (one leading ``'`` taken off)."""
    if cell.startswith("'") and cell.lstrip("'").startswith(_FORMULA_START):
        return cell[1:]
    return cell


def _csv_cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    return defused(str(value))


def as_csv(typed_rows):
    """CSV text in pieces: the header, then a line per row (RFC 4180 quoting)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(HEADER)
    yield buffer.getvalue()
    for row in typed_rows:
        buffer.seek(0)
        buffer.truncate()
        cells = money_cells(row)
        writer.writerow([_csv_cell(cells[name]) for name in HEADER])
        yield buffer.getvalue()


def as_jsonl(typed_rows):
    """JSON Lines in pieces: one object per row, keys in the header's order."""
    for row in typed_rows:
        cells = money_cells(row)
        yield json.dumps({name: cells[name] for name in HEADER}, ensure_ascii=False) + "\n"


WRITERS = {"csv": as_csv, "jsonl": as_jsonl}
MEDIA_TYPES = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson"}
