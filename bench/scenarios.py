"""The benchmark's scenarios: what each replays, against which baseline, and its targets."""

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from bench import carts, invoices, pricing, seed

CEILING = "baseline: fixed JSON (Flask ceiling)"
AUTH_READ_RATIO = 0.8  # GET /auth/me against one row
KEYED_READ_RATIO = 0.75  # issue 29: the keyed product read against the Flask ceiling
LIST_RATIO = 0.8  # issue 29: the product list against a bare page of 20
ORDERS_LIST_RATIO = 0.6  # issue 29: the orders list against a bare page of 20
CHECKOUT_RATIO = 0.5  # issue 29: checkout against one row, on PostgreSQL
CHECKOUT_P99_MS = 30  # issue 29: checkout's p99 at half rate, both engines
CHECKOUT_STATEMENTS = (10, 7)  # issue 29: statements and writes per checkout
VARIANT_DETAIL_RATIO = 0.8  # issue 25: a product with 12 variants against one without
P99_LIMIT_MS = 50
RSS_LIMIT_MB = 100
SCALING_LIMIT = 0.20
PRICED_CHECKOUT_RATIO = 0.9  # against today's checkout, same run
QUOTE_RATIO = 2.0  # against today's checkout, same run


@dataclass
class Scenario:
    """One kind of request, replayed from a list, and what it must achieve."""

    name: str
    method: str
    route: str  # the OpenAPI path it needs, e.g. /products/{}
    requests: list  # [(method, path, body)], replayed in order
    headers: dict = field(default_factory=dict)
    baseline: str | None = None  # the baseline scenario its ratio is taken against
    min_ratio: float | None = None
    ratio_engine: str | None = None  # judge the ratio on this engine only ("postgresql")
    p99_limit_ms: float = P99_LIMIT_MS  # p99 at half the peak rate
    max_statements: tuple | None = None  # (statements, writes) it may run at most
    half_requests: list | None = None  # a fresh list for the half-rate run (writes)
    probe: list | None = None  # the two requests whose statements are counted
    limits: bool = True  # run with rate limits on (as deployed)
    # A context manager making the data it needs, present only while it runs (app context).
    data: Callable | None = None

    def probes(self) -> list:
        """The requests to count statements on: the second one is reported."""
        return self.probe or [self.requests[0], self.requests[0]]


