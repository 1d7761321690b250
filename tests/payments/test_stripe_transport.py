"""Stripe's refusals and brown-outs (issue 35, findings 4 and 7), against tests/fake_stripe.py.

A refusal (a 4xx) is a 409 naming Stripe's reason (502 for the shop's own key), a refused
refund fails and gives its amount back; a transport error (refused, reset, timed out), a 5xx
or a 429 is a 503 with ``Retry-After``. Calls to Stripe are bounded per process (the rest
answer 503 at once), a breaker fails them fast after failures in a row, and a hung Stripe
leaves the node answering everything else (the live test at the end).
"""

import json
import socket
import threading
import time

import pytest

from shop import db
from shop.net.circuit import Circuit, NotCalled
from tests.edge.test_health import sample, scrape
from tests.fake_stripe import API_KEY, SECRET, deliver, settings, sign
from tests.faults import _wait
from tests.live import LiveServer
from tests.ops.test_scale_out import call, sign_in
from tests.orders_helpers import add_product, basket, product_row

OUTAGES = "shop_dependency_unavailable_total"


@pytest.fixture
def app(make_app, fake_stripe, request):
    """A shop talking to the fake (with the settings of ``@with_settings`` on top)."""
    return make_app(**settings(fake_stripe, **getattr(request, "param", {})))


def with_settings(**values):
    """Build the test's ``app`` with these settings."""
    return pytest.mark.parametrize("app", [values], indirect=True, ids=["settings"])


def _paid_card_order(app, customer, fake, price=1000, quantity=2) -> tuple[dict, str]:
    """A card order paid through the fake's webhook; answer (order, product id)."""
    product = add_product(app, price_cents=price, stock=10)
    order = customer.post("/payments/checkout", json=basket((product, quantity), method="stripe"))
    assert order.status_code == 201, order.json
    event = fake.succeed(order.json["payment"]["reference"])
    assert deliver(app.test_client(), event).status_code == 200
    return order.json, product


def _refunded_cents(app, order_id) -> int:
    with app.app_context():
        return db.value("SELECT refunded_cents FROM orders WHERE id = :id", {"id": order_id})


def _refused_message(response, *names):
    assert set(response.json) == {"message"}, response.json
    for name in names:
        assert name in response.json["message"], response.json
    assert API_KEY not in response.json["message"] and "sk_" not in response.json["message"]
    assert "Retry-After" not in response.headers


# -- refusals --------------------------------------------------------------------------------
def test_a_refund_stripe_refuses_is_409_naming_it_failed_and_its_amount_released(
    app, customer_client, owner_client, fake_stripe
):
    order, product = _paid_card_order(app, customer_client, fake_stripe)
    url = f"/orders/{order['id']}/refunds"
    full = owner_client.get(url + "/preview").json["refundable_cents"]
    assert full == order["total_cents"] == 2000
    # 300 refunded in Stripe's dashboard, its webhook lost: Stripe holds less than we think.
    fake_stripe.refund_in_dashboard(order["payment"]["reference"], 300)
    body = {"amount_cents": full, "restock": [{"line": 1, "quantity": 1}]}
    refused = owner_client.post(url, json=body, headers={"Idempotency-Key": "first"})
    assert refused.status_code == 409, refused.json
    _refused_message(refused, "amount_too_large", "greater than unrefunded amount")

    (failed,) = owner_client.get(url).json["items"]
    assert failed["status"] == "failed" and failed["amount_cents"] == full
    assert failed["failure_reason"].startswith("amount_too_large: Refund amount")
    preview = owner_client.get(url + "/preview").json
    assert preview["refundable_cents"] == full and preview["refunded_cents"] == 0
    assert _refunded_cents(app, order["id"]) == 0
    # Its units went back on the shelf and stay there, counted once.
    assert preview["lines"][0]["restocked_quantity"] == 1
    assert product_row(app, product)["stock"] == 9
    shown = owner_client.get(f"/orders/{order['id']}").json
    assert shown["status"] == "paid" and shown["payment"]["status"] == "paid"
    with app.app_context():
        assert db.value("SELECT COUNT(*) FROM audit_log WHERE event = 'refund.failed'") == 1
        assert db.value("SELECT COUNT(*) FROM audit_log WHERE event = 'order.refunded'") == 0

    # The same request again is the same refusal, sent to Stripe no more.
    sent = len(fake_stripe.calls)
    again = owner_client.post(url, json=body, headers={"Idempotency-Key": "first"})
    assert again.status_code == 409 and "amount_too_large" in again.json["message"]
    assert len(fake_stripe.calls) == sent
    # A new key for what Stripe still holds works.
    retry = owner_client.post(
        url, json={"amount_cents": full - 300}, headers={"Idempotency-Key": "2"}
    )
    assert retry.status_code == 201, retry.json
    assert retry.json["status"] == "succeeded" and retry.json["failure_reason"] is None
    assert _refunded_cents(app, order["id"]) == full - 300


