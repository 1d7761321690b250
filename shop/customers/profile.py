"""A customer as the API shows it: ``GET /customers/{id}`` and the payload of the customer
events (``api/customers.py`` and the registration, ``customers/signup.py``)."""

from shop import db
from shop.errors import NotFound

# A customer and their number of orders.
SELECT = """
    SELECT c.id, c.email, c.name, c.active, c.created_at, c.updated_at,
           (SELECT COUNT(*) FROM orders o WHERE o.customer_id = c.id) AS order_count
    FROM customers c"""


def present(row: dict) -> dict:
    """A customer row (from ``SELECT``) as the API serves it."""
    return {**row, "active": bool(row["active"])}


def get_customer(customer_id: str) -> dict:
    """A customer's row, unless erased; 404 when there is none."""
    row = db.one(SELECT + " WHERE c.id = :id AND c.erased_at IS NULL", {"id": customer_id})
    if row is None:
        raise NotFound("Customer not found.")
    return row


def load(customer_id: str) -> dict:
    """One customer as ``GET /customers/{id}`` shows it."""
    return present(get_customer(customer_id))
