"""Schemas and fields that more than one blueprint shows or reads: an order (the orders'
and the checkout's answer), a product (products and collections), an image (products and
images), an actor (the audit log and an order's history), the permission list (roles and
users) and a required text field.

A blueprint keeps the schemas only it uses; one shared by two lives here, so that no
blueprint imports another.
"""

from marshmallow import Schema, ValidationError, fields, post_load, validate, validates_schema

from shop.api.catalogue_input import OptionSchema, v
from shop.http.openapi import enum_field
from shop.orders import progress, shipments
from shop.orders.lifecycle import STATUSES
from shop.payments import providers as payments
from shop.permissions import ALL_PERMISSIONS
from shop.shipping.countries import CODES


def _not_blank(value: str) -> None:
    if not value.strip():
        raise ValidationError("Must not be blank.")


def text(maximum: int, **kwargs) -> fields.String:
    """A string field of 1 to ``maximum`` characters, not only spaces."""
    return fields.String(validate=[validate.Length(min=1, max=maximum), _not_blank], **kwargs)


# The most units of one variant a basket (a checkout, a quote, a cart's line) holds.
MAX_QUANTITY = 10_000


def payment_method(value: str) -> None:
    """A payment method the shop offers now (the checkout's and a cart's)."""
    if payments.get(value) is None:
        raise ValidationError(f"Unknown payment method; use one of: {', '.join(payments.names())}.")


def payment_method_field() -> fields.String:
    """The required ``payment_method`` of a checkout or a cart's completion."""
    return enum_field(
        "CheckoutPaymentMethod",  # the name generated clients gave it before it was shared
        payments.names(every=True),
        validate_input=False,  # the methods the shop offers now, not every one there is
        required=True,
        validate=payment_method,
        metadata={
            "description": "`manual`: bank transfer or cash on delivery; `stripe`: card"
            " payment through Stripe, when the shop has configured it (docs/payments.md)."
        },
    )


class CheckoutItemSchema(Schema):
    """A line of a basket: a variant (or a one-variant product) and its quantity."""

    variant_id = fields.String(
        validate=validate.Length(min=1, max=64),
        metadata={"description": "The variant to buy; or `product_id` alone."},
    )
    product_id = fields.String(
        validate=validate.Length(min=1, max=64),
        metadata={"description": "Enough for a product with one variant."},
    )
    quantity = fields.Integer(
        strict=True, required=True, validate=validate.Range(min=1, max=MAX_QUANTITY)
    )

    @validates_schema
    def _names_what_to_buy(self, data, **_kwargs):
        if "variant_id" not in data and "product_id" not in data:
            raise ValidationError("give a variant_id, or a product_id.", "product_id")


def country_code(described: bool = True, **kwargs) -> fields.String:
    """An ISO 3166-1 alpha-2 code (the ``CountryCode`` enum); a query parameter is not
    ``described`` (a description beside the reference would wrap it in an ``allOf``)."""
    if described:
        kwargs["metadata"] = {"description": "ISO 3166-1 alpha-2 code, such as DE."}
    return enum_field(
        "CountryCode",
        sorted(CODES),
        validate_input=False,
        validate=validate.OneOf(
            sorted(CODES), error="Use an ISO 3166-1 alpha-2 code in capitals, such as DE or FR."
        ),
        **kwargs,
    )


class ShippingAddressSchema(Schema):
    name = text(200, required=True)
    line1 = text(200, required=True)
    line2 = fields.String(allow_none=True, load_default=None, validate=validate.Length(max=200))
    city = text(100, required=True)
    postal_code = text(20, required=True)
    country = country_code(required=True)
    region = fields.String(
        validate=validate.Length(min=1, max=50),
        metadata={
            "description": "Optional state or province code, such as NY: picks a tax rate"
            " set for that region."
        },
    )

    @post_load
    def _tidy(self, data, **_kwargs):
        tidy = {k: v.strip() if isinstance(v, str) else v for k, v in data.items()}
        tidy["line2"] = tidy.get("line2") or None
        tidy["region"] = (tidy.get("region") or "").upper() or None
        return tidy


class ShippingQuoteAddressSchema(ShippingAddressSchema):
    """An address for a quote: only the country (and region) price a basket."""

    name = text(200)
    line1 = text(200)
    line2 = fields.String(allow_none=True, validate=validate.Length(max=200))
    city = text(100)
    postal_code = text(20)