def service(s: seed.Seeded) -> list[Scenario]:
    """The service's scenarios, built from the seeded data."""
    rng = random.Random(66)
    key = {"Authorization": f"Bearer {s.order_key}"}
    ids = rng.sample(s.product_ids, min(5000, len(s.product_ids)))
    pages = [("GET", f"/products?page={n}", "") for n in range(1, 11)]
    checkout = [
        (
            "POST",
            "/payments/checkout",
            json.dumps(
                {
                    "items": [{"product_id": pid, "quantity": 1}],
                    "shipping_address": {
                        "name": "Bench Customer",
                        "line1": "1 High Street",
                        "city": "Bath",
                        "postal_code": "BA1 1AA",
                        "country": "GB",
                    },
                    "payment_method": "manual",
                },
                separators=(",", ":"),
            ),
        )
        for pid in ids[:2000]
    ]
    # Each pending order moves paid -> shipped -> delivered -> refunded; one list per run so
    # that no move is asked twice. The last pending order is kept for counting statements.
    customer = {
        "Cookie": f"shop_customer_session={s.customer_cookie}",
        "Content-Type": "application/json",
    }
    pending, kept = s.pending_order_ids[:-1], s.pending_order_ids[-1:]
    half = len(pending) // 2

    def moves(orders, statuses=("paid", "shipped", "delivered", "refunded")):
        return [
            ("PATCH", f"/orders/{oid}/status", json.dumps({"status": status}))
            for status in statuses
            for oid in orders
        ]

    return [
        Scenario(
            "GET /products (anonymous, 20)",
            "GET",
            "/products",
            pages,
            baseline="baseline: page of 20",
            min_ratio=LIST_RATIO,
            # The page, its kept total and the page's prior prices (issue 40's EU prior price).
            max_statements=(3, 0),
        ),
        Scenario(
            "GET /products/{id} (key)",
            "GET",
            "/products/{}",
            [("GET", f"/products/{pid}", "") for pid in ids],
            key,
            baseline=CEILING,
            min_ratio=KEYED_READ_RATIO,
            # The product and its prior prices (issue 40); the key is kept (issue 42,
            # shop/auth/keys/cache.py), so it costs none.
            max_statements=(2, 0),
        ),
        Scenario(
            "GET /products/{id} (key, 12 variants)",
            "GET",
            "/products/{}",
            [("GET", f"/products/{pid}", "") for pid in s.variant_product_ids],
            key,
            baseline="GET /products/{id} (key)",  # the same run's product detail
            min_ratio=VARIANT_DETAIL_RATIO,
            max_statements=(2, 0),
        ),
        Scenario(
            "GET /auth/me (session)",
            "GET",
            "/auth/me",
            [("GET", "/auth/me", "")],
            {"Cookie": f"shop_admin_session={s.admin_cookie}"},
            baseline="baseline: one row",
            min_ratio=AUTH_READ_RATIO,
            max_statements=(2, 0),
        ),
        Scenario(
            "GET /orders?page_size=20 (key)",
            "GET",
            "/orders",
            [("GET", "/orders?page_size=20", "")],
            key,
            baseline="baseline: page of 20",
            min_ratio=ORDERS_LIST_RATIO,
        ),
        Scenario(
            "POST /payments/checkout",
            "POST",
            "/payments/checkout",
            checkout,
            customer,
            baseline="baseline: one row",
            min_ratio=CHECKOUT_RATIO,
            ratio_engine="postgresql",
            p99_limit_ms=CHECKOUT_P99_MS,
            max_statements=CHECKOUT_STATEMENTS,
            limits=False,
        ),
        Scenario(
            "POST /payments/checkout (priced)",
            "POST",
            "/payments/checkout",
            [("POST", "/payments/checkout", body) for body in pricing.bodies(ids[:2000])],
            customer,
            baseline="POST /payments/checkout",
            min_ratio=PRICED_CHECKOUT_RATIO,
            limits=False,
            data=pricing.data,
        ),
        Scenario(
            "POST /payments/quote",
            "POST",
            "/payments/quote",
            [("POST", "/payments/quote", body) for body in pricing.bodies(ids[:2000], False)],
            customer,
            baseline="POST /payments/checkout",
            min_ratio=QUOTE_RATIO,
            limits=False,
            data=pricing.data,
        ),
        Scenario(
            "PATCH /orders/{id}/status (key)",
            "PATCH",
            "/orders/{}/status",
            moves(pending[:half]),
            {**key, "Content-Type": "application/json"},
            baseline="baseline: one row",
            half_requests=moves(pending[half:]),
            probe=moves(kept, ("paid", "shipped")),
        ),
        *carts.scenarios(Scenario, ids, "POST /payments/checkout", "baseline: one row"),
        invoices.scenario(Scenario, s.paid_order_ids, key, "POST /payments/checkout"),
    ]


def baseline(seeded: seed.Seeded) -> list[Scenario]:
    """The bare baseline's scenarios: fixed JSON (the Flask ceiling), one row by id, and a
    page of 20."""
    rng = random.Random(6)
    ids = rng.sample(seeded.product_ids, min(5000, len(seeded.product_ids)))
    return [
        Scenario(CEILING, "GET", "", [("GET", "/fixed", "")]),
        Scenario("baseline: one row", "GET", "", [("GET", f"/products/{pid}", "") for pid in ids]),
        Scenario(
            "baseline: page of 20",
            "GET",
            "",
            [("GET", f"/products?page={n}", "") for n in range(1, 11)],
        ),
    ]
