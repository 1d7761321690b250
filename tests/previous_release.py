"""Drive the previous release's code (a checkout of it, given as the first argument) through
its own HTTP API and CLI, in a process of its own: ``seed`` fills a new database as that
release would, ``use`` does the common reads and writes on an upgraded one. Prints JSON.

Run by tests/ops/test_upgrade.py as ``python tests/previous_release.py CHECKOUT seed|use``
with ``DATABASE_URL`` set; never imports the current code.
"""

import json
import os
import sys

CHECKOUT, ACTION = sys.argv[1], sys.argv[2]
sys.path.insert(0, CHECKOUT)
os.chdir(CHECKOUT)

from shop import create_app, db  # noqa: E402 - the previous release's, from CHECKOUT

PASSWORD = "correct horse battery"
AGENT = "upgrade-test/1.0"
ADDRESS = {
    "name": "Casey Customer",
    "line1": "1 Market Street",
    "city": "Lyon",
    "postal_code": "69001",
    "country": "FR",
}
TABLES = [
    "roles",
    "role_permissions",
    "users",
    "user_permissions",
    "customers",
    "user_session",
    "customer_session",
    "api_keys",
    "audit_log",
    "categories",
    "products",
    "collections",
    "collection_products",
    "content_entries",
    "settings",
    "counters",
    "orders",
    "order_items",
    "order_status_history",
    "payments",
    "idempotency_keys",
]

# What the upgrade test asks again of the new release, expecting the same answers.
SNAPSHOT = {
    "public": ["/products", "/categories", "/collections", "/settings/public"],
    "owner": ["/auth/me", "/orders", "/orders/{order}", "/customers", "/products/{product}"],
    "customer": ["/auth/me", "/orders", "/orders/{order}"],
    "key": ["/products?active=false", "/orders/{order}"],
}

app = create_app(
    {
        "DATABASE_URL": os.environ["DATABASE_URL"],
        "REDIS_URL": None,
        "RATELIMIT_ENABLED": False,
        "PASSWORD_HASH_METHOD": "scrypt:1024:8:1",
        "TESTING": True,
    }
)


def client(cookie=None, key=None):
    """A test client with our User-Agent and, optionally, a session cookie or a key."""
    c = app.test_client()
    c.environ_base["HTTP_USER_AGENT"] = AGENT
    if cookie:
        name, _, value = cookie.partition("=")
        c.set_cookie(name, value)
    if key:
        c.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {key}"
    return c


def call(c, method, path, status, **kwargs):
    """One request that must answer ``status``; its JSON."""
    response = c.open(path, method=method, **kwargs)
    assert response.status_code == status, (method, path, response.status_code, response.data)
    return response.json if response.data else None


def sign_in(email, kind):
    """A signed-in client and its cookie header."""
    c = client()
    response = c.post("/auth/login", json={"email": email, "password": PASSWORD, "kind": kind})
    assert response.status_code == 200, response.json
    name = f"shop_{kind}_session"
    value = next(
        h.split(";")[0] for h in response.headers.getlist("Set-Cookie") if h.startswith(name)
    )
    return client(cookie=value), value


def counts():
    with app.app_context():
        return {t: db.value(f"SELECT COUNT(*) FROM {t}") for t in TABLES}


def seed():
    runner = app.test_cli_runner()
    created = runner.invoke(
        args=["users", "create", "--email", "owner@example.com", "--password", PASSWORD]
    )
    assert created.exit_code == 0, created.output
    owner, owner_cookie = sign_in("owner@example.com", "admin")
    client().post("/auth/login", json={"email": "owner@example.com", "password": "wrong pass"})
    category = call(owner, "POST", "/categories", 201, json={"name": "Tea"})
    products = [
        call(
            owner,
            "POST",
            "/products",
            201,
            json={
                "name": name,
                "price_cents": price,
                "stock": 20,
                "active": active,
                "sku": f"SKU-{i}",
                "category_id": category["id"],
            },
        )
        for i, (name, price, active) in enumerate(
            [("Green tea", 450, True), ("Teapot", 2500, True), ("Old cup", 300, False)]
        )
    ]
    collection = call(owner, "POST", "/collections", 201, json={"title": "Gifts"})
    call(
        owner,
        "PUT",
        f"/collections/{collection['id']}",
        200,
        json={"product_ids": [products[1]["id"], products[0]["id"]]},
    )
    call(owner, "PATCH", "/settings", 200, json={"shop_name": "Upgrade Tea"})
    key = call(
        owner,
        "POST",
        "/api-keys",
        201,
        json={"label": "ci", "scopes": ["read:product", "read:order"]},
    )
    shopper = client()
    call(
        shopper,
        "POST",
        "/auth/register",
        201,
        json={"email": "casey@example.com", "password": PASSWORD, "name": "Casey"},
    )
    customer, customer_cookie = sign_in("casey@example.com", "customer")
    body = {
        "items": [{"product_id": products[0]["id"], "quantity": 2}],
        "shipping_address": ADDRESS,
        "payment_method": "manual",
    }
    first = call(customer, "POST", "/payments/checkout", 201, json=body)
    call(owner, "PATCH", f"/orders/{first['id']}/status", 200, json={"status": "paid"})
    second = call(customer, "POST", "/payments/checkout", 201, json=body)
    call(customer, "POST", f"/orders/{second['id']}/cancel", 200)
    answers = {
        f"{who} {path}": call(c, "GET", path, 200)
        for who, c, paths in (
            ("public", client(), SNAPSHOT["public"]),
            ("owner", owner, SNAPSHOT["owner"]),
            ("customer", customer, SNAPSHOT["customer"]),
            ("key", client(key=key["secret"]), SNAPSHOT["key"]),
        )
        for path in (p.format(order=first["id"], product=products[2]["id"]) for p in paths)
    }
    return {
        "answers": answers,
        "owner_cookie": owner_cookie,
        "customer_cookie": customer_cookie,
        "key": key["secret"],
        "order_id": first["id"],
        "product_ids": [p["id"] for p in products],
        "counts": counts(),
    }


def use():
    """What a node of the previous release does during a rolling upgrade."""
    owner, _ = sign_in("owner@example.com", "admin")
    customer, _ = sign_in("casey@example.com", "customer")
    call(client(), "GET", "/products", 200)
    product = call(
        owner,
        "POST",
        "/products",
        201,
        json={"name": "Rolling tea", "price_cents": 600, "stock": 5},
    )
    call(owner, "PUT", f"/products/{product['id']}", 200, json={"stock": 4})
    order = call(
        customer,
        "POST",
        "/payments/checkout",
        201,
        json={
            "items": [{"product_id": product["id"], "quantity": 1}],
            "shipping_address": ADDRESS,
            "payment_method": "manual",
        },
    )
    call(owner, "PATCH", f"/orders/{order['id']}/status", 200, json={"status": "paid"})
    orders = call(owner, "GET", "/orders", 200)
    key = call(owner, "POST", "/api-keys", 201, json={"label": "rolling", "scopes": ["read:order"]})
    call(client(key=key["secret"]), "GET", f"/orders/{order['id']}", 200)
    call(owner, "DELETE", f"/api-keys/{key['id']}", 204)
    call(owner, "GET", "/audit-log", 200)
    call(customer, "GET", "/orders", 200)
    return {"product_id": product["id"], "order_id": order["id"], "orders": orders["total"]}


print(json.dumps(seed() if ACTION == "seed" else use()))
