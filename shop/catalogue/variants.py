"""Variants: what a product sells, one per combination of its option values (issue 25).

Every product has at least one variant; a product without options has exactly one, its
default variant, whose price, stock and SKU are the product's ``price_cents``, ``stock`` and
``sku`` for the clients that know no variants. Every write of a product or of its variants
ends, in its transaction, in ``product_changed``: it marks and announces low stock once
(``variant.stock_low``), refreshes the search index and emits ``product.updated``. The
columns ``products`` keeps for its list (lowest active price, total active stock, a lone
variant's SKU) are the database's: the trigger ``product_variants_stock`` and its twins
(migrations 0020, 0021) recompute them on every write of a variant that can move them.

Each function here takes a plain dict and checks it through ``shop.catalogue.input``, so the API,
the importer and the console meet the same rules and messages. Call them inside a transaction
(``db.transaction()``) holding ``db.lock("products")``.
"""

import itertools
import json

from shop import db, webhooks
from shop.catalogue import prices, search, stock
from shop.catalogue.input import GENERATE, MAX_GENERATED, VARIANT, check
from shop.catalogue.present import VARIANTS as SELECT
from shop.catalogue.present import check_image, load_product, present_variant
from shop.clock import now_iso
from shop.errors import Conflict, Invalid, NotFound

ORDER = " ORDER BY position, id"

# The product's stock and low-stock threshold after a write of its variants. Its list columns
# (price_cents, stock, sku) follow its variants by the database's trigger
# product_variants_stock and its twins (migration 0021), the one place of that rule.
_STOCK = "SELECT stock, low_stock_threshold FROM products WHERE id = :id"


def load_variant(variant_id: str) -> dict:
    """One variant as a reader holding ``products.read`` sees it (the events' payload)."""
    row = db.one(SELECT + " WHERE id = :id", {"id": variant_id})
    if row is None:
        raise NotFound("Variant not found.")
    return prices.with_variant_priors([present_variant(row)])[0]


def _variant(product_id: str, variant_id: str) -> dict:
    row = db.one(
        SELECT + " WHERE id = :id AND product_id = :product_id",
        {"id": variant_id, "product_id": product_id},
    )
    if row is None:
        raise NotFound("Variant not found.")
    return present_variant(row)


def _product(product_id: str) -> dict:
    row = db.one("SELECT options, price_cents FROM products WHERE id = :id", {"id": product_id})
    if row is None:
        raise NotFound("Product not found.")
    return {**row, "options": json.loads(row["options"])}


def key_of(options: list[dict], values: dict) -> str:
    """The canonical text of a variant's values: a JSON list in the product's option order."""
    return json.dumps([values[option["name"]] for option in options], ensure_ascii=False)


def check_values(options: list[dict], values: dict) -> None:
    """400 unless ``values`` names exactly one known value of every option."""
    names = [option["name"] for option in options]
    unknown = sorted(set(values) - set(names))
    if unknown:
        raise Invalid(f"options: the product has no option {unknown[0]!r} (it has {names}).")
    for option in options:
        value = values.get(option["name"])
        if value is None:
            raise Invalid(f"options: give a value of {option['name']!r} ({option['values']}).")
        if value not in option["values"]:
            raise Invalid(
                f"options: {value!r} is not a value of {option['name']!r} ({option['values']}).",
            )


def check_sku(sku: str | None, own_id: str = "") -> None:
    """409 when another variant (of any product) has ``sku``."""
    if sku is None:
        return
    other = db.one(
        "SELECT v.id, v.product_id FROM product_variants v WHERE v.sku = :sku AND v.id <> :id",
        {"sku": sku, "id": own_id},
    )
    if other:
        sku_taken(sku, other)


def sku_taken(sku: str, other: dict) -> None:
    raise Conflict(
        f"sku: {sku!r} is already used by variant {other['id']} of product {other['product_id']}.",
    )


def _check_free(product_id: str, key: str, own_id: str = "") -> None:
    other = db.value(
        "SELECT id FROM product_variants WHERE product_id = :p AND option_key = :k AND id <> :id",
        {"p": product_id, "k": key, "id": own_id},
    )
    if other:
        raise Conflict(f"options: variant {other} already has these option values.")


def check_compare(price: int, compare_at: int | None) -> None:
    """400 unless a compare-at ("was") price is above the price: it announces a reduction
    (issue 40; it was allowed equal before)."""
    if compare_at is not None and compare_at <= price:
        raise Invalid(
            f"compare_at_price_cents: must be above price_cents ({price}): it is the price"
            " the reduction is from; leave it null when there is none."
        )


