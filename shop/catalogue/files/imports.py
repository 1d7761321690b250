"""Import the catalogue from CSV or JSON Lines: the export's columns, upserting products by
``product_slug`` and variants by ``variant_sku`` (a variant without a SKU by its options).

The file is checked whole first (``catalogue_plan``; a dry run is that check alone), then the
products it changes are written in chunks of ``SHOP_IMPORT_CHUNK_ROWS`` rows, each one short
transaction under ``db.lock("products")``, through the product and variant services. A chunk
refused stops the import there. The rules (empty cells, no prune, what counts as
``unchanged``): docs/catalogue-and-content.md, "Import and export (CSV and JSON Lines)".
"""

import json

from flask import current_app

from shop import db
from shop.actor import Actor
from shop.catalogue import products, variants
from shop.catalogue.files import plan as catalogue_plan
from shop.catalogue.files.export import shop_currency
from shop.catalogue.files.rows import (
    TO_VARIANT,
    RowProblem,
    add_error,
    new_product_price,
    parse,
    product_fields,
    product_outcome,
    read_rows,
    row_error,
)
from shop.db import totals
from shop.errors import ShopError

__all__ = ["import_rows", "read_rows"]


class _Rollback(Exception):
    """Raised to undo a chunk that met errors."""


# What an import writes, analyzed after it on PostgreSQL (SQLite: what the import read).
_CATALOGUE_TABLES = (
    "products",
    "product_variants",
    "variant_option_values",
    "variant_prices",  # kept by the triggers of product_variants (0029)
    "option_products",  # kept by the triggers of variant_option_values (0039)
    "option_pairs",  # the same (0044)
    "product_search",
    "search_index",
)


_CATEGORIES = "SELECT id, slug FROM categories"
# Imports (dry runs too) per caller, through the API or the console: each reads and checks a
# whole catalogue (issue 35).
IMPORT_LIMIT = "6 per minute"


def import_rows(
    raw_rows: list[dict], *, dry_run: bool, can_create, actor: Actor, progress=None
) -> dict:
    """Check the rows, then (unless a dry run or any error) write them in chunks; answer the
    counts and every row's errors. ``written`` (when a chunk was refused) counts the
    products written before it. ``can_create()`` checks the caller may create; ``actor``
    is audited;
    ``progress(n)`` hears of each ``n`` rows done."""
    currency = shop_currency()
    result = {"created": 0, "updated": 0, "unchanged": 0, "errors": [], "dry_run": dry_run}
    groups: dict[str, list[tuple[int, dict]]] = {}
    for number, raw in enumerate(raw_rows, start=1):
        try:
            row = parse(raw, currency)
        except RowProblem as found:
            add_error(result, number, found)
            continue
        groups.setdefault(row["product_slug"], []).append((number, row))
    counted = catalogue_plan.check(groups, can_create, result)
    if dry_run or result["errors"]:
        for counts in counted.values():
            _add(result, counts)
        if progress:
            progress(len(raw_rows))
    else:
        _write(groups, counted, can_create, actor, progress, result)
    result["errors"].sort(key=lambda error: error["row"])
    return result


def _chunks(slugs: list, groups: dict, rows: int):
    """The products in runs of at least one product and at most ``rows`` rows (but one
    product's own): each run is one transaction."""
    chunk, size = [], 0
    for slug in slugs:
        if chunk and size + len(groups[slug]) > rows:
            yield chunk
            chunk, size = [], 0
        chunk.append(slug)
        size += len(groups[slug])
    if chunk:
        yield chunk


def _add(result: dict, counts: dict) -> None:
    for outcome, count in counts.items():
        result[outcome] += count


def _write(groups: dict, counted: dict, can_create, actor, progress, result: dict) -> None:
    """Write the products whose rows the check found changing, a chunk per transaction;
    the others' rows are counted unchanged as checked."""
    changing = [slug for slug, c in counted.items() if c["created"] or c["updated"]]
    for slug, counts in counted.items():
        if not (counts["created"] or counts["updated"]):
            _add(result, counts)
            if progress:
                progress(len(groups[slug]))
    written = 0
    for chunk_slugs in _chunks(changing, groups, current_app.config["IMPORT_CHUNK_ROWS"]):
        chunk = {"created": 0, "updated": 0, "unchanged": 0, "errors": []}
        try:
            with db.transaction(), totals.batched():
                db.lock("products")
                categories = {r["slug"]: r["id"] for r in db.query(_CATEGORIES)}
                for slug in chunk_slugs:
                    _import_product(slug, groups[slug], categories, chunk, can_create, actor)
                if chunk["errors"]:
                    raise _Rollback
        except _Rollback:
            result["errors"], result["written"] = chunk["errors"], written
            break
        _add(result, {outcome: chunk[outcome] for outcome in ("created", "updated", "unchanged")})
        written += len(chunk_slugs)
        db.get_db().analyze_grown(_CATALOGUE_TABLES)  # the tables grow as it goes: no stale plan
        if progress:
            progress(sum(len(groups[slug]) for slug in chunk_slugs))
    if written:
        # A bulk write: the planner's statistics of the catalogue may be stale now, and
        # SQLite's are missing until first gathered (docs/performance.md, item 11).
        db.get_db().analyze(tables=_CATALOGUE_TABLES)


def _import_product(slug, rows, categories, result, can_create, actor) -> None:
    """One product and its rows, in a savepoint: a refusal undoes only this product.

    The rows run without a savepoint each (two statements fewer a row); when one is refused,
    the product is undone and run again with one, so that every bad row is named."""

    def work():
        try:
            with db.transaction():
                fields = product_fields(rows, categories)
                return _apply_product(slug, fields, rows, can_create, actor, careful=False)
        except _RowFailed:
            with db.transaction():
                return _apply_product(slug, fields, rows, can_create, actor, careful=True)

    answer = product_outcome(result, rows, work)
    if answer is None:
        return
    counts, errors = answer
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
        price = new_product_price(fields, rows)
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
            errors.append(row_error(number, error))
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


def _apply_variant(product_id, options, auto, number, row, seen, batch=None) -> str:
    """Create or update the row's variant; answer ``created``/``updated``/``unchanged``.
    A new variant joins ``batch`` when there is one (``create_variants`` makes them)."""
    given = {TO_VARIANT[c]: row[c] for c in TO_VARIANT if c in row}
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
