"""The console's catalogue and content pages (issue 37) through the test client: the product
list's search, filters, cursor pages and bulk changes; creating and editing a product, its
variants and images; the CSV import's preview and confirm; categories, collections and
content entries. Each refusal is the API's message on the form, with nothing written; every
form needs this console's CSRF token; each page needs the API's permission."""

import io
import re

import pytest
from admin_helpers import console_client, hidden_fields

from tests.catalogue_helpers import Catalogue, image_bytes


@pytest.fixture
def owner(app, owner_client):
    """The owner, signed in to the console."""
    return console_client(app, owner_client.email)


@pytest.fixture
def shop(owner_client):
    """Records made through the JSON API as the owner."""
    return Catalogue(owner_client)


def post(client, page, target, **fields):
    """GET ``page``, then POST to ``target`` with the page's hidden fields and ``fields``."""
    shown = client.get(page)
    assert shown.status_code == 200, shown.text
    return client.post(target, data={**hidden_fields(shown.text), **fields})


def new_product(client, **fields):
    form = {"name": "Linen shirt", "price": "39.00", "stock": "5", "active": "1", **fields}
    return post(client, "/admin/products/new", "/admin/products/new", **form)


def product_id_of(response) -> str:
    assert response.status_code == 303, response.text
    return re.search(r"/admin/products/([0-9a-f]+)", response.headers["Location"]).group(1)


def test_the_list_searches_filters_and_pages_with_the_apis_rules(owner, owner_client, shop):
    tea = shop.category(name="Tea")
    for n in range(26):  # one more than a page
        shop.product(name=f"Mug {n:02}", price_cents=500 + n)
    teapot = shop.product(name="Cast iron teapot", category_id=tea["id"], stock=0)
    shop.product(name="Hidden kettle", active=False)
    first = owner.get("/admin/products")
    assert first.status_code == 200
    assert first.text.count('<tr id="product-') == 25
    next_link = re.search(r'href="([^"]+)" rel="next"', first.text).group(1).replace("&amp;", "&")
    second = owner.get(next_link)
    assert second.text.count('<tr id="product-') == 3  # 28 products by name
    assert "Mug 24" in second.text or "Mug 25" in second.text
    # The API's full-text search: a prefix of a word finds it.
    found = owner.get("/admin/products?q=teap").text
    assert f"product-{teapot['id']}" in found and found.count('<tr id="product-') == 1
    assert owner.get(f"/admin/products?category={tea['id']}").text.count('<tr id="product-') == 1
    inactive = owner.get("/admin/products?active=0").text
    assert "Hidden kettle" in inactive and inactive.count('<tr id="product-') == 1
    low = owner.get("/admin/products?low_stock=1").text
    assert f"product-{teapot['id']}" in low and low.count('<tr id="product-') == 1
    # A cursor from another list is refused with the API's words, not a 500.
    cursor = next_link.split("cursor=")[1]
    refused = owner.get(f"/admin/products?q=mug&cursor={cursor}")
    assert refused.status_code == 400 and "another list, sort or filters" in refused.text


def test_bulk_deactivate_and_activate_in_one_post(owner, owner_client, shop):
    a, b, c = (shop.product(name=name) for name in ("Alpha", "Beta", "Gamma"))
    done = post(
        owner,
        "/admin/products",
        "/admin/products/bulk",
        ids=[a["id"], b["id"]],
        action="deactivate",
    )
    assert done.status_code == 303
    assert "done=deactivated" in done.headers["Location"]
    states = {p["name"]: p["active"] for p in owner_client.get("/products").json["items"]}
    assert states == {"Alpha": False, "Beta": False, "Gamma": True}
    assert owner_client.get(f"/products/{a['id']}").json["active"] is False
    post(owner, "/admin/products", "/admin/products/bulk", ids=[a["id"]], action="activate")
    assert owner_client.get(f"/products/{a['id']}").json["active"] is True
    none = post(owner, "/admin/products", "/admin/products/bulk", action="activate")
    assert none.status_code == 400 and "Tick at least one product" in none.text
    assert owner_client.get(f"/products/{c['id']}").json["active"] is True


