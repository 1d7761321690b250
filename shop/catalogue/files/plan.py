"""Check a catalogue import against the shop without writing or locking (issue 35, finding 8).

A dry run is this check alone, and a real import writes only once it found no bad row, so
a file with any bad row writes nothing. It reads what the shop has for the file's products
in a few bulk statements outside any transaction (no write lock on SQLite, no lock on
PostgreSQL), then runs the rows, in file order, against that copy held in memory, with the
services' own rules and messages (``shop.catalogue.input``'s shapes, ``variants.check_values``,
``rekey``, ``check_compare``, ``sku_taken``): the outcome ``catalogue_import`` meets when
it writes them, row for row, unless the shop changes in between (the write checks again).

It answers, per product slug, its rows' counts, and adds every row's error to the result.
"""

import json
from functools import partial

from shop import db
from shop.catalogue import variants
from shop.catalogue.files.rows import (
    TO_VARIANT,
    RowProblem,
    new_product_price,
    product_fields,
    product_outcome,
    row_error,
)
from shop.catalogue.input import PRODUCT_CREATE, PRODUCT_UPDATE, VARIANT
from shop.catalogue.input import check as checked
from shop.errors import Conflict, ShopError

BATCH = 500  # values per IN list: one statement per 500 products or SKUs of the file

_PRODUCTS = (
    "SELECT id, slug, name, description, active, category_id, low_stock_threshold, options,"
    " price_cents FROM products WHERE slug IN "
)
_VARIANTS = (
    "SELECT id, product_id, sku, options, option_key, price_cents, compare_at_price_cents,"
    " stock, weight_grams, active, position FROM product_variants WHERE product_id IN "
)
_SKUS = "SELECT id, product_id, sku FROM product_variants WHERE sku IN "
_PRODUCT_COLUMNS = ("slug", "name", "description", "active", "category_id", "low_stock_threshold")


def _bulk(sql: str, values, order: str = "") -> list[dict]:
    """``sql`` ending in ``IN``, for every value, ``BATCH`` values a statement."""
    values, rows = list(values), []
    for start in range(0, len(values), BATCH):
        marks, params = db.in_list("v", values[start : start + BATCH])
        rows.extend(db.query(sql + marks + order, params))
    return rows


class _Shop:
    """What the shop has for the file's products (and the SKUs it names), changed by the
    rows checked so far as their writes would change it."""

    def __init__(self, groups: dict):
        self.categories = {r["slug"]: r["id"] for r in db.query("SELECT id, slug FROM categories")}
        self.products = {row["slug"]: row for row in _bulk(_PRODUCTS, groups)}
        self.variants: dict[str, dict[str, dict]] = {}  # product id -> option key -> variant
        self.skus: dict[str, dict] = {}  # sku -> its variant
        named = {row.get("variant_sku") for rows in groups.values() for _n, row in rows}
        for row in _bulk(_SKUS, sorted(sku for sku in named if sku)):
            self.skus[row["sku"]] = row
        ids = [product["id"] for product in self.products.values()]
        for row in _bulk(_VARIANTS, ids, " ORDER BY product_id, position, id"):
            row["options"], row["active"] = json.loads(row["options"]), bool(row["active"])
            self.add(row)

    def add(self, variant: dict) -> None:
        self.variants.setdefault(variant["product_id"], {})[variant["option_key"]] = variant
        if variant["sku"]:
            self.skus[variant["sku"]] = variant


def check(groups: dict, can_create, result: dict) -> dict[str, dict]:
    """Check every product's rows (``groups``: slug -> ``[(row number, typed row)]``); add
    the errors to ``result``; answer each good product's counts by slug."""
    shop, counted = _Shop(groups), {}
    for slug, rows in groups.items():
        answer = product_outcome(result, rows, partial(_product, shop, slug, rows, can_create))
        if answer is None:
            continue
        counts, errors = answer
        result["errors"].extend(errors)
        counted[slug] = counts
    return counted


def _product(shop: _Shop, slug: str, rows: list, can_create) -> tuple[dict, list]:
    """One product's rows, as ``catalogue_import._apply_product`` in its careful mode."""
    fields = product_fields(rows, shop.categories)
    product = shop.products.get(slug)
    created, changed, auto = product is None, {}, None
    if created:
        can_create()
        price = new_product_price(fields, rows)
        data = checked(PRODUCT_CREATE, {**fields, "slug": slug, "price_cents": price})
        options = data.get("options") or []
        product = {"id": f"new product {slug}", "price_cents": price}
        first = {option["name"]: option["values"][0] for option in options}
        auto = _new(product, options, first, {"price_cents": price, "stock": 0}, None)
        shop.add(auto)
    else:
        current = {column: product[column] for column in _PRODUCT_COLUMNS}
        current.update(active=bool(product["active"]), options=json.loads(product["options"]))
        changed = {field: value for field, value in fields.items() if current[field] != value}
        options = current["options"]
        if changed:
            data = checked(PRODUCT_UPDATE, changed)
            if "options" in data:
                options = [{"name": o["name"], "values": o["values"]} for o in data["options"]]
                _rekey(shop, product["id"], options)
    counts, errors, seen = {"created": 0, "updated": 0, "unchanged": 0}, [], {}
    for number, row in rows:
        try:
            outcome = _variant(shop, product, options, auto, number, row, seen)
        except (RowProblem, ShopError) as error:
            errors.append(row_error(number, error))
            continue
        if created or changed:  # a new product's rows are new; a changed product's, updated
            outcome = "created" if created else "updated"
        counts[outcome] += 1
    return counts, errors