def test_a_refund_refused_for_the_shop_s_own_key_is_502_without_the_key(
    app, customer_client, owner_client, fake_stripe
):
    order, _ = _paid_card_order(app, customer_client, fake_stripe)
    url = f"/orders/{order['id']}/refunds"
    fake_stripe.refuse(None, status=401, message=f"Invalid API Key provided: {API_KEY[:8]}****fake")
    refused = owner_client.post(url, json={"amount_cents": 500})
    assert refused.status_code == 502, refused.json
    _refused_message(refused, "authentication_error")
    assert owner_client.get(url).json["items"][0]["status"] == "failed"
    assert _refunded_cents(app, order["id"]) == 0


def test_a_checkout_whose_intent_stripe_refuses_is_409_not_503(app, customer_client, fake_stripe):
    product = add_product(app, price_cents=30, stock=5)
    fake_stripe.refuse(
        "amount_too_small", message="Amount must be at least €0.50 eur", param="amount"
    )
    response = customer_client.post(
        "/payments/checkout", json=basket((product, 1), method="stripe")
    )
    assert response.status_code == 409, response.json
    _refused_message(response, "amount_too_small", "Amount must be at least", "SO-")
    with app.app_context():
        order = db.one(
            "SELECT o.id, o.status, p.note FROM orders o JOIN payments p ON p.order_id = o.id"
        )
    assert order["status"] == "pending" and "amount_too_small" in order["note"]
    again = customer_client.post(f"/orders/{order['id']}/payment")
    assert again.status_code == 409 and "amount_too_small" in again.json["message"]
    # Once Stripe takes it (the shop changed its Stripe settings), the retry starts it.
    fake_stripe.mode = None
    started = customer_client.post(f"/orders/{order['id']}/payment")
    assert started.status_code == 200 and started.json["client_secret"]
    assert len(fake_stripe.intents) == 1


def test_reconcile_says_stripe_refused_the_key_in_one_line(app, fake_stripe):
    fake_stripe.refuse(None, status=401, message=f"Invalid API Key provided: {API_KEY}")
    result = app.test_cli_runner().invoke(args=["payments", "reconcile"])
    assert result.exit_code == 1, result.output
    assert "Stripe refused: authentication_error" in result.output
    assert API_KEY not in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("fault", ["down", "lose", "error", "rate_limited", "timeout"])
def test_transport_errors_5xx_and_429_stay_503_with_retry_after_and_the_refund_pending(
    app, customer_client, owner_client, fake_stripe, fault
):
    order, _ = _paid_card_order(app, customer_client, fake_stripe)
    url = f"/orders/{order['id']}/refunds"
    if fault == "rate_limited":
        fake_stripe.refuse("rate_limit", status=429, message="Too many requests", kind="api_error")
    elif fault == "timeout":
        fake_stripe.hang()
    else:
        fake_stripe.mode = fault
    sent = owner_client.post(url, json={"amount_cents": 500}, headers={"Idempotency-Key": "k"})
    assert sent.status_code == 503, sent.json
    assert int(sent.headers["Retry-After"]) >= 1 and "pending" in sent.json["message"]
    assert owner_client.get(url).json["items"][0]["status"] == "pending"
    assert _refunded_cents(app, order["id"]) == 500  # still reserved: it may have happened
    fake_stripe.release()
    retried = owner_client.post(url, json={"amount_cents": 500}, headers={"Idempotency-Key": "k"})
    assert retried.status_code == 200 and retried.json["status"] == "succeeded"
    assert len(fake_stripe.refunds) == 1  # "lose" and "timeout": done once, found again
    assert _refunded_cents(app, order["id"]) == 500


