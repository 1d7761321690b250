"""What the store's pages share: a form read into the API's body, loaded through the API's
own schema (``shop/api/store_input.py``), so a value is refused with the API's words, and a
use case's refusal turned into the message a form shows above the values it kept.

``Refused`` carries the message (already in the form's words: a field name the API puts
first becomes the form's label for it) and the status of the page that shows it.
"""

import re

from flask import request
from marshmallow import ValidationError
from werkzeug.exceptions import HTTPException

from shop.admin.views import NUMBER_RE, PAGE_SIZE, for_people, page_number  # noqa: F401 - the store pages' helper
from shop.db.pages import Where, paginate
from shop.errors import ShopError
from shop.http.errors import as_http, error_response, fold_messages
from shop.money import from_text

_INTEGER = re.compile(r"-?[0-9]{1,15}")


class Refused(Exception):
    """A form the use case (or its schema) refused: what to say, with which status and
    headers."""

    def __init__(self, message: str, status: int = 400, headers: dict | None = None):
        super().__init__(message)
        self.message, self.status, self.headers = message, status, headers or {}


def load(schema, body: dict, labels: dict[str, str]) -> dict:
    """``body`` as the API's ``schema`` loads it, or ``Refused`` with the API's message."""
    try:
        return schema().load(body)
    except ValidationError as error:
        raise Refused(for_people(" ".join(fold_messages(error.messages)), labels)) from None


def attempt(action, labels: dict[str, str]):
    """``action()``'s answer, or ``Refused`` with the message and status the API would give
    (a 404 stays an error page: the thing is gone)."""
    try:
        return action()
    except (HTTPException, ShopError) as caught:
        error = as_http(caught)
        if error.code == 404:
            raise error from None
        body, status, headers = error_response(error)
        raise Refused(for_people(body["message"], labels), status, headers) from None


def text(name: str, limit: int = 2000) -> str:
    """A text field, trimmed (and cut at ``limit``: the schema's limits are lower)."""
    return request.form.get(name, "").strip()[:limit]


def optional(name: str, limit: int = 2000) -> str | None:
    """A text field, or None when left empty (the API's ``null``)."""
    return text(name, limit) or None


def integer(name: str):
    """A whole-number field as an int; None when empty; the text itself when it is not a
    number, so that the schema refuses it in the API's words ("Not a valid integer.")."""
    return as_integer(text(name, 40))


def as_integer(value: str):
    """``integer`` of a text already read."""
    if not value:
        return None
    return int(value) if _INTEGER.fullmatch(value) else value


def amount(name: str, label: str, currency: str) -> int | None:
    """A money field written in the shop's currency ("12.50") as minor units; None when
    empty; ``Refused`` naming the field when it is not an amount."""
    return as_amount(text(name, 40), label, currency)


def as_amount(value: str, label: str, currency: str) -> int | None:
    """``amount`` of a text already read."""
    if not value:
        return None
    try:
        return from_text(value, currency)
    except ValueError as error:
        raise Refused(f"{label}: {error}") from None


def checked(name: str) -> bool:
    """A checkbox: ticked or not."""
    return bool(request.form.get(name))


def listing(select: str, table: str, order: str, page: int, where: Where | None = None):
    """One page of a list as the API pages it (``db.pages.paginate``): ``(result, pages)``,
    ``result`` holding ``items``, ``page`` and ``total``; ``select`` is ``SELECT ... FROM
    table``, ``table`` what the total is counted over."""
    args = {"page": page, "page_size": PAGE_SIZE}
    result = paginate(select, table, where or Where(), order, args)
    return result, max(1, -(-result["total"] // PAGE_SIZE))