_INSERT_VALUES = (
    "INSERT INTO variant_option_values (variant_id, product_id, name, value)"
    " VALUES (:variant_id, :product_id, :name, :value)"
)


def _write_values(variant_id: str, product_id: str, values: dict) -> None:
    """The variant's rows of ``variant_option_values`` (the filters' and facets' index)."""
    db.execute("DELETE FROM variant_option_values WHERE variant_id = :id", {"id": variant_id})
    db.execute_many(
        _INSERT_VALUES,
        [
            {"variant_id": variant_id, "product_id": product_id, "name": n, "value": v}
            for n, v in values.items()
        ],
    )


def _insert(product_id: str, options: list[dict], values: dict, fields: dict) -> str:
    """Insert one checked variant; answer its id."""
    return _insert_many(product_id, options, [(values, fields)])[0]


def _insert_many(product_id: str, options: list[dict], checked: list[tuple]) -> list[str]:
    """Insert checked variants (``(values, fields)`` each; without a position, after the
    product's last) in two statements whatever their number; answer their ids."""
    moment, top, rows, value_rows = now_iso(), None, [], []
    if any(not fields.get("position") for _values, fields in checked):
        top = db.value(
            "SELECT COALESCE(MAX(position), 0) FROM product_variants WHERE product_id = :id",
            {"id": product_id},
        )
    for values, fields in checked:
        variant_id = fields.get("id") or db.new_id()
        position = fields.get("position") or top + 1
        top = None if top is None else max(top, position)
        rows.append(
            {
                "sku": None,
                "compare_at_price_cents": None,
                "weight_grams": None,
                "image_id": None,
                "active": True,
                **fields,
                "id": variant_id,
                "product_id": product_id,
                "options": json.dumps(values, ensure_ascii=False),
                "key": key_of(options, values),
                "position": position,
                "now": moment,
            }
        )
        value_rows.extend(
            {"variant_id": variant_id, "product_id": product_id, "name": n, "value": v}
            for n, v in values.items()
        )
    db.execute_many(
        "INSERT INTO product_variants (id, product_id, sku, options, option_key, price_cents,"
        " compare_at_price_cents, stock, weight_grams, image_id, active, position, stock_low,"
        " created_at, updated_at) VALUES (:id, :product_id, :sku, :options, :key, :price_cents,"
        " :compare_at_price_cents, :stock, :weight_grams, :image_id, :active, :position, 0,"
        " :now, :now)",
        rows,
    )
    if value_rows:
        db.execute_many(_INSERT_VALUES, value_rows)
    return [row["id"] for row in rows]


def create_variant(product_id: str, data: dict, *, announce=True) -> dict:
    """Add a variant to a product (price from the product's when left out, stock 0;
    ``announce=False``: the caller ends its write in ``product_changed`` itself)."""
    data = check(VARIANT, data)
    product = _product(product_id)
    values = data.pop("options", {})
    check_values(product["options"], values)
    _check_free(product_id, key_of(product["options"], values))
    check_sku(data.get("sku"))
    check_image(product_id, data.get("image_id"))
    data.setdefault("price_cents", product["price_cents"])
    data.setdefault("stock", 0)
    check_compare(data["price_cents"], data.get("compare_at_price_cents"))
    variant_id = _insert(product_id, product["options"], values, data)
    if announce:
        product_changed(product_id)
    return load_variant(variant_id)


def create_variants(product_id: str, items: list[dict]) -> list[str]:
    """Add several variants to a product with ``create_variant``'s rules and messages, its
    checks made once for all of them and the rows written together (the importer's batch:
    a few statements whatever their number); answer their ids in order. The caller ends its write in
    ``product_changed``; the first refusal stops it (find the row with ``create_variant``)."""
    product = _product(product_id)
    options = product["options"]
    taken = {
        row["option_key"]: row["id"]
        for row in db.query(
            "SELECT id, option_key FROM product_variants WHERE product_id = :id",
            {"id": product_id},
        )
    }
    checked, skus = [], {}
    for data in items:
        data = check(VARIANT, data)
        values = data.pop("options", {})
        check_values(options, values)
        key = key_of(options, values)
        if key in taken:
            raise Conflict(f"options: variant {taken[key]} already has these option values.")
        data["id"] = taken[key] = db.new_id()
        if data.get("sku") is not None:
            if data["sku"] in skus:
                sku_taken(data["sku"], {"id": skus[data["sku"]], "product_id": product_id})
            skus[data["sku"]] = data["id"]
        check_image(product_id, data.get("image_id"))
        data.setdefault("price_cents", product["price_cents"])
        data.setdefault("stock", 0)
        check_compare(data["price_cents"], data.get("compare_at_price_cents"))
        checked.append((values, data))
    if skus:
        placeholders, params = db.in_list("sku", list(skus))
        other = db.one(
            "SELECT id, product_id, sku FROM product_variants WHERE sku IN " + placeholders,
            params,
        )
        if other:
            sku_taken(other["sku"], other)
    return _insert_many(product_id, options, checked)


