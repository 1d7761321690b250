"""Import the catalogue from CSV or JSON Lines (issue 25): the export's columns
(``catalogue_export.COLUMNS``), upserting products by ``product_slug`` and variants by
``variant_sku`` (a variant without a SKU by its option values).

Every write goes through the product and variant services, so a row meets the API's rules
and messages, and every event, audit entry and search refresh happens as for the API. The
whole file is one transaction: any bad row and nothing is written; a dry run answers the
same counts and writes nothing. ``sqlite-utils``' ``rows_from_file`` parses the file.

Decisions (written in docs/catalogue-and-content.md too):
- A column left out keeps what the shop has. An empty cell is null where null is allowed
  (SKU, category, compare-at price, weight, threshold) and "keep" elsewhere.
- A row is ``unchanged`` when exporting now would give the same values for its columns,
  ``updated`` when its product or its variant changed, ``created`` when its variant is new.
- Variants and products not named in the file stay (no prune).
- A new product's variants are exactly its rows.
"""

import csv
import io
import json

from sqlite_utils.utils import Format, RowError, rows_from_file

from shop import db
from shop.actor import Actor
from shop.catalogue import products, variants
from shop.catalogue.files.export import COLUMNS, csv_text, shop_currency
from shop.errors import Conflict, Invalid, NotFound, ShopError
from shop.http import inbound
from shop.money import from_text

KINDS = dict(COLUMNS)
FORMATS = {"csv": Format.CSV, "jsonl": Format.NL}

# Service field names -> columns, to name the column of a service's message.
_PRODUCT_FIELDS = {
    "name": "product_name",
    "slug": "product_slug",
    "description": "product_description",
    "active": "product_active",
    "category_id": "product_category",
    "low_stock_threshold": "product_low_stock_threshold",
    "options": "product_options",
    "price_cents": "variant_price",
}
_VARIANT_FIELDS = {
    "sku": "variant_sku",
    "options": "variant_options",
    "price_cents": "variant_price",
    "compare_at_price_cents": "variant_compare_at_price",
    "stock": "variant_stock",
    "weight_grams": "variant_weight_grams",
    "active": "variant_active",
    "position": "variant_position",
}
_TO_PRODUCT = {column: field for field, column in _PRODUCT_FIELDS.items() if field != "price_cents"}
_TO_VARIANT = {column: field for field, column in _VARIANT_FIELDS.items()}


class RowProblem(ValueError):
    """A cell that cannot be read: its column and why."""

    def __init__(self, field: str, message: str, row: int | None = None):
        super().__init__(message)
        self.field, self.message, self.row = field, message, row


class _Rollback(Exception):
    """Raised to undo the whole import (a dry run, or errors)."""


def read_rows(data: bytes, kind: str | None) -> list[dict]:
    """The file's rows as dicts (a 400 for a file that is not CSV or JSON Lines). ``kind`` is
    ``csv`` or ``jsonl``; None looks at the first character (``{`` is JSON Lines)."""
    if kind is None:
        kind = "jsonl" if data.lstrip()[:1] in (b"{", b"[") else "csv"
    try:
        if kind == "jsonl" and data.lstrip()[:1] == b"[":
            found, _ = rows_from_file(io.BytesIO(data), format=Format.JSON)
        else:
            found, _ = rows_from_file(io.BytesIO(data), format=FORMATS[kind])
        rows = list(found)
    except RowError:
        raise Invalid("csv: a row has more cells than the header has columns.") from None
    except csv.Error as error:  # a cell over the csv module's 131,072 characters
        raise Invalid(f"csv: {error}.") from None
    except UnicodeDecodeError:
        raise Invalid(f"{kind}: the file is not UTF-8 text.") from None
    except (ValueError, RecursionError) as error:
        raise Invalid(f"{kind}: not valid {kind.upper()}: {str(error)[:200]}") from None
    if any(not isinstance(row, dict) for row in rows):
        raise Invalid("jsonl: each line must be a JSON object.")
    if not rows:
        raise Invalid(f"{kind}: the file has no rows.")
    unknown = sorted({str(k) for row in rows for k in row} - set(KINDS))
    if unknown:
        raise Invalid(f"{unknown[0]}: not a column of the import; the columns are {list(KINDS)}.")
    if kind == "csv":  # text cells the export defused against formulas
        for row in rows:
            for key, value in row.items():
                if KINDS[key].startswith("text") and isinstance(value, str):
                    row[key] = csv_text(value)
    return rows


