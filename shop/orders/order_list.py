"""The orders' filters, shared by ``GET /orders`` and the console's list, and the console's
page of summaries (issues 27, 37).

``narrow`` adds each filter given to a list's ``Where`` over ``orders o``: the status, the
payment status, the fulfilment status (one value or several), the customer, a time range of
creation, and ``q``, which matches part of the number (``000042``), of the customer's
e-mail or of the customer's name, case-insensitively. The console's summaries (number,
statuses, customer, total, placed) come from ``find``; its order page loads the whole order
with ``lifecycle.load``.
"""

from shop import db
from shop.db.pages import LIKE, Where, like_pattern, paginate
from shop.orders import progress

_SELECT = """
    SELECT o.id, o.number, o.status, o.payment_status, o.fulfillment_status, o.total_cents,
           o.currency, o.created_at, COALESCE(c.email, o.guest_email) AS customer_email,
           c.name AS customer_name
    FROM orders o LEFT JOIN customers c ON c.id = o.customer_id"""
_FROM = "orders o"
# ``q``: the number, a guest order's e-mail, or a customer whose e-mail or name matches (a
# subquery, so a list counts its orders alone, ``orders o``).
_SEARCH = (
    f"(LOWER(o.number) {LIKE} OR LOWER(o.guest_email) {LIKE}"
    f" OR o.customer_id IN (SELECT s.id FROM customers s"
    f" WHERE LOWER(s.email) {LIKE} OR LOWER(s.name) {LIKE}))"
)


def _one_of(where: Where, column: str, values, name: str) -> None:
    """``column`` equal to ``values`` (a string) or one of them (a tuple)."""
    if isinstance(values, str):
        where.add(f"o.{column} = :{name}", **{name: values})
        return
    params = {f"{name}_{n}": value for n, value in enumerate(values)}
    where.add(f"o.{column} IN (" + ", ".join(f":{key}" for key in params) + ")", **params)


def narrow(
    where: Where,
    *,
    status: str | None = None,
    payment_status=None,
    fulfillment_status=None,
    customer_id: str | None = None,
    q: str = "",
    created_from: str | None = None,
    created_before: str | None = None,
) -> Where:
    """Add the filters given (None or empty: not filtered) to ``where``; answer it. Times
    are stored ISO 8601 texts (UTC): ``created_from`` inclusive, ``created_before`` not."""
    if status:
        where.add("o.status = :status", status=status)
    if payment_status:
        _one_of(where, "payment_status", payment_status, "payment_status")
    if fulfillment_status:
        _one_of(where, "fulfillment_status", fulfillment_status, "fulfillment_status")
    if customer_id:
        where.add("o.customer_id = :customer_id", customer_id=customer_id)
    if created_from:
        where.add("o.created_at >= :created_from", created_from=created_from)
    if created_before:
        where.add("o.created_at < :created_before", created_before=created_before)
    q = (q or "").strip()
    if q:
        where.add(_SEARCH, q=like_pattern(q))
    return where


def find(page: int, page_size: int, **filters) -> dict:
    """A page of order summaries, newest first, filtered as ``narrow`` says."""
    return paginate(
        _SELECT,
        _FROM,
        narrow(Where(), **filters),
        "o.created_at DESC, o.id DESC",
        {"page": page, "page_size": page_size},
    )


def figures(since: str) -> dict:
    """The dashboard's figures: orders placed from ``since`` (a stored time) and their
    takings (paid ones, net of refunds, in minor units of each currency), the orders waiting
    to ship (``progress.TO_SHIP``), payments in review and refunds still pending."""
    today = db.one("SELECT COUNT(*) AS n FROM orders WHERE created_at >= :since", {"since": since})
    takings = db.query(
        "SELECT currency, SUM(total_cents - refunded_cents) AS cents FROM orders"
        " WHERE created_at >= :since"
        " AND payment_status IN ('paid', 'partially_refunded', 'refunded')"
        " GROUP BY currency ORDER BY currency",
        {"since": since},
    )
    to_ship = narrow(Where(), **progress.TO_SHIP)
    return {
        "orders_today": today["n"],
        "takings_today": {row["currency"]: int(row["cents"]) for row in takings},  # SUM: numeric
        "to_ship": db.value("SELECT COUNT(*) FROM orders o" + to_ship.sql(), to_ship.params),
        "in_review": db.value("SELECT COUNT(*) FROM orders WHERE payment_status = 'review'"),
        "refunds_pending": db.value("SELECT COUNT(*) FROM refunds WHERE status = 'pending'"),
    }
