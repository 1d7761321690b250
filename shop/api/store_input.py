"""The API's schemas of the shop's store writes (discount codes, shipping methods, tax
rates, settings, roles, administrators), for OpenAPI and for parsing bodies, kept apart from
their blueprints so that the console's forms load through the same schemas: a form's value
is refused with the API's own words (``shop/admin/store/``), then both call the same use case.
"""

from babel import Locale, UnknownLocaleError
from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from shop.api.catalogue_input import tax_class_field
from shop.api.schemas import (
    CheckoutItemSchema,
    Permissions,
    ShippingAddressSchema,
    country_code,
)
from shop.auth.passwords import MAX_LENGTH, MIN_LENGTH
from shop.discounts import codes as discounts
from shop.discounts import store as discount_store
from shop.drafts import store as drafts
from shop.http.inbound import StrictBoolean
from shop.http.openapi import DateOrDateTime, enum_field
from shop.invoices.issuing import INVOICE_ON
from shop.shipping.countries import CODES
from shop.site import settings as site

# Discounts (shop/api/discounts.py)
_IDS = fields.List(
    fields.String(validate=validate.Length(min=1, max=64)), validate=validate.Length(max=500)
)


class ValueField(fields.String):
    """``value``: a decimal string (percent) or whole minor units (fixed); a JSON number of
    minor units is taken too."""

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        return super()._deserialize(value, attr, data, **kwargs)


def _code(text: str) -> None:
    if not discounts.is_code(text):
        raise ValidationError(f"Use {discounts.CODE_RULE}.")


_CODE = {"validate": _code, "metadata": {"pattern": discounts.CODE_PATTERN}}


class DiscountUpdateSchema(Schema):
    code = fields.String(**_CODE)
    kind = enum_field("DiscountKind", discount_store.KINDS)
    value = ValueField(
        metadata={
            "description": "`percent`: a decimal string from 0 to 100 (`12.5`); `fixed`: whole"
            " minor units (`500` is 5.00 EUR); `free_shipping`: ignored (`0`)."
        }
    )
    min_subtotal_cents = fields.Integer(
        strict=True, allow_none=True, validate=validate.Range(min=0, max=10**12)
    )
    starts_at = DateOrDateTime(allow_none=True)
    ends_at = DateOrDateTime(allow_none=True)
    usage_limit = fields.Integer(
        strict=True, allow_none=True, validate=validate.Range(min=1, max=10**12)
    )
    once_per_customer = StrictBoolean()
    product_ids = _IDS
    category_ids = _IDS
    active = StrictBoolean()


class DiscountCreateSchema(DiscountUpdateSchema):
    code = fields.String(required=True, **_CODE)
    kind = enum_field("DiscountKind", discount_store.KINDS, required=True)


# Shipping (shop/api/shipping_methods.py)
MAX_CENTS = 10**12


_CENTS = validate.Range(min=0, max=MAX_CENTS)


class WeightBandSchema(Schema):
    up_to_grams = fields.Integer(
        strict=True,
        required=True,
        validate=validate.Range(min=1, max=10**9),
        metadata={"description": "Inclusive: a basket of exactly this weight is in the band."},
    )
    price_cents = fields.Integer(strict=True, required=True, validate=_CENTS)


class ShippingMethodUpdateSchema(Schema):
    name = fields.String(validate=validate.Length(min=1, max=200))
    countries = fields.List(country_code(), validate=validate.Length(max=250))
    price_cents = fields.Integer(
        strict=True, validate=_CENTS, metadata={"description": "Without weight bands."}
    )
    free_over_cents = fields.Integer(
        strict=True,
        allow_none=True,
        validate=_CENTS,
        metadata={"description": "A subtotal after discounts at or above it ships free."},
    )
    weight_bands = fields.List(
        fields.Nested(WeightBandSchema),
        validate=validate.Length(max=50),
        metadata={"description": "Price by weight; a basket heavier than every band is refused."},
    )
    tax_class = tax_class_field()
    active = StrictBoolean()
    position = fields.Integer(strict=True, validate=validate.Range(min=-1_000_000, max=1_000_000))

    @validates_schema  # after the fields: skipped when a band is itself invalid
    def _distinct_bands(self, data, **_kwargs):
        weights = [band["up_to_grams"] for band in data.get("weight_bands") or []]
        if len(set(weights)) != len(weights):
            raise ValidationError("two bands end at the same weight.", "weight_bands")


class ShippingMethodCreateSchema(ShippingMethodUpdateSchema):
    name = fields.String(required=True, validate=validate.Length(min=1, max=200))
    price_cents = fields.Integer(strict=True, required=True, validate=_CENTS)


