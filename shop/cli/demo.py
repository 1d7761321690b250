"""``flask demo``: a believable small shop in an empty database, to try the API and console.

Everything is made the way the shop's own callers make it: the administrators through
``shop.auth.users`` (as ``flask users create``), the rest through the JSON API itself,
in-process, signed in as the new owner or as each customer: the same validation, slugs,
stock, order lifecycle, audit log and webhook events as a real day. Rate limits are off for
this process only (four customers register from one "address").

It refuses a database that already has orders (or the demo's accounts) unless ``--force``,
which adds another copy beside them, its e-mails and slugs tagged so nothing collides.
Passwords and the read-only API key are random and printed once.
"""

import io
import secrets

import click
from flask import current_app
from flask.cli import with_appcontext

from shop import db
from shop.auth.users import create_user
from shop.catalogue.slugs import slugify
from shop.http.extensions import limiter
from shop.permissions import ALL_SCOPES
from shop.schema import migrate

DOMAIN = "demo.example"
# Each category's colour, for the products' pictures (drawn here: nothing is downloaded).
COLOURS = {
    "green-tea": ((122, 158, 74), (226, 236, 205)),
    "black-tea": ((122, 62, 38), (240, 222, 200)),
    "herbal": ((196, 142, 36), (250, 238, 204)),
    "teaware": ((58, 74, 96), (214, 222, 232)),
}
CATEGORIES = {
    "green-tea": ("Green tea", "Steamed and pan-fired leaves from Japan and China."),
    "black-tea": ("Black tea", "Fully oxidised teas, from brisk breakfast to malty Assam."),
    "herbal": ("Herbal infusions", "Caffeine-free blends of flowers, roots and leaves."),
    "teaware": ("Teaware", "Pots, cups and strainers."),
}
# name, category, price in cents, stock, sku, active
PRODUCTS = (
    ("Sencha Asahi", "green-tea", 1290, 40, "GT-SEN-100", True),
    ("Gyokuro Okumidori", "green-tea", 2450, 12, "GT-GYO-050", True),
    ("Dragon Well", "green-tea", 1680, 25, "GT-DRW-100", True),
    ("Assam Breakfast", "black-tea", 890, 60, "BT-ASM-250", True),
    ("Darjeeling First Flush", "black-tea", 1950, 3, "BT-DAR-100", True),
    ("Earl Grey Bergamot", "black-tea", 990, 0, "BT-EGB-100", True),
    ("Chamomile Flowers", "herbal", 750, 30, "HB-CHA-050", True),
    ("Peppermint Leaf", "herbal", 690, 45, "HB-PEP-050", True),
    ("Kyusu Teapot 300 ml", "teaware", 3900, 8, "TW-KYU-300", True),
    ("Winter Spice Blend (coming soon)", "herbal", 850, 0, "HB-WIN-100", False),
)
# Products sold in variants: product -> (option, its values, each value's extra cents).
VARIANTS = {
    3: ("Size", ["100 g", "250 g", "1 kg"], [0, 1000, 2900]),
    8: ("Colour", ["Black", "Celadon"], [0, 400]),
}
COLLECTIONS = (
    ("Staff picks", "What we drink at the counter.", (0, 3, 6)),
    ("Japanese greens", "Sencha, gyokuro and the pot to brew them in.", (0, 1, 8)),
)
CONTENT = {
    "home-banner": ("banner", {"title": "Spring teas are in", "link": "/collections/staff-picks"}),
    "about": ("page", {"title": "About us", "body": "A small tea shop since 2019."}),
    "shipping": ("page", {"title": "Shipping", "body": "Free in Germany from 40 EUR."}),
}
CUSTOMERS = (
    ("Casey Jordan", "Berlin", "10115", "DE", "Torstraße 1"),
    ("Mika Tanaka", "Hamburg", "20095", "DE", "Mönckebergstraße 7"),
    ("Noor Haddad", "Vienna", "1010", "AT", "Graben 12"),
    ("Sam Rivera", "Amsterdam", "1012 JS", "NL", "Damrak 70"),
)
# Each order: customer, [(product, quantity)], the statuses it moves through after pending.
ORDERS = (
    (0, [(0, 2), (6, 1)], []),
    (1, [(3, 1)], ["paid"]),
    (2, [(1, 1), (8, 1)], ["paid", "shipped"]),
    (3, [(2, 1)], ["paid", "shipped", "delivered"]),
    (0, [(7, 3)], ["cancelled"]),
    (1, [(4, 1)], ["paid", "refunded"]),
)
READ_SCOPES = [scope for scope in ALL_SCOPES if scope.startswith("read:")]


