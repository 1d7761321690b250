"""The storefront's language: its strings through gettext (Babel's catalogues in
``translations/<locale>/LC_MESSAGES/messages.po``), its prices and dates in the shop's
``locale`` setting, the one locale the shop has (invoices write theirs in it too).

The ``.po`` files are compiled in memory, once per locale and process, so there is no build
step and no compiled file to keep in step; changing the setting changes the next page.
English is the source language: its catalogue is the template every other starts from
(docs/storefront.md, "Another language").
"""

import functools
import io
from pathlib import Path

from babel import Locale
from babel.dates import format_date
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import NullTranslations, Translations
from flask import current_app, g
from jinja2 import pass_context
from markupsafe import Markup

from shop import money
from shop.clock import parse

FOLDER = Path(__file__).parent / "translations"


def translations(locale: str) -> NullTranslations:
    """The catalogue for ``locale`` (or its language), else the source strings."""
    return _compiled(FOLDER, locale)


@functools.lru_cache(maxsize=16)
def _compiled(folder: Path, locale: str) -> NullTranslations:
    for name in (locale, Locale.parse(locale).language):
        po = folder / name / "LC_MESSAGES" / "messages.po"
        if po.is_file():
            with po.open("rb") as source:
                catalog = read_po(source, locale=name)
            compiled = io.BytesIO()
            write_mo(compiled, catalog)
            compiled.seek(0)
            return Translations(compiled)
    return NullTranslations()


@functools.lru_cache(maxsize=16)
def html_lang(locale: str) -> str:
    """The page's ``lang``: the locale's language."""
    return Locale.parse(locale).language


def install(app, locale_of) -> None:
    """Give the storefront's templates ``_``/``gettext``/``ngettext``, the ``price`` and
    ``day`` filters and ``html_lang()``, each in ``locale_of()``: the shop's locale for the
    page being drawn."""

    def catalogue() -> NullTranslations:
        """The page's catalogue, found once per page (a page draws dozens of strings)."""
        found = g.get("store_catalogue")
        if found is None:
            found = g.store_catalogue = translations(locale_of())
        return found

    # A template's strings, prices and dates take the locale from the settings the page
    # draws (its ``shop``, every storefront page has it): dozens a page, each through ``g``
    # cost more than the card they were on (docs/performance.md, "The category page at 10k").
    def page_locale(context) -> str:
        shop = context.get("shop")
        return shop["locale"] if shop else locale_of()

    # jinja2.ext's newstyle gettext, called straight (not through its ``_`` alias): the
    # string is a format (``%%`` is ``%``), marked safe where autoescaping; one without
    # values is made once per catalogue (a page draws ~27; docs/performance.md,
    # "Storefront pages' rendering").
    @pass_context
    def _gettext(context, message: str, **values) -> str:
        catalogue = translations(page_locale(context))
        if not context.eval_ctx.autoescape:
            return catalogue.gettext(message) % values
        if values:
            return Markup(catalogue.gettext(message)) % values  # noqa: S704 - our catalogue
        return _marked(catalogue, message)

    @pass_context
    def ngettext(context, singular: str, plural: str, count: int) -> str:
        return translations(page_locale(context)).ngettext(singular, plural, count)

    @pass_context
    def price(context, minor: int, currency: str) -> str:
        return money.display(minor, currency, page_locale(context))

    @pass_context
    def day(context, stamp: str) -> str:
        return format_date(parse(stamp), "long", locale=page_locale(context))

    app.jinja_env.add_extension("jinja2.ext.i18n")
    app.jinja_env.install_gettext_callables(_gettext, ngettext, newstyle=True)
    # ``_gettext`` is newstyle itself: called straight, not through the extension's wrapper
    # and its ``_`` alias (two more calls a string).
    app.jinja_env.globals["gettext"] = app.jinja_env.globals["_"] = _gettext
    app.jinja_env.filters["price"] = price
    app.jinja_env.filters["day"] = day
    app.jinja_env.globals["html_lang"] = lambda: html_lang(locale_of())
    app.extensions["store_catalogue"] = catalogue


@functools.lru_cache(maxsize=1024)
def _marked(catalogue: NullTranslations, message: str) -> Markup:
    """``message`` from ``catalogue`` as a template's ``_()`` without values gives it."""
    return Markup(catalogue.gettext(message)) % {}  # noqa: S704 - our catalogue, as jinja2.ext


def gettext(message: str, **values) -> str:
    """A string of the storefront's Python code in the shop's language (``values`` filled
    as in the templates: ``%(name)s``)."""
    text = current_app.extensions["store_catalogue"]().gettext(message)
    return text % values if values else text
