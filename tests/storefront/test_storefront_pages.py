"""The storefront's browsing pages through HTTP: what a visitor and a search engine read."""

import json
import re
import xml.etree.ElementTree as ET

import pytest

from tests.catalogue_helpers import Catalogue, upload


@pytest.fixture
def shop(owner_client):
    """A small catalogue: a category with a sub-category, a sized tea with a picture, a
    sold-out mug, an inactive product, a featured collection and two published pages."""
    made = Catalogue(owner_client)
    teas = made.category(name="Teas", slug="teas")
    green = made.category(name="Green teas", slug="green-teas", parent_id=teas["id"])
    sencha = made.product(
        name="Sencha <Premium>",
        slug="sencha",
        description="A green tea.\n\nFrom Shizuoka.",
        category_id=green["id"],
        options=[{"name": "Size", "values": ["100 g", "250 g"]}],
        generate=True,
    )
    variants = owner_client.get(f"/products/{sencha['id']}").json["variants"]
    large = next(v for v in variants if v["options"] == {"Size": "250 g"})
    changed = owner_client.patch(
        f"/products/{sencha['id']}/variants/{large['id']}",
        json={"price_cents": 1890, "stock": 4, "sku": "SEN-250"},
    )
    assert changed.status_code == 200, changed.json
    assert upload(owner_client, sencha["id"], alt="A cup of sencha").status_code == 201
    mug = made.product(name="Mug", slug="mug", price_cents=900, stock=0)
    hidden = made.product(name="Secret", slug="secret", active=False)
    featured = made.collection(title="Featured", slug="featured")
    added = owner_client.put(f"/collections/{featured['id']}", json={"product_ids": [sencha["id"]]})
    assert added.status_code == 200, added.json
    made.entry("about", data={"title": "About us", "body": "A small tea shop."})
    made.entry("terms", data={"title": "Terms", "body": "Be kind."})
    made.entry("draft", data={"title": "Draft", "body": "Not yet."}, published=False)
    return {"sencha": sencha, "mug": mug, "hidden": hidden, "teas": teas, "green": green}


def test_home_shows_the_featured_collection_the_categories_and_the_footer_pages(client, shop):
    page = client.get("/store/")
    assert page.status_code == 200
    html = page.text
    assert "Featured" in html and "Sencha &lt;Premium&gt;" in html
    assert 'href="/store/categories/teas"' in html
    assert 'href="/store/pages/about"' in html and 'href="/store/pages/terms"' in html
    assert "/store/pages/draft" not in html
    assert "Secret" not in html


def test_a_product_page_has_its_variants_price_pictures_and_structured_data(client, shop):
    page = client.get("/store/products/sencha")
    assert page.status_code == 200
    html = page.text
    assert "<title>Sencha &lt;Premium&gt; · My Shop</title>" in html
    assert '<link rel="canonical" href="http://localhost/store/products/sencha">' in html
    assert 'property="og:type" content="product"' in html
    assert re.search(r'srcset="/images/\w+\?w=\d+ \d+w', html) or 'srcset="/images/' in html
    assert 'alt="A cup of sencha"' in html
    data = json.loads(
        re.search(r'<script type="application/ld\+json">(.*?)</script>', html, re.S).group(1)
    )
    product, crumbs = data
    assert product["@type"] == "Product" and product["name"] == "Sencha <Premium>"
    offers = {offer["sku"]: offer for offer in product["offers"]}
    assert offers["SEN-250"]["price"] == "18.90"
    assert offers["SEN-250"]["priceCurrency"] == "EUR"
    assert offers["SEN-250"]["availability"] == "https://schema.org/InStock"
    assert [step["name"] for step in crumbs["itemListElement"]] == [
        "My Shop",
        "Teas",
        "Green teas",
        "Sencha <Premium>",
    ]
    assert "<Premium>" not in html  # the JSON-LD escapes what could end its script element


def test_the_variant_picker_is_a_plain_form(client, shop):
    variants = client.get(f"/products/{shop['sencha']['id']}").json["variants"]
    chosen = next(v for v in variants if v["sku"] == "SEN-250")
    page = client.get(f"/store/products/sencha?variant={chosen['id']}")
    assert f'value="{chosen["id"]}" checked' in page.text
    assert "€18.90" in page.text


def test_inactive_and_unknown_products_are_404_pages_never_listed(client, shop):
    for path in ("/store/products/secret", "/store/products/nothing-here", "/store/nowhere"):
        page = client.get(path)
        assert page.status_code == 404, path
        assert page.mimetype == "text/html"
        assert "Not found" in page.text
    assert "Secret" not in client.get("/store/products").text
    assert "/store/products/secret" not in client.get("/sitemap.xml").text


