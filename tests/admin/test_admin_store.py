"""The console's store pages (issue 37) through the test client: discount codes, shipping
methods, tax rates, settings, staff and roles, customers. Each form is loaded through the
API's schema and written by the API's use case, so the messages are the API's; a refusal
shows on the form with the input kept and writes nothing; every form needs its CSRF token;
a page needs its permission."""

import html
import re

import pytest
from admin_helpers import console_client, hidden_fields, submit


@pytest.fixture
def owner(app, owner_client):
    """The owner, signed in to the console."""
    return console_client(app, owner_client.email)


def post(client, page, action, **fields):
    """Post ``action``'s form as shown on ``page`` (its CSRF token), with ``fields``."""
    return submit(client, page, action, **fields)


def error_of(response) -> str:
    """The refusal a form page shows (its text, unescaped)."""
    found = re.search(r'id="form-error">([^<]*)<', response.text)
    assert found, response.text
    return html.unescape(found.group(1))


DISCOUNT = {
    "code": "SPRING10",
    "kind": "percent",
    "value": "10",
    "min_subtotal": "",
    "starts_at": "",
    "ends_at": "",
    "usage_limit": "",
    "active": "1",
}


# Discount codes


def test_an_owner_creates_and_changes_a_discount_code(owner, owner_client):
    response = post(owner, "/admin/discounts/new", "/admin/discounts", **DISCOUNT)
    assert response.status_code == 303, response.text
    page = owner.get(response.headers["Location"])
    assert "Discount code created." in page.text
    [created] = owner_client.get("/discounts").json["items"]
    assert created["code"] == "SPRING10" and created["value"] == "10" and created["active"]
    fixed = {**DISCOUNT, "kind": "fixed", "value": "5.00", "min_subtotal": "20", "usage_limit": "3"}
    url = f"/admin/discounts/{created['id']}"
    response = post(owner, url, url, **fixed)
    assert response.status_code == 303, response.text
    changed = owner_client.get(f"/discounts/{created['id']}").json
    assert changed["kind"] == "fixed" and changed["value"] == "500"
    assert changed["min_subtotal_cents"] == 2000 and changed["usage_limit"] == 3
    assert (
        "$5.00 off" in owner.get("/admin/discounts").text
        or "€5.00 off" in owner.get("/admin/discounts").text
    )
    response = post(owner, url, f"{url}/active", set_active="0")
    assert response.status_code == 303
    assert owner_client.get(f"/discounts/{created['id']}").json["active"] is False


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"code": "no spaces"}, "Code: use 1 to 64 letters, digits, '-' or '_' (ASCII only)."),
        ({"value": "150"}, "Value: a percent discount takes a decimal string above 0, up to 100."),
        ({"usage_limit": "0"}, "Usage limit: must be greater than or equal to 1"),
        ({"usage_limit": "many"}, "Usage limit: not a valid integer."),
        ({"kind": "fixed", "value": "5.001"}, "Value: "),
        ({"starts_at": "2027-02-01", "ends_at": "2027-01-01"}, "Ends on: must be after starts_at."),
    ],
)
def test_a_refused_discount_shows_the_api_message_keeps_the_input_and_writes_nothing(
    owner, owner_client, changes, message
):
    response = post(owner, "/admin/discounts/new", "/admin/discounts", **{**DISCOUNT, **changes})
    assert response.status_code == 400
    assert message in error_of(response)
    for value in changes.values():
        assert f'value="{value}"' in response.text or f'"{value}" selected' in response.text
    assert owner_client.get("/discounts").json["total"] == 0


def test_a_taken_code_is_a_conflict_on_the_form(owner, owner_client):
    post(owner, "/admin/discounts/new", "/admin/discounts", **DISCOUNT)
    response = post(
        owner, "/admin/discounts/new", "/admin/discounts", **{**DISCOUNT, "code": "spring10"}
    )
    assert response.status_code == 409
    assert error_of(response) == "This code exists (codes ignore case)."
    assert owner_client.get("/discounts").json["total"] == 1


# Shipping methods

METHOD = {
    "name": "Parcel",
    "countries": "de, AT",
    "price": "",
    "free_over": "50",
    "tax_class": "standard",
    "position": "1",
    "active": "1",
    "band-0-up_to_grams": "1000",
    "band-0-price": "4.90",
    "band-1-up_to_grams": "5000",
    "band-1-price": "9.90",
}


