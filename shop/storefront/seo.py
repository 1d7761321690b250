"""What search engines read: ``/robots.txt``, ``/sitemap.xml`` and a product's schema.org
data (``Product`` with its ``offers``, ``BreadcrumbList``) as JSON-LD."""

from flask import Response, current_app, render_template, request, url_for

from shop import money
from shop.catalogue import browse
from shop.site import pages
from shop.storefront.frame import root

# A sitemap file holds at most 50,000 addresses (sitemaps.org); the newest products first.
SITEMAP_PRODUCTS = 45_000
# Crawlers stay out of these: the back office, the visitor's cart and checkout, the API.
_PRIVATE = ("/admin", "{store}/cart", "{store}/checkout", "{store}/account", "{store}/orders")


@root.get("/robots.txt")
def robots():
    """Where crawlers may go, and where the sitemap is."""
    store = current_app.config["STOREFRONT_PREFIX"]
    lines = ["User-agent: *", *(f"Disallow: {path.format(store=store)}" for path in _PRIVATE)]
    lines.append(f"Sitemap: {url_for('store_root.sitemap', _external=True)}")
    response = Response("\n".join(lines) + "\n", mimetype="text/plain")
    response.headers["Cache-Control"] = "public, max-age=3600"
    return response


@root.get("/sitemap.xml")
def sitemap():
    """Every public address: the storefront's pages, active products, categories,
    collections and the shop's own pages, with their last change."""
    found = browse.public_addresses(SITEMAP_PRODUCTS)
    entries = [(url_for("store.home", _external=True), None)]
    entries += [
        (url_for("store.product", slug=row["slug"], _external=True), row["updated_at"])
        for row in found["products"]
    ]
    entries += [
        (url_for("store.category", slug=row["slug"], _external=True), row["updated_at"])
        for row in found["categories"]
    ]
    entries += [
        (url_for("store.collection", slug=row["slug"], _external=True), row["updated_at"])
        for row in found["collections"]
    ]
    entries += [
        (url_for("store.page", key=page["key"], _external=True), page["updated_at"])
        for page in pages.published()
    ]
    body = render_template("store/sitemap.xml", entries=entries)
    response = Response(body, mimetype="application/xml")
    response.headers["Cache-Control"] = "public, max-age=3600"
    return response


def product_data(product: dict, shop: dict, trail: list[dict]) -> list[dict]:
    """The product page's JSON-LD: the ``Product`` (an ``Offer`` per variant) and its
    ``BreadcrumbList`` (the template writes it with ``tojson``, which escapes ``<``, ``>``
    and ``&`` so no text can end its ``<script>`` element early)."""
    address = url_for("store.product", slug=product["slug"], _external=True)
    currency = product["currency"]
    offers = [
        {
            "@type": "Offer",
            "sku": variant.get("sku") or variant["id"],
            "price": money.to_text(variant["price_cents"], currency),
            "priceCurrency": currency,
            "availability": "https://schema.org/"
            + ("InStock" if variant["stock"] > 0 else "OutOfStock"),
            "url": f"{address}?variant={variant['id']}",
        }
        for variant in product["variants"]
    ]
    item = {
        "@context": "https://schema.org",
        "@type": "Product",
        "name": product["name"],
        "description": product["description"],
        "url": address,
        "offers": offers,
    }
    if product.get("sku"):
        item["sku"] = product["sku"]
    if product["images"]:
        item["image"] = [request.url_root.rstrip("/") + i["url"] for i in product["images"]]
    steps = [(shop["shop_name"], url_for("store.home", _external=True))]
    steps += [(c["name"], url_for("store.category", slug=c["slug"], _external=True)) for c in trail]
    steps.append((product["name"], address))
    crumbs = {
        "@context": "https://schema.org",
        "@type": "BreadcrumbList",
        "itemListElement": [
            {"@type": "ListItem", "position": n, "name": name, "item": url}
            for n, (name, url) in enumerate(steps, start=1)
        ],
    }
    return [item, crumbs]