# -- a bounded number of calls at once, and a breaker ----------------------------------------
def _pending_card_order(app, customer) -> dict:
    product = add_product(app, price_cents=1000, stock=50)
    order = customer.post("/payments/checkout", json=basket((product, 1), method="stripe"))
    assert order.status_code == 201, order.json
    return order.json


def _twin(app, client):
    """Another test client with ``client``'s session (one client per thread)."""
    twin = app.test_client()
    for cookie in client._cookies.values():
        twin.set_cookie(cookie.key, cookie.value, domain=cookie.domain, path=cookie.path)
    return twin


@with_settings(STRIPE_CONCURRENCY=2, STRIPE_TIMEOUT=30, METRICS_ALLOW="127.0.0.1")
def test_calls_beyond_the_slots_answer_503_at_once_and_never_reach_stripe(
    app, customer_client, fake_stripe
):
    customer = customer_client
    orders = [_pending_card_order(app, customer) for _ in range(3)]
    fake_stripe.hang()
    answers = {}

    def confirm(order):
        answers[order["id"]] = _twin(app, customer).post(f"/orders/{order['id']}/payment")

    held = [threading.Thread(target=confirm, args=(order,)) for order in orders[:2]]
    for thread in held:
        thread.start()
    try:
        _wait(lambda: len(fake_stripe.calls) >= 5, 10, "two calls hanging at Stripe")
        counted = sample(scrape(app.test_client()), OUTAGES, dependency="stripe")
        started = time.monotonic()
        third = customer.post(f"/orders/{orders[2]['id']}/payment")
        assert time.monotonic() - started < 1  # refused at once, not queued
        assert third.status_code == 503 and third.headers["Retry-After"] == "5", third.json
        assert sample(scrape(app.test_client()), OUTAGES, dependency="stripe") == counted + 1
        assert len(fake_stripe.calls) == 5  # 3 intents at checkout, 2 hanging: not sent
        assert app.test_client().get("/products").status_code == 200
        assert app.test_client().get("/healthz").status_code == 200
    finally:
        fake_stripe.release()
        for thread in held:
            thread.join(timeout=30)
    assert [answers[order["id"]].status_code for order in orders[:2]] == [200, 200]
    assert customer.post(f"/orders/{orders[2]['id']}/payment").status_code == 200


@with_settings(STRIPE_BREAKER_FAILURES=3, STRIPE_BREAKER_COOLDOWN=20)
def test_the_breaker_fails_fast_after_failures_in_a_row_then_tries_one_call(
    app, customer_client, fake_stripe, clock, caplog
):
    customer = customer_client
    order = _pending_card_order(app, customer)
    url = f"/orders/{order['id']}/payment"
    fake_stripe.mode = "down"
    sent = len(fake_stripe.calls)
    for _ in range(3):
        assert customer.post(url).status_code == 503
    assert len(fake_stripe.calls) == sent + 3
    # Open: answered at once, Stripe not called, Retry-After the cool-down left.
    clock.advance(5)
    fast = customer.post(url)
    assert fast.status_code == 503 and fast.headers["Retry-After"] == "15", fast.json
    assert len(fake_stripe.calls) == sent + 3
    # After the cool-down one trial goes; it fails: open again for a whole cool-down.
    clock.advance(15)
    assert customer.post(url).status_code == 503
    assert len(fake_stripe.calls) == sent + 4
    assert customer.post(url).headers["Retry-After"] == "20"
    assert len(fake_stripe.calls) == sent + 4
    # Stripe back: the next trial succeeds and closes it.
    fake_stripe.mode = None
    clock.advance(20)
    assert customer.post(url).status_code == 200
    assert customer.post(url).status_code == 200
    assert len(fake_stripe.calls) == sent + 6
    assert "Stripe: 3 calls in a row could not reach it" in caplog.text
    assert "Stripe answers again" in caplog.text


@with_settings(STRIPE_BREAKER_FAILURES=2)
def test_refusals_and_5xx_do_not_open_the_breaker(app, customer_client, fake_stripe):
    customer = customer_client
    order = _pending_card_order(app, customer)
    with app.app_context():  # an intent Stripe no longer knows: a refusal (404) each time
        db.execute("UPDATE payments SET reference = 'pi_gone'")
    for _ in range(3):
        answer = customer.post(f"/orders/{order['id']}/payment")
        assert answer.status_code == 409 and "resource_missing" in answer.json["message"]
    fake_stripe.mode = "error"
    for _ in range(3):
        assert customer.post(f"/orders/{order['id']}/payment").status_code == 503
    assert len([c for c in fake_stripe.calls if c[1] == "/v1/payment_intents/pi_gone"]) == 6


