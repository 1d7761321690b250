"""Site settings (spec 2.5): the shop's name, currency, contact details and order numbering.

``GET /settings/public`` gives anyone the subset a storefront shows; the rest needs
``settings.read``. ``PATCH`` changes only the keys it is given; unknown keys are a 400.
"""

from flask.views import MethodView
from marshmallow import Schema, fields

from shop.api.common import WRITE_ONLY, Blueprint, readable
from shop.api.store_input import (
    ATTACH,
    BANK,
    BRAND,
    CN_PREFIX,
    INCLUSIVE,
    INVOICE_ON_TEXT,
    INVOICE_PREFIX,
    LOCALE,
    LOGO,
    REMINDERS,
    VAT_ID,
    SettingsUpdateSchema,
)
from shop.http.context import current_actor
from shop.http.decorators import require_permission
from shop.http.openapi import enum_field, responds
from shop.invoices.issuing import INVOICE_ON
from shop.site import settings as site

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
    prices_include_tax = fields.Boolean(required=True, metadata={"description": INCLUSIVE})
    vat_id = fields.String(required=True, allow_none=True, metadata={"description": VAT_ID})
    invoice_prefix = fields.String(required=True, metadata={"description": INVOICE_PREFIX})
    credit_note_prefix = fields.String(required=True, metadata={"description": CN_PREFIX})
    invoice_on = enum_field(
        "InvoiceOnValue",
        INVOICE_ON,
        validate_input=False,
        required=True,
        metadata={"description": INVOICE_ON_TEXT},
    )
    locale = fields.String(required=True, metadata={"description": LOCALE})
    invoice_attach_to_mail = fields.Boolean(required=True, metadata={"description": ATTACH})
    cart_reminders = fields.Boolean(required=True, metadata={"description": REMINDERS})
    bank_transfer_instructions = fields.String(
        required=True, allow_none=True, metadata={"description": BANK}
    )
    brand_color = fields.String(required=True, metadata={"description": BRAND})
    logo_url = fields.String(required=True, allow_none=True, metadata={"description": LOGO})


class PublicSettingsSchema(Schema):
    shop_name = fields.String(required=True)
    currency = fields.String(required=True)
    prices_include_tax = fields.Boolean(required=True, metadata={"description": INCLUSIVE})
    cart_reminders = fields.Boolean(
        required=True,
        metadata={"description": "Whether a storefront offers the reminder consent on a cart."},
    )


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
        site.change(data, current_actor())
        return readable("settings.read", site.current())


@blp.route("/public")
class PublicSettings(MethodView):
    @blp.doc(operationId="getPublicSettings")
    @blp.response(200, PublicSettingsSchema)
    def get(self):
        """The settings a storefront shows"""
        values = site.current()
        return {key: values[key] for key in site.PUBLIC}
