"""Customers, as administrators see them. Customers manage themselves at ``/auth/me``.

Deactivating a customer ends their sessions at once. Deleting one erases the personal data
(email, name, password, shipping addresses, the address book, their name in order histories;
in the audit log their name, address and browser, and the email typed in failed sign-ins
with their email) and keeps the orders, whose customer is then anonymous; a customer with an
order still on its way (pending, paid or shipped) cannot be erased until it is settled.
"""

from flask.views import MethodView
from marshmallow import Schema, fields, validate

from shop import audit, db
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
from shop.auth import sessions
from shop.clock import now_iso
from shop.customers import addresses
from shop.customers.profile import SELECT, get_customer, present
from shop.http.context import current_actor
from shop.http.decorators import require_permission
from shop.http.errors import abort

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
        if not data:
            abort(400, "Send name or active: there is nothing to change.")
        with db.transaction():
            row = get_customer(customer_id)
            name = data["name"].strip() if "name" in data else row["name"]
            active = data.get("active", bool(row["active"]))
            db.execute(
                "UPDATE customers SET name = :name, active = :active, updated_at = :now"
                " WHERE id = :id",
                {"name": name, "active": active, "now": now_iso(), "id": customer_id},
            )
            ended = 0 if active else sessions.end_all(sessions.CUSTOMER, customer_id)
            changes = {k: v for k, v in data.items() if k != "name"}
            if "name" in data:
                changes["renamed"] = True  # the name itself is personal data: not in the log
            audit.record(
                "customer.updated",
                {"customer_id": customer_id, **changes, "sessions_ended": ended},
                actor=current_actor(),
            )
        return readable("customers.read", present(get_customer(customer_id)))

    @blp.doc(operationId="eraseCustomer")
    @blp.response(204)
    @require_permission("customers.delete")
    def delete(self, customer_id):
        """Erase a customer's personal data

        The email, name, password, sessions, shipping addresses and saved addresses are erased,
        and so are their name, address and browser in the audit log and their email in failed
        sign-ins (the entries stay, anonymous); the orders stay, with an anonymous customer. A
        customer with an order still pending, paid or shipped is a 409: settle it first.
        """
        with db.transaction():
            row = get_customer(customer_id)
            open_order = db.value(
                "SELECT number FROM orders WHERE customer_id = :id"
                " AND status IN ('pending', 'paid', 'partially_shipped', 'shipped')"
                " ORDER BY created_at LIMIT 1",
                {"id": customer_id},
            )
            if open_order:
                abort(
                    409,
                    f"This customer's order {open_order} is still open: deliver, cancel or"
                    " refund it before erasing the customer.",
                )
            moment = now_iso()
            db.execute(
                "UPDATE customers SET email = NULL, name = NULL, password_hash = NULL,"
                " active = 0, erased_at = :now, updated_at = :now WHERE id = :id",
                {"now": moment, "id": customer_id},
            )
            sessions.end_all(sessions.CUSTOMER, customer_id)
            addresses.erase(customer_id)
            db.execute(
                "UPDATE orders SET shipping_address = NULL WHERE customer_id = :id",
                {"id": customer_id},
            )
            db.execute(
                "UPDATE order_status_history SET by_label = NULL"
                " WHERE by_kind = 'customer' AND by_id = :id",
                {"id": customer_id},
            )
            db.execute(
                "UPDATE audit_log SET actor_label = NULL, ip = NULL, user_agent = NULL"
                " WHERE actor_kind = 'customer' AND actor_id = :id",
                {"id": customer_id},
            )
            db.execute(
                "UPDATE audit_log SET actor_label = NULL, ip = NULL, user_agent = NULL,"
                " details = :erased WHERE event = 'login.failed' AND actor_label = :email",
                {"erased": '{"email": null}', "email": row["email"]},
            )
            db.execute("DELETE FROM idempotency_keys WHERE customer_id = :id", {"id": customer_id})
            audit.record("customer.erased", {"customer_id": customer_id}, actor=current_actor())