def test_every_form_needs_this_consoles_token_and_nothing_is_written_without(
    app, owner, owner_client, shop
):
    product = shop.product(name="Teapot")
    forged = {"name": "Forged", "price": "1.00"}
    for path, form in (
        ("/admin/products/new", forged),
        (f"/admin/products/{product['id']}", {"name": "Forged"}),
        ("/admin/products/bulk", {"ids": product["id"], "action": "deactivate"}),
        (f"/admin/products/{product['id']}/variants", {}),
        (f"/admin/products/{product['id']}/delete", {"confirm": "1"}),
        ("/admin/categories", {"name": "Forged"}),
        ("/admin/collections", {"title": "Forged"}),
        ("/admin/content", {"key": "forged", "type": "page", "data": "{}"}),
    ):
        for token in ({}, {"csrf_token": "0" * 64}):
            response = owner.post(path, data={**form, **token})
            assert response.status_code == 403, path
            assert "did not come from this console" in response.text
    stored = owner_client.get(f"/products/{product['id']}").json
    assert stored["name"] == "Teapot" and stored["active"] is True
    assert owner_client.get("/products").json["total"] == 1
    assert owner_client.get("/categories").json["total"] == 0
    assert owner_client.get("/collections").json["total"] == 0
    assert owner_client.get("/content/registry").json["total"] == 0


def test_a_refused_product_form_shows_the_apis_message_keeps_the_input_and_writes_nothing(
    owner, owner_client, shop
):
    missing = new_product(owner, name="", description="Soft and light")
    assert missing.status_code == 400
    assert "Name: length must be between 1 and 200." in missing.text
    assert "Soft and light" in missing.text  # the input is kept
    bad_price = new_product(owner, price="12,50")
    assert (
        bad_price.status_code == 400 and "Price: &#39;12,50&#39; is not a decimal" in bad_price.text
    )
    shop.product(name="Taken", slug="taken")
    taken = new_product(owner, slug="taken")
    assert taken.status_code == 409 and "slug" in taken.text.lower()
    bad_option = new_product(owner, **{"option-1-name": "Size", "option-1-values": "S, S"})
    assert bad_option.status_code == 400 and "each value may appear once" in bad_option.text
    assert owner_client.get("/products").json["total"] == 1  # only "Taken"


def test_create_a_product_with_two_options_generate_and_price_its_variants(
    owner, owner_client, shop
):
    summer = shop.collection(title="Summer")
    tea = shop.category(name="Shirts")
    created = new_product(
        owner,
        description="Soft linen.",
        category_id=tea["id"],
        tax_class="reduced",
        collections=[summer["id"]],
        **{
            "option-1-name": "Size",
            "option-1-values": "S, M",
            "option-2-name": "Colour",
            "option-2-values": "White, Sand",
        },
    )
    product_id = product_id_of(created)
    page = f"/admin/products/{product_id}"
    product = owner_client.get(page.removeprefix("/admin")).json
    assert product["tax_class"] == "reduced" and product["category_id"] == tea["id"]
    assert product["collection_ids"] == [summer["id"]] and len(product["variants"]) == 1
    generated = post(owner, page, page + "/variants/generate", price="41.00", stock="2")
    assert generated.status_code == 303
    variants = owner_client.get(f"/products/{product_id}/variants").json["items"]
    assert len(variants) == 4
    shown = owner.get(page).text
    form = {}
    for n, variant in enumerate(variants):
        p = f"v-{variant['id']}-"
        form |= {
            p + "sku": f"LIN-{n}",
            p + "price": f"{40 + n}.50",
            p + "stock": str(10 + n),
            p + "weight": "250",
            p + "active": "1",
        }
    saved = owner.post(page + "/variants", data={**hidden_fields(shown), **form})
    assert saved.status_code == 303, saved.text
    after = owner_client.get(f"/products/{product_id}/variants").json["items"]
    assert [(v["sku"], v["price_cents"], v["stock"], v["weight_grams"]) for v in after] == [
        (f"LIN-{n}", 4050 + 100 * n, 10 + n, 250) for n in range(4)
    ]
    # One bad row: the API's message naming the variant, and no row written.
    shown = owner.get(page).text
    form[f"v-{after[0]['id']}-stock"] = "99"
    form[f"v-{after[1]['id']}-sku"] = "LIN-2"  # another variant's SKU
    refused = owner.post(page + "/variants", data={**hidden_fields(shown), **form})
    assert refused.status_code == 409
    assert "M / White" not in refused.text or "already used by variant" in refused.text
    assert "already used by variant" in refused.text
    assert 'value="99"' in refused.text  # the input is kept
    assert 'value="Linen shirt"' in refused.text  # and the other forms show the product
    again = owner_client.get(f"/products/{product_id}/variants").json["items"]
    assert again[0]["stock"] == 10 and again[1]["sku"] == "LIN-1"
    # Edit the product: out of the collection, a new name.
    edit = post(owner, page, page, name="Linen shirt II", active="1", tax_class="reduced",
                **{"option-1-name": "Size", "option-1-values": "S, M",
                   "option-2-name": "Colour", "option-2-values": "White, Sand"})  # fmt: skip
    assert edit.status_code == 303, edit.text
    product = owner_client.get(f"/products/{product_id}").json
    assert product["name"] == "Linen shirt II" and product["collection_ids"] == []
    # Removing a value that variants use is the API's 409, naming them.
    used = post(owner, page, page, name="Linen shirt II", active="1",
                **{"option-1-name": "Size", "option-1-values": "S",
                   "option-2-name": "Colour", "option-2-values": "White, Sand"})  # fmt: skip
    assert used.status_code == 409 and "variants use the values removed" in used.text