# Tax (shop/api/tax_rates.py)
# A percentage from 0 to 100 with at most 4 decimals, said in the description's pattern.
_rate = validate.Regexp(
    r"^(100(\.0{1,4})?|[0-9]{1,2}(\.[0-9]{1,4})?)$",
    error="Give a percentage from 0 to 100 with at most 4 decimals, such as 20 or 5.5.",
)


_COUNTRY_ERROR = "Use an ISO 3166-1 alpha-2 code in capitals (DE), or * for any."


def _known_country(value: str) -> None:
    if value != "*" and value not in CODES:
        raise ValidationError(_COUNTRY_ERROR)


# The pattern for the description (a plain string, not a 250-value enum), then the codes.
_country = [validate.Regexp(r"^(\*|[A-Z]{2})$", error=_COUNTRY_ERROR), _known_country]


class TaxRateUpdateSchema(Schema):
    country = fields.String(
        validate=_country,
        metadata={"description": "ISO 3166-1 alpha-2 code, or `*` for every other country."},
    )
    region = fields.String(
        allow_none=True,
        validate=validate.Regexp(r"^[A-Za-z0-9-]{1,50}$", error="Use a code such as NY."),
        metadata={"description": "A state or province code (an address's `region`)."},
    )
    tax_class = tax_class_field()
    rate = fields.String(validate=_rate, metadata={"description": "Percent: `20`, `5.5`."})
    name = fields.String(validate=validate.Length(min=1, max=100))

    @validates_schema
    def _no_region_for_any(self, data, **_kwargs):
        if data.get("country") == "*" and data.get("region"):
            raise ValidationError("a rate for any country (*) has no region.", "region")


class TaxRateCreateSchema(TaxRateUpdateSchema):
    country = fields.String(required=True, validate=_country)
    rate = fields.String(required=True, validate=_rate)
    name = fields.String(required=True, validate=validate.Length(min=1, max=100))


# Settings (shop/api/settings.py)
INCLUSIVE = (
    "Prices (products, shipping methods) include tax, which is extracted from them (VAT);"
    " false: tax is added on top (US-style sales tax)."
)


VAT_ID = "The shop's VAT id, printed on invoices issued from now on."
INVOICE_PREFIX = "Put before new invoice numbers: `INV-` gives `INV-2026-000001`."
CN_PREFIX = "Put before new credit-note numbers: `CN-` gives `CN-2026-000001`."
INVOICE_ON_TEXT = (
    "When an order is invoiced: `paid` (when it becomes paid) or `shipment` (its first"
    " shipment; a refund before it invoices the order first)."
)
REMINDERS = (
    "A cart left behind with an e-mail and lines gets one reminder e-mail"
    " (`SHOP_CART_REMINDER_AFTER` after its last change), when its visitor agreed"
    " (`reminders: true` on the cart). Off by default."
)
ATTACH = (
    "The invoice's PDF goes with the e-mail of the move that issues it (the paid e-mail, or"
    " the shipment's with `invoice_on: shipment`)."
)
BANK = (
    "What a buyer who pays by the `manual` method is told (bank details, the reference to"
    " give), on the storefront's confirmation and order pages."
)
BRAND = "The storefront's brand colour, `#rrggbb` (its CSS variable `--brand`)."
LOGO = "The storefront's logo: one of the shop's images (`/images/{id}`) or an https address."
LOCALE = (
    "The shop's locale (Babel: `en_US`, `de_DE`, `fr_FR`): the storefront's language and how"
    " it, the invoices and credit notes write amounts and dates."
)
_PREFIX = validate.Regexp(
    r"^[A-Za-z0-9_./-]{0,20}$", error="Use up to 20 letters, digits, '-', '_', '.' or '/'."
)


def _locale(value: str) -> None:
    try:
        Locale.parse(value)
    except (ValueError, UnknownLocaleError):
        raise ValidationError("Use a locale Babel knows, such as en_US, de_DE or fr_FR.") from None


