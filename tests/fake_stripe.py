"""A local fake of the few Stripe endpoints the shop calls, for tests (issue 27).

``FakeStripe`` serves PaymentIntents (create, retrieve, list, cancel) and Refunds (create, list) on
127.0.0.1 with the shapes of Stripe's API reference (errors too: ``{"error": {"type",
"code", "message", "param", "doc_url"}}``), honours ``Idempotency-Key`` (the same key
answers the first response), and can be told to fail (``mode = "error"``: 500; ``"down"``:
the connection is closed unanswered; ``"lose"``: the request is done, its answer lost), to
``hang()`` (every request is read and left unanswered until ``release()``, then done and
answered: a Stripe that took too long), to be ``slow(seconds)`` (done and answered after
that long) or to ``refuse(code)`` (a 4xx with Stripe's error body, nothing done). It builds
events and signs them exactly as
Stripe does (``Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "t.payload")>``) and
delivers them to the app through a test client. No test reaches the internet.
"""

import hashlib
import hmac
import itertools
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

import pytest

SECRET = "whsec_test_" + "s" * 24
API_KEY = "sk_test_fake"


def _nested(pairs) -> dict:
    """Stripe's form encoding (``metadata[order_id]=x``) as a dict."""
    out = {}
    for key, value in pairs:
        parts = key.replace("]", "").split("[")
        here = out
        for part in parts[:-1]:
            here = here.setdefault(part, {})
        here[parts[-1]] = value
    return out