class _Api:
    """The JSON API, in-process, as one signed-in caller; any refusal stops the demo."""

    def __init__(self):
        self.client = current_app.test_client()

    def __call__(self, method: str, path: str, body=None, expect: int = 200, form=None) -> dict:
        sent = {"data": form} if form is not None else {"json": body}
        response = self.client.open(path, method=method, base_url="https://localhost", **sent)
        if response.status_code != expect:
            message = (response.get_json(silent=True) or {}).get("message", response.status)
            raise click.ClickException(f"{method} {path}: {response.status_code} {message}")
        return response.get_json(silent=True) or {}


def _picture(name: str, category: str) -> bytes:
    """A 600 px square PNG: a tin in the category's colour with the product's initials."""
    from PIL import Image, ImageDraw

    ink, paper = COLOURS[category]
    image = Image.new("RGB", (600, 600), paper)
    draw = ImageDraw.Draw(image)
    draw.rounded_rectangle((170, 120, 430, 520), radius=36, fill=ink)
    draw.ellipse((230, 220, 370, 360), fill=paper)
    initials = "".join(word[0] for word in name.split()[:2]).upper()
    draw.text((300, 290), initials, fill=ink, anchor="mm", font_size=64)
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def _variants(owner: _Api, product_id: str, sku: str, price: int, stock: int, variants) -> str:
    """Every combination of the product's option, priced by its value; answer the id of the
    second (what the demo's orders buy)."""
    option, values, extra = variants
    owner("POST", f"/products/{product_id}/variants/generate", {"stock": stock})
    listed = owner("GET", f"/products/{product_id}/variants")["items"]
    for variant in listed:
        cents = price + extra[values.index(variant["options"][option])]
        number = values.index(variant["options"][option]) + 1
        body = {"price_cents": cents, "stock": stock, "sku": f"{sku}-{number}"}
        owner("PATCH", f"/products/{product_id}/variants/{variant['id']}", body)
    return sorted(listed, key=lambda v: values.index(v["options"][option]))[1]["id"]


def has_orders() -> int:
    """How many orders the database holds."""
    return db.value("SELECT COUNT(*) FROM orders")


