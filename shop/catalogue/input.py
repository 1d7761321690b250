"""What a product or a variant write may carry, checked once for every caller: the API, the
CSV/JSON Lines importer and the console pass their input through ``check`` with one of the
shapes here, so a CSV row meets the same rules and messages as a request body. The API's
schemas (shop/api/catalogue_input.py) take their limits from the checks here."""

from shop.catalogue import slugs
from shop.checks.fields import Field, Length, Pattern, Range, check

__all__ = ["check"]

MAX_PRICE = 10**12  # minor units; far beyond any shop, well inside JSON's safe integers
MAX_STOCK = 10**9
MAX_OPTIONS = 3
MAX_VALUES = 100
MAX_GENERATED = 250  # combinations one product may have when generated

Name = Length(min=1, max=200)
Description = Length(max=50_000)
Sku = Length(min=1, max=64)
Price = Range(min=0, max=MAX_PRICE)
Stock = Range(min=0, max=MAX_STOCK)
CategoryId = Length(max=64)
OptionText = Length(min=1, max=100)
ImageId = Length(min=1, max=64)
Position = Range(min=1, max=MAX_STOCK)
OptionValues = Length(min=1, max=MAX_VALUES)
OptionCount = Length(max=MAX_OPTIONS)
TaxClass = Pattern(
    r"^[a-z0-9_-]{1,40}$",
    "Use 1 to 40 lower-case letters, digits, '-' or '_', such as reduced.",
)


def distinct_values(option: dict) -> tuple[str, str] | None:
    """A refusal (field, message) when an option repeats a value."""
    values = option["values"]
    if len(set(values)) != len(values):
        return "values", "each value may appear once."
    return None


def distinct_names(options: list) -> str | None:
    """A refusal when two options share a name."""
    names = [option["name"] for option in options]
    if len(set(names)) != len(names):
        return "each option name may appear once."
    return None


_TEXT = Field("string", checks=(OptionText,))
OPTION = {
    "name": Field("string", required=True, checks=(OptionText,)),
    "values": Field("list", required=True, item=_TEXT, checks=(OptionValues,)),
}
_OPTIONS = Field(
    "list",
    item=Field("object", shape=OPTION, rule=distinct_values),
    checks=(OptionCount, distinct_names),
)
_THRESHOLD = Field("integer", allow_none=True, checks=(Stock,))
_SLUG = Field("string", checks=slugs.SLUG)

PRODUCT_CREATE = {
    "name": Field("string", required=True, checks=(Name,)),
    "slug": _SLUG,
    "description": Field("string", default="", checks=(Description,)),
    "sku": Field("string", default=None, allow_none=True, checks=(Sku,)),
    "price_cents": Field("integer", required=True, checks=(Price,)),
    "stock": Field("integer", default=0, checks=(Stock,)),
    "active": Field("boolean", default=True),
    "category_id": Field("string", default=None, allow_none=True, checks=(CategoryId,)),
    "options": _OPTIONS,
    "low_stock_threshold": _THRESHOLD,
    "tax_class": Field("string", default="standard", checks=(TaxClass,)),
}

PRODUCT_UPDATE = {
    "name": Field("string", checks=(Name,)),
    "slug": _SLUG,
    "description": Field("string", checks=(Description,)),
    "sku": Field("string", allow_none=True, checks=(Sku,)),
    "price_cents": Field("integer", checks=(Price,)),
    "stock": Field("integer", checks=(Stock,)),
    "active": Field("boolean"),
    "category_id": Field("string", allow_none=True, checks=(CategoryId,)),
    "options": _OPTIONS,
    "low_stock_threshold": _THRESHOLD,
    "tax_class": Field("string", checks=(TaxClass,)),
}

VARIANT = {  # a new variant's or a change's: only the fields given
    "sku": Field("string", allow_none=True, checks=(Sku,)),
    "options": Field("mapping", key=_TEXT, item=_TEXT),
    "price_cents": Field("integer", checks=(Price,)),
    "compare_at_price_cents": Field("integer", allow_none=True, checks=(Price,)),
    "stock": Field("integer", checks=(Stock,)),
    "weight_grams": Field("integer", allow_none=True, checks=(Stock,)),
    "image_id": Field("string", allow_none=True, checks=(ImageId,)),
    "active": Field("boolean"),
    "position": Field("integer", checks=(Position,)),
}

GENERATE = {
    "price_cents": Field("integer", checks=(Price,)),
    "stock": Field("integer", default=0, checks=(Stock,)),
    "active": Field("boolean", default=True),
}