def _rekey(shop: _Shop, product_id: str, options: list) -> None:
    """The product's variants under new options (``variants.set_options``' rule)."""
    held = shop.variants.get(product_id, {}).values()
    held = sorted(held, key=lambda v: (v["position"], v["id"]))
    updated = variants.rekey(options, [(v["id"], v["options"]) for v in held])
    shop.variants[product_id] = {}
    for variant, (_id, values) in zip(held, updated, strict=True):
        variant.update(options=values, option_key=variants.key_of(options, values))
        shop.add(variant)


def _new(product: dict, options: list, values: dict, fields: dict, number) -> dict:
    """A variant the import would create (``number``: its row's; None: a new product's first)."""
    variant = {"sku": None, "compare_at_price_cents": None, "weight_grams": None, **fields}
    variant.update(id=f"row {number}" if number else product["id"], row=number)
    variant.update(product_id=product["id"], options=values, active=True)
    variant.update(option_key=variants.key_of(options, values), position=variant.get("position"))
    return variant


def _taken(shop: _Shop, sku: str | None, own: dict | None = None) -> None:
    """``variants.check_sku``: 409 when a variant other than ``own`` has ``sku``."""
    other = shop.skus.get(sku) if sku is not None else None
    if other is None or other is own:
        return
    if other.get("row"):
        raise Conflict(f"sku: {sku!r} is already the SKU of row {other['row']} of the file.")
    variants.sku_taken(sku, other)


def _free(shop: _Shop, product: dict, key: str, own: dict | None = None) -> None:
    """``variants._check_free``: 409 when another variant of the product has these values."""
    other = shop.variants.get(product["id"], {}).get(key)
    if other is None or other is own:
        return
    which = f"row {other['row']} of the file" if other.get("row") else f"variant {other['id']}"
    raise Conflict(f"options: {which} already has these option values.")


def _variant(shop: _Shop, product, options, auto, number, row, seen) -> str:
    """The row's variant created or updated, as ``catalogue_import._apply_variant``."""
    given = {TO_VARIANT[c]: row[c] for c in TO_VARIANT if c in row}
    match = _match(shop, product, options, auto, row)
    if match is None:
        if "options" not in given and options:
            raise RowProblem("variant_options", "give a new variant its option values.")
        data = checked(VARIANT, given)
        values = data.pop("options", {})
        variants.check_values(options, values)
        _free(shop, product, variants.key_of(options, values))
        _taken(shop, data.get("sku"))
        data.setdefault("price_cents", product["price_cents"])
        data.setdefault("stock", 0)
        variants.check_compare(data["price_cents"], data.get("compare_at_price_cents"))
        made = _new(product, options, values, data, number)
        shop.add(made)
        seen[made["id"]] = number
        return "created"
    if match["id"] in seen:
        raise RowProblem("variant_sku", f"the same variant as row {seen[match['id']]}.")
    seen[match["id"]] = number
    changed = {field: value for field, value in given.items() if match[field] != value}
    if not changed:
        return "unchanged"
    data = checked(VARIANT, changed)
    key = match["option_key"]
    if "options" in data:
        variants.check_values(options, data["options"])
        key = variants.key_of(options, data["options"])
        _free(shop, product, key, match)
    if "sku" in data:
        _taken(shop, data["sku"], match)
    merged = {**match, **data}
    variants.check_compare(merged["price_cents"], merged["compare_at_price_cents"])
    shop.variants[product["id"]].pop(match["option_key"], None)
    if match["sku"] and shop.skus.get(match["sku"]) is match:
        del shop.skus[match["sku"]]
    match.update(data, option_key=key)
    shop.add(match)
    return "updated"


def _match(shop: _Shop, product: dict, options: list, auto, row: dict) -> dict | None:
    """``catalogue_import._match`` on the copy: by SKU (of this product only), else by
    option values; a new product's rows match its first variant by its first values."""
    sku = row.get("variant_sku")
    if sku and auto is None:
        found = shop.skus.get(sku)
        if found and found["product_id"] != product["id"]:
            raise RowProblem("variant_sku", f"{sku!r} is the SKU of a variant of another product.")
        if found:
            return found
    values = row.get("variant_options", None if options else {})
    if values is None or set(values) != {option["name"] for option in options}:
        return None  # a new variant: create says what is wrong with its values
    if auto is not None:
        return auto if values == auto["options"] else None
    return shop.variants.get(product["id"], {}).get(variants.key_of(options, values))
