"""What the catalogue's console pages share: reading a form into the API's command (a plain
dict the domain checks), saying a refusal in the form's words, and the shop's currency.

A page never checks a rule itself: it hands the domain what the form says and shows the
domain's refusal (``shop.errors``) on the same form, the input kept.
"""

from flask import request
from werkzeug.exceptions import HTTPException

from shop.admin.views import for_people
from shop.errors import Invalid, ShopError
from shop.http.errors import as_http, error_response
from shop.money import from_text, to_text
from shop.site.settings import current

# Longest text any catalogue field takes (a description: 50,000); a longer field is cut
# here and then refused by the domain's own length check.
MAX_FIELD = 50_001


def text(name: str) -> str:
    """A text field of the form, stripped."""
    return request.form.get(name, "")[:MAX_FIELD].strip()


def optional(name: str) -> str | None:
    """A text field, None when left empty."""
    return text(name) or None


def number(name: str, label: str) -> int | None:
    """A whole number field (None when empty); 400 naming ``label`` otherwise."""
    value = text(name)
    if not value:
        return None
    if not value.isascii() or not value.lstrip("-").isdigit() or len(value) > 13:
        raise Invalid(f"{label}: write a whole number, such as 12.")
    return int(value)


def money(name: str, label: str, currency: str) -> int | None:
    """An amount in ``currency`` ("12.50") as minor units (None when empty)."""
    value = text(name)
    if not value:
        return None
    try:
        return from_text(value, currency)
    except ValueError as error:
        raise Invalid(f"{label}: {error}") from None


def checked(name: str) -> bool:
    """A checkbox: absent from the form when unticked."""
    return request.form.get(name) == "1"


def shop_currency() -> str:
    return current()["currency"]


def amount(cents: int | None, currency: str) -> str:
    """Minor units as the form shows them ("12.50"), empty for None."""
    return "" if cents is None else to_text(cents, currency)


def refusal(caught: HTTPException | ShopError, labels: dict | None = None) -> tuple[str, int]:
    """A refusal as the form shows it: the API's message in the form's words, and its
    status (the page answers with it, so a refused form is never a 200)."""
    body, status, _headers = error_response(as_http(caught))
    return for_people(body["message"], labels), status
