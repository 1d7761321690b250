"""Creating, changing and deleting a discount code (shop/discounts/store.py): each refusal's
status and words through the API, the audit entries naming who acted, and the same use case
called without a request, on both engines."""

import pytest

from shop.actor import Actor
from shop.discounts import store as discount_store
from shop.errors import Conflict, Invalid, NotFound

PERCENT = "value: a percent discount takes a decimal string above 0, up to 100."
FIXED = "value: a fixed discount takes whole minor units above 0 (500 is 5.00)."
REFUSED = [
    ({"code": "A", "kind": "percent", "value": "100.5"}, PERCENT),
    ({"code": "A", "kind": "percent"}, PERCENT),
    ({"code": "A", "kind": "fixed", "value": "NaN"}, FIXED),
    ({"code": "A", "kind": "fixed", "value": 10**12 + 1}, FIXED),
    (
        {
            "code": "A",
            "kind": "free_shipping",
            "starts_at": "2030-01-02T00:00:00Z",
            "ends_at": "2030-01-01",
        },
        "ends_at: must be after starts_at.",
    ),
]


@pytest.mark.parametrize(("body", "message"), REFUSED)
def test_a_refused_discount_says_why_and_writes_nothing(owner_client, body, message):
    refused = owner_client.post("/discounts", json=body)
    assert (refused.status_code, refused.json) == (400, {"message": message})
    assert owner_client.get("/discounts").json["total"] == 0


def test_writes_refuse_a_taken_code_and_a_missing_one_and_are_audited(owner_client):
    made = owner_client.post("/discounts", json={"code": "Save5", "kind": "fixed", "value": 500})
    assert made.status_code == 201 and made.json["value"] == "500", made.json
    path = f"/discounts/{made.json['id']}"
    other = owner_client.post("/discounts", json={"code": "B", "kind": "percent", "value": "5"})
    for response in (
        owner_client.post("/discounts", json={"code": "SAVE5", "kind": "free_shipping"}),
        owner_client.patch(f"/discounts/{other.json['id']}", json={"code": "save5"}),
    ):
        assert (response.status_code, response.json) == (
            409,
            {"message": "This code exists (codes ignore case)."},
        )
    changed = owner_client.patch(path, json={"kind": "percent", "value": "12.50"})
    assert changed.status_code == 200 and changed.json["value"] == "12.5", changed.json
    refused = owner_client.patch(path, json={"value": "0"})
    assert (refused.status_code, refused.json["message"]) == (400, PERCENT)
    assert owner_client.delete(path).status_code == 204
    for response in (
        owner_client.get(path),
        owner_client.patch(path, json={"active": False}),
        owner_client.delete(path),
    ):
        assert (response.status_code, response.json) == (404, {"message": "Discount not found."})
    entries = owner_client.get("/audit-log").json["items"]
    seen = [
        (e["event"], e["details"]["code"], e["actor"]["kind"])
        for e in reversed(entries)
        if e["event"].startswith("discount.")
    ]
    assert seen == [
        ("discount.created", "Save5", "admin"),
        ("discount.created", "B", "admin"),
        ("discount.updated", "Save5", "admin"),
        ("discount.deleted", "Save5", "admin"),
    ]


def test_the_use_case_needs_no_request(app):
    system = Actor(kind="system", label="test")
    with app.app_context():
        made = discount_store.create(
            {"code": "Cli", "kind": "percent", "value": "7.0", "starts_at": "2001-01-01T00:00:00Z"},
            system,
        )
        assert (made["code"], made["value"], made["times_used"]) == ("Cli", "7", 0)
        with pytest.raises(Conflict):
            discount_store.create({"code": "cli", "kind": "free_shipping"}, system)
        with pytest.raises(Invalid, match="^ends_at: must be after starts_at.$"):
            discount_store.update(made["id"], {"ends_at": "2000-01-01T00:00:00Z"}, system)
        changed = discount_store.update(made["id"], {"ends_at": "2002-01-01T00:00:00Z"}, system)
        assert changed["ends_at"] == "2002-01-01T00:00:00Z"
        discount_store.delete(made["id"], system)
        with pytest.raises(NotFound):
            discount_store.get(made["id"])