_SETTABLE = (
    "sku",
    "price_cents",
    "compare_at_price_cents",
    "stock",
    "weight_grams",
    "image_id",
    "active",
    "position",
)


def update_variant(product_id: str, variant_id: str, data: dict, *, announce=True) -> dict:
    """Change the fields given of one variant of a product (``announce=False``: the caller
    ends its write in ``product_changed`` itself)."""
    data = check(VARIANT, data)
    stock.lock_products([product_id])
    variant = _variant(product_id, variant_id)
    if "options" in data:
        product = _product(product_id)
        check_values(product["options"], data["options"])
        key = key_of(product["options"], data["options"])
        _check_free(product_id, key, variant_id)
        db.execute(
            "UPDATE product_variants SET options = :options, option_key = :key WHERE id = :id",
            {
                "options": json.dumps(data["options"], ensure_ascii=False),
                "key": key,
                "id": variant_id,
            },
        )
        _write_values(variant_id, product_id, data["options"])
    if "sku" in data:
        check_sku(data["sku"], variant_id)
    if "image_id" in data:
        check_image(product_id, data["image_id"])
    merged = {**variant, **data}
    check_compare(merged["price_cents"], merged["compare_at_price_cents"])
    sets = [f"{field} = :{field}" for field in _SETTABLE if field in data]
    db.execute(
        "UPDATE product_variants SET "
        + ", ".join([*sets, "updated_at = :now"])
        + " WHERE id = :id",
        {**data, "now": now_iso(), "id": variant_id},
    )
    if announce:
        product_changed(product_id)
    return load_variant(variant_id)


def delete_variant(product_id: str, variant_id: str) -> None:
    """Delete a variant; a product's last one stays (409): every product has one."""
    stock.lock_products([product_id])
    _variant(product_id, variant_id)
    count = db.value(
        "SELECT COUNT(*) FROM product_variants WHERE product_id = :id", {"id": product_id}
    )
    if count == 1:
        raise Conflict("This is the product's only variant: a product has at least one.")
    db.execute("DELETE FROM product_variants WHERE id = :id", {"id": variant_id})
    product_changed(product_id)


def generate(product_id: str, data: dict) -> list[dict]:
    """Create every missing combination of the product's option values; answer them."""
    data = check(GENERATE, data)
    product = _product(product_id)
    options = product["options"]
    combinations = 1
    for option in options:
        combinations *= len(option["values"])
    if combinations > MAX_GENERATED:
        raise Invalid(
            f"generate: the options make {combinations} combinations, more than"
            f" {MAX_GENERATED}; remove some values or create the variants one by one.",
        )
    taken = {
        row["option_key"]
        for row in db.query(
            "SELECT option_key FROM product_variants WHERE product_id = :id", {"id": product_id}
        )
    }
    fields = {
        "price_cents": data.get("price_cents", product["price_cents"]),
        "stock": data["stock"],
        "active": data["active"],
    }
    created = []
    for combination in itertools.product(*(option["values"] for option in options)):
        values = {option["name"]: value for option, value in zip(options, combination, strict=True)}
        if key_of(options, values) not in taken:
            created.append(_insert(product_id, options, values, fields))
    if created:
        product_changed(product_id)
    return [load_variant(variant_id) for variant_id in created]


