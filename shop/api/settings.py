"""Site settings (spec 2.5): the shop's name, currency, contact details and order numbering.

``GET /settings/public`` gives anyone the subset a storefront shows; the rest needs
``settings.read``. ``PATCH`` changes only the keys it is given; unknown keys are a 400.
"""

from babel import Locale, UnknownLocaleError
from flask.views import MethodView
from marshmallow import Schema, ValidationError, fields, validate

from shop import audit, db
from shop.api.common import WRITE_ONLY, Blueprint, StrictBoolean, readable
from shop.http.context import current_actor
from shop.http.decorators import require_permission
from shop.http.errors import abort
from shop.http.openapi import enum_field, responds
from shop.invoices.issuing import INVOICE_ON
from shop.site import settings as site

_INCLUSIVE = (
    "Prices (products, shipping methods) include tax, which is extracted from them (VAT);"
    " false: tax is added on top (US-style sales tax)."
)

_VAT_ID = "The shop's VAT id, printed on invoices issued from now on."
_INVOICE_PREFIX = "Put before new invoice numbers: `INV-` gives `INV-2026-000001`."
_CN_PREFIX = "Put before new credit-note numbers: `CN-` gives `CN-2026-000001`."
_INVOICE_ON = (
    "When an order is invoiced: `paid` (when it becomes paid) or `shipment` (its first"
    " shipment; a refund before it invoices the order first)."
)
_LOCALE = "How invoices write amounts and dates (Babel locale: `en_US`, `de_DE`, `fr_FR`)."

blp = Blueprint("settings", __name__, url_prefix="/settings", description="Site settings.")


class SettingsSchema(Schema):
    shop_name = fields.String(required=True)
    currency = fields.String(
        required=True,
        metadata={
            "description": "ISO 4217 code; every amount (`price_cents`, `*_cents`) is an"
            " integer of its minor units (JPY 0 decimals, EUR 2, KWD 3). Fixed once an order"
            " exists."
        },
    )
    contact_email = fields.String(required=True, allow_none=True)
    contact_phone = fields.String(required=True, allow_none=True)
    address = fields.String(required=True, allow_none=True)
    order_number_prefix = fields.String(
        required=True, metadata={"description": "Put before every new order's number."}
    )
    require_two_factor = fields.Boolean(
        required=True,
        metadata={
            "description": "Administrators must sign in with two-factor codes; one without"
            " them can only set them up."
        },
    )
    prices_include_tax = fields.Boolean(required=True, metadata={"description": _INCLUSIVE})
    vat_id = fields.String(required=True, allow_none=True, metadata={"description": _VAT_ID})
    invoice_prefix = fields.String(required=True, metadata={"description": _INVOICE_PREFIX})
    credit_note_prefix = fields.String(required=True, metadata={"description": _CN_PREFIX})
    invoice_on = enum_field(
        "InvoiceOnValue",
        INVOICE_ON,
        validate_input=False,
        required=True,
        metadata={"description": _INVOICE_ON},
    )
    locale = fields.String(required=True, metadata={"description": _LOCALE})


def _locale(value: str) -> None:
    try:
        Locale.parse(value)
    except (ValueError, UnknownLocaleError):
        raise ValidationError("Use a locale Babel knows, such as en_US, de_DE or fr_FR.") from None


_PREFIX = validate.Regexp(
    r"^[A-Za-z0-9_./-]{0,20}$", error="Use up to 20 letters, digits, '-', '_', '.' or '/'."
)


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
    prices_include_tax = StrictBoolean(metadata={"description": _INCLUSIVE})
    vat_id = fields.String(
        allow_none=True, validate=validate.Length(min=1, max=40), metadata={"description": _VAT_ID}
    )
    invoice_prefix = fields.String(validate=_PREFIX, metadata={"description": _INVOICE_PREFIX})
    credit_note_prefix = fields.String(validate=_PREFIX, metadata={"description": _CN_PREFIX})
    invoice_on = enum_field("InvoiceOnValue", INVOICE_ON, metadata={"description": _INVOICE_ON})
    locale = fields.String(
        validate=[validate.Length(min=2, max=20), _locale], metadata={"description": _LOCALE}
    )


class PublicSettingsSchema(Schema):
    shop_name = fields.String(required=True)
    currency = fields.String(required=True)
    prices_include_tax = fields.Boolean(required=True, metadata={"description": _INCLUSIVE})


@blp.route("")
class Settings(MethodView):
    @blp.doc(operationId="getSettings")
    @blp.response(200, SettingsSchema)
    @require_permission("settings.read")
    def get(self):
        """Every site setting"""
        return site.current()

    @blp.doc(operationId="updateSettings")
    @responds(409, e409="The currency cannot change once an order exists.")
    @blp.arguments(SettingsUpdateSchema)
    @blp.response(200, SettingsSchema)
    @blp.alt_response(204, description=WRITE_ONLY, success=True)
    @require_permission("settings.update")
    def patch(self, data):
        """Change site settings

        Only the keys given change; `null` clears an optional one; an empty object is a 400.
        The currency can change only while the shop has no order (409 after): amounts are
        minor units of it and orders keep theirs. Changing it does not convert prices.
        A caller without `settings.read` gets 204 and no body.
        """
        if not data:
            abort(400, "Send at least one setting to change.")
        with db.transaction():
            changing = (
                data.get("currency", site.current()["currency"]) != site.current()["currency"]
            )
            if changing and db.value("SELECT 1 FROM orders LIMIT 1"):
                abort(
                    409,
                    "currency: the shop has orders in "
                    f"{site.current()['currency']}; the currency is fixed once an order exists.",
                )
            site.update(data)
            audit.record("settings.updated", data, actor=current_actor())
        return readable("settings.read", site.current())


@blp.route("/public")
class PublicSettings(MethodView):
    @blp.doc(operationId="getPublicSettings")
    @blp.response(200, PublicSettingsSchema)
    def get(self):
        """The settings a storefront shows"""
        values = site.current()
        return {key: values[key] for key in site.PUBLIC}