class OrderAddressSchema(ShippingAddressSchema):
    """A shipping address as an order keeps it."""

    line2 = fields.String(required=True, allow_none=True)
    region = fields.String(required=True, allow_none=True)


class OrderCustomerSchema(Schema):
    id = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "null for a guest's order (a cart completed without an account)."},
    )
    email = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "A guest's order: the cart's e-mail. null once erased."},
    )
    name = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "null once erased, and for a guest."},
    )


class OrderItemSchema(Schema):
    product_id = fields.String(
        required=True, metadata={"description": "The product as it was; it may since be deleted."}
    )
    variant_id = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "The variant sold; null on lines older than variants."},
    )
    name = fields.String(required=True)
    sku = fields.String(required=True, allow_none=True, metadata={"description": "The variant's."})
    options = fields.Dict(
        keys=fields.String(),
        values=fields.String(),
        required=True,
        metadata={"description": "The variant's option values at the sale."},
    )
    unit_price_cents = fields.Integer(required=True)
    quantity = fields.Integer(required=True)
    line_total_cents = fields.Integer(
        required=True, metadata={"description": "`unit_price_cents * quantity`."}
    )
    discount_cents = fields.Integer(
        required=True, metadata={"description": "This line's share of the discount."}
    )
    tax_cents = fields.Integer(
        required=True,
        metadata={
            "description": "Tax on the line after its discount (included in it when"
            " prices include tax)."
        },
    )
    tax_rate = fields.String(
        required=True, allow_none=True, metadata={"description": "Percent; null: no rate."}
    )
    total_cents = fields.Integer(
        required=True,
        metadata={
            "description": "`line_total_cents - discount_cents`, plus `tax_cents` when"
            " prices exclude tax."
        },
    )


class PaymentSchema(Schema):
    provider = fields.String(required=True)
    amount_cents = fields.Integer(required=True)
    status = enum_field(
        "PaymentStatusValue",
        [
            "pending",
            "paid",
            "failed",
            "review",
            "cancelled",
            "partially_refunded",
            "refunded",
        ],
        required=True,
        metadata={"description": "`review`: the provider's amount or currency did not match."},
    )
    reference = fields.String(
        required=True, metadata={"description": "Stripe: the PaymentIntent id (empty until made)."}
    )
    client_secret = fields.String(
        required=True,
        allow_none=True,
        metadata={
            "description": "Stripe only, in the answers of checkout and"
            " `POST /orders/{id}/payment` to the customer: for Stripe.js `confirmPayment`;"
            " null elsewhere."
        },
    )


def order_status(**kwargs) -> fields.String:
    """An order status: the ``OrderStatusValue`` enum."""
    return enum_field("OrderStatusValue", STATUSES, **kwargs)


def order_payment_status(**kwargs) -> fields.String:
    """Where an order's money stands: the ``OrderPaymentStatusValue`` enum."""
    return enum_field("OrderPaymentStatusValue", progress.PAYMENT, **kwargs)


def order_fulfillment_status(**kwargs) -> fields.String:
    """Where an order's parcel stands: the ``FulfillmentStatusValue`` enum."""
    return enum_field("FulfillmentStatusValue", progress.FULFILLMENT, **kwargs)


class ActorSchema(Schema):
    kind = fields.String(required=True)
    id = fields.String(required=True, allow_none=True)
    label = fields.String(required=True, allow_none=True)


class StatusChangeSchema(Schema):
    status = order_status(required=True)
    at = fields.String(required=True)
    by = fields.Nested(ActorSchema, required=True, allow_none=True)
    note = fields.String(required=True, allow_none=True)


class TaxLineSchema(Schema):
    name = fields.String(required=True)
    rate = fields.String(required=True, metadata={"description": "Percent, such as `20`."})
    amount_cents = fields.Integer(required=True)


class AppliedRuleSchema(Schema):
    rule = enum_field(
        "PricingRule",
        [
            "prices_include_tax",
            "discount",
            "shipping",
            "free_shipping_over",
            "no_shipping_method",
            "no_tax_rate",
        ],
        required=True,
    )
    detail = fields.String(required=True)


class ShippingMethodRefSchema(Schema):
    id = fields.String(required=True)
    name = fields.String(required=True)