def test_images_upload_with_preview_alt_order_and_delete(owner, owner_client, shop):
    product = shop.product(name="Vase")
    page = f"/admin/products/{product['id']}"
    for colour in ("red", "blue"):
        shown = owner.get(page).text
        body = {
            **hidden_fields(shown),
            "alt": f"A {colour} vase",
            "file": (io.BytesIO(image_bytes(colour=colour)), f"{colour}.png"),
        }
        assert owner.post(page + "/images", data=body).status_code == 303
    listed = owner_client.get(f"/products/{product['id']}/images").json["items"]
    red, blue = listed
    shown = owner.get(page + "?done=image").text
    assert "Image uploaded." in shown
    assert f'src="/images/{red["id"]}?w=320" alt="A red vase"' in shown  # the preview
    not_an_image = {
        **hidden_fields(shown),
        "file": (io.BytesIO(b"GIF89a but not really"), "x.gif"),
    }
    refused = owner.post(page + "/images", data=not_an_image)
    assert refused.status_code == 415 and "JPEG, PNG, WebP or GIF" in refused.text
    saved = owner.post(
        page + "/images/save",
        data={
            **hidden_fields(shown),
            f"img-{blue['id']}-position": "1",
            f"img-{blue['id']}-alt": "Blue, from the side",
            f"img-{red['id']}-position": "2",
            f"img-{red['id']}-alt": "A red vase",
        },
    )
    assert saved.status_code == 303
    listed = owner_client.get(f"/products/{product['id']}/images").json["items"]
    assert [(i["id"], i["alt"]) for i in listed] == [
        (blue["id"], "Blue, from the side"),
        (red["id"], "A red vase"),
    ]
    deleted = owner.post(page + f"/images/{blue['id']}/delete", data=hidden_fields(shown))
    assert deleted.status_code == 303
    assert [
        i["id"] for i in owner_client.get(f"/products/{product['id']}/images").json["items"]
    ] == [red["id"]]


CSV_HEADER = "product_slug,product_name,variant_sku,variant_price,variant_stock\n"


def upload_file(client, text: str, name="catalogue.csv"):
    shown = client.get("/admin/products/import").text
    body = {**hidden_fields(shown), "file": (io.BytesIO(text.encode()), name)}
    return client.post("/admin/products/import", data=body)


def test_import_previews_each_bad_row_writes_nothing_then_imports_once_fixed(owner, owner_client):
    bad = CSV_HEADER + "mug,Mug,MUG-1,9.50,4\nbowl,Bowl,BOWL-1,nine,2\n"
    preview = upload_file(owner, bad)
    assert preview.status_code == 400
    assert "1 row(s) have errors; nothing will be written" in preview.text
    assert re.search(r"Row 2 <span class=\"muted\">\(line 3\)</span>", preview.text)
    assert 'id="confirm"' not in preview.text
    assert owner_client.get("/products").json["total"] == 0
    good = CSV_HEADER + "mug,Mug,MUG-1,9.50,4\nbowl,Bowl,BOWL-1,9.00,2\n"
    preview = upload_file(owner, good)
    assert preview.status_code == 200 and 'id="confirm"' in preview.text
    assert owner_client.get("/products").json["total"] == 0  # a preview writes nothing
    confirm = owner.post("/admin/products/import/confirm", data=hidden_fields(preview.text))
    assert confirm.status_code == 200, confirm.text
    assert "2 created, 0 updated, 0 unchanged" in confirm.text
    names = sorted(p["name"] for p in owner_client.get("/products").json["items"])
    assert names == ["Bowl", "Mug"]
    exported = owner.get("/admin/products/export")
    assert exported.status_code == 200 and exported.mimetype == "text/csv"
    assert "MUG-1" in exported.text and "BOWL-1" in exported.text
    assert upload_file(owner, "").status_code == 400
    lines = '{"product_slug": "jar", "product_name": "Jar", "variant_price": "x"}\n'
    jsonl = upload_file(owner, lines, name="catalogue.jsonl")
    assert jsonl.status_code == 400 and "Row 1</th>" in jsonl.text  # no line of a header


