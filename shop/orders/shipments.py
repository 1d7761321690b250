"""Shipments (issue 27): what leaves the warehouse for an order, shared by the API
(``POST /orders/{id}/shipments``) and the console's order page.

A shipment names its carrier, its tracking number and, if the carrier has one, a tracking
page (http or https only), and the units of each order line it carries; without lines it
carries everything not yet shipped. Only a ``paid`` or ``partially_shipped`` order ships
(a pending one is not paid yet; a cancelled or refunded one must not leave). The order then
moves along ``lifecycle.NEXT`` to ``partially_shipped`` while some units remain, or
to ``shipped``. Shipping more than ordered minus shipped is a 409, and nothing is written.

One transaction: the order row is claimed first (an UPDATE, which PostgreSQL holds until
commit and SQLite's ``BEGIN IMMEDIATE`` already serialises), so two concurrent shipments
count each other's units and cannot over-ship. The customer gets one e-mail with the
tracking link (not the plain status mail) and ``order.shipped`` carries the order with
this shipment under ``shipment``.
"""

from dataclasses import dataclass

from shop import audit, db, mail, webhooks
from shop.actor import Actor
from shop.checks.fields import Field, Length, Pattern, Range, Url, check
from shop.clock import now_iso
from shop.errors import Conflict, Invalid, NotFound
from shop.orders import lifecycle as orders

SHIPPABLE = ("paid", "partially_shipped", "partially_refunded")
# The limits of a shipment's fields; the API's schema (shop/api/schemas.py) is made of them.
TEXT = (Length(min=1, max=100), Pattern(r"[\s\S]*\S", "must not be blank."))
LINE = Range(min=1, max=10_000)
UNITS = Range(min=1, max=1_000_000)
MOST_LINES = Length(max=500)
URL = Url(schemes=("http", "https"), require_tld=False)
URL_LENGTH = Length(max=2000)
_LINE = Field(
    "object",
    shape={
        "line": Field("integer", required=True, checks=(LINE,)),
        "quantity": Field("integer", required=True, checks=(UNITS,)),
    },
)
SHAPE = {
    "lines": Field("list", item=_LINE, checks=(MOST_LINES,)),
    "carrier": Field("string", required=True, checks=TEXT),
    "tracking_number": Field("string", required=True, checks=TEXT),
    "tracking_url": Field("url", allow_none=True, checks=(URL, URL_LENGTH)),
}


@dataclass(frozen=True)
class ShipmentRequest:
    """A shipment as the API and the console's ship form give it: ``lines`` are
    ``[{"line", "quantity"}]`` (None: every unit not yet shipped)."""

    carrier: str | None = None
    tracking_number: str | None = None
    tracking_url: str | None = None
    lines: list[dict] | None = None

    def checked(self) -> dict:
        """The request as a body (None fields left out); ``Invalid`` naming every bad field,
        in the API's words."""
        given = {name: getattr(self, name) for name in SHAPE}
        return check(SHAPE, {name: value for name, value in given.items() if value is not None})


def create(order_id: str, request: ShipmentRequest, actor: Actor) -> dict:
    """Record a shipment of ``order_id`` by ``actor``; answer the whole order (with its
    shipments)."""
    data = request.checked()
    with db.transaction():
        orders.lock(order_id)  # before the order's row, as refunds and payment events do
        moment = now_iso()
        claimed = db.execute(
            "UPDATE orders SET updated_at = :now WHERE id = :id AND status IN ('paid',"
            " 'partially_shipped', 'partially_refunded')",  # SHIPPABLE
            {"now": moment, "id": order_id},
        )
        row = db.one("SELECT id, number, status FROM orders WHERE id = :id", {"id": order_id})
        if row is None:
            raise NotFound("Order not found.")
        if not claimed:
            raise Conflict(
                f"Order {row['number']} is {row['status']}: only a paid or partially shipped"
                " (or partially refunded) order can ship.",
                withheld=(
                    orders.READ,
                    "Only a paid or partially shipped (or partially"
                    " refunded) order can ship; this one cannot.",
                ),
            )
        remaining = _remaining(order_id)
        lines = _lines(row["number"], data.get("lines"), remaining)
        shipment = _insert(order_id, data, lines, moment, actor)
        left = sum(remaining.values()) - sum(lines.values())
        status = "shipped" if left == 0 else "partially_shipped"
        note = f"Shipment {data['carrier']} {data['tracking_number']}"
        if status != row["status"]:
            orders.change_status(order_id, status, note, actor, notify=False)
        audit.record(
            "order.shipment_created",
            {"order_id": order_id, "number": row["number"], "shipment_id": shipment["id"]},
            actor=actor,
        )
        order = orders.load(order_id)
        shipment = next(s for s in order["shipments"] if s["id"] == shipment["id"])
        webhooks.emit("order.shipped", order_id, lambda _id: {**order, "shipment": shipment})
        _mail(order, shipment)
    return order


