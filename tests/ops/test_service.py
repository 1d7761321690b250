"""The front door: what a person or a script finds at the root and at a wrong address."""


def test_the_root_is_a_small_json_index_with_the_way_on(client):
    response = client.get("/")
    assert response.status_code == 200
    body = response.json
    assert body["name"] == "shop" and body["version"]
    assert body["links"] == {"swagger": "/swagger", "openapi": "/openapi.json", "admin": "/admin"}
    for link in body["links"].values():
        assert client.get(link).status_code in (200, 308), link


def test_an_unknown_address_is_json_that_points_to_the_index(client):
    response = client.get("/no/such/page", headers={"Accept": "text/html"})
    assert response.status_code == 404
    assert response.is_json
    assert response.json == {
        "message": "Not found: /no/such/page. The index of this API is at /; its documentation"
        " at /swagger."
    }


def test_the_favicon_is_served_and_the_console_links_it(client):
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200
    assert icon.data[:4] == b"\x00\x00\x01\x00"  # an ICO file's header
    page = client.get("/admin/login")
    assert '<link rel="icon" href="/favicon.ico">' in page.get_data(as_text=True)
