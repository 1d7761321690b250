"""Site settings (spec 2.5): the shop's name, currency, contact details and order numbering.

``GET /settings/public`` gives anyone the subset a storefront shows; the rest needs
``settings.read``. ``PATCH`` changes only the keys it is given; unknown keys are a 400.
"""

from flask.views import MethodView
from marshmallow import Schema, fields, validate

from shop import audit, db
from shop.api.common import WRITE_ONLY, Blueprint, StrictBoolean, readable
from shop.http.context import current_actor
from shop.http.decorators import require_permission
from shop.http.errors import abort
from shop.http.openapi import responds
from shop.site import settings as site

_INCLUSIVE = (
    "Prices (products, shipping methods) include tax, which is extracted from them (VAT);"
    " false: tax is added on top (US-style sales tax)."
)

_REMINDERS = (
    "A cart left behind with an e-mail and lines gets one reminder e-mail"
    " (`SHOP_CART_REMINDER_AFTER` after its last change), when its visitor agreed"
    " (`reminders: true` on the cart). Off by default."
)

blp = Blueprint("settings", __name__, url_prefix="/settings", description="Site settings.")


_BANK = (
    "What a buyer who pays by the `manual` method is told (bank details, the reference to"
    " give), on the storefront's confirmation and order pages."
)


_BRAND = "The storefront's brand colour, `#rrggbb` (its CSS variable `--brand`)."
_LOGO = "The storefront's logo: one of the shop's images (`/images/{id}`) or an https address."


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
    cart_reminders = fields.Boolean(required=True, metadata={"description": _REMINDERS})
    bank_transfer_instructions = fields.String(
        required=True, allow_none=True, metadata={"description": _BANK}
    )
    brand_color = fields.String(required=True, metadata={"description": _BRAND})
    logo_url = fields.String(required=True, allow_none=True, metadata={"description": _LOGO})


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
    bank_transfer_instructions = fields.String(
        allow_none=True, validate=validate.Length(min=1, max=2000), metadata={"description": _BANK}
    )
    brand_color = fields.String(
        validate=validate.Regexp(r"^#[0-9a-fA-F]{6}$", error="Use #rrggbb, e.g. #1f5f4a."),
        metadata={"description": _BRAND},
    )
    logo_url = fields.String(
        allow_none=True,
        validate=validate.Regexp(
            r"^(/images/[A-Za-z0-9_-]{1,64}|https://[^\s\"'<>()]{1,500})$",
            error="Use one of the shop's images (/images/{{id}}) or an https:// address.",
        ),
        metadata={"description": _LOGO},
    )
    order_number_prefix = fields.String(
        validate=validate.Regexp(
            r"^[A-Za-z0-9_./-]{0,20}$",
            error="Use up to 20 letters, digits, '-', '_', '.' or '/'.",
        )
    )
    require_two_factor = StrictBoolean()
    prices_include_tax = StrictBoolean(metadata={"description": _INCLUSIVE})
    cart_reminders = StrictBoolean(metadata={"description": _REMINDERS})


class PublicSettingsSchema(Schema):
    shop_name = fields.String(required=True)
    currency = fields.String(required=True)
    prices_include_tax = fields.Boolean(required=True, metadata={"description": _INCLUSIVE})
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