class SettingsUpdateSchema(Schema):
    shop_name = fields.String(validate=validate.Length(min=1, max=200))
    currency = fields.String(
        validate=validate.OneOf(
            sorted(site.CURRENCIES),
            error="Use an ISO 4217 code of three capitals, such as EUR or USD.",
        )
    )
    contact_email = fields.Email(allow_none=True, validate=validate.Length(max=320))
    contact_phone = fields.String(allow_none=True, validate=validate.Length(min=1, max=40))
    address = fields.String(allow_none=True, validate=validate.Length(min=1, max=1000))
    order_number_prefix = fields.String(
        validate=validate.Regexp(
            r"^[A-Za-z0-9_./-]{0,20}$",
            error="Use up to 20 letters, digits, '-', '_', '.' or '/'.",
        )
    )
    require_two_factor = StrictBoolean()
    prices_include_tax = StrictBoolean(metadata={"description": INCLUSIVE})
    vat_id = fields.String(
        allow_none=True, validate=validate.Length(min=1, max=40), metadata={"description": VAT_ID}
    )
    invoice_prefix = fields.String(validate=_PREFIX, metadata={"description": INVOICE_PREFIX})
    credit_note_prefix = fields.String(validate=_PREFIX, metadata={"description": CN_PREFIX})
    invoice_on = enum_field("InvoiceOnValue", INVOICE_ON, metadata={"description": INVOICE_ON_TEXT})
    locale = fields.String(
        validate=[validate.Length(min=2, max=20), _locale], metadata={"description": LOCALE}
    )
    cart_reminders = StrictBoolean(metadata={"description": REMINDERS})
    invoice_attach_to_mail = StrictBoolean(metadata={"description": ATTACH})
    bank_transfer_instructions = fields.String(
        allow_none=True, validate=validate.Length(min=1, max=2000), metadata={"description": BANK}
    )
    brand_color = fields.String(
        validate=validate.Regexp(r"^#[0-9a-fA-F]{6}$", error="Use #rrggbb, e.g. #1f5f4a."),
        metadata={"description": BRAND},
    )
    logo_url = fields.String(
        allow_none=True,
        validate=validate.Regexp(
            r"^(/images/[A-Za-z0-9_-]{1,64}|https://[^\s\"'<>()]{1,500})$",
            error="Use one of the shop's images (/images/{{id}}) or an https:// address.",
        ),
        metadata={"description": LOGO},
    )


# Roles (shop/api/roles.py)
RoleName = validate.Regexp(
    r"^[a-z][a-z0-9_-]{0,63}$",
    error="Use 1 to 64 lowercase letters, digits, '-' or '_', starting with a letter.",
)


class RoleCreateSchema(Schema):
    name = fields.String(required=True, validate=RoleName)
    permissions = Permissions


class RoleUpdateSchema(Schema):
    name = fields.String(validate=RoleName)
    permissions = Permissions


# Users (shop/api/users.py)
class UserCreateSchema(Schema):
    email = fields.Email(required=True, validate=validate.Length(max=320))
    name = fields.String(required=True, validate=validate.Length(min=1, max=200))
    password = fields.String(
        required=True, validate=validate.Length(min=MIN_LENGTH, max=MAX_LENGTH)
    )
    role = fields.String(required=True, validate=validate.Length(min=1, max=64))
    permissions = Permissions
    active = StrictBoolean(load_default=True)


class UserUpdateSchema(Schema):
    email = fields.Email(validate=validate.Length(max=320))
    name = fields.String(validate=validate.Length(min=1, max=200))
    password = fields.String(validate=validate.Length(min=MIN_LENGTH, max=MAX_LENGTH))
    role = fields.String(validate=validate.Length(min=1, max=64))
    permissions = Permissions
    active = StrictBoolean()


# Draft orders (shop/api/draft_orders.py)


def _items(**kwargs) -> fields.List:
    return fields.List(
        fields.Nested(CheckoutItemSchema),
        validate=validate.Length(min=1, max=drafts.MAX_LINES),
        metadata={
            "description": "`variant_id` (or `product_id` of a one-variant product) and"
            " `quantity`, each variant once."
        },
        **kwargs,
    )


class _Details(Schema):
    shipping_method_id = fields.String(allow_none=True, validate=validate.Length(min=1, max=64))
    discount_code = fields.String(allow_none=True, validate=validate.Length(min=1, max=100))
    note = fields.String(allow_none=True, validate=validate.Length(max=2000))
    credit_cents = fields.Integer(
        strict=True,
        validate=validate.Range(min=0, max=10**12),
        metadata={"description": "Minor units; see `DraftOrder.credit_cents`."},
    )
    credit_note = fields.String(allow_none=True, validate=validate.Length(max=500))


class DraftOrderCreateSchema(_Details):
    items = _items(required=True)
    customer_id = fields.String(
        validate=validate.Length(min=1, max=64),
        metadata={"description": "An existing customer; or `email`."},
    )
    email = fields.Email(
        validate=validate.Length(max=320),
        metadata={
            "description": "A customer without an account: the order will be a guest order"
            " of this e-mail (theirs at once if a customer has verified it)."
        },
    )
    shipping_address = fields.Nested(ShippingAddressSchema, required=True)

    @validates_schema
    def _one_customer(self, data, **_kwargs):
        given = [key for key in ("customer_id", "email") if key in data]
        if len(given) != 1:
            raise ValidationError("give customer_id or email (exactly one).", "customer_id")


class DraftOrderUpdateSchema(_Details):
    items = _items()
    shipping_address = fields.Nested(ShippingAddressSchema)