def _unaccepting_port():
    """A listening socket whose queue is full: new connections are never accepted."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    port, queued = server.getsockname()[1], []
    while True:
        client = socket.socket()
        client.settimeout(0.2)
        try:
            client.connect(("127.0.0.1", port))
        except TimeoutError:
            client.close()
            return server, queued, port
        queued.append(client)


def test_a_stripe_that_never_accepts_is_given_up_after_the_connect_timeout(
    app, make_app, customer_client, fake_stripe
):
    customer = customer_client
    order = _pending_card_order(app, customer)
    server, queued, port = _unaccepting_port()
    try:
        slow = make_app(
            **settings(
                fake_stripe,
                STRIPE_API_BASE=f"http://127.0.0.1:{port}",
                STRIPE_CONNECT_TIMEOUT=0.3,
                STRIPE_TIMEOUT=60,
            )
        )
        started = time.monotonic()
        answer = _twin(slow, customer).post(f"/orders/{order['id']}/payment")
        assert answer.status_code == 503 and int(answer.headers["Retry-After"]) >= 1
        assert time.monotonic() - started < 10  # the connect timeout, not the read one
    finally:
        for client in queued:
            client.close()
        server.close()


# -- the fault test: a hung Stripe, a live node ----------------------------------------------
def _webhook(node, event):
    """Deliver a signed event to a live node, as Stripe does; answer the response."""
    headers = {"Stripe-Signature": sign(json.dumps(event))}  # call() sends json.dumps(event)
    return call(node, "POST", "/payments/stripe/webhook", event, headers=headers)


@pytest.mark.live
def test_a_hung_stripe_never_takes_the_node_and_every_order_converges_once(
    app, database_url, customer_client, fake_stripe
):
    # Sixteen baskets of sixteen products: the checkouts do not queue on one product's lock.
    products = [add_product(app, price_cents=1500 + n, stock=5) for n in range(16)]
    node = LiveServer(
        {
            "DATABASE_URL": database_url,
            "SHOP_RATELIMIT_ENABLED": "0",  # 16 checkouts from one address: not the limiter
            "SHOP_COOKIE_SECURE": "0",
            "STRIPE_API_KEY": API_KEY,
            "STRIPE_WEBHOOK_SECRET": SECRET,
            "STRIPE_API_BASE": fake_stripe.url,
            "SHOP_STRIPE_TIMEOUT": "4",
            "SHOP_STRIPE_BREAKER_FAILURES": "3",
            "SHOP_STRIPE_BREAKER_COOLDOWN": "1",
        },
        threads=8,  # SHOP_STRIPE_CONCURRENCY defaults to half: 4 calls to Stripe at once
    )
    try:
        cookie = sign_in(node, "customer@example.com")
        fake_stripe.hang()
        done, probes, checkouts = threading.Event(), [], []

        def probe():
            while not done.is_set():
                for path in ("/products", "/healthz", "/readyz"):
                    started = time.monotonic()
                    status = call(node, "GET", path).status
                    probes.append((path, status, time.monotonic() - started))

        barrier = threading.Barrier(16)

        def checkout(n):
            barrier.wait(timeout=30)
            started = time.monotonic()
            key = {"Idempotency-Key": f"checkout-{n}"}
            body = basket((products[n], 1), method="stripe")
            answer = call(node, "POST", "/payments/checkout", body, cookie=cookie, headers=key)
            checkouts.append((answer, time.monotonic() - started))

        prober = threading.Thread(target=probe)
        prober.start()
        buyers = [threading.Thread(target=checkout, args=(n,)) for n in range(16)]
        for thread in buyers:
            thread.start()
        for thread in buyers:
            thread.join(timeout=60)
        done.set()
        prober.join(timeout=30)

        # The node answered everything else at once while four calls hung at Stripe.
        assert len(checkouts) == 16 and len(probes) >= 3
        assert {status for _, status, _ in probes} == {200}, probes
        worst = max(seconds for _, _, seconds in probes)
        assert worst < 2, sorted(probes, key=lambda p: -p[2])[:5]
        assert all(a.status == 503 and int(a.headers["Retry-After"]) >= 1 for a, _ in checkouts)
        assert sum(seconds < 2 for _, seconds in checkouts) >= 12  # refused, never queued
        assert len(fake_stripe.calls) <= 4

        # Stripe back: the hung calls are done late (their intents made), and every order
        # is paid once, through retries of its payment and signed (duplicated) webhooks.
        fake_stripe.release()
        with app.app_context():
            order_ids = [row["id"] for row in db.query("SELECT id FROM orders")]
        assert len(order_ids) == 16
        intents = {}

        def started(order_id):
            answer = call(node, "POST", f"/orders/{order_id}/payment", cookie=cookie)
            assert answer.status in (200, 503), answer.json
            if answer.status == 200:
                intents[order_id] = answer.json["reference"]
            return answer.status == 200

        for order_id in order_ids:
            _wait(lambda order_id=order_id: started(order_id), 30, f"order {order_id} started")
        for order_id, intent in intents.items():
            event = fake_stripe.succeed(intent)
            assert _webhook(node, event).status == 200
            assert _webhook(node, event).json == {"received": True, "duplicate": True}
            confirmed = call(node, "POST", f"/orders/{order_id}/payment", cookie=cookie)
            assert confirmed.status == 200 and confirmed.json["status"] == "paid"
    finally:
        fake_stripe.release()
        node.stop()

    per_order = {}
    for intent in fake_stripe.intents.values():
        order_id = intent["metadata"]["order_id"]
        per_order[order_id] = per_order.get(order_id, 0) + 1
    assert per_order == dict.fromkeys(order_ids, 1)  # one intent per order, however retried
    with app.app_context():
        paid = db.query(
            "SELECT o.status, p.status AS payment, (SELECT COUNT(*) FROM order_status_history h"
            " WHERE h.order_id = o.id AND h.status = 'paid') AS moves FROM orders o"
            " JOIN payments p ON p.order_id = o.id"
        )
        receipts = db.value("SELECT COUNT(*) FROM mail_outbox WHERE subject LIKE '%is paid'")
    assert [(r["status"], r["payment"], r["moves"]) for r in paid] == [("paid", "paid", 1)] * 16
    assert receipts == 16


# -- the breaker's rules, directly --------------------------------------------------------------
class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def _fail(circuit):
    with pytest.raises(OSError), circuit.call((OSError,)):
        raise OSError("reset")


def test_one_trial_at_a_time_after_the_cool_down_and_any_answer_closes_it():
    clock = Clock()
    circuit = Circuit("X", slots=4, failures=2, cooldown=10, clock=clock)
    _fail(circuit)
    assert circuit.state == "closed"
    _fail(circuit)
    assert circuit.state == "open"
    clock.now += 10
    assert circuit.state == "half-open"
    with circuit.call((OSError,)):  # the trial, running
        with pytest.raises(NotCalled) as second, circuit.call((OSError,)):
            pass
        assert second.value.reason == "open" and second.value.retry_after == 10
    assert circuit.state == "closed"
    with pytest.raises(ValueError), circuit.call((OSError,)):
        raise ValueError("an error answer reached the service")
    assert circuit.state == "closed"


def test_a_clock_set_back_never_keeps_it_open_longer_than_a_cool_down():
    clock = Clock()
    circuit = Circuit("X", slots=1, failures=1, cooldown=10, clock=clock)
    _fail(circuit)
    clock.now -= 3600
    with pytest.raises(NotCalled) as refused, circuit.call((OSError,)):
        pass
    assert refused.value.retry_after == 10


def test_the_default_slots_are_half_the_web_threads():
    from shop.config import from_environment

    assert from_environment({"SHOP_THREADS": "8"})["STRIPE_CONCURRENCY"] == 4
    assert from_environment({"SHOP_THREADS": "1"})["STRIPE_CONCURRENCY"] == 1
    chosen = from_environment({"SHOP_THREADS": "8", "SHOP_STRIPE_CONCURRENCY": "6"})
    assert chosen["STRIPE_CONCURRENCY"] == 6
    assert from_environment({})["STRIPE_CONNECT_TIMEOUT"] == 2
