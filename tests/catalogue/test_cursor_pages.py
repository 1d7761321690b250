"""Lists paged by ``cursor`` (shop/db/pages.py): every row once, in order, at any depth; a cursor
bound to its list, sort and filters; totals counted up to a cap (docs/openapi.md#lists)."""

import base64
import json

from shop import db
from shop.db import pages, totals

ROWS = 23  # not a multiple of the page sizes below: the last page is short


def _seed(app) -> None:
    """Products, customers and orders by bulk SQL, their created_at tied in threes (the id
    breaks the tie), and the kept counts recounted as after an import."""
    at = [f"2026-01-01T00:00:{n // 3:02d}.000000Z" for n in range(ROWS)]
    with app.app_context(), db.transaction():
        db.execute_many(
            "INSERT INTO products (id, name, slug, sku, price_cents, stock, active, created_at,"
            " updated_at) VALUES (:id, :name, :id, :id, :price, :stock, 1, :at, :at)",
            [{"id": f"p{n:03d}", "name": f"P {n % 4}", "price": n % 5 * 100, "at": at[n],
              "stock": n % 3} for n in range(ROWS)],
        )  # fmt: skip
        db.execute_many(
            "INSERT INTO customers (id, email, name, created_at, updated_at)"
            " VALUES (:id, :id || '@example.com', 'C', :at, :at)",
            [{"id": f"c{n:03d}", "at": at[n]} for n in range(ROWS)],
        )
        db.execute_many(
            "INSERT INTO orders (id, number, customer_id, status, subtotal_cents, total_cents,"
            " currency, created_at, updated_at) VALUES (:id, :id, 'c000', :status, 1, 1, 'EUR',"
            " :at, :at)",
            [{"id": f"o{n:03d}", "status": "paid" if n % 4 else "pending", "at": at[n]}
             for n in range(ROWS)],
        )  # fmt: skip
        totals.recount()


def _walk(client, path: str, page_size: int) -> tuple[list, list]:
    """Every page of ``path`` by cursor: (ids in order, the pages' bodies)."""
    ids, bodies, cursor = [], [], None
    for _ in range(ROWS + 1):  # bounded: a cursor that never ends fails the test
        sep = "&" if "?" in path else "?"
        more = f"&cursor={cursor}" if cursor else ""
        response = client.get(f"{path}{sep}page_size={page_size}{more}")
        assert response.status_code == 200, response.json
        bodies.append(response.json)
        ids += [item["id"] for item in response.json["items"]]
        cursor = response.json["next_cursor"]
        if cursor is None:
            return ids, bodies
    raise AssertionError(f"{path}: more pages than rows")


def test_a_cursor_walk_reads_every_row_once_in_order(app, client, owner_client):
    _seed(app)
    app.config["LIST_TOTAL_CAP"] = 5
    lists = [
        (client, "/products?sort=price", 4, True),  # ties in price: by id; a kept count
        (client, "/products", 5, True),  # -created_at, ties in threes
        (client, "/products?min_price=100&sort=-name", 3, False),  # filtered: capped
        # few: found, then sorted, and all counted in the same statement (exact)
        (client, "/products?in_stock=false&sort=-name", 2, True),
        (owner_client, "/orders", 4, True),
        (owner_client, "/orders?status=paid", 6, False),
        (owner_client, "/customers", 7, False),
    ]
    for who, path, size, kept in lists:
        whole = who.get(path + ("&" if "?" in path else "?") + "page_size=100").json
        ids, bodies = _walk(who, path, size)
        assert ids == [item["id"] for item in whole["items"]], path
        assert len(set(ids)) == len(ids) > size, path
        assert [body["page"] for body in bodies] == list(range(1, len(bodies) + 1)), path
        assert bodies[-1]["total"] == len(ids) and bodies[-1]["total_is_exact"], path
        # A page with more after it: exact from the kept count (or from every match found
        # for a narrow filter), else counted up to the cap.
        assert bodies[0]["total_is_exact"] is kept, path
        assert bodies[0]["total"] == (len(ids) if kept else max(5, size)), path

    # page= and cursor agree, and page=2 hands out the cursor of page 3.
    second = client.get("/products?sort=price&page=2&page_size=4").json
    third = client.get(f"/products?sort=price&page_size=4&cursor={second['next_cursor']}").json
    offset = client.get("/products?sort=price&page=3&page_size=4").json
    assert third["items"] == offset["items"] and third["page"] == 3


