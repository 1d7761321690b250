"""The storefront's strings go through gettext: every string of its templates is in the
English catalogue, a catalogue for another language is used when the shop's locale setting
names it, and prices follow the locale: one setting, changed at run time."""

import shutil

from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from shop.storefront import i18n
from tests.catalogue_helpers import Catalogue

STORE = i18n.FOLDER.parent


def _source_strings() -> set:
    method_map = [("**/templates/**.html", "jinja2"), ("**.py", "python")]
    options = {"**/templates/**.html": {"extensions": "jinja2.ext.i18n"}}
    found = set()
    for _file, _line, message, _comments, _context in extract_from_dir(
        str(STORE), method_map, options_map=options
    ):
        found.add(message if isinstance(message, str) else message[0])
    return found


def test_every_storefront_string_is_in_the_english_catalogue():
    with (i18n.FOLDER / "en" / "LC_MESSAGES" / "messages.po").open("rb") as po:
        catalogue = {m.id if isinstance(m.id, str) else m.id[0] for m in read_po(po) if m.id}
    missing = _source_strings() - catalogue
    assert missing == set(), (
        "run: pybabel extract -F shop/storefront/babel.cfg --no-location --omit-header"
        " --sort-output -o shop/storefront/translations/messages.pot shop/storefront"
        " && pybabel update -i shop/storefront/translations/messages.pot"
        f" -d shop/storefront/translations; missing: {sorted(missing)}"
    )


def test_another_language_is_a_catalogue_beside_the_english_one(monkeypatch, tmp_path):
    folder = tmp_path / "translations"
    shutil.copytree(i18n.FOLDER, folder)
    german = folder / "de" / "LC_MESSAGES"
    german.mkdir(parents=True)
    english = (folder / "en" / "LC_MESSAGES" / "messages.po").read_text()
    (german / "messages.po").write_text(
        english.replace("Language: en", "Language: de").replace(
            'msgid "All products"\nmsgstr ""', 'msgid "All products"\nmsgstr "Alle Produkte"'
        )
    )
    monkeypatch.setattr(i18n, "FOLDER", folder)
    assert i18n.translations("de_DE").gettext("All products") == "Alle Produkte"
    assert i18n.translations("fr_FR").gettext("All products") == "All products"


def test_pages_speak_the_shops_language_and_write_its_prices(
    client, owner_client, monkeypatch, tmp_path
):
    Catalogue(owner_client).product(name="Sencha", slug="sencha", price_cents=1890)
    test_another_language_is_a_catalogue_beside_the_english_one(monkeypatch, tmp_path)
    english = client.get("/store/products")
    assert '<html lang="en">' in english.text and "All products" in english.text
    assert owner_client.patch("/settings", json={"locale": "de_DE"}).status_code == 200

    page = client.get("/store/products")
    assert '<html lang="de">' in page.text
    assert "Alle Produkte" in page.text
    assert "18,90\xa0€" in page.text
