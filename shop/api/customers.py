"""Customers, as administrators see them. Customers manage themselves at ``/auth/me``.

Deactivating a customer ends their sessions at once. Deleting one erases the personal data
(email, name, password, shipping addresses, the address book, their name in order histories,
their carts and the guest orders placed with their email;
in the audit log their name, address and browser, and the email typed in failed sign-ins
with their email) and keeps the orders, whose customer is then anonymous; a customer with an
order still on its way (pending, paid or shipped) cannot be erased until it is settled.
"""

from flask.views import MethodView
from marshmallow import Schema, fields, validate

from shop.api.common import (
    LIKE,
    WRITE_ONLY,
    Blueprint,
    ChangedSinceQuerySchema,
    StrictBoolean,
    Where,
    changed_since,
    like_pattern,
    page_schema,
    paginate,
    readable,
)
from shop.api.schemas import text
from shop.customers import accounts
from shop.customers.profile import SELECT, get_customer, present
from shop.http.context import current_actor
from shop.http.decorators import require_permission

blp = Blueprint("customers", __name__, url_prefix="/customers", description="Customers.")


class CustomerSchema(Schema):
    id = fields.String(required=True)
    email = fields.String(required=True)
    name = fields.String(required=True)
    active = fields.Boolean(required=True)
    order_count = fields.Integer(required=True)
    created_at = fields.String(required=True)
    updated_at = fields.String(required=True)


class CustomerUpdateSchema(Schema):
    name = text(200)
    active = StrictBoolean(
        metadata={"description": "false signs the customer out everywhere and bars sign-in."},
    )


class CustomerQuerySchema(ChangedSinceQuerySchema):
    q = fields.String(
        validate=validate.Length(max=200),
        metadata={"description": "Part of the email or name, any case."},
    )
    active = fields.Boolean()


@blp.route("")
class Customers(MethodView):
    @blp.doc(operationId="listCustomers")
    @blp.arguments(CustomerQuerySchema, location="query")
    @blp.response(200, page_schema(CustomerSchema))
    @require_permission("customers.read")
    def get(self, args):
        """List customers, newest first"""
        where = Where("c.erased_at IS NULL")
        if args.get("q"):
            where.add(f"(LOWER(c.email) {LIKE} OR LOWER(c.name) {LIKE})", q=like_pattern(args["q"]))
        if "active" in args:
            where.add("c.active = :active", active=args["active"])
        order = changed_since(where, args, "c.") or " ORDER BY c.created_at DESC, c.id DESC"
        return paginate(SELECT, "customers c", where, order, args, convert=present)


@blp.route("/<id:customer_id>")
class CustomerById(MethodView):
    @blp.doc(operationId="getCustomer")
    @blp.response(200, CustomerSchema)
    @require_permission("customers.read")
    def get(self, customer_id):
        """One customer, with their number of orders"""
        return present(get_customer(customer_id))

    @blp.doc(operationId="updateCustomer")
    @blp.arguments(CustomerUpdateSchema)
    @blp.response(200, CustomerSchema)
    @blp.alt_response(204, description=WRITE_ONLY, success=True)
    @require_permission("customers.update")
    def patch(self, data, customer_id):
        """Rename, deactivate or reactivate a customer

        Fields left out stay as they are; an empty object is a 400. `active: false` ends the
        customer's sessions at once and bars sign-in until reactivated. A caller without
        `customers.read` gets 204 and no body.
        """
        accounts.update(customer_id, data, current_actor())
        return readable("customers.read", present(get_customer(customer_id)))

    @blp.doc(operationId="eraseCustomer")
    @blp.response(204)
    @require_permission("customers.delete")
    def delete(self, customer_id):
        """Erase a customer's personal data

        The email, name, password, sessions, shipping addresses, saved addresses, carts and the
        email and address of guest orders placed with their email are erased,
        and so are their name, address and browser in the audit log and their email in failed
        sign-ins (the entries stay, anonymous); the orders stay, with an anonymous customer. A
        customer with an order still pending, paid or shipped is a 409: settle it first.
        The webhook events still kept that carry their email are sent from then on without
        their personal data, and webhooks subscribed to `customer.erased` hear of it.
        """
        accounts.erase(customer_id, current_actor())
