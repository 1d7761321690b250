"""The API's schemas of product and variant writes, for OpenAPI and for parsing bodies: their
limits and messages are the domain's (``shop.catalogue.input``), turned into marshmallow
validators here, and the domain checks every write again whoever calls it."""

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from shop.catalogue import input as rules
from shop.catalogue import slugs
from shop.checks.fields import Length, Pattern, Range
from shop.http.inbound import StrictBoolean


def v(check):
    """The marshmallow validator of a domain check (OpenAPI shows its limits)."""
    if isinstance(check, Length):
        return validate.Length(min=check.min, max=check.max)
    if isinstance(check, Range):
        return validate.Range(min=check.min, max=check.max)
    if isinstance(check, Pattern):
        return validate.Regexp(check.regex, error=check.error)
    raise TypeError(check)


Name = v(rules.Name)
Description = v(rules.Description)
Sku = v(rules.Sku)
Price = v(rules.Price)
Stock = v(rules.Stock)
CategoryId = v(rules.CategoryId)
OptionText = v(rules.OptionText)
# A list, not validate.And, so that OpenAPI shows the length and the pattern.
Slug = [v(check) for check in slugs.SLUG]


def tax_class_field(**kwargs) -> fields.String:
    """A tax class: which tax rates apply to a product or a shipping method (issue 26)."""
    return fields.String(
        validate=v(rules.TaxClass),
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
        validate=v(rules.OptionValues),
    )

    @validates_schema
    def _distinct_values(self, data, **_kwargs):
        refusal = rules.distinct_values(data)
        if refusal:
            raise ValidationError(refusal[1], refusal[0])


def _distinct_names(options: list) -> None:
    refusal = rules.distinct_names(options)
    if refusal:
        raise ValidationError(refusal)


Options = fields.List(
    fields.Nested(OptionSchema),
    validate=[v(rules.OptionCount), _distinct_names],
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
        validate=Slug, metadata={"description": "Derived from the name when left out."}
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
    slug = fields.String(validate=Slug)
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
        validate=v(rules.ImageId),
        metadata={"description": "One of the product's images."},
    )
    active = StrictBoolean()
    position = fields.Integer(strict=True, validate=v(rules.Position))


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