def test_delete_a_product_needs_the_confirmation(owner, owner_client, shop):
    product = shop.product(name="Old stock")
    page = f"/admin/products/{product['id']}"
    unconfirmed = post(owner, page, page + "/delete")
    assert unconfirmed.status_code == 400 and "Yes, delete this product" in unconfirmed.text
    assert owner_client.get(f"/products/{product['id']}").status_code == 200
    assert post(owner, page, page + "/delete", confirm="1").status_code == 303
    assert owner_client.get(f"/products/{product['id']}").status_code == 404


def test_categories_create_edit_and_delete_as_the_api_allows(owner, owner_client, shop):
    created = post(owner, "/admin/categories", "/admin/categories", name="Kitchen")
    assert created.status_code == 303
    kitchen = owner_client.get("/categories").json["items"][0]
    assert kitchen["slug"] == "kitchen"
    page = f"/admin/categories/{kitchen['id']}"
    child = post(owner, "/admin/categories", "/admin/categories", name="Pots",
                 parent_id=kitchen["id"])  # fmt: skip
    assert child.status_code == 303
    pots = next(c for c in owner_client.get("/categories").json["items"] if c["name"] == "Pots")
    loop = post(owner, page, page, name="Kitchen", parent_id=pots["id"], position="0")
    assert loop.status_code == 400
    assert "Parent: a category cannot sit under itself" in loop.text
    renamed = post(owner, page, page, name="Cookware", slug="cookware", position="2")
    assert renamed.status_code == 303
    assert owner_client.get(f"/categories/{kitchen['id']}").json["name"] == "Cookware"
    shop.product(name="Wok", category_id=kitchen["id"])
    used = post(owner, page, page + "/delete")
    assert used.status_code == 409
    assert "still used by 1 product (&#39;Wok&#39;) and 1 sub-category" in used.text
    assert owner_client.get(f"/categories/{kitchen['id']}").status_code == 200
    pots_page = f"/admin/categories/{pots['id']}"
    assert post(owner, pots_page, pots_page + "/delete").status_code == 303
    assert owner_client.get(f"/categories/{pots['id']}").status_code == 404


def test_collections_create_fill_order_and_delete(owner, owner_client, shop):
    a, b = shop.product(name="Apple"), shop.product(name="Banana")
    created = post(owner, "/admin/collections", "/admin/collections", title="Fruit")
    page = created.headers["Location"].split("?")[0]
    collection_id = page.rsplit("/", 1)[1]
    assert post(owner, page, page, title="Fruit", add=[a["id"], b["id"]]).status_code == 303
    assert owner_client.get(f"/collections/{collection_id}").json["product_ids"] == [
        a["id"],
        b["id"],
    ]
    reordered = post(
        owner, page, page, title="Fruit", **{f"position-{a['id']}": "2", f"position-{b['id']}": "1"}
    )
    assert reordered.status_code == 303
    assert owner_client.get(f"/collections/{collection_id}").json["product_ids"] == [
        b["id"],
        a["id"],
    ]
    bad = post(owner, page, page, title="", slug="Not A Slug")
    assert bad.status_code == 400 and "Title: length must be between 1 and 200." in bad.text
    removed = post(owner, page, page, title="Fruit", **{f"remove-{a['id']}": "1"})
    assert removed.status_code == 303
    assert owner_client.get(f"/collections/{collection_id}").json["product_ids"] == [b["id"]]
    assert post(owner, page, page + "/delete").status_code == 303
    assert owner_client.get(f"/collections/{collection_id}").status_code == 404
    assert owner_client.get(f"/products/{b['id']}").status_code == 200