def test_a_cursor_that_is_not_this_lists_is_a_400(app, client, owner_client, monkeypatch):
    _seed(app)
    bindings = []  # what the list's cursors are bound to, as someone reading the code can tell
    binding = pages._binding
    monkeypatch.setattr(pages, "_binding", lambda *a: bindings.append(binding(*a)) or bindings[-1])
    cursor = client.get("/products?sort=price&page_size=2").json["next_cursor"]
    raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    version, tag, before, values = json.loads(raw)
    retyped = json.dumps([version, tag, before, [str(values[0]), values[1]]])  # price as text
    as_text = ["9'; --", values[1]]  # and with the checksum made to match: still not ours
    forged = json.dumps([version, pages._tag(bindings[-1], as_text), before, as_text])
    for path in [
        "/products?sort=price&cursor=!!not-base64!!",
        "/products?sort=price&cursor=" + base64.urlsafe_b64encode(b"[1, 2]").decode(),
        "/products?sort=price&cursor=" + base64.urlsafe_b64encode(b"[" * 3000).decode(),
        "/products?sort=price&cursor=" + base64.urlsafe_b64encode(retyped.encode()).decode(),
        f"/products?sort=name&cursor={cursor}",  # another sort
        f"/products?sort=price&min_price=1&cursor={cursor}",  # another filter
        f"/products?sort=price&page=2&cursor={cursor}",
        f"/products?q=p&sort=relevance&cursor={cursor}",
    ]:
        response = client.get(path)
        assert response.status_code == 400, (path, response.json)
        assert "cursor" in response.json["message"], path
    # SQLite orders any text after every number (a page past the end); PostgreSQL refuses.
    forged_page = client.get(
        "/products?sort=price&cursor=" + base64.urlsafe_b64encode(forged.encode()).decode()
    )
    with app.app_context():
        refused = db.get_db().engine == "postgresql"
    assert forged_page.status_code == (400 if refused else 200), forged_page.json
    other = owner_client.get(f"/customers?cursor={cursor}")
    assert other.status_code == 400 and "another list" in other.json["message"]
    assert client.get(f"/products?sort=price&page_size=7&cursor={cursor}").status_code == 200


def _seed_categories(app) -> dict:
    """A tree (top > middle > leaf) and another top category, with the ``_seed`` products
    spread over them: p000-p007 in the leaf, p008-p015 in the middle, p016-p019 in the top,
    p020-p022 in the other."""
    _seed(app)
    at = "2026-01-01T00:00:00.000000Z"
    ids = {"top": "k1", "middle": "k2", "leaf": "k3", "other": "k4"}
    with app.app_context(), db.transaction():
        db.execute_many(
            "INSERT INTO categories (id, name, slug, parent_id, created_at, updated_at)"
            " VALUES (:id, :name, :name, :parent, :at, :at)",
            [{"id": "k1", "name": "top", "parent": None, "at": at},
             {"id": "k2", "name": "middle", "parent": "k1", "at": at},
             {"id": "k3", "name": "leaf", "parent": "k2", "at": at},
             {"id": "k4", "name": "other", "parent": None, "at": at}],
        )  # fmt: skip
        for n in range(ROWS):
            home = "k3" if n < 8 else "k2" if n < 16 else "k1" if n < 20 else "k4"
            db.execute("UPDATE products SET category_id = :c WHERE id = :id",
                       {"c": home, "id": f"p{n:03d}"})  # fmt: skip
    return ids


def test_a_category_pages_the_same_whether_its_count_is_within_the_cap_or_not(app, client):
    """A category's count decides how its page is read (shop.db.pages.IF_FEW): within the
    cap its products are found and sorted, past it the sort's index is walked. Both answer
    the same rows in the same order, sub-categories included, page by page."""
    _seed_categories(app)
    expected = {"top": 20, "middle": 16, "leaf": 8, "other": 3}
    for cap in (1000, 5):  # every category within the cap, then most of them past it
        app.config["LIST_TOTAL_CAP"] = cap
        for slug, count in expected.items():
            for sort in ("-created_at", "name", "-price"):
                path = f"/products?category={slug}&sort={sort}"
                whole = client.get(path + "&page_size=100").json
                assert whole["total"] == count and whole["total_is_exact"], (cap, path)
                ids, bodies = _walk(client, path, 3)
                assert ids == [item["id"] for item in whole["items"]], (cap, path)
                exact = count <= cap
                assert bodies[0]["total_is_exact"] is exact, (cap, path)
                assert bodies[0]["total"] == (count if exact else cap), (cap, path)
                by_id = client.get(f"/products?category_id=k{list(expected).index(slug) + 1}"
                                   f"&sort={sort}&page_size=100").json  # fmt: skip
                assert by_id["items"] == whole["items"], (cap, path)
    assert client.get("/products?category=nowhere").json["total"] == 0


def test_a_narrow_filter_counts_every_match_with_its_page(app, client, owner_client, sql_count):
    """A collection (found through its own key) answers an exact total past the cap, in
    one statement with its page, and the same total on every page, by cursor too."""
    _seed(app)
    app.config["LIST_TOTAL_CAP"] = 5
    collection = owner_client.post("/collections", json={"title": "Picks", "slug": "picks"})
    assert collection.status_code == 201, collection.json
    collection = collection.json
    with app.app_context(), db.transaction():
        db.execute_many(
            "INSERT INTO collection_products (collection_id, product_id, position)"
            " VALUES (:c, :p, :n)",
            [{"c": collection["id"], "p": f"p{n:03d}", "n": n} for n in range(0, ROWS, 2)],
        )
    members = [f"p{n:03d}" for n in range(0, ROWS, 2)]
    for path in (
        "/products?collection=picks&sort=price",
        f"/products?collection_id={collection['id']}",
    ):
        with sql_count() as counted:
            first = client.get(path + "&page_size=4").json
        # The page and its total: one statement; its prior prices (issue 40): one more.
        assert counted["statements"] == 2, path
        assert first["total"] == len(members) and first["total_is_exact"], path
        ids, bodies = _walk(client, path, 4)
        assert sorted(ids) == members and len(ids) == len(set(ids)), path
        assert {body["total"] for body in bodies} == {len(members)}, path