class PriceBreakdownSchema(Schema):
    """The priced basket: the quote's answer, and what an order keeps (docs/orders.md)."""

    items = fields.List(fields.Nested(OrderItemSchema), required=True)
    subtotal_cents = fields.Integer(required=True)
    discount_cents = fields.Integer(required=True)
    shipping_cents = fields.Integer(
        required=True,
        metadata={"description": "Charged for shipping (with its tax when prices include tax)."},
    )
    shipping_tax_cents = fields.Integer(required=True)
    tax_cents = fields.Integer(
        required=True, metadata={"description": "All tax: the lines' and the shipping's."}
    )
    total_cents = fields.Integer(
        required=True,
        metadata={
            "description": "`subtotal - discount + shipping`, `+ tax` when prices exclude tax."
        },
    )
    currency = fields.String(required=True)
    tax_lines = fields.List(
        fields.Nested(TaxLineSchema),
        required=True,
        metadata={"description": "One per rate applied; they sum to `tax_cents`."},
    )
    prices_include_tax = fields.Boolean(required=True)
    shipping_method = fields.Nested(ShippingMethodRefSchema, required=True, allow_none=True)
    discount_code = fields.String(required=True, allow_none=True)
    applied = fields.List(
        fields.Nested(AppliedRuleSchema),
        required=True,
        metadata={"description": "Which rules priced it, in words."},
    )


class OrderLineSchema(OrderItemSchema):
    line = fields.Integer(
        required=True, metadata={"description": "The line's number in its order, from 1."}
    )


class ShipmentLineSchema(Schema):
    line = fields.Integer(strict=True, required=True, validate=v(shipments.LINE))
    quantity = fields.Integer(strict=True, required=True, validate=v(shipments.UNITS))


class ShipmentCreateSchema(Schema):
    """A shipment as the API takes it: the fields of ``shipments.ShipmentRequest``, whose
    limits these are (tests/orders/test_shipment_request.py pins the same messages)."""

    lines = fields.List(
        fields.Nested(ShipmentLineSchema),
        validate=v(shipments.MOST_LINES),
        metadata={"description": "The units of each line it carries; default: all not shipped."},
    )
    carrier = fields.String(required=True, validate=[v(c) for c in shipments.TEXT])
    tracking_number = fields.String(required=True, validate=[v(c) for c in shipments.TEXT])
    tracking_url = fields.URL(
        schemes=set(shipments.URL.schemes),
        require_tld=shipments.URL.require_tld,
        allow_none=True,
        validate=v(shipments.URL_LENGTH),
        metadata={"description": "The carrier's tracking page, http or https."},
    )


class ShipmentSchema(Schema):
    id = fields.String(required=True)
    carrier = fields.String(required=True)
    tracking_number = fields.String(required=True)
    tracking_url = fields.String(required=True, allow_none=True)
    lines = fields.List(fields.Nested(ShipmentLineSchema), required=True)
    created_at = fields.String(required=True)


class OrderSchema(PriceBreakdownSchema):
    items = fields.List(fields.Nested(OrderLineSchema), required=True)
    shipments = fields.List(
        fields.Nested(ShipmentSchema),
        required=True,
        metadata={"description": "Oldest first (`POST /orders/{id}/shipments`)."},
    )
    id = fields.String(required=True)
    number = fields.String(required=True)
    invoice_number = fields.String(
        required=True,
        allow_none=True,
        metadata={
            "description": "The invoice's number (`GET /orders/{id}/invoice`); null until the"
            " order is invoiced (when it becomes paid, or at its first shipment: the"
            " `invoice_on` setting)."
        },
    )
    invoiced_at = fields.String(
        required=True, allow_none=True, metadata={"description": "When it was invoiced."}
    )
    customer = fields.Nested(OrderCustomerSchema, required=True)
    status = order_status(required=True)
    payment_status = order_payment_status(
        required=True,
        metadata={
            "description": "Where the money stands, whatever `status` says: `pending` (not"
            " paid yet), `paid`, `partially_refunded`, `refunded`, `review` (money arrived"
            " that does not match the order: a person refunds or honours it), `voided`"
            " (cancelled before any money was taken)."
        },
    )
    fulfillment_status = order_fulfillment_status(
        required=True,
        metadata={
            "description": "Where the parcel stands: `unfulfilled`, `partially_shipped`,"
            " `shipped` (every unit has left), `delivered`. Refunds and cancels leave it."
        },
    )
    shipping_address = fields.Nested(
        OrderAddressSchema,
        required=True,
        allow_none=True,
        metadata={"description": "null once erased."},
    )
    payment = fields.Nested(PaymentSchema, required=True, allow_none=True)
    balance_due_cents = fields.Integer(
        required=True,
        metadata={
            "description": "What the customer still owes since an edit raised the total of a"
            " paid order (`POST /orders/{id}/edits`); 0 otherwise. Negative: what the shop"
            " owes, when the refund of an edit that lowered the total was refused."
        },
    )
    status_history = fields.List(fields.Nested(StatusChangeSchema), required=True)
    created_at = fields.String(required=True)
    updated_at = fields.String(required=True)