def test_an_owner_creates_a_shipping_method_with_weight_bands(owner, owner_client):
    response = post(owner, "/admin/shipping-methods/new", "/admin/shipping-methods", **METHOD)
    assert response.status_code == 303, error_of(response)
    [method] = owner_client.get("/shipping-methods").json["items"]
    assert method["countries"] == ["AT", "DE"] and method["free_over_cents"] == 5000
    assert method["weight_bands"] == [
        {"up_to_grams": 1000, "price_cents": 490},
        {"up_to_grams": 5000, "price_cents": 990},
    ]
    url = f"/admin/shipping-methods/{method['id']}"
    page = owner.get(url).text
    assert 'value="5000"' in page and 'value="9.90"' in page and 'id="band-4-price"' in page
    # A third band in an empty row, the second row emptied: the bands are the rows posted.
    changed = {**METHOD, "band-1-up_to_grams": "", "band-1-price": ""}
    changed.update({"band-2-up_to_grams": "20000", "band-2-price": "19.00"})
    assert post(owner, url, url, **changed).status_code == 303
    bands = owner_client.get(f"/shipping-methods/{method['id']}").json["weight_bands"]
    assert bands == [
        {"up_to_grams": 1000, "price_cents": 490},
        {"up_to_grams": 20000, "price_cents": 1900},
    ]
    assert post(owner, url, f"{url}/active", set_active="0").status_code == 303
    assert owner_client.get(f"/shipping-methods/{method['id']}").json["active"] is False


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"band-1-up_to_grams": "1000"}, "Weight bands: two bands end at the same weight."),
        ({"band-1-up_to_grams": "0"}, "Band 2, up to (grams): must be greater than or equal to 1"),
        ({"band-1-price": ""}, "Band 2, price: missing data for required field."),
        ({"countries": "DE XX"}, "Countries, XX: use an ISO 3166-1 alpha-2 code in capitals"),
        ({"name": ""}, "Name: "),
        ({"band-0-price": "4.999"}, "Band 1, price: "),
    ],
)
def test_a_refused_shipping_method_says_why_keeps_the_rows_and_writes_nothing(
    owner, owner_client, changes, message
):
    response = post(
        owner, "/admin/shipping-methods/new", "/admin/shipping-methods", **{**METHOD, **changes}
    )
    assert response.status_code == 400
    assert error_of(response).startswith(message)
    kept = {**METHOD, **changes}
    assert f'value="{kept["name"]}"' in response.text
    assert f'value="{kept["band-0-price"]}"' in response.text
    assert owner_client.get("/shipping-methods").json["total"] == 0


# Tax rates

RATE = {"name": "VAT", "country": "de", "region": "", "tax_class": "standard", "rate": "19"}


def test_an_owner_creates_changes_and_deletes_a_tax_rate(owner, owner_client):
    response = post(owner, "/admin/tax-rates/new", "/admin/tax-rates", **RATE)
    assert response.status_code == 303, error_of(response)
    [rate] = owner_client.get("/tax-rates").json["items"]
    assert (rate["country"], rate["region"], rate["rate"]) == ("DE", None, "19")
    url = f"/admin/tax-rates/{rate['id']}"
    assert (
        post(owner, url, url, **{**RATE, "rate": "7.0", "tax_class": "reduced"}).status_code == 303
    )
    changed = owner_client.get(f"/tax-rates/{rate['id']}").json
    assert (changed["rate"], changed["tax_class"]) == ("7", "reduced")
    confirm = owner.get(f"{url}/delete")
    assert "Delete the tax rate VAT?" in confirm.text
    response = owner.post(f"{url}/delete", data=hidden_fields(confirm.text))
    assert response.status_code == 303
    assert owner_client.get("/tax-rates").json["total"] == 0


@pytest.mark.parametrize(
    "changes, message, status",
    [
        ({"rate": "120"}, "Rate: give a percentage from 0 to 100 with at most 4 decimals", 400),
        ({"country": "XX"}, "Country: use an ISO 3166-1 alpha-2 code in capitals (DE), or *", 400),
        (
            {"country": "*", "region": "NY"},
            "Region: a rate for any country (*) has no region.",
            400,
        ),
        ({"tax_class": "Reduced!"}, "Tax class: use 1 to 40 lower-case letters", 400),
        ({}, "A rate for this country, region and tax class exists: change that one.", 409),
    ],
)
def test_a_refused_tax_rate_says_the_api_message_and_writes_nothing(
    owner, owner_client, changes, message, status
):
    if not changes:
        post(owner, "/admin/tax-rates/new", "/admin/tax-rates", **RATE)
    before = owner_client.get("/tax-rates").json["total"]
    response = post(owner, "/admin/tax-rates/new", "/admin/tax-rates", **{**RATE, **changes})
    assert response.status_code == status
    assert error_of(response).startswith(message)
    for value in changes.values():
        assert f'value="{value.upper() if len(value) == 2 else value}"' in response.text
    assert owner_client.get("/tax-rates").json["total"] == before


