"""A draft order's pay link (issue 41), on both engines: send mails the customer a link to
the storefront's page of the draft; the page shows it priced, and its Pay button completes
it paid by card through the fake Stripe; each send makes a new link; a wrong token is a 404."""

import re

import pytest

from shop import db
from tests.drafts.test_draft_orders import draft_body, new_draft, shop  # noqa: F401 - fixture
from tests.fake_stripe import deliver as deliver_event
from tests.fake_stripe import settings as stripe_settings
from tests.orders.test_order_json import ok
from tests.orders_helpers import product_row
from tests.storefront.test_storefront_checkout import post


def mails(app, recipient: str) -> list[dict]:
    with app.app_context():
        return db.query(
            "SELECT subject, text_body, html_body FROM mail_outbox WHERE recipient = :to"
            " ORDER BY created_at, id",
            {"to": recipient},
        )


def link_of(mail: dict) -> str:
    return re.search(r"http://\S+/store/drafts/([\w-]+)", mail["text_body"]).group(1)


@pytest.fixture
def card_app(make_app, fake_stripe, shop):  # noqa: F811
    return make_app(
        prepare=False,
        STRIPE_PUBLISHABLE_KEY="pk_test_shop",
        STRIPE_JS_URL=fake_stripe.url + "/v3/",
        **stripe_settings(fake_stripe),
    )


def test_send_mails_a_link_that_pays_the_draft_by_card(
    card_app,
    owner_client,
    fake_stripe,
    shop,  # noqa: F811
):
    draft = new_draft(owner_client, shop, credit_cents=500, credit_note="Return R-7")
    sent = ok(owner_client.post(f"/draft-orders/{draft['id']}/send"))
    assert sent["sent_at"] is not None and sent["status"] == "open"
    [mail] = mails(card_app, "phone.buyer@example.com")
    assert "2 x Tea" in mail["text_body"] and "Return R-7" in mail["text_body"]
    token = link_of(mail)
    assert len(token) >= 43 and token not in str(sent)
    with card_app.app_context():
        stored = db.value("SELECT token_hash FROM draft_orders WHERE id = :id", {"id": draft["id"]})
    assert stored == db.sha256(token)

    browser = card_app.test_client()
    page = browser.get(f"/store/drafts/{token}")
    assert page.status_code == 200 and page.headers["Cache-Control"] == "no-store"
    due = draft["totals"]["total_cents"] - 500
    assert "Tea" in page.text and "Pay" in page.text
    assert product_row(card_app, shop["tea"])["stock"] == 10  # nothing taken yet

    paid = post(browser, f"/store/drafts/{token}/pay", page)
    assert paid.status_code == 303 and paid.headers["Location"].endswith(f"/drafts/{token}/card")
    assert product_row(card_app, shop["tea"])["stock"] == 8
    card = browser.get(paid.headers["Location"])
    assert card.status_code == 200, card.text
    intent_id = re.search(r'data-secret="(pi_\w+?)_secret_', card.text).group(1)
    assert fake_stripe.intents[intent_id]["amount"] == due
    draft = ok(owner_client.get(f"/draft-orders/{draft['id']}"))
    assert draft["status"] == "completed"

    event = fake_stripe.succeed(intent_id)
    back = browser.get(f"/store/drafts/{token}/paid")
    assert back.status_code == 303
    deliver_event(browser, event)  # the webhook too: nothing more happens
    order = ok(owner_client.get(f"/orders/{draft['order_id']}"))
    assert order["status"] == "paid" and order["payment"]["amount_cents"] == due
    assert order["total_cents"] == due + 500
    assert [h["status"] for h in order["status_history"]].count("paid") == 1
    done = browser.get(f"/store/drafts/{token}")
    assert order["number"] in done.text and "paid" in done.text
    # Paying again changes nothing: the same order, no second card step.
    again = post(browser, f"/store/drafts/{token}/pay", page)
    assert browser.get(again.headers["Location"]).status_code == 303


def test_each_send_makes_a_new_link_and_a_wrong_token_is_a_404(
    app,
    owner_client,
    make_customer,
    shop,  # noqa: F811
):
    buyer = make_customer(email="known@example.com")
    body = draft_body(shop, customer_id=buyer.user["id"])
    del body["email"]
    draft = owner_client.post("/draft-orders", json=body).json
    ok(owner_client.post(f"/draft-orders/{draft['id']}/send"))
    ok(owner_client.post(f"/draft-orders/{draft['id']}/send"))
    first, second = (
        link_of(m) for m in mails(app, "known@example.com") if "drafts" in m["text_body"]
    )
    assert first != second
    client = app.test_client()
    assert client.get(f"/store/drafts/{first}").status_code == 404
    assert client.get(f"/store/drafts/{second}").status_code == 200
    assert client.get("/store/drafts/" + "x" * 43).status_code == 404
    # Without card payments the page says so and offers no button.
    assert "not available" in client.get(f"/store/drafts/{second}").text


def test_a_support_key_without_update_cannot_send(make_key, owner_client, shop):  # noqa: F811
    draft = new_draft(owner_client, shop)
    reader = make_key("read:draft_order")
    assert reader.post(f"/draft-orders/{draft['id']}/send").status_code == 403


def test_a_link_to_a_draft_the_credit_covers_confirms_it_paid_without_a_card(
    app,
    owner_client,
    shop,  # noqa: F811
):
    draft = new_draft(owner_client, shop, credit_cents=10**6, credit_note="Exchange")
    ok(owner_client.post(f"/draft-orders/{draft['id']}/send"))
    token = link_of(mails(app, "phone.buyer@example.com")[0])
    browser = app.test_client()
    page = browser.get(f"/store/drafts/{token}")
    assert "Confirm the order" in page.text and "not available" not in page.text
    done = post(browser, f"/store/drafts/{token}/pay", page)
    assert done.status_code == 303
    shown = browser.get(browser.get(done.headers["Location"]).headers["Location"])
    order_id = ok(owner_client.get(f"/draft-orders/{draft['id']}"))["order_id"]
    order = ok(owner_client.get(f"/orders/{order_id}"))
    assert order["status"] == "paid" and order["payment"]["amount_cents"] == 0
    assert order["number"] in shown.text
