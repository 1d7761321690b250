"""The console's draft orders through HTTP (issue 41), on both engines: a draft made from the
form (lines by SKU, a new e-mail or a customer's), priced as the API shows it, changed,
sent, completed, deleted; who sees the pages; a refusal shown above the kept form."""

from shop import db
from tests.admin_helpers import hidden_fields, submit
from tests.drafts.test_draft_orders import rows, shop  # noqa: F401 - fixture
from tests.orders.test_order_json import ok
from tests.orders_helpers import ADDRESS, product_row


def form(shop, lines="TEA-1 2\nBOOK-1 x 1", **more) -> dict:  # noqa: F811
    return {
        "email": "walk.in@example.com",
        "lines": lines,
        **ADDRESS,
        "shipping_method_id": shop["method"],
        "discount_code": "SAVE10",
        "note": "By phone",
        "credit": "",
        "credit_note": "",
        **more,
    }


def with_skus(app, owner_client, shop):  # noqa: F811
    for key, sku in (("tea", "TEA-1"), ("book", "BOOK-1")):
        assert owner_client.put(f"/products/{shop[key]}", json={"sku": sku}).status_code == 200


def test_a_draft_made_changed_sent_and_completed_from_the_console(app, owner_client, shop):  # noqa: F811
    with_skus(app, owner_client, shop)
    made = submit(owner_client, "/admin/draft-orders/new", "/admin/draft-orders", **form(shop))
    assert made.status_code == 303, made.text
    page = owner_client.get(made.headers["Location"])
    assert page.status_code == 200 and "Nothing is taken from stock" in page.text
    [draft] = ok(owner_client.get("/draft-orders"))["items"]
    assert draft["email"] == "walk.in@example.com" and draft["customer_id"] is None
    assert [(line["sku"], line["quantity"]) for line in draft["lines"]] == [
        ("TEA-1", 2),
        ("BOOK-1", 1),
    ]
    total = draft["totals"]["total_cents"]
    assert f"{total // 100}.{total % 100:02d}" in page.text
    assert product_row(app, shop["tea"])["stock"] == 10

    changed = owner_client.post(
        f"/admin/draft-orders/{draft['id']}",
        data={
            **hidden_fields(page.text),
            **form(shop, lines="TEA-1 3", credit="5.00", credit_note="R-1"),
        },
    )
    assert changed.status_code == 303, changed.text
    draft = ok(owner_client.get(f"/draft-orders/{draft['id']}"))
    assert [line["quantity"] for line in draft["lines"]] == [3] and draft["credit_cents"] == 500

    page = owner_client.get(f"/admin/draft-orders/{draft['id']}")
    sent = owner_client.post(
        f"/admin/draft-orders/{draft['id']}/send", data=hidden_fields(page.text)
    )
    assert (
        sent.status_code == 303
        and "pay link was mailed" in owner_client.get(sent.headers["Location"]).text
    )
    with app.app_context():
        assert (
            db.value("SELECT COUNT(*) FROM mail_outbox WHERE recipient = 'walk.in@example.com'")
            == 1
        )

    done = owner_client.post(
        f"/admin/draft-orders/{draft['id']}/complete",
        data={**hidden_fields(page.text), "payment_method": "manual"},
    )
    assert done.status_code == 303 and "/admin/orders/" in done.headers["Location"]
    assert product_row(app, shop["tea"])["stock"] == 7
    order = owner_client.get(done.headers["Location"])
    assert order.status_code == 200 and "walk.in@example.com" in order.text
    # Completed: read-only, no actions and no form.
    page = owner_client.get(f"/admin/draft-orders/{draft['id']}")
    assert 'id="complete"' not in page.text and 'id="draft-form"' not in page.text
    again = owner_client.post(
        f"/admin/draft-orders/{draft['id']}", data={**hidden_fields(page.text), **form(shop)}
    )
    assert again.status_code == 409 and "read-only" in again.text
    listed = owner_client.get("/admin/draft-orders?status=completed")
    assert draft["id"] in listed.text


def test_a_refusal_keeps_the_form_and_writes_nothing(app, owner_client, make_customer, shop):  # noqa: F811
    with_skus(app, owner_client, shop)
    for bad, said in (
        ({"lines": "NOPE 1"}, "Lines: no variant has the SKU or id NOPE."),
        ({"discount_code": "NOPE"}, "Discount code"),
        ({"country": "ZZ"}, "Address"),
        ({"credit": "lots"}, "Credit"),
    ):
        refused = submit(
            owner_client, "/admin/draft-orders/new", "/admin/draft-orders", **form(shop, **bad)
        )
        assert refused.status_code == 400, refused.text
        assert said in refused.text, (said, refused.text)
        assert 'value="walk.in@example.com"' in refused.text
    assert rows(app, "draft_orders") == 0

    # A customer's e-mail makes the draft theirs.
    buyer = make_customer(email="regular@example.com")
    made = submit(
        owner_client,
        "/admin/draft-orders/new",
        "/admin/draft-orders",
        **form(shop, email="Regular@example.com"),
    )
    assert made.status_code == 303
    [draft] = ok(owner_client.get("/draft-orders"))["items"]
    assert draft["customer_id"] == buyer.user["id"]

    page = owner_client.get(f"/admin/draft-orders/{draft['id']}")
    gone = owner_client.post(
        f"/admin/draft-orders/{draft['id']}/delete", data=hidden_fields(page.text)
    )
    assert gone.status_code == 303 and rows(app, "draft_orders") == 0


def test_who_sees_the_draft_pages(app, make_admin, owner_client, shop):  # noqa: F811
    editor = make_admin("editor")
    assert editor.get("/admin/draft-orders").status_code == 403
    assert "Draft orders" not in editor.get("/admin/products").text
    support = make_admin("support")
    assert "Draft orders" in support.get("/admin/draft-orders").text
    reader = make_admin("editor", permissions=["draft_orders.read"], email="reader@example.com")
    page = reader.get("/admin/draft-orders")
    assert page.status_code == 200 and 'id="new-draft"' not in page.text
    assert reader.get("/admin/draft-orders/new").status_code == 403
