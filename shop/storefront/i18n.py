"""The storefront's language: its strings through gettext (Babel's catalogues in
``translations/<locale>/LC_MESSAGES/messages.po``), its prices and dates in ``LOCALE``.

The ``.po`` files are compiled in memory at start, so there is no build step and no
compiled file to keep in step. English is the source language: its catalogue is the
template every other starts from (docs/storefront.md, "Another language").
"""

import io
from pathlib import Path

from babel import Locale
from babel.dates import format_date
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import NullTranslations, Translations
from flask import current_app

from shop import money
from shop.clock import parse

FOLDER = Path(__file__).parent / "translations"


def translations(locale: str) -> NullTranslations:
    """The catalogue for ``locale`` (or its language), else the source strings."""
    for name in (locale, Locale.parse(locale).language):
        po = FOLDER / name / "LC_MESSAGES" / "messages.po"
        if po.is_file():
            with po.open("rb") as source:
                catalog = read_po(source, locale=name)
            compiled = io.BytesIO()
            write_mo(compiled, catalog)
            compiled.seek(0)
            return Translations(compiled)
    return NullTranslations()


def install(app) -> None:
    """Give the storefront's templates ``_``/``gettext``/``ngettext`` and the locale's
    ``price`` and ``day`` filters."""
    locale = app.config["LOCALE"]
    app.jinja_env.add_extension("jinja2.ext.i18n")
    catalogue = translations(locale)
    app.extensions["store_translations"] = catalogue
    app.jinja_env.install_gettext_translations(catalogue, newstyle=True)
    app.jinja_env.filters["price"] = lambda minor, currency: money.display(minor, currency, locale)
    app.jinja_env.filters["day"] = lambda stamp: format_date(parse(stamp), "long", locale=locale)
    app.jinja_env.globals["html_lang"] = Locale.parse(locale).language


def gettext(message: str, **values) -> str:
    """A string of the storefront's Python code in the shop's language (``values`` filled
    as in the templates: ``%(name)s``)."""
    text = current_app.extensions["store_translations"].gettext(message)
    return text % values if values else text
