"""A customer registering (``POST /auth/register``, the storefront's register page): the
account, its first session and the ``customer.registered`` event, in one transaction."""

from shop import audit, db, webhooks
from shop.actor import Actor
from shop.auth import sessions
from shop.auth.passwords import hash_password
from shop.clock import now_iso
from shop.customers import profile
from shop.errors import Conflict

TAKEN = "A customer with this email already exists."


def register(email: str, name: str, password: str, origin: Actor) -> tuple[dict, str]:
    """Open a customer account signed in from ``origin``: ``(the customer's id, email and
    name, the session cookie's value)``; 409 when the email has an account."""
    email, name = email.strip().lower(), name.strip()
    password_hash = hash_password(password)
    with db.transaction():
        if db.value("SELECT 1 FROM customers WHERE email = :email", {"email": email}):
            raise Conflict(TAKEN)
        customer_id, moment = db.new_id(), now_iso()
        db.execute(
            "INSERT INTO customers (id, email, name, password_hash, active, created_at,"
            " updated_at) VALUES (:id, :email, :name, :hash, 1, :now, :now)",
            {"id": customer_id, "email": email, "name": name, "hash": password_hash, "now": moment},
        )
        token = sessions.create(sessions.CUSTOMER, customer_id, origin)
        audit.record(
            "customer.registered",
            {"customer_id": customer_id},
            actor=origin.acting_as("customer", customer_id, email),
        )
        webhooks.emit("customer.registered", customer_id, profile.load)
    return {"id": customer_id, "email": email, "name": name}, token
