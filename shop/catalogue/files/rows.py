"""The catalogue import's file (issue 25): its rows read (CSV or JSON Lines, through
``sqlite-utils``' ``rows_from_file``), each cell typed by its column's kind
(``catalogue_export.COLUMNS``), and the product's fields agreed by its rows. What no row may
be, whatever the shop has; ``catalogue_plan`` checks the rows against the shop and
``catalogue_import`` writes them.
"""

import csv
import io
import json

from flask import current_app

from shop.catalogue.files.export import COLUMNS, csv_text
from shop.db.text import check as check_text
from shop.errors import Conflict, Invalid, NotFound, ShopError, TooLarge
from shop.money import from_text

KINDS = dict(COLUMNS)

# Service field names -> columns, to name the column of a service's message.
PRODUCT_FIELDS = {
    "name": "product_name",
    "slug": "product_slug",
    "description": "product_description",
    "active": "product_active",
    "category_id": "product_category",
    "low_stock_threshold": "product_low_stock_threshold",
    "options": "product_options",
    "price_cents": "variant_price",
}
VARIANT_FIELDS = {
    "sku": "variant_sku",
    "options": "variant_options",
    "price_cents": "variant_price",
    "compare_at_price_cents": "variant_compare_at_price",
    "stock": "variant_stock",
    "weight_grams": "variant_weight_grams",
    "active": "variant_active",
    "position": "variant_position",
}
TO_PRODUCT = {column: field for field, column in PRODUCT_FIELDS.items() if field != "price_cents"}
TO_VARIANT = {column: field for field, column in VARIANT_FIELDS.items()}


class RowProblem(ValueError):
    """A cell that cannot be read: its column and why."""

    def __init__(self, field: str, message: str, row: int | None = None):
        super().__init__(message)
        self.field, self.message, self.row = field, message, row


def read_rows(data: bytes, kind: str | None) -> list[dict]:
    """The file's rows as dicts (a 400 for a file that is not CSV or JSON Lines). ``kind`` is
    ``csv`` or ``jsonl``; None looks at the first character (``{`` is JSON Lines)."""
    # Imported here, by the few requests that import a file (~3 MB a web worker otherwise holds).
    from sqlite_utils.utils import Format, RowError, rows_from_file

    if kind is None:
        kind = "jsonl" if data.lstrip()[:1] in (b"{", b"[") else "csv"
    try:
        if kind == "jsonl" and data.lstrip()[:1] == b"[":
            found, _ = rows_from_file(io.BytesIO(data), format=Format.JSON)
        else:
            formats = {"csv": Format.CSV, "jsonl": Format.NL}
            found, _ = rows_from_file(io.BytesIO(data), format=formats[kind])
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
    cap = current_app.config["IMPORT_MAX_ROWS"]
    if len(rows) > cap:
        raise TooLarge(
            f"{kind}: the file has {len(rows):,} rows, more than the {cap:,} an import takes"
            " (SHOP_IMPORT_MAX_ROWS): split it into files of at most that many.",
        )
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
        check_text(value)  # the cell's JSON: no NUL, lone surrogate or deep nesting
    except ShopError as error:
        raise ValueError(error.message.split(": ", 1)[-1]) from None
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
        check_text(raw)  # no NUL or lone surrogate reaches the database
    except ShopError as error:
        field = error.message.split(":", 1)[0].split(".", 1)[0]
        raise RowProblem(field if field in KINDS else "row", error.message) from None
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


def problem(error: ShopError, fields: dict, default: str) -> RowProblem:
    """A service's refusal as a row error naming the column."""
    message = error.message
    field = message.split(":", 1)[0] if ":" in message else ""
    return RowProblem(fields.get(field.split(".")[0], default), message)


def product_fields(rows, categories) -> dict:
    """The product's fields from its rows (the same in each, or a RowProblem); a category
    by its slug, from ``categories`` (slug -> id)."""
    fields = {}
    first = {}
    for number, row in rows:
        for column, field in TO_PRODUCT.items():
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


def add_error(result: dict, number: int, found: RowProblem) -> None:
    """Record a row's problem in an import's answer."""
    result["errors"].append({"row": number, "field": found.field, "message": found.message})


def product_outcome(result: dict, rows: list, work):
    """``work()``'s answer for one product's rows, or None when the product is refused as
    a whole: its error is added to ``result`` (at the row it names, else its first). A
    refusal that is not the rows' fault (a 403 for creating) stops the whole import."""
    try:
        return work()
    except RowProblem as found:
        add_error(result, found.row or rows[0][0], found)
    except ShopError as error:
        if not isinstance(error, Invalid | NotFound | Conflict):
            raise
        add_error(result, rows[0][0], problem(error, PRODUCT_FIELDS, "product_slug"))
    return None


def new_product_price(fields: dict, rows: list) -> int:
    """A new product's first price (its first row's that gives one); a RowProblem when its
    rows give it no name or no price."""
    if "name" not in fields:
        raise RowProblem("product_name", "a new product needs a name.")
    price = next((row["variant_price"] for _n, row in rows if "variant_price" in row), None)
    if price is None:
        raise RowProblem("variant_price", "a new product needs a price.")
    return price


def row_error(number: int, error: Exception) -> dict:
    """A variant row's refusal (a RowProblem, or a service's refusal) as its error."""
    if isinstance(error, ShopError):
        error = problem(error, VARIANT_FIELDS, "variant_sku")
    return {"row": number, "field": error.field, "message": error.message}