class VariantSummarySchema(Schema):
    """A variant as a list item carries it: enough to show and pick it."""

    id = fields.String(required=True)
    options = fields.Dict(keys=fields.String(), values=fields.String(), required=True)
    price_cents = fields.Integer(required=True)
    compare_at_price_cents = fields.Integer(required=True, allow_none=True)
    stock = fields.Integer(required=True)
    in_stock = fields.Boolean(required=True)


class ProductSchema(Schema):
    id = fields.String(required=True)
    name = fields.String(required=True)
    slug = fields.String(required=True)
    description = fields.String(required=True)
    sku = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "Its variant's while it has one, else null."},
    )
    price_cents = fields.Integer(
        required=True, metadata={"description": "The lowest price of its active variants."}
    )
    currency = fields.String(required=True, metadata={"description": "The shop's (settings)."})
    stock = fields.Integer(
        required=True, metadata={"description": "The stock of its active variants together."}
    )
    in_stock = fields.Boolean(required=True)
    active = fields.Boolean(required=True)
    category_id = fields.String(required=True, allow_none=True)
    tax_class = fields.String(
        required=True, metadata={"description": "Which tax rates apply (issue 26)."}
    )
    collection_ids = fields.List(fields.String(), required=True)
    options = fields.List(fields.Nested(OptionSchema), required=True)
    low_stock_threshold = fields.Integer(required=True, allow_none=True)
    prior_price_cents = fields.Integer(
        required=True,
        allow_none=True,
        metadata={
            "description": "The lowest price of the 30 days before the current price took"
            " effect (EU price indication rule), of its cheapest active variant; null when the"
            " price has not changed in that window (docs/invoicing.md)."
        },
    )
    created_at = fields.String(required=True)
    updated_at = fields.String(required=True)
    variants = fields.List(
        fields.Nested(VariantSummarySchema),
        metadata={
            "description": "Only in `GET /products` with `include=variants`: its active"
            " variants, in their order, compact."
        },
    )


class VariantSchema(Schema):
    id = fields.String(required=True)
    product_id = fields.String(required=True)
    sku = fields.String(required=True, allow_none=True)
    options = fields.Dict(keys=fields.String(), values=fields.String(), required=True)
    price_cents = fields.Integer(required=True)
    compare_at_price_cents = fields.Integer(
        required=True,
        allow_none=True,
        metadata={"description": 'The merchant\'s own "was" price: above `price_cents`, or null.'},
    )
    prior_price_cents = fields.Integer(
        required=True,
        allow_none=True,
        metadata={
            "description": "The lowest price of the 30 days before the current price took"
            " effect (EU price indication rule); null when the price has not changed in that"
            " window (docs/invoicing.md)."
        },
    )
    stock = fields.Integer(required=True)
    weight_grams = fields.Integer(required=True, allow_none=True)
    image_id = fields.String(required=True, allow_none=True)
    active = fields.Boolean(required=True)
    position = fields.Integer(required=True)
    created_at = fields.String(required=True)
    updated_at = fields.String(required=True)


class ImageSchema(Schema):
    id = fields.String(required=True)
    url = fields.String(
        required=True, metadata={"description": "Where anyone fetches the bytes (`?w=` widths)."}
    )
    content_type = fields.String(required=True, metadata={"example": "image/jpeg"})
    width = fields.Integer(required=True, metadata={"description": "In pixels, upright."})
    height = fields.Integer(required=True)
    bytes = fields.Integer(required=True, metadata={"description": "Size of the stored image."})
    alt = fields.String(required=True, metadata={"description": "Text for screen readers."})
    position = fields.Integer(required=True, metadata={"description": "1 is the first."})


class ProductDetailSchema(ProductSchema):
    """One product (its own routes): with its variants and its images, in order."""

    variants = fields.List(fields.Nested(VariantSchema), required=True)
    images = fields.List(fields.Nested(ImageSchema), required=True)


def _known_permission(value: str) -> None:
    if value not in ALL_PERMISSIONS:
        raise ValidationError(f"Unknown permission {value!r}; see GET /permissions.")


Permissions = fields.List(
    enum_field(
        "Permission", sorted(ALL_PERMISSIONS), validate_input=False, validate=_known_permission
    )
)
