"""A customer's erasure (the GDPR erase, ``DELETE /customers/{id}``) takes their draft
orders with it, through HTTP on both engines: open drafts (by their account or by their
e-mail) are deleted, completed ones kept without the e-mail, address, note and link; an
open draft holding credit refuses the erasure until staff settle it."""

from shop import db
from tests.drafts.test_draft_orders import draft_body, new_draft, shop  # noqa: F401
from tests.orders.test_order_json import created


def _for_account(owner_client, shop, customer_id, **more) -> dict:  # noqa: F811
    body = draft_body(shop, customer_id=customer_id, **more)
    del body["email"]
    return created(owner_client.post("/draft-orders", json=body))


def _drafts(app) -> list[dict]:
    with app.app_context():
        return db.query(
            "SELECT id, status, customer_id, email, shipping_address, note, token_hash"
            " FROM draft_orders ORDER BY created_at, id"
        )


def test_erasing_a_customer_deletes_their_open_drafts_and_anonymises_completed_ones(
    app,
    owner_client,
    customer_client,
    shop,  # noqa: F811
):
    customer_id = customer_client.user["id"]
    email = "customer@example.com"
    # By the account, by the e-mail (made before the account, or by staff typing it), and
    # somebody else's, which stays.
    by_account = _for_account(owner_client, shop, customer_id)
    by_email = new_draft(owner_client, shop, email=email.upper())
    done = new_draft(owner_client, shop, email=email)
    other = new_draft(owner_client, shop, email="someone.else@example.com")
    order = created(
        owner_client.post(f"/draft-orders/{done['id']}/complete", json={"payment_method": "manual"})
    )["order"]
    # A sent draft carries a pay link (its token's hash): it dies with the erasure.
    assert owner_client.post(f"/draft-orders/{by_email['id']}/send").status_code in (200, 409)
    owner_client.patch(f"/orders/{order['id']}/status", json={"status": "cancelled"})

    assert owner_client.delete(f"/customers/{customer_id}").status_code == 204

    left = {row["id"]: row for row in _drafts(app)}
    assert by_account["id"] not in left and by_email["id"] not in left
    assert set(left) == {done["id"], other["id"]}
    kept = left[done["id"]]
    assert kept["status"] == "completed" and kept["email"] is None
    assert kept["note"] is None and kept["token_hash"] is None
    assert "Casey" not in kept["shipping_address"] and "Market" not in kept["shipping_address"]
    assert left[other["id"]]["email"] == "someone.else@example.com"
    shown = owner_client.get(f"/draft-orders/{done['id']}")
    assert shown.status_code == 200, shown.json
    assert shown.json["email"] is None and shown.json["order_id"] == order["id"]
    assert email not in str(shown.json).lower()
    assert shown.json["shipping_address"]["line1"] is None
    assert shown.json["shipping_address"]["country"] == "FR"  # its tax: not personal
    assert owner_client.get(f"/draft-orders/{by_email['id']}").status_code == 404
    listed = owner_client.get("/draft-orders").json["items"]
    assert email not in str(listed).lower()


def test_an_open_draft_holding_credit_refuses_the_erasure(
    app,
    owner_client,
    customer_client,
    shop,  # noqa: F811
):
    customer_id = customer_client.user["id"]
    draft = _for_account(owner_client, shop, customer_id, credit_cents=500)
    refused = owner_client.delete(f"/customers/{customer_id}")
    assert refused.status_code == 409, refused.data
    assert "credit" in refused.json["message"] and draft["id"] in refused.json["message"]
    assert owner_client.get(f"/customers/{customer_id}").status_code == 200
    assert len(_drafts(app)) == 1
    assert owner_client.delete(f"/draft-orders/{draft['id']}").status_code == 204
    assert owner_client.delete(f"/customers/{customer_id}").status_code == 204