def _bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("true", "1"):
        return True
    if lowered in ("false", "0"):
        return False
    raise ValueError(f"{text!r} is not true or false.")


def _int(text: str) -> int:
    if not text.strip().isdigit():
        raise ValueError(f"{text!r} is not a whole number of at least 0.")
    return int(text)


def _json(text: str, expected: type):
    try:
        value = json.loads(text)
        inbound.check(value)  # the cell's JSON: no NUL, lone surrogate or deep nesting
    except ShopError as error:
        raise ValueError(error.description.split(": ", 1)[-1]) from None
    except (ValueError, RecursionError):
        value = None
    if not isinstance(value, expected):
        what = "a JSON list of options" if expected is list else "a JSON object of values"
        raise ValueError(f"{text[:80]!r} is not {what}.")
    return value


def _cell(kind: str, value, currency: str):
    """One cell as its typed value; ValueError says why it cannot be read."""
    if isinstance(value, bool) and kind != "bool" or isinstance(value, float):
        raise ValueError(f'{value!r}: write this value as text, amounts like "33.61".')
    if kind == "bool" and isinstance(value, bool):
        return value
    if kind in ("int", "int_null") and isinstance(value, int):
        return value
    if isinstance(value, list | dict):
        if (kind, type(value)) in (("options", list), ("values", dict)):
            return value
        raise ValueError(f"{json.dumps(value)[:80]} is not a valid value here.")
    if kind.startswith("money") and isinstance(value, int):
        value = str(value)
    if not isinstance(value, str):
        raise ValueError(f"{json.dumps(value)[:80]} is not a valid value here.")
    if kind.startswith("text"):
        return value
    if kind == "bool":
        return _bool(value)
    if kind.startswith("int"):
        return _int(value)
    if kind.startswith("money"):
        return from_text(value, currency)
    return _json(value, list if kind == "options" else dict)


def parse(raw: dict, currency: str) -> dict:
    """A file row as typed values of the columns it gives (left out: keep); RowProblem on
    the first cell that cannot be read."""
    try:
        inbound.check(raw)  # no NUL or lone surrogate reaches the database
    except ShopError as error:
        field = error.description.split(":", 1)[0].split(".", 1)[0]
        raise RowProblem(field if field in KINDS else "row", error.description) from None
    typed = {}
    for column, value in raw.items():
        kind = KINDS[column]
        if value is None or value == "":
            if kind.endswith("_null"):
                typed[column] = None
            elif kind == "options":
                typed[column] = []
            elif kind == "values":
                typed[column] = {}
            elif column == "product_description":
                typed[column] = ""
            continue
        try:
            typed[column] = _cell(kind, value, currency)
        except ValueError as error:
            raise RowProblem(column, str(error)) from None
    if not typed.get("product_slug"):
        raise RowProblem("product_slug", "every row names its product's slug.")
    if typed.get("currency", currency) != currency:
        raise RowProblem(
            "currency", f"the shop's amounts are in {currency}, this row's in {typed['currency']}."
        )
    return typed


def _problem(error: ShopError, fields: dict, default: str) -> RowProblem:
    """A service's refusal as a row error naming the column."""
    message = error.message
    field = message.split(":", 1)[0] if ":" in message else ""
    return RowProblem(fields.get(field.split(".")[0], default), message)


# What an import writes, analyzed after it on PostgreSQL (SQLite: what the import read).
_CATALOGUE_TABLES = (
    "products",
    "product_variants",
    "variant_option_values",
    "product_search",
    "search_index",
)