# Settings

SETTINGS = {
    "shop_name": "Tea & Co",
    "address": "1 Leaf Lane\nLondon",
    "contact_email": "hello@tea.example",
    "contact_phone": "",
    "currency": "GBP",
    "prices_include_tax": "1",
    "order_number_prefix": "TEA-",
}


def test_an_owner_saves_the_settings_and_clears_an_optional_one(owner, owner_client):
    response = post(owner, "/admin/settings", "/admin/settings", **SETTINGS)
    assert response.status_code == 303, error_of(response)
    saved = owner_client.get("/settings").json
    assert saved["shop_name"] == "Tea & Co" and saved["currency"] == "GBP"
    assert saved["address"] == "1 Leaf Lane\nLondon" and saved["prices_include_tax"] is True
    assert saved["contact_phone"] is None and saved["require_two_factor"] is False
    assert "Settings saved." in owner.get(response.headers["Location"]).text
    response = post(owner, "/admin/settings", "/admin/settings", **{**SETTINGS, "address": ""})
    assert owner_client.get("/settings").json["address"] is None
    response = post(owner, "/admin/settings", "/admin/settings", **{**SETTINGS, "address": ""})
    assert response.headers["Location"].endswith("done=unchanged")


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"contact_email": "not-an-address"}, "Contact e-mail: not a valid email address."),
        ({"currency": "EURO"}, "Currency: use an ISO 4217 code of three capitals"),
        ({"order_number_prefix": "SO #"}, "Order number prefix: use up to 20 letters"),
        ({"shop_name": ""}, "Shop name: length must be between 1 and 200."),
    ],
)
def test_refused_settings_say_the_api_message_and_change_nothing(
    owner, owner_client, changes, message
):
    before = owner_client.get("/settings").json
    response = post(owner, "/admin/settings", "/admin/settings", **{**SETTINGS, **changes})
    assert response.status_code == 400
    assert error_of(response).startswith(message)
    assert owner_client.get("/settings").json == before  # the valid fields were not saved


def test_the_invoice_and_storefront_settings_are_on_the_page_too(owner, owner_client):
    page = owner.get("/admin/settings").text
    for name in ("vat_id", "invoice_prefix", "locale", "brand_color", "bank_transfer_instructions"):
        assert f'id="{name}"' in page, name
    changes = {
        "vat_id": "GB123456789",
        "invoice_prefix": "TEA-INV-",
        "invoice_on": "shipment",
        "invoice_attach_to_mail": "1",
        "locale": "en_GB",
        "brand_color": "#2a4d8f",
        "bank_transfer_instructions": "IBAN GB00 0000; reference: your order number",
    }
    response = post(owner, "/admin/settings", "/admin/settings", **{**SETTINGS, **changes})
    assert response.status_code == 303, error_of(response)
    saved = owner_client.get("/settings").json
    assert {key: saved[key] for key in changes} == {**changes, "invoice_attach_to_mail": True}
    assert saved["cart_reminders"] is False and saved["credit_note_prefix"] == "CN-"

    refused = post(owner, "/admin/settings", "/admin/settings", **{**SETTINGS, "locale": "xx_Nope"})
    assert refused.status_code == 400
    assert error_of(refused).startswith("Locale: use a locale Babel knows")
    assert owner_client.get("/settings").json == saved


def test_the_currency_is_shown_locked_once_an_order_exists(app, owner, owner_client):
    from orders_helpers import order_for_console

    order_for_console(app, owner_client.email, to=())
    page = owner.get("/admin/settings").text
    assert "locked" in page and '<select id="currency"' not in page
    # A form from before the first order still posts a currency: the API's 409.
    response = owner.post("/admin/settings", data={**hidden_fields(page), **SETTINGS})
    assert response.status_code == 409
    assert "the currency is fixed once an order exists" in error_of(response)
    assert owner_client.get("/settings").json["shop_name"] != "Tea & Co"


# Staff and roles


def test_an_owner_creates_a_staff_member_and_finds_them(owner, owner_client):
    body = {"name": "Sam Support", "email": "Sam@Example.com", "password": "correct horse 42"}
    response = post(owner, "/admin/staff/new", "/admin/staff", role="support", active="1", **body)
    assert response.status_code == 303, error_of(response)
    assert "Staff member created." in owner.get(response.headers["Location"]).text
    found = owner.get("/admin/staff?q=sam").text
    assert "Sam Support" in found and "sam@example.com" in found
    assert "Owner" not in owner.get("/admin/staff?q=support").text
    refused = post(
        owner, "/admin/staff/new", "/admin/staff", role="support", **{**body, "password": "short"}
    )
    assert refused.status_code == 400
    assert error_of(refused).startswith("Password: length must be between")
    assert 'value="short"' not in refused.text and 'value="Sam Support"' in refused.text


