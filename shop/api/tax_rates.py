"""Tax rates (issue 26): a percentage per destination and tax class.

One rate per (country, region, tax class): the pricing function picks the most specific for
a line (country + region, then country, then ``*``); several taxes on one line (a US state
and a city) are entered as their sum. ``tax.*`` permissions, ``read:tax`` / ``write:tax``.
"""

from flask.views import MethodView
from marshmallow import Schema, fields

from shop.api.common import (
    Blueprint,
    ChangedSinceQuerySchema,
    Where,
    changed_since,
    page_schema,
    paginate,
)
from shop.api.store_input import TaxRateCreateSchema, TaxRateUpdateSchema
from shop.http.context import current_actor
from shop.http.decorators import require_permission
from shop.http.openapi import responds
from shop.pricing import tax_rates

blp = Blueprint("tax_rates", __name__, url_prefix="/tax-rates", description="Tax rates.")


class TaxRateSchema(Schema):
    id = fields.String(required=True)
    country = fields.String(required=True)
    region = fields.String(required=True, allow_none=True)
    tax_class = fields.String(required=True)
    rate = fields.String(required=True, metadata={"description": "Percent, such as `20`."})
    name = fields.String(required=True)
    created_at = fields.String(required=True)
    updated_at = fields.String(required=True)


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