def import_rows(
    raw_rows: list[dict], *, dry_run: bool, can_create, actor: Actor, progress=None
) -> dict:
    """Apply the rows in one transaction; answer the counts and every row's errors (any
    error, or a dry run: nothing is kept). ``can_create()`` checks the caller may create;
    ``actor`` is audited; ``progress(n)`` hears of each ``n`` rows done."""
    currency = shop_currency()
    result = {"created": 0, "updated": 0, "unchanged": 0, "errors": [], "dry_run": dry_run}
    groups: dict[str, list[tuple[int, dict]]] = {}
    for number, raw in enumerate(raw_rows, start=1):
        try:
            row = parse(raw, currency)
        except RowProblem as problem:
            _error(result, number, problem)
            continue
        groups.setdefault(row["product_slug"], []).append((number, row))
    try:
        with db.transaction():
            db.lock("products")
            db.get_db().plan_each_statement()  # the tables grow as it goes: no stale plan
            categories = {r["slug"]: r["id"] for r in db.query("SELECT id, slug FROM categories")}
            for slug, rows in groups.items():
                _import_product(slug, rows, categories, result, can_create, actor)
                if progress:
                    progress(len(rows))
            if result["errors"] or dry_run:
                raise _Rollback
    except _Rollback:
        pass
    else:
        if result["created"] or result["updated"]:
            # A bulk write: the planner's statistics of the catalogue may be stale now, and
            # SQLite's are missing until first gathered (docs/performance.md, item 11).
            db.get_db().analyze(tables=_CATALOGUE_TABLES)
    result["errors"].sort(key=lambda error: error["row"])
    return result


def _product_fields(rows, categories) -> dict:
    """The product's fields from its rows (the same in each, or a RowProblem)."""
    fields = {}
    first = {}
    for number, row in rows:
        for column, field in _TO_PRODUCT.items():
            if column not in row:
                continue
            value = row[column]
            if column == "product_category" and value is not None:
                if value not in categories:
                    raise RowProblem(column, f"no category has the slug {value!r}.", number)
                value = categories[value]
            if field in fields and fields[field] != value:
                raise RowProblem(
                    column, f"differs from row {first[field]} of the same product.", number
                )
            fields.setdefault(field, value)
            first.setdefault(field, number)
    return fields


def _import_product(slug, rows, categories, result, can_create, actor) -> None:
    """One product and its rows, in a savepoint: a refusal undoes only this product.

    The rows run without a savepoint each (two statements fewer a row); when one is refused,
    the product is undone and run again with one, so that every bad row is named."""
    try:
        try:
            with db.transaction():
                fields = _product_fields(rows, categories)
                counts, errors = _apply_product(
                    slug, fields, rows, can_create, actor, careful=False
                )
        except _RowFailed:
            with db.transaction():
                counts, errors = _apply_product(slug, fields, rows, can_create, actor, careful=True)
    except RowProblem as problem:
        _error(result, problem.row or rows[0][0], problem)
        return
    except ShopError as error:
        if not isinstance(error, Invalid | NotFound | Conflict):
            raise  # not the row's fault (a 403 for creating): the whole import stops
        _error(result, rows[0][0], _problem(error, _PRODUCT_FIELDS, "product_slug"))
        return
    for outcome, count in counts.items():
        result[outcome] += count
    result["errors"].extend(errors)


class _RowFailed(Exception):
    """A row was refused while its product ran without a savepoint per row."""