def test_an_owner_assigns_a_role_deactivates_and_unlocks(owner, owner_client, make_admin):
    sam = make_admin("support", email="sam@example.com")
    url = f"/admin/staff/{sam.user_id}"
    assert post(owner, url, f"{url}/role", role="admin").status_code == 303
    assert owner_client.get(f"/users/{sam.user_id}").json["role"] == "admin"
    assert post(owner, url, f"{url}/active", set_active="0").status_code == 303
    assert owner_client.get(f"/users/{sam.user_id}").json["active"] is False
    assert sam.get("/auth/me").status_code == 401  # their session ended
    response = post(owner, url, f"{url}/unlock")
    assert response.headers["Location"].endswith("done=not_locked")
    unknown = post(owner, url, f"{url}/role", role="nobody")
    assert unknown.status_code == 400 and "Role: unknown role 'nobody'" in error_of(unknown)


def test_the_last_owner_cannot_be_deactivated_or_demoted(owner, owner_client):
    url = f"/admin/staff/{owner_client.user_id}"
    response = post(owner, url, f"{url}/active", set_active="0")
    assert response.status_code == 409
    assert error_of(response) == "This is the last active owner: make another owner first."
    assert post(owner, url, f"{url}/role", role="admin").status_code == 409
    assert owner_client.get(f"/users/{owner_client.user_id}").json["active"] is True


def test_an_owner_resets_a_lost_second_factor(app, owner, make_admin, clock):
    from auth.test_two_factor import turn_on

    sam = make_admin("admin", email="sam@example.com")
    turn_on(sam, clock)
    url = f"/admin/staff/{sam.user_id}"
    assert "Reset two-factor" in owner.get(url).text
    response = post(owner, url, f"{url}/two-factor/reset", confirm="1")
    assert response.headers["Location"].endswith("done=two_factor")
    assert sam.get("/auth/me").status_code == 401
    assert "Reset two-factor" not in owner.get(url).text


MANAGER = ("users.read", "users.update", "roles.read", "roles.create", "roles.update")


def test_a_role_is_edited_with_checkboxes_within_the_editors_own_ceiling(
    app, owner, owner_client, make_admin
):
    response = post(
        owner,
        "/admin/roles/new",
        "/admin/roles",
        name="packer",
        permissions=["orders.read", "orders.update_status", "settings.update"],
    )
    assert response.status_code == 303, error_of(response)
    role_url = response.headers["Location"].split("?")[0]
    manager = console_client(app, make_admin("support", permissions=MANAGER).email)
    page = manager.get(role_url).text
    # What the manager lacks is shown greyed, not offered.
    assert 'value="settings.update" checked disabled' in page
    assert 'value="orders.read" checked>' in page
    # Withdrawing what they hold is fine; what they lack stays.
    response = post(manager, role_url, role_url, name="packer", permissions=["orders.read"])
    assert response.status_code == 303, error_of(response)
    [packer] = [r for r in owner_client.get("/roles").json["items"] if r["name"] == "packer"]
    assert packer["permissions"] == ["orders.read", "settings.update"]
    # A forged box for a permission they lack: the API's 403, on the form, nothing written.
    forged = post(manager, role_url, role_url, name="packer", permissions=["tax.delete"])
    assert forged.status_code == 403
    assert error_of(forged) == "Access denied: you cannot grant or withdraw tax.delete."
    [packer] = [r for r in owner_client.get("/roles").json["items"] if r["name"] == "packer"]
    assert packer["permissions"] == ["orders.read", "settings.update"]
    bad = post(owner, role_url, role_url, name="Packers!", permissions=["orders.read"])
    assert bad.status_code == 400 and error_of(bad).startswith("Name: use 1 to 64 lowercase")


def test_roles_the_viewer_cannot_give_are_not_offered(app, make_admin):
    manager = console_client(app, make_admin("support", permissions=MANAGER).email)
    page = manager.get("/admin/staff/new")
    assert page.status_code == 403  # users.create is not theirs
    sam = make_admin("support", email="sam@example.com")
    page = manager.get(f"/admin/staff/{sam.user_id}").text
    assert '<option value="support" selected>' in page and 'value="owner"' not in page


# Permissions and CSRF