def test_a_category_page_lists_its_tree_and_filters_by_plain_form(client, shop):
    page = client.get("/store/categories/teas")
    assert page.status_code == 200
    assert "Sencha &lt;Premium&gt;" in page.text and "Mug" not in page.text
    assert 'name="option.Size" value="250 g"' in page.text
    chosen = client.get("/store/categories/teas", query_string={"option.Size": "250 g"})
    assert "Sencha &lt;Premium&gt;" in chosen.text
    none = client.get("/store/categories/teas", query_string={"option.Size": "1 kg"})
    assert "0 products" in none.text
    in_stock = client.get("/store/products", query_string={"in_stock": "1"})
    assert "Sencha" in in_stock.text and ">Mug<" not in in_stock.text
    cheap = client.get("/store/products", query_string={"price": "0-999"})
    assert "Mug" in cheap.text and "Sencha" not in cheap.text


def test_a_category_page_reads_its_trail_tree_settings_and_footer_once(client, shop, sql_count):
    """A sub-category's page: its breadcrumb, its products and the footer's pages, in six
    statements: the category with its trail and tree, the count and the page, the kept
    facets (bands and option values), the settings with the pages, the pictures
    (docs/performance.md, "The category page's statements")."""
    client.get("/store/categories/green-teas")  # compiled statements, caches
    with sql_count() as counted:
        page = client.get("/store/categories/green-teas")
    assert page.status_code == 200
    html = page.text
    trail = html.split('class="trail">', 1)[1].split("</nav>", 1)[0]
    assert re.findall(r'href="([^"]+)"', trail) == [
        "/store/",
        "/store/categories/teas",
        "/store/categories/green-teas",
    ]
    assert "Sencha &lt;Premium&gt;" in html and ">Mug<" not in html
    assert 'href="/store/pages/about"' in html and "/store/pages/draft" not in html
    assert counted["statements"] == 6
    assert client.get("/store/categories/no-such-category").status_code == 404


def test_list_pages_page_by_cursor(client, owner_client):
    made = Catalogue(owner_client)
    for n in range(30):
        made.product(name=f"Tea {n:02}", slug=f"tea-{n:02}")
    first = client.get("/store/products", query_string={"sort": "name"})
    assert "Tea 00" in first.text and "Tea 29" not in first.text
    more = re.search(r'<a rel="next" href="\?([^"]+)"', first.text).group(1)
    second = client.get("/store/products?" + more.replace("&amp;", "&"))
    assert "Tea 29" in second.text and "Tea 00" not in second.text
    assert client.get("/store/products?sort=sideways").status_code == 400


def test_search_finds_with_the_shops_full_text_search(client, shop):
    page = client.get("/store/search", query_string={"q": "sencha"})
    assert page.status_code == 200 and "Sencha &lt;Premium&gt;" in page.text
    assert 'name="robots" content="noindex"' in page.text
    assert "0 products" in client.get("/store/search", query_string={"q": "zebra"}).text


def test_filters_past_the_facet_cap_show_no_counts(app, owner_client, client, shop):
    """Past ``SHOP_FACET_COUNT_CAP`` a counted group's numbers are a sample's
    (``counts_are_exact`` false): the filters stay, their numbers go, every band is offered."""
    Catalogue(owner_client).product(
        name="Bancha", slug="bancha", options=[{"name": "Size", "values": ["100 g"]}], generate=True
    )
    priced = {"price": "0-"}  # a price range: counted from the matching products
    assert re.search(
        r">100 g \(2\)</label>", client.get("/store/products", query_string=priced).text
    )
    app.config["FACET_COUNT_CAP"] = 1
    kept = client.get("/store/products").text  # the catalogue's counts are kept: exact
    assert re.search(r">100 g \(2\)</label>", kept)
    capped = client.get("/store/products", query_string=priced).text
    assert not re.search(r"\(\d+\)</label>", capped)  # no count on any filter
    assert capped.count('name="price"') == 7  # "any price" and the six bands


def test_content_pages_show_only_published_pages(client, shop):
    page = client.get("/store/pages/about")
    assert page.status_code == 200 and "A small tea shop." in page.text
    assert client.get("/store/pages/draft").status_code == 404


def test_robots_keeps_crawlers_out_of_private_pages_and_names_the_sitemap(client):
    robots = client.get("/robots.txt")
    assert robots.status_code == 200 and robots.mimetype == "text/plain"
    lines = robots.text.splitlines()
    for path in ("/admin", "/store/cart", "/store/checkout", "/store/account"):
        assert f"Disallow: {path}" in lines
    assert "Sitemap: http://localhost/sitemap.xml" in lines


def test_the_sitemap_lists_every_public_address(client, shop):
    sitemap = client.get("/sitemap.xml")
    assert sitemap.mimetype == "application/xml"
    spaces = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    tree = ET.fromstring(sitemap.data)  # noqa: S314 - our own response
    found = {loc.text for loc in tree.findall("s:url/s:loc", spaces)}
    assert {
        "http://localhost/store/",
        "http://localhost/store/products/sencha",
        "http://localhost/store/products/mug",
        "http://localhost/store/categories/teas",
        "http://localhost/store/categories/green-teas",
        "http://localhost/store/collections/featured",
        "http://localhost/store/pages/about",
        "http://localhost/store/pages/terms",
    } <= found
    assert not any("secret" in loc or "draft" in loc for loc in found)