def fill(tag: str = "") -> dict:
    """Make the demo shop; answer the credentials to print (each shown once)."""
    suffix = f"-{tag}" if tag else ""
    email = {role: f"{role}{'+' + tag if tag else ''}@{DOMAIN}" for role in ("owner", "editor")}
    passwords = {role: secrets.token_urlsafe(12) for role in email}
    create_user(email["owner"], "Olive Owner", passwords["owner"], "owner")
    create_user(email["editor"], "Eddie Editor", passwords["editor"], "editor")
    owner = _Api()
    owner("POST", "/auth/login", {"email": email["owner"], "password": passwords["owner"]})
    owner("PATCH", "/settings", {"shop_name": "Leaf & Kettle (demo)"})

    categories = {
        key: owner(
            "POST", "/categories", {"name": name, "description": text, "slug": key + suffix}, 201
        )["id"]
        for key, (name, text) in CATEGORIES.items()
    }
    products, sold = [], {}  # sold: product index -> a variant id to order
    for number, (name, category, price, stock, sku, active) in enumerate(PRODUCTS):
        body = {
            "name": name,
            "slug": slugify(name, "product") + suffix,
            "description": f"{name}: one of our {CATEGORIES[category][0].lower()}.",
            "sku": sku + suffix.upper(),
            "price_cents": price,
            "stock": stock,
            "active": active,
            "category_id": categories[category],
        }
        if number in VARIANTS:
            option, values, _extra = VARIANTS[number]
            body["options"] = [{"name": option, "values": values}]
        products.append(owner("POST", "/products", body, 201)["id"])
        picture = {"file": (io.BytesIO(_picture(name, category)), "tin.png"), "alt": name}
        owner("POST", f"/products/{products[-1]}/images", expect=201, form=picture)
        if number in VARIANTS:
            sold[number] = _variants(
                owner, products[-1], body["sku"], price, stock, VARIANTS[number]
            )
    for title, text, picks in COLLECTIONS:
        body = {
            "title": title,
            "slug": slugify(title, "collection") + suffix,
            "description": text,
            "product_ids": [products[i] for i in picks],
        }
        owner("POST", "/collections", body, 201)
    for key, (kind, data) in CONTENT.items():
        body = {"type": kind, "data": data, "published": True}
        owner("PUT", f"/content/{key}{suffix}", body, 201)

    customers = []
    for name, city, postal_code, country, line1 in CUSTOMERS:
        customer = _Api()
        first = name.split()[0].lower()
        body = {
            "email": f"{first}{'+' + tag if tag else ''}@{DOMAIN}",
            "password": secrets.token_urlsafe(12),
            "name": name,
        }
        customer("POST", "/auth/register", body, 201)
        address = {
            "name": name,
            "line1": line1,
            "city": city,
            "postal_code": postal_code,
            "country": country,
        }
        customers.append((customer, address))
    for who, items, statuses in ORDERS:
        customer, address = customers[who]
        body = {
            "items": [
                {"variant_id": sold[p], "quantity": q}
                if p in sold
                else {"product_id": products[p], "quantity": q}
                for p, q in items
            ],
            "shipping_address": address,
            "payment_method": "manual",
        }
        order = customer("POST", "/payments/checkout", body, 201)
        for status in statuses:
            owner("PATCH", f"/orders/{order['id']}/status", {"status": status})

    key = owner(
        "POST", "/api-keys", {"label": f"demo read-only{suffix}", "scopes": READ_SCOPES}, 201
    )
    return {"email": email, "passwords": passwords, "key": key["secret"]}


@click.command("demo")
@with_appcontext
@click.option("--force", is_flag=True, help="Add the demo beside existing orders (tagged).")
@click.option(
    "--skip-if-used",
    is_flag=True,
    help="Exit 0, saying so, instead of refusing a used database (./dev serve --demo).",
)
def demo_command(force: bool, skip_if_used: bool):
    """Fill an empty database with a small demo shop; print its sign-ins and a read-only key."""
    if not migrate.schema_ready(current_app):
        raise click.ClickException(
            "The database is not at this release's schema: run `flask --app app db upgrade`."
        )
    used = has_orders()
    taken = db.value("SELECT COUNT(*) FROM users WHERE email = :e", {"e": f"owner@{DOMAIN}"})
    if (used or taken) and not force:
        what = f"{used} orders" if used else f"the demo's accounts (owner@{DOMAIN})"
        message = (
            f"This database already has {what}: flask demo fills an empty one."
            " Use another DATABASE_URL, or --force to add a tagged copy beside them."
        )
        if skip_if_used:
            click.echo(f"Demo skipped. {message}")
            return
        raise click.ClickException(message)
    tag = secrets.token_hex(2) if (used or taken) else ""
    was_enabled = limiter.enabled
    limiter.enabled = False  # this process only: one address registers every customer
    try:
        made = fill(tag)
    finally:
        limiter.enabled = was_enabled
    counts = (
        f"{len(CATEGORIES)} categories, {len(PRODUCTS)} products with pictures"
        f" ({len(VARIANTS)} in variants),"
        f" {len(COLLECTIONS)} collections,"
        f" {len(CONTENT)} content entries, {len(CUSTOMERS)} customers, {len(ORDERS)} orders"
    )
    click.echo(f"Demo shop made{' (tag ' + tag + ')' if tag else ''}: {counts}.")
    click.echo("Sign in at /admin (shown once; change them if this database is reachable):")
    for role in ("owner", "editor"):
        click.echo(f"  {role:<6}  {made['email'][role]}  {made['passwords'][role]}")
    click.echo("A read-only API key (every read: scope), shown once:")
    click.echo(f"  {made['key']}")
