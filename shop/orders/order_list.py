"""The console's orders list (issue 27): by status, searched by number or e-mail, newest
first, one page at a time. Each row is a summary (number, status, customer, total, placed);
the order page loads the whole order with ``services/orders.load``."""

from shop.db.pages import LIKE, Where, like_pattern, paginate

_SELECT = """
    SELECT o.id, o.number, o.status, o.total_cents, o.currency, o.created_at,
           COALESCE(c.email, o.guest_email) AS customer_email, c.name AS customer_name
    FROM orders o LEFT JOIN customers c ON c.id = o.customer_id"""
_FROM = "orders o LEFT JOIN customers c ON c.id = o.customer_id"


def find(status: str | None, q: str, page: int, page_size: int) -> dict:
    """A page of orders: ``q`` matches part of the number (``000042``) or of the customer's
    e-mail, case-insensitively."""
    where = Where()
    if status:
        where.add("o.status = :status", status=status)
    q = q.strip()
    if q:
        where.add(
            f"(LOWER(o.number) {LIKE} OR LOWER(COALESCE(c.email, o.guest_email)) {LIKE})",
            q=like_pattern(q),
        )
    return paginate(
        _SELECT,
        _FROM,
        where,
        "o.created_at DESC, o.id DESC",
        {"page": page, "page_size": page_size},
    )