def test_anonymous_pages_are_cacheable_with_an_etag_and_personal_ones_are_not(client, shop):
    page = client.get("/store/products/sencha")
    assert page.headers["Cache-Control"] == "public, max-age=60"
    assert "Cookie" in page.headers["Vary"]
    etag = page.headers["ETag"]
    again = client.get("/store/products/sencha", headers={"If-None-Match": etag})
    assert again.status_code == 304
    client.set_cookie("shop_cart", "anything")
    personal = client.get("/store/products/sencha")
    assert personal.headers["Cache-Control"] == "private, no-cache"


def test_pages_carry_a_csp_without_inline_script(client, shop):
    for path in ("/store/", "/store/products/sencha", "/store/products", "/store/nowhere"):
        policy = client.get(path).headers["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy, path
        assert "frame-ancestors 'none'" in policy
    html = client.get("/store/products/sencha").text
    scripts = re.findall(r"<script([^>]*)>", html)
    assert scripts == [' type="application/ld+json"']  # data, never run


def test_the_storefront_can_be_switched_off_or_moved(make_app, shop):
    off = make_app(prepare=False, STOREFRONT=False).test_client()
    assert off.get("/store/").status_code == 404
    assert off.get("/robots.txt").status_code == 404
    moved = make_app(prepare=False, STOREFRONT_PREFIX="/shop").test_client()
    assert moved.get("/shop/products/sencha").status_code == 200
    assert moved.get("/store/products/sencha").status_code == 404


def test_the_frames_links_follow_the_prefix_and_the_mount_point(make_app, client, shop):
    # The frame's addresses are built once per app and mount point, then kept.
    assert 'href="/store/cart"' in client.get("/store/").text
    mounted = client.get("/store/", base_url="http://localhost/eu").text
    assert 'href="/eu/store/cart"' in mounted and 'action="/eu/store/search"' in mounted
    assert 'href="/store/cart"' in client.get("/store/products").text
    moved = make_app(prepare=False, STOREFRONT_PREFIX="/shop").test_client()
    page = moved.get("/shop/products").text
    assert 'href="/shop/cart"' in page and 'href="/shop/theme.css"' in page


def test_a_theme_folder_replaces_a_template_by_name(make_app, shop, tmp_path):
    (tmp_path / "page.html").write_text(
        '{% extends "store/base.html" %}{% block main %}<p>Themed: {{ page.title }}</p>'
        "{% endblock %}"
    )
    themed = make_app(prepare=False, THEME_DIR=str(tmp_path)).test_client()
    assert "Themed: About us" in themed.get("/store/pages/about").text
    assert "Sencha" in themed.get("/store/products/sencha").text  # the rest is built in


def test_a_theme_card_is_each_card_of_a_list(make_app, shop, tmp_path):
    """A theme's own ``_card.html`` (the extension point of earlier releases) is included once
    per product, with the card's index; without one the built-in cards are drawn inline."""
    (tmp_path / "_card.html").write_text(
        '<li class="themed">{{ loop_index }}: {{ product["name"] }}</li>'
    )
    themed = make_app(prepare=False, THEME_DIR=str(tmp_path)).test_client()
    page = themed.get("/store/products").text
    assert '<li class="themed">0: ' in page and "Sencha &lt;Premium&gt;</li>" in page
    assert '<li class="card">' not in page
    plain = make_app(prepare=False).test_client().get("/store/products").text
    assert '<li class="card">' in plain and "themed" not in plain


def test_the_shops_colours_and_logo_come_from_settings(client, owner_client):
    assert "--brand: #1f5f4a" in client.get("/store/theme.css").text
    light = owner_client.patch("/settings", json={"brand_color": "#ffd700", "logo_url": None})
    assert light.status_code == 200, light.json
    css = client.get("/store/theme.css")
    assert css.mimetype == "text/css"
    # A light brand colour gets dark text on it, and links keep a colour that reads on white.
    assert "--brand: #ffd700; --brand-text: #1c1c1c; --link: #1f5f4a;" in css.text
    dark = owner_client.patch("/settings", json={"brand_color": "#202060"})
    assert "--brand-text: #ffffff; --link: #202060;" in client.get("/store/theme.css").text
    assert dark.status_code == 200
    for bad in ("red", "#12345", "#1234567"):
        refused = owner_client.patch("/settings", json={"brand_color": bad})
        assert refused.status_code == 400 and "brand_color" in refused.json["message"]
    logo = owner_client.patch("/settings", json={"logo_url": "https://cdn.example/logo.png"})
    assert logo.status_code == 200
    assert '<img src="https://cdn.example/logo.png" alt="My Shop"' in client.get("/store/").text
    script = owner_client.patch("/settings", json={"logo_url": "javascript:alert(1)"})
    assert script.status_code == 400