class FakeStripe:
    def __init__(self):
        self.intents, self.refunds, self.responses = {}, {}, {}
        self.mode = None  # None, "error", "down", "lose", "hang", "slow" or "refuse"
        self.released = threading.Event()  # ends a hang (and a slow answer's wait)
        self.delay = 0.0  # "slow": seconds before answering
        self.refusal = None  # "refuse": (status, error body)
        self.calls = []  # (method, path) of every request
        self.browser_confirmed = []  # intents paid through the fake Stripe.js
        self.lock = threading.Lock()
        self.counter = itertools.count(1)
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                fake._serve(self, "GET")

            def do_POST(self):
                fake._serve(self, "POST")

            def do_DELETE(self):
                fake._serve(self, "DELETE")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.released.set()
        self.server.shutdown()
        self.server.server_close()

    def hang(self) -> None:
        """Accept and read every request, and answer none until ``release()``."""
        self.released.clear()
        self.mode = "hang"

    def release(self) -> None:
        """Stripe is back: the hung requests are done and answered (to whoever still waits)."""
        self.mode = None
        self.released.set()

    def slow(self, seconds: float) -> None:
        """Answer every request ``seconds`` late (``release()`` cuts the wait)."""
        self.released.clear()
        self.delay, self.mode = seconds, "slow"

    def refuse(self, code, status=400, message=None, kind="invalid_request_error", param=None):
        """Refuse every request as Stripe does: ``status`` with its error body, nothing done."""
        message = message or f"The request was refused ({code})."
        self.refusal = (status, _error(kind, code, message, param))
        self.mode = "refuse"

    def _id(self, prefix: str) -> str:
        return f"{prefix}_{next(self.counter):06d}{secrets.token_hex(4)}"

    # -- HTTP ---------------------------------------------------------------------------
    def _serve(self, handler, method):
        parts = urlsplit(handler.path)
        if method == "GET" and parts.path == "/v3/":  # Stripe.js, as a page loads it
            return self._script(handler)
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length).decode() if length else ""
        with self.lock:
            self.calls.append((method, parts.path))
        mode = self.mode
        if mode == "hang":
            self.released.wait()
        elif mode == "slow":
            self.released.wait(self.delay)
        if mode == "refuse":
            return self._answer(handler, *self.refusal)
        if self.mode == "down":  # nothing reaches Stripe
            handler.close_connection = True
            handler.connection.shutdown(2)
            return
        if self.mode == "error":
            return self._answer(handler, 500, {"error": {"type": "api_error", "message": "x"}})
        params = _nested(parse_qsl(body if method == "POST" else parts.query))
        key = handler.headers.get("Idempotency-Key")
        with self.lock:
            if key and (method, parts.path, key) in self.responses:
                status, answer = self.responses[(method, parts.path, key)]
            else:
                status, answer = self._route(method, parts.path, params)
                if key:
                    self.responses[(method, parts.path, key)] = (status, answer)
        if self.mode == "lose":  # done at Stripe, but the answer never arrives
            handler.close_connection = True
            handler.connection.shutdown(2)
            return
        self._answer(handler, status, answer)

    def _answer(self, handler, status, answer):
        data = json.dumps(answer).encode()
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            handler.send_header("Request-Id", self._id("req"))
            handler.send_header("Access-Control-Allow-Origin", "*")  # Stripe.js reads it
            handler.end_headers()
            handler.wfile.write(data)
        except OSError:  # the caller gave up waiting (a hang released after its timeout)
            handler.close_connection = True

    def _route(self, method, path, params):
        if path == "/v1/payment_intents" and method == "POST":
            return 200, self._create_intent(params)
        if path == "/v1/payment_intents" and method == "GET":
            return 200, self._list_intents(params)
        if path.startswith("/v1/payment_intents/") and path.endswith("/confirm"):
            return self._confirm_in_browser(path.split("/")[3], params)
        if path.startswith("/v1/payment_intents/") and path.endswith("/cancel"):
            return self._cancel_intent(path.split("/")[3], params)
        if path.startswith("/v1/payment_intents/") and method == "GET":
            intent = self.intents.get(path.rsplit("/", 1)[1])
            return (200, intent) if intent else self._missing("payment_intent")
        if path == "/v1/refunds" and method == "POST":
            return self._create_refund(params)
        if path == "/v1/refunds" and method == "GET":
            found = [
                r
                for r in self.refunds.values()
                if r["payment_intent"] == params.get("payment_intent")
            ]
            return 200, self._page(sorted(found, key=lambda r: r["id"], reverse=True), False)
        return self._missing("route")

    def _script(self, handler):
        data = STRIPE_JS.encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "text/javascript")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def _confirm_in_browser(self, intent_id, params):
        """What Stripe.js's confirmPayment does with a card typed into the Payment Element:
        the test card 4242... succeeds, 4000 0000 0000 0002 is declined."""
        intent = self.intents.get(intent_id)
        if intent is None or params.get("client_secret") != intent["client_secret"]:
            return self._missing("payment_intent")
        if params.get("card", "").replace(" ", "") == "4000000000000002":
            intent["status"] = "requires_payment_method"
            return 402, _error("card_error", "card_declined", "Your card was declined.")
        intent["status"] = "succeeded"
        intent["amount_received"] = intent["amount"]
        self.browser_confirmed.append(intent_id)
        return 200, intent

    def _missing(self, what):
        return 404, _error("invalid_request_error", "resource_missing", f"No such {what}", "id")

    def _page(self, data, has_more):
        return {"object": "list", "data": data, "has_more": has_more, "url": "/v1/x"}

    def _create_intent(self, params):
        intent_id = self._id("pi")
        intent = {
            "id": intent_id,
            "object": "payment_intent",
            "amount": int(params["amount"]),
            "amount_received": 0,
            "currency": params["currency"],
            "status": "requires_payment_method",
            "client_secret": f"{intent_id}_secret_{secrets.token_hex(8)}",
            "metadata": params.get("metadata", {}),
            "created": int(time.time()),
            "livemode": False,
            "last_payment_error": None,
            "cancellation_reason": None,
            "canceled_at": None,
        }
        self.intents[intent_id] = intent
        return intent

    # The statuses in which Stripe lets an intent be cancelled.
    CANCELLABLE = (
        "requires_payment_method",
        "requires_capture",
        "requires_confirmation",
        "requires_action",
        "processing",
    )

    def _cancel_intent(self, intent_id, params):
        intent = self.intents.get(intent_id)
        if intent is None:
            return self._missing("payment_intent")
        if intent["status"] not in self.CANCELLABLE:
            return 400, {
                "error": {
                    "type": "invalid_request_error",
                    "code": "payment_intent_unexpected_state",
                    "message": f"You cannot cancel this PaymentIntent because it has a status"
                    f" of {intent['status']}. Only a PaymentIntent with one of the following"
                    f" statuses may be canceled: {', '.join(self.CANCELLABLE)}.",
                    "payment_intent": dict(intent),
                }
            }
        intent["status"] = "canceled"
        intent["canceled_at"] = int(time.time())
        intent["cancellation_reason"] = params.get("cancellation_reason")
        return 200, dict(intent)

    def _list_intents(self, params):
        found = sorted(self.intents.values(), key=lambda i: i["id"], reverse=True)
        since = (params.get("created") or {}).get("gte")
        if since:
            found = [i for i in found if i["created"] >= int(since)]
        if params.get("starting_after"):
            ids = [i["id"] for i in found]
            found = found[ids.index(params["starting_after"]) + 1 :]
        limit = int(params.get("limit", 10))
        return self._page(found[:limit], len(found) > limit)

    def _create_refund(self, params):
        intent = self.intents.get(params.get("payment_intent"))
        if intent is None:
            return self._missing("payment_intent")
        amount = int(params.get("amount") or intent["amount_received"])
        already = sum(
            r["amount"] for r in self.refunds.values() if r["payment_intent"] == intent["id"]
        )
        if already + amount > intent["amount_received"]:
            left = intent["amount_received"] - already
            message = (
                f"Refund amount ({amount} {intent['currency']}) is greater than unrefunded"
                f" amount on charge ({left} {intent['currency']})"
            )
            return 400, _error("invalid_request_error", "amount_too_large", message, "amount")
        refund = {
            "id": self._id("re"),
            "object": "refund",
            "amount": amount,
            "currency": intent["currency"],
            "payment_intent": intent["id"],
            "status": "succeeded",
            "metadata": params.get("metadata", {}),
            "created": int(time.time()),
        }
        self.refunds[refund["id"]] = refund
        return 200, refund

    # -- what Stripe does on its side, and its events ------------------------------------
    def succeed(self, intent_id, amount=None, currency=None) -> dict:
        """The customer paid: the intent succeeded; answer the event Stripe sends."""
        with self.lock:
            intent = self.intents[intent_id]
            intent["status"] = "succeeded"
            intent["amount_received"] = intent["amount"] if amount is None else amount
            if currency:
                intent["currency"] = currency
            return self.event("payment_intent.succeeded", dict(intent))

    def create_intent(self, amount, currency, metadata) -> dict:
        """An intent made at Stripe by someone else than the shop; answer it (held)."""
        with self.lock:
            params = {"amount": amount, "currency": currency, "metadata": dict(metadata)}
            return self._create_intent(params)

    def refund_in_dashboard(self, intent_id, amount) -> dict:
        """A refund made in Stripe's dashboard; answer its ``charge.refunded`` event."""
        with self.lock:
            status, refund = self._create_refund({"payment_intent": intent_id, "amount": amount})
            assert status == 200, refund
            return self.charge_refunded(intent_id)

    def charge_refunded(self, intent_id) -> dict:
        """The ``charge.refunded`` event of the intent's charge, with its refunds."""
        intent = self.intents[intent_id]
        refunds = [r for r in self.refunds.values() if r["payment_intent"] == intent_id]
        charge = {
            "id": "ch_" + intent_id[3:],
            "object": "charge",
            "amount": intent["amount_received"],
            "amount_refunded": sum(r["amount"] for r in refunds),
            "currency": intent["currency"],
            "payment_intent": intent_id,
            "refunded": sum(r["amount"] for r in refunds) >= intent["amount_received"],
            "refunds": self._page(sorted(refunds, key=lambda r: r["id"], reverse=True), False),
            "metadata": {},
        }
        return self.event("charge.refunded", charge)

    def event(self, kind: str, obj: dict) -> dict:
        return {
            "id": self._id("evt"),
            "object": "event",
            "api_version": "2025-01-27",
            "created": int(time.time()),
            "type": kind,
            "livemode": False,
            "pending_webhooks": 1,
            "request": {"id": None, "idempotency_key": None},
            "data": {"object": obj},
        }