@pytest.mark.parametrize(
    "role, path, permission",
    [
        ("support", "/admin/settings", "settings.read"),
        ("editor", "/admin/staff", "users.read"),
        ("admin", "/admin/roles", "roles.read"),
        ("editor", "/admin/shipping-methods", "shipping.read"),
        ("editor", "/admin/tax-rates", "tax.read"),
        ("support", "/admin/discounts/new", "discounts.create"),
        ("support", "/admin/tax-rates/new", "tax.create"),
        ("admin", "/admin/staff/new", "users.create"),
    ],
)
def test_a_page_needs_its_permission(app, make_admin, role, path, permission):
    client = console_client(app, make_admin(role).email)
    response = client.get(path)
    assert response.status_code == 403
    assert permission in response.text


def test_links_follow_permissions(app, owner, make_admin):
    page = owner.get("/admin/settings").text
    for label in ("Discounts", "Shipping", "Tax rates", "Settings", "Staff", "Roles"):
        assert f">{label}</a>" in page
    editor = console_client(app, make_admin("editor").email).get("/admin/discounts").text
    assert (
        ">Discounts</a>" in editor and ">Settings</a>" not in editor and ">Staff</a>" not in editor
    )


@pytest.mark.parametrize(
    "action",
    [
        "/admin/discounts",
        "/admin/shipping-methods",
        "/admin/tax-rates",
        "/admin/settings",
        "/admin/staff",
        "/admin/roles",
    ],
)
def test_every_form_needs_its_csrf_token(owner, owner_client, action):
    before = owner_client.get("/settings").json
    response = owner.post(action, data={"name": "x", "code": "X1", "shop_name": "Forged"})
    assert response.status_code == 403
    assert "This form did not come from this console" in response.text
    assert owner_client.get("/settings").json == before
    assert owner_client.get("/discounts").json["total"] == 0


# Customers


def test_a_customer_is_found_by_name_with_orders_addresses_and_total_spent(
    app, owner, owner_client
):
    from orders_helpers import order_for_console

    order = order_for_console(app, owner_client.email, to=("paid",))
    listed = owner.get("/admin/customers?q=lovelace").text
    assert "ada@example.com" in listed
    assert "No customer matches." in owner.get("/admin/customers?q=babbage").text
    [customer] = owner_client.get("/customers?q=ada").json["items"]
    page = owner.get(f"/admin/customers/{customer['id']}").text
    assert order["number"] in page and "1 Market Street" in page and "Lyon" in page
    spent = re.search(r'<dd id="spent">([^<]*)</dd>', page).group(1)
    assert spent == html.escape(order_money(app, order["total_cents"], order["currency"]))


def order_money(app, cents, currency):
    from shop.money import display

    return display(cents, currency)


def test_erasing_asks_for_the_email_and_refuses_while_an_order_is_open(app, owner, owner_client):
    from orders_helpers import order_for_console

    order_for_console(app, owner_client.email, to=("paid",))
    [customer] = owner_client.get("/customers?q=ada").json["items"]
    url = f"/admin/customers/{customer['id']}/erase"
    response = post(owner, url, url, confirm_email="someone@example.com")
    assert response.status_code == 400 and "nothing was erased" in error_of(response)
    response = post(owner, url, url, confirm_email="ADA@example.com")
    assert response.status_code == 409
    assert "is still open: deliver, cancel or refund it" in error_of(response)
    assert owner_client.get(f"/customers/{customer['id']}").status_code == 200


def test_a_customer_without_open_orders_is_deactivated_then_erased(app, owner, owner_client):
    customer = app.test_client()
    body = {"email": "bob@example.com", "password": "correct horse 42", "name": "Bob"}
    assert customer.post("/auth/register", json=body).status_code == 201
    [row] = owner_client.get("/customers?q=bob").json["items"]
    url = f"/admin/customers/{row['id']}"
    assert post(owner, url, f"{url}/active", set_active="0").status_code == 303
    assert owner_client.get(f"{url[6:]}").json["active"] is False
    assert customer.get("/auth/me").status_code == 401
    response = post(owner, f"{url}/erase", f"{url}/erase", confirm_email="bob@example.com")
    assert response.status_code == 303
    assert owner_client.get(f"/customers/{row['id']}").status_code == 404
    assert owner.get(url).status_code == 404


@pytest.mark.parametrize(
    "role, path, permission",
    [
        ("editor", "/admin/customers", "customers.read"),
        ("admin", "/admin/customers", None),
    ],
)
def test_customers_need_customers_read(app, make_admin, role, path, permission):
    client = console_client(app, make_admin(role).email)
    response = client.get(path)
    assert response.status_code == (403 if permission else 200)
    if permission:
        assert permission in response.text
