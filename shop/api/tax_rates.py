"""Tax rates (issue 26): a percentage per destination and tax class.

One rate per (country, region, tax class): the pricing function picks the most specific for
a line (country + region, then country, then ``*``); several taxes on one line (a US state
and a city) are entered as their sum. ``tax.*`` permissions, ``read:tax`` / ``write:tax``.
"""

from flask.views import MethodView
from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from shop.api.catalogue_input import tax_class_field
from shop.api.common import (
    Blueprint,
    ChangedSinceQuerySchema,
    Where,
    changed_since,
    page_schema,
    paginate,
)
from shop.http.context import current_actor
from shop.http.decorators import require_permission
from shop.http.openapi import responds
from shop.pricing import tax_rates
from shop.shipping.countries import CODES

blp = Blueprint("tax_rates", __name__, url_prefix="/tax-rates", description="Tax rates.")


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


class TaxRateSchema(Schema):
    id = fields.String(required=True)
    country = fields.String(required=True)
    region = fields.String(required=True, allow_none=True)
    tax_class = fields.String(required=True)
    rate = fields.String(required=True, metadata={"description": "Percent, such as `20`."})
    name = fields.String(required=True)
    created_at = fields.String(required=True)
    updated_at = fields.String(required=True)


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


@blp.route("")
class TaxRates(MethodView):
    @blp.doc(operationId="listTaxRates")
    @blp.arguments(ChangedSinceQuerySchema, location="query")
    @blp.response(200, page_schema(TaxRateSchema))
    @require_permission("tax.read")
    def get(self, args):
        """List tax rates, by country, region and class"""
        where = Where()
        order = changed_since(where, args) or tax_rates.ORDER
        page = paginate(
            f"SELECT {tax_rates.COLUMNS} FROM tax_rates", "tax_rates", where, order, args
        )
        page["items"] = [tax_rates.present(row) for row in page["items"]]
        return page

    @blp.doc(operationId="createTaxRate")
    @responds(409, e409=tax_rates.TAKEN)
    @blp.arguments(TaxRateCreateSchema)
    @blp.response(201, TaxRateSchema)
    @require_permission("tax.create")
    def post(self, data):
        """Create a tax rate"""
        return tax_rates.create(data, current_actor())


@blp.route("/<id:rate_id>")
class TaxRateById(MethodView):
    @blp.doc(operationId="getTaxRate")
    @blp.response(200, TaxRateSchema)
    @require_permission("tax.read")
    def get(self, rate_id):
        """One tax rate"""
        return tax_rates.get(rate_id)

    @blp.doc(operationId="updateTaxRate")
    @responds(409, e409=tax_rates.TAKEN)
    @blp.arguments(TaxRateUpdateSchema)
    @blp.response(200, TaxRateSchema)
    @require_permission("tax.update")
    def put(self, data, rate_id):
        """Change a tax rate

        Fields left out stay as they are. Orders placed keep the tax they were charged.
        """
        return tax_rates.update(rate_id, data, current_actor())

    @blp.doc(operationId="deleteTaxRate")
    @blp.response(204)
    @require_permission("tax.delete")
    def delete(self, rate_id):
        """Delete a tax rate"""
        tax_rates.delete(rate_id, current_actor())