def _error(kind: str, code: str | None, message: str, param: str | None = None) -> dict:
    """An error body as Stripe's API reference shows it (a bad key's has no code)."""
    error = {"type": kind, "message": message}
    if code:
        error["code"] = code
        error["doc_url"] = f"https://stripe.com/docs/error-codes/{code.replace('_', '-')}"
    if param:
        error["param"] = param
    return {"error": error}


def sign(payload: str, secret: str = SECRET, at: int | None = None) -> str:
    """``Stripe-Signature`` as Stripe computes it."""
    at = int(time.time()) if at is None else at
    digest = hmac.new(secret.encode(), f"{at}.{payload}".encode(), hashlib.sha256).hexdigest()
    return f"t={at},v1={digest}"


def deliver(client, event: dict, secret: str = SECRET, at: int | None = None):
    """POST a signed event to the app's webhook endpoint, as Stripe does."""
    payload = json.dumps(event)
    return client.post(
        "/payments/stripe/webhook",
        data=payload,
        headers={"Stripe-Signature": sign(payload, secret, at), "Content-Type": "application/json"},
    )


# A stand-in for Stripe.js (https://js.stripe.com/v3/) with the few calls a Payment
# Element page makes: Stripe(key), elements({clientSecret}), create("payment").mount(el),
# confirmPayment({elements, confirmParams: {return_url}}), which pays and then sends the
# browser to return_url with payment_intent and redirect_status, as Stripe does.
STRIPE_JS = """
(function () {
  var base = document.currentScript.src.replace(/\\/v3\\/.*$/, "");
  window.Stripe = function (key) {
    var secret = null, input = null;
    return {
      elements: function (options) {
        secret = options.clientSecret;
        return {
          create: function () {
            return {
              mount: function (where) {
                var box = typeof where === "string" ? document.querySelector(where) : where;
                var label = document.createElement("label");
                label.textContent = "Card number";
                input = document.createElement("input");
                input.id = "fake-card-number";
                input.setAttribute("autocomplete", "cc-number");
                label.appendChild(input);
                box.appendChild(label);
              }
            };
          }
        };
      },
      confirmPayment: function (options) {
        var intent = secret.split("_secret_")[0];
        var body = new URLSearchParams({client_secret: secret, card: input.value, key: key});
        var confirm = base + "/v1/payment_intents/" + intent + "/confirm";
        return fetch(confirm, {method: "POST", body: body})
          .then(function (answer) {
            if (!answer.ok) {
              return answer.json().then(function (data) { return {error: data.error}; });
            }
            var back = new URL(options.confirmParams.return_url);
            back.searchParams.set("payment_intent", intent);
            back.searchParams.set("redirect_status", "succeeded");
            window.location.assign(back.toString());
            return {};
          });
      }
    };
  };
})();
"""


@pytest.fixture
def fake_stripe():
    fake = FakeStripe()
    yield fake
    fake.close()


def settings(fake: FakeStripe, **more) -> dict:
    """The app settings of a shop with the `stripe` method, talking to ``fake``."""
    return {
        "STRIPE_API_KEY": API_KEY,
        "STRIPE_WEBHOOK_SECRET": SECRET,
        "STRIPE_API_BASE": fake.url,
        "STRIPE_TIMEOUT": 2,
        # Race tests send 20 requests at once, outage tests fail calls in a row under a
        # frozen clock: the bound and the breaker are tested with their own values
        # (tests/payments/test_stripe_transport.py).
        "STRIPE_CONCURRENCY": 32,
        "STRIPE_BREAKER_FAILURES": 100,
        **more,
    }
