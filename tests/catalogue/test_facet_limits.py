"""Facet cardinality (found by the attack on issue 25): an option facet answers at most
100 values, the most common first, however many the catalogue holds."""

from tests.catalogue_helpers import Catalogue


def test_an_option_facet_answers_at_most_100_values_the_most_common_first(client, owner_client):
    catalogue = Catalogue(owner_client)
    many = [f"c{n:03}" for n in range(100)]
    catalogue.product(options=[{"name": "Colour", "values": many}], generate=True)
    catalogue.product(options=[{"name": "Colour", "values": ["c099", "extra"]}], generate=True)
    response = client.get("/products/facets")
    assert response.status_code == 200, response.json
    (colour,) = response.json["options"]
    assert len(colour["values"]) == 100
    assert colour["values"][0] == {"value": "c099", "count": 2}
    assert "extra" not in {value["value"] for value in colour["values"]}  # 101st by name
