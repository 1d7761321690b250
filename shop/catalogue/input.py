"""What a product or a variant write may carry, checked once for every caller: the API's
bodies, the CSV/JSON Lines importer and the console load their input through these schemas
(``load``), so a CSV row meets the same rules and messages as a request body."""

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from shop.catalogue import slugs
from shop.errors import Invalid
from shop.http.errors import fold_messages
from shop.http.inbound import StrictBoolean

MAX_PRICE = 10**12  # minor units; far beyond any shop, well inside JSON's safe integers
MAX_STOCK = 10**9
MAX_OPTIONS = 3
MAX_VALUES = 100
MAX_GENERATED = 250  # combinations one product may have when generated

Name = validate.Length(min=1, max=200)
Description = validate.Length(max=50_000)
Sku = validate.Length(min=1, max=64)
Price = validate.Range(min=0, max=MAX_PRICE)
Stock = validate.Range(min=0, max=MAX_STOCK)
CategoryId = validate.Length(max=64)
OptionText = validate.Length(min=1, max=100)


def tax_class_field(**kwargs) -> fields.String:
    """A tax class: which tax rates apply to a product or a shipping method (issue 26)."""
    return fields.String(
        validate=validate.Regexp(
            r"^[a-z0-9_-]{1,40}$",
            error="Use 1 to 40 lower-case letters, digits, '-' or '_', such as reduced.",
        ),
        metadata={
            "description": "Which tax rates apply (`standard` unless set, or `reduced`, ...)."
        },
        **kwargs,
    )


class OptionSchema(Schema):
    name = fields.String(required=True, validate=OptionText)
    values = fields.List(
        fields.String(validate=OptionText),
        required=True,
        validate=validate.Length(min=1, max=MAX_VALUES),
    )

    @validates_schema
    def _distinct_values(self, data, **_kwargs):
        values = data.get("values", [])
        if len(set(values)) != len(values):
            raise ValidationError("each value may appear once.", "values")


def _distinct_names(options: list) -> None:
    names = [option["name"] for option in options]
    if len(set(names)) != len(names):
        raise ValidationError("each option name may appear once.")


Options = fields.List(
    fields.Nested(OptionSchema),
    validate=[validate.Length(max=MAX_OPTIONS), _distinct_names],
    metadata={"description": "At most 3 options of at most 100 values each, in display order."},
)
Threshold = fields.Integer(
    strict=True,
    allow_none=True,
    validate=Stock,
    metadata={"description": "`variant.stock_low` fires when a variant's stock falls to it."},
)


class ProductCreateSchema(Schema):
    name = fields.String(required=True, validate=Name)
    slug = fields.String(
        validate=slugs.Slug, metadata={"description": "Derived from the name when left out."}
    )
    description = fields.String(load_default="", validate=Description)
    sku = fields.String(
        load_default=None,
        allow_none=True,
        validate=Sku,
        metadata={"description": "The first variant's."},
    )
    price_cents = fields.Integer(
        required=True, strict=True, validate=Price, metadata={"description": "The first variant's."}
    )
    stock = fields.Integer(
        load_default=0,
        strict=True,
        validate=Stock,
        metadata={"description": "The first variant's."},
    )
    active = StrictBoolean(load_default=True)
    category_id = fields.String(load_default=None, allow_none=True, validate=CategoryId)
    options = Options
    low_stock_threshold = Threshold
    tax_class = tax_class_field(load_default="standard")


class ProductUpdateSchema(Schema):
    name = fields.String(validate=Name)
    slug = fields.String(validate=slugs.Slug)
    description = fields.String(validate=Description)
    sku = fields.String(
        allow_none=True, validate=Sku, metadata={"description": "Of a product with one variant."}
    )
    price_cents = fields.Integer(
        strict=True, validate=Price, metadata={"description": "Of a product with one variant."}
    )
    stock = fields.Integer(
        strict=True, validate=Stock, metadata={"description": "Of a product with one variant."}
    )
    active = StrictBoolean()
    category_id = fields.String(allow_none=True, validate=CategoryId)
    options = Options
    low_stock_threshold = Threshold
    tax_class = tax_class_field()


class _VariantFields(Schema):
    sku = fields.String(allow_none=True, validate=Sku)
    options = fields.Dict(
        keys=fields.String(validate=OptionText),
        values=fields.String(validate=OptionText),
        metadata={"description": 'One value of every option of the product: `{"Size": "M"}`.'},
    )
    price_cents = fields.Integer(strict=True, validate=Price)
    compare_at_price_cents = fields.Integer(
        strict=True,
        allow_none=True,
        validate=Price,
        metadata={"description": "The former price, shown struck through; at least the price."},
    )
    stock = fields.Integer(strict=True, validate=Stock)
    weight_grams = fields.Integer(strict=True, allow_none=True, validate=Stock)
    image_id = fields.String(
        allow_none=True,
        validate=validate.Length(min=1, max=64),
        metadata={"description": "One of the product's images."},
    )
    active = StrictBoolean()
    position = fields.Integer(strict=True, validate=validate.Range(min=1, max=MAX_STOCK))


class VariantCreateSchema(_VariantFields):
    """A new variant: price from the product's (lowest) when left out, stock 0."""


class VariantUpdateSchema(_VariantFields):
    """Only the fields given change."""


class GenerateSchema(Schema):
    price_cents = fields.Integer(
        strict=True,
        validate=Price,
        metadata={"description": "Of every new variant; the product's price when left out."},
    )
    stock = fields.Integer(strict=True, load_default=0, validate=Stock)
    active = StrictBoolean(load_default=True)


def load(schema: type[Schema], data: dict, *, partial=False) -> dict:
    """``data`` checked by ``schema``; a 400 whose message names each bad field."""
    try:
        return schema().load(data, partial=partial)
    except ValidationError as error:
        raise Invalid(" ".join(fold_messages(error.messages))) from None
