"""Site settings: staff read and change them, anyone reads the public subset."""

import pytest


def test_defaults_and_public_subset(app, owner_client):
    settings = owner_client.get("/settings").json
    assert settings["currency"] == "EUR" and settings["order_number_prefix"] == "SO-"
    assert app.test_client().get("/settings/public").json == {
        "shop_name": settings["shop_name"],
        "currency": "EUR",
        "prices_include_tax": False,
        "cart_reminders": False,
    }


def test_patch_changes_only_what_it_is_given(app, owner_client):
    response = owner_client.patch(
        "/settings",
        json={"shop_name": "Tea & Co", "currency": "GBP", "contact_email": "hi@tea.example"},
    )
    assert response.status_code == 200, response.json
    assert response.json["order_number_prefix"] == "SO-"
    response = owner_client.patch("/settings", json={"contact_email": None})
    assert response.json["contact_email"] is None
    assert response.json["shop_name"] == "Tea & Co"
    assert app.test_client().get("/settings/public").json == {
        "shop_name": "Tea & Co",
        "currency": "GBP",
        "prices_include_tax": False,
        "cart_reminders": False,
    }
    with app.app_context():
        from shop.site.settings import current

        assert current()["currency"] == "GBP"
    audit = owner_client.get("/audit-log?event=settings.updated").json["items"]
    assert audit and audit[0]["details"] == {"contact_email": None}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"currency": "eur"}, "currency"),
        ({"currency": "XYZ"}, "currency"),
        ({"currency": "EURO"}, "currency"),
        ({"shop_name": ""}, "shop_name"),
        ({"shop_name": None}, "shop_name"),
        ({"contact_email": "not an email"}, "contact_email"),
        ({"order_number_prefix": "SO #"}, "order_number_prefix"),
        ({"theme": "dark"}, "theme"),
    ],
)
def test_bad_values_and_unknown_keys_are_400_and_write_nothing(owner_client, body, field):
    response = owner_client.patch("/settings", json={"shop_name": "Changed", **body})
    assert response.status_code == 400
    assert f"{field}:" in response.json["message"]
    assert owner_client.get("/settings").json["shop_name"] == "My Shop"


def test_patch_needs_a_json_body(owner_client):
    assert owner_client.patch("/settings").status_code == 400
    form = owner_client.patch("/settings", data={"shop_name": "Form"})
    assert form.status_code == 400
    assert set(form.json) == {"message"}
    assert owner_client.get("/settings").json["shop_name"] == "My Shop"


def test_settings_read_once_in_a_transaction_follow_its_own_change(app):
    """A transaction reads the settings once (a status move's invoice and mail share the
    read, issue 42); a change written in it is what it reads next, and the next one reads
    it too."""
    from shop import db
    from shop.site import settings as site

    with app.app_context():
        with db.transaction():
            assert site.current()["shop_name"] != "Kept Tea"
            first = site.current()
            first["shop_name"] = "a caller's own copy"
            assert site.current()["shop_name"] != "a caller's own copy"
            site.update({"shop_name": "Kept Tea"})
            assert site.current()["shop_name"] == "Kept Tea"
        assert site.current()["shop_name"] == "Kept Tea"