def _apply_product(slug, fields, rows, can_create, actor, *, careful: bool) -> tuple[dict, list]:
    """Create or update the product, then each row's variant; answer the counts and the
    rows' errors (``careful``: each row in a savepoint; else the first refusal raises
    ``_RowFailed``)."""
    product = db.one(
        "SELECT id, name, description, active, category_id, low_stock_threshold, options"
        " FROM products WHERE slug = :slug",
        {"slug": slug},
    )
    created = product is None
    if created:
        can_create()
        if "name" not in fields:
            raise RowProblem("product_name", "a new product needs a name.")
        price = next((row["variant_price"] for _n, row in rows if "variant_price" in row), None)
        if price is None:
            raise RowProblem("variant_price", "a new product needs a price.")
        product_id = products.create_product({**fields, "slug": slug, "price_cents": price}, actor)
        options = fields.get("options", [])
        # Its one variant so far (first option values): the only one a row can match by values.
        auto = db.one(_VARIANT + " WHERE id = :id", {"id": product_id})
        changed = {}
    else:
        product_id = product["id"]
        current = {
            **product,
            "slug": slug,
            "active": bool(product["active"]),
            "options": json.loads(product["options"]),
        }
        changed = {field: value for field, value in fields.items() if current[field] != value}
        if changed:
            products.update_product(product_id, changed, actor)
        options, auto = changed.get("options", current["options"]), None
    counts, errors, seen = {"created": 0, "updated": 0, "unchanged": 0}, [], {}
    batch = None if careful else []  # new variants, made together after the loop
    for number, row in rows:
        try:
            if careful:
                with db.transaction():
                    outcome = _apply_variant(product_id, options, auto, number, row, seen)
            else:
                outcome = _apply_variant(product_id, options, auto, number, row, seen, batch)
        except (RowProblem, ShopError) as error:
            if not careful:
                raise _RowFailed from error
            if isinstance(error, ShopError):
                error = _problem(error, _VARIANT_FIELDS, "variant_sku")
            errors.append({"row": number, "field": error.field, "message": error.message})
            continue
        if created or changed:  # a new product's rows are new; a changed product's, updated
            outcome = "created" if created else "updated"
        counts[outcome] += 1
    if batch:
        try:
            made = variants.create_variants(product_id, [given for _number, given in batch])
        except ShopError as error:
            raise _RowFailed from error
        seen.update(zip(made, (number for number, _given in batch), strict=True))
    if created and seen and product_id not in seen:
        # The variant create_product made (first option values) is not in the file.
        variants.delete_variant(product_id, product_id)
    elif counts["created"] or counts["updated"]:
        variants.product_changed(product_id)
    return counts, errors


def _error(result: dict, number: int, problem: RowProblem) -> None:
    result["errors"].append({"row": number, "field": problem.field, "message": problem.message})


def _apply_variant(product_id, options, auto, number, row, seen, batch=None) -> str:
    """Create or update the row's variant; answer ``created``/``updated``/``unchanged``.
    A new variant joins ``batch`` when there is one (``create_variants`` makes them)."""
    given = {_TO_VARIANT[c]: row[c] for c in _TO_VARIANT if c in row}
    match = _match(product_id, options, auto, row)
    if match is None:
        if "options" not in given and options:
            raise RowProblem("variant_options", "give a new variant its option values.")
        if batch is not None:
            batch.append((number, given))
            return "created"
        made = variants.create_variant(product_id, given, announce=False)
        seen[made["id"]] = number
        return "created"
    if match["id"] in seen:
        raise RowProblem("variant_sku", f"the same variant as row {seen[match['id']]}.")
    seen[match["id"]] = number
    current = {**match, "options": json.loads(match["options"]), "active": bool(match["active"])}
    changed = {field: value for field, value in given.items() if current[field] != value}
    if changed:
        variants.update_variant(product_id, match["id"], changed, announce=False)
    return "updated" if changed else "unchanged"


_VARIANT = (
    "SELECT id, product_id, sku, options, price_cents, compare_at_price_cents, stock,"
    " weight_grams, active, position FROM product_variants"
)


def _match(product_id: str, options: list, auto: dict | None, row: dict) -> dict | None:
    """The variant a row names: by SKU (of this product only), else by option values. A
    new product (``auto`` its first variant) has no SKU yet (another product's SKU is
    create's 409), and its other variants are the file's own rows."""
    sku = row.get("variant_sku")
    if sku and auto is None:
        found = db.one(_VARIANT + " WHERE sku = :sku", {"sku": sku})
        if found and found["product_id"] != product_id:
            raise RowProblem("variant_sku", f"{sku!r} is the SKU of a variant of another product.")
        if found:
            return found
    values = row.get("variant_options", None if options else {})
    if values is None:
        return None  # a product with options: a new variant must name its values
    if set(values) != {option["name"] for option in options}:
        return None  # create_variant says what is wrong with them
    if auto is not None:
        first = {option["name"]: option["values"][0] for option in options}
        return auto if values == first else None
    return db.one(
        _VARIANT + " WHERE product_id = :id AND option_key = :key",
        {"id": product_id, "key": variants.key_of(options, values)},
    )
