"""The console's front page, ``/admin/`` (issue 37): what a shop owner looks at first.

Today's orders and takings (paid orders placed since midnight UTC, net of their refunds, in
the shop's currency through ``money.display``), the orders waiting to be shipped, payments
in review and refunds waiting for their provider, the variants low on stock, the outbox's
health (mail and webhooks: messages waiting and the oldest one's age, "behind" past the
operations guide's 5-minute alert) and the latest orders. It needs ``orders.read``: anyone
else is sent where their permissions lead (``nav.landing``), which is also where sign-in
lands.
"""

from datetime import UTC, datetime, time

from flask import current_app, g, redirect, render_template, url_for

from shop.admin import nav
from shop.admin.views import bp
from shop.catalogue import stock
from shop.clock import iso, now
from shop.http.health import outbox_backlog
from shop.money import display
from shop.orders import order_list
from shop.site import settings as site

# A queue whose oldest message waits longer than this is behind (docs/operations.md alerts).
BEHIND_AFTER_SECONDS = 300
LATEST = 8
LOW_STOCK = 10


def _age(seconds: float) -> str:
    """``3 min`` or ``2 h`` for a waiting message's age."""
    if seconds < 120:
        return f"{int(seconds)} s"
    if seconds < 7200:
        return f"{int(seconds // 60)} min"
    return f"{int(seconds // 3600)} h"


@bp.route("/")
def home():
    """The dashboard for who may read orders; anyone else lands where their links lead."""
    caller = g.caller
    if not caller.can("orders.read"):
        return redirect(url_for(nav.landing(caller)), 303)
    midnight = datetime.combine(now().date(), time(), UTC)
    outbox = {}
    for queue, state in outbox_backlog().items():
        age = state["oldest_pending_age_seconds"] or 0
        outbox[queue] = {**state, "stuck": age > BEHIND_AFTER_SECONDS, "age": _age(age)}
    product_pages = any(
        rule.rule.startswith("/admin/products/") for rule in current_app.url_map.iter_rules()
    )
    return render_template(
        "admin/dashboard.html",
        figures=order_list.figures(iso(midnight)),
        latest=order_list.find(1, LATEST)["items"],
        low=stock.low_variants(LOW_STOCK),
        outbox=outbox,
        can_webhooks=caller.can("webhooks.read"),
        product_pages=product_pages,
        currency=site.current()["currency"],
        money=display,
    )