def rekey(options: list[dict], current: list[tuple[str, dict]]) -> list[tuple[str, dict]]:
    """The variants' values (``(id, values)`` each, in position order) under new ``options``:
    a new option's first value; 409 when a removed value is in use or two would be equal."""
    allowed = {option["name"]: set(option["values"]) for option in options}
    in_use, updated, keys = {}, [], {}
    for variant_id, old in current:
        values = {}
        for option in options:
            value = old.get(option["name"], option["values"][0])
            if value not in allowed[option["name"]]:
                in_use.setdefault(f"{option['name']}={value}", []).append(variant_id)
            values[option["name"]] = value
        updated.append((variant_id, values))
    if in_use:
        raise Conflict(
            "options: variants use the values removed: "
            + "; ".join(f"{value} by {', '.join(ids)}" for value, ids in sorted(in_use.items()))
            + ". Delete or change those variants first.",
        )
    for variant_id, values in updated:
        key = key_of(options, values)
        if key in keys:
            raise Conflict(
                f"options: variants {keys[key]} and {variant_id} would have the same values."
            )
        keys[key] = variant_id
    return updated


def set_options(product_id: str, options: list[dict]) -> None:
    """Give a product new options and keep its variants in step.

    A new option gives every variant its first value (as Shopify does); a removed option
    leaves them; a value that variants use cannot be removed (409 naming them), nor may two
    variants end up with the same values.
    """
    stock.lock_products([product_id])  # before its variants' rows, as checkout does
    options = [{"name": o["name"], "values": list(o["values"])} for o in options]
    rows = db.query(
        "SELECT id, options FROM product_variants WHERE product_id = :id ORDER BY position, id",
        {"id": product_id},
    )
    updated = rekey(options, [(row["id"], json.loads(row["options"])) for row in rows])
    # Through a free key first, so that reordering options never meets the unique index.
    for variant_id, _values in updated:
        db.execute("UPDATE product_variants SET option_key = id WHERE id = :id", {"id": variant_id})
    for variant_id, values in updated:
        db.execute(
            "UPDATE product_variants SET options = :options, option_key = :key WHERE id = :id",
            {
                "options": json.dumps(values, ensure_ascii=False),
                "key": key_of(options, values),
                "id": variant_id,
            },
        )
        _write_values(variant_id, product_id, values)
    db.execute(
        "UPDATE products SET options = :options WHERE id = :id",
        {"options": json.dumps(options, ensure_ascii=False), "id": product_id},
    )


def refresh(product_id: str) -> int | None:
    """Bring the variants' low-stock marks up to date, in the caller's transaction; answer
    the product's stock (None when it is gone). The list columns are already fresh: the
    trigger on product_variants keeps them, in the statement that wrote the variant."""
    row = db.one(_STOCK, {"id": product_id})
    if row is None:
        return None
    stock, threshold = row["stock"], row["low_stock_threshold"]
    if threshold is not None:
        mark_low_stock(product_id, threshold)
    return stock


def mark_low_stock(product_id: str, threshold: int) -> None:
    """Mark the product's variants at or under ``threshold`` low (``variant.stock_low`` for
    each newly low one) and the others not, in the caller's transaction."""
    db.execute(
        "UPDATE product_variants SET stock_low = 0"
        " WHERE product_id = :id AND stock_low = 1 AND stock > :threshold",
        {"id": product_id, "threshold": threshold},
    )
    low = db.query(
        "UPDATE product_variants SET stock_low = 1"
        " WHERE product_id = :id AND stock_low = 0 AND stock <= :threshold RETURNING id",
        {"id": product_id, "threshold": threshold},
    )
    for row in sorted(low, key=lambda r: r["id"]):
        webhooks.emit("variant.stock_low", row["id"], load_variant)


def product_changed(product_id: str, event: str = "product.updated") -> int | None:
    """The end of every write of a product or its variants, in its transaction: low-stock
    marks, search index, then ``event``; answers the product's stock."""
    stock = refresh(product_id)
    search.refresh(product_id)
    webhooks.emit(event, product_id, load_product)
    return stock


def unknown_option_names(names: list[str]) -> list[str]:
    """Which of ``names`` no variant of any product has as an option (the option filter's
    400: a misspelt name would otherwise answer an empty page); one statement, an index probe
    per name (``variant_option_values_lookup``)."""
    if not names:
        return []
    ordered = sorted(set(names))
    params = {f"n{i}": name for i, name in enumerate(ordered)}
    found = db.query(
        " UNION ALL ".join(
            f"SELECT :n{i} AS name WHERE EXISTS (SELECT 1 FROM variant_option_values"
            f" WHERE name = :n{i})"
            for i in range(len(ordered))
        ),
        params,
    )
    known = {row["name"] for row in found}
    return [name for name in ordered if name not in known]