def _remaining(order_id: str) -> dict[int, int]:
    """Each line of the order and its units not yet shipped."""
    rows = db.query(
        "SELECT i.line, i.quantity - COALESCE(SUM(l.quantity), 0) AS remaining"
        " FROM order_items i LEFT JOIN shipment_lines l"
        " ON l.order_id = i.order_id AND l.line = i.line"
        " WHERE i.order_id = :id GROUP BY i.line, i.quantity ORDER BY i.line",
        {"id": order_id},
    )
    return {row["line"]: row["remaining"] for row in rows}


def _lines(number: str, asked: list[dict] | None, remaining: dict[int, int]) -> dict[int, int]:
    """The line -> units this shipment carries: the ones asked for, or all that remain."""
    if not asked:
        lines = {line: left for line, left in remaining.items() if left > 0}
        if not lines:
            raise Conflict(
                f"Order {number} has nothing left to ship.",
                withheld=(orders.READ, "The order has nothing left to ship."),
            )
        return lines
    lines = {}
    for entry in asked:
        line, quantity = entry["line"], entry["quantity"]
        if line not in remaining:
            raise Invalid(
                f"lines: order {number} has no line {line}.",
                withheld=(orders.READ, f"lines: the order has no line {line}."),
            )
        if line in lines:
            raise Invalid(f"lines: line {line} is given twice.")
        if quantity > remaining[line]:
            raise Conflict(
                f"Line {line} of order {number} has {remaining[line]} unit(s) left to ship;"
                f" this shipment asks for {quantity}.",
                withheld=(orders.READ, f"Line {line} has fewer units left to ship than asked."),
            )
        lines[line] = quantity
    return lines


def _insert(order_id: str, data: dict, lines: dict[int, int], moment: str, actor: Actor) -> dict:
    shipment = {
        "id": db.new_id(),
        "order_id": order_id,
        "carrier": data["carrier"],
        "tracking_number": data["tracking_number"],
        "tracking_url": data.get("tracking_url"),
        "created_at": moment,
        "kind": actor.kind,
        "by_id": actor.id,
        "label": actor.label,
    }
    db.execute(
        "INSERT INTO shipments (id, order_id, carrier, tracking_number, tracking_url,"
        " created_at, by_kind, by_id, by_label) VALUES (:id, :order_id, :carrier,"
        " :tracking_number, :tracking_url, :created_at, :kind, :by_id, :label)",
        shipment,
    )
    db.execute_many(
        "INSERT INTO shipment_lines (shipment_id, order_id, line, quantity)"
        " VALUES (:shipment_id, :order_id, :line, :quantity)",
        [
            {"shipment_id": shipment["id"], "order_id": order_id, "line": line, "quantity": qty}
            for line, qty in sorted(lines.items())
        ],
    )
    return shipment


def _mail(order: dict, shipment: dict) -> None:
    """The customer's e-mail: what left, with the carrier, tracking number and link."""
    recipient = order["customer"]["email"]
    if not recipient:  # an erased customer
        return
    names = {item["line"]: item["name"] for item in order["items"]}
    mail.queue_rendered(
        recipient,
        f"Order {order['number']} has shipped",
        "shipment",
        order=order,
        shipment=shipment,
        items=[(line["quantity"], names.get(line["line"], "")) for line in shipment["lines"]],
    )