def test_the_editor_edits_content_entries_with_the_apis_rules(app, make_admin):
    editor_api = make_admin("editor")
    editor = console_client(app, editor_api.email)
    nav = editor.get("/admin/content").text
    assert 'href="/admin/products"' in nav and 'href="/admin/orders"' not in nav
    bad_json = post(editor, "/admin/content", "/admin/content", key="about",
                    type="page", data='{"title": ')  # fmt: skip
    assert bad_json.status_code == 400 and "Data: not valid JSON" in bad_json.text
    bad_key = post(editor, "/admin/content", "/admin/content", key="About Us",
                   type="page", data="{}")  # fmt: skip
    assert bad_key.status_code == 400 and "Key: use 1 to 128 lowercase letters" in bad_key.text
    reserved = post(editor, "/admin/content", "/admin/content", key="sync",
                    type="page", data="{}")  # fmt: skip
    assert reserved.status_code == 400 and "reserved" in reserved.text
    made = post(editor, "/admin/content", "/admin/content", key="about",
                type="page", data='{"title": "About us"}')  # fmt: skip
    assert made.status_code == 303
    assert app.test_client().get("/content/about").status_code == 404  # a draft
    # "new" is a key like any other: its page is its own.
    named_new = post(editor, "/admin/content", "/admin/content", key="new", type="block",
                     data='{"text": "New in"}')  # fmt: skip
    assert named_new.status_code == 303
    assert "New in" in editor.get("/admin/content/new").text
    page = "/admin/content/about"
    published = post(editor, page, page, type="page", data='{"title": "About"}', published="1")
    assert published.status_code == 303
    public = app.test_client().get("/content/about").json
    assert public["data"] == {"title": "About"} and public["published"] is True
    assert "about" in editor.get("/admin/content").text
    assert post(editor, page, page + "/delete").status_code == 400
    assert post(editor, page, page + "/delete", confirm="1").status_code == 303
    assert app.test_client().get("/content/about").status_code == 404


def test_each_page_needs_the_apis_permission(app, make_admin, shop):
    product = shop.product(name="Teapot")
    support = console_client(app, make_admin("support").email)  # products.read only
    listed = support.get("/admin/products")
    assert listed.status_code == 200 and "Teapot" in listed.text
    assert 'href="/admin/products/new"' not in listed.text and 'id="bulk"' in listed.text
    assert 'name="ids"' not in listed.text  # no bulk change without products.update
    shown = support.get(f"/admin/products/{product['id']}")
    assert shown.status_code == 200 and "Save product" not in shown.text
    for path in (
        "/admin/products/new",
        "/admin/products/import",
        "/admin/categories",
        "/admin/collections",
        "/admin/content",
    ):
        denied = support.get(path)
        assert denied.status_code == 403, path
        assert "this needs the permission" in denied.text
    refused = post(support, f"/admin/products/{product['id']}", f"/admin/products/{product['id']}",
                   name="Renamed")  # fmt: skip
    assert refused.status_code == 403 and "products.update" in refused.text
    editor = console_client(app, make_admin("editor").email)
    assert editor.get("/admin/orders").status_code == 403
    assert editor.get("/admin/products").status_code == 200


def test_an_editor_lands_on_the_products():
    from shop.admin import nav
    from shop.auth.caller import Caller
    from shop.permissions import BUILTIN_ROLES

    editor = Caller(kind="admin", id="e", permissions=BUILTIN_ROLES["editor"])
    assert nav.landing(editor) == "admin.products_list"
    assert [link.label for link in nav.links(editor)][:4] == [
        "Products",
        "Categories",
        "Collections",
        "Content",
    ]


def test_console_imports_are_limited_per_caller_as_the_apis_are(make_app):
    import secrets

    app = make_app(RATELIMIT_ENABLED=True, RATELIMIT_KEY_PREFIX=secrets.token_hex(6))
    from shop.auth.users import create_user
    from tests.conftest import PASSWORD

    with app.app_context():
        create_user("importer@example.com", "Importer", PASSWORD, "owner")
    console = console_client(app, "importer@example.com")
    bad = CSV_HEADER + "mug,Mug,M-1,x,1\n"
    statuses = [upload_file(console, bad).status_code for _ in range(7)]
    assert statuses == [400] * 6 + [429]
