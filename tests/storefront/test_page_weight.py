"""What the storefront's browsing pages weigh (issue 42): each page's HTML and the style
sheets it links stay under bench/storefront.py's budget, and none loads a script (only the
card step does, for Stripe). A size, not a time: the timings are the benchmark's."""

from bench.storefront import BUDGET_BYTES, weigh
from tests.catalogue_helpers import Catalogue, upload


def test_the_browsing_pages_stay_under_the_budget_without_a_script(client, owner_client):
    made = Catalogue(owner_client)
    teas = made.category(name="Teas", slug="teas", description="Loose-leaf teas.")
    made.category(name="Green teas", slug="green-teas", parent_id=teas["id"])
    sized = made.product(
        name="Sencha",
        slug="sencha",
        description="A green tea from Shizuoka. " * 20,
        category_id=teas["id"],
        options=[{"name": "Size", "values": ["50 g", "100 g", "250 g"]},
                 {"name": "Grade", "values": ["First flush", "Second flush"]}],
        generate=True,
    )  # fmt: skip
    assert upload(owner_client, sized["id"], alt="A cup of sencha").status_code == 201
    # More than a page of cards (24) everywhere: the heaviest lists a visitor gets.
    names = [made.product(name=f"Tea {n:02d}", category_id=teas["id"])["id"] for n in range(30)]
    featured = made.collection(title="Featured", slug="featured")
    owner_client.put(f"/collections/{featured['id']}", json={"product_ids": names[:8]})
    made.entry("about", data={"title": "About us", "body": "A small tea shop."})

    def get(path: str) -> bytes:
        response = client.get(path)
        assert response.status_code == 200, path
        return response.data

    pages = ["/store/", "/store/products", "/store/categories/teas", "/store/search?q=tea",
             "/store/products/sencha", "/store/collections/featured", "/store/pages/about",
             "/store/cart"]  # fmt: skip
    weighed = {path: weigh(get, path) for path in pages}
    assert {p: w.scripts for p, w in weighed.items() if w.scripts} == {}
    assert {p: w.total for p, w in weighed.items() if w.total > BUDGET_BYTES} == {}
    assert all(w.css > 0 for w in weighed.values())  # the style sheets were found and counted
