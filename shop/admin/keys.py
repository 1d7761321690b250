"""The console's API-key pages: the list (dormant and expired keys marked), the create form
and the one page that shows a new secret, revoke and roll. Every action is a use case of
``shop/auth/keys/store.py``, as the JSON API's."""

import hmac
from urllib.parse import urlencode

from flask import current_app, g, redirect, render_template, request, url_for
from werkzeug.exceptions import HTTPException

from shop import db
from shop.admin.views import (
    ID_RE,
    PAGE_SIZE,
    _require,
    bp,
    csrf_token,
    for_people,
    page_number,
    sign,
)
from shop.auth.keys import rules as key_rules
from shop.auth.keys import store as key_store
from shop.auth.keys.state import is_dormant
from shop.clock import now, parse
from shop.errors import ShopError
from shop.http.errors import abort, as_http, error_response
from shop.permissions import ALL_SCOPES


@bp.route("/api-keys")
def keys():
    """The keys this administrator may see, newest first, dormant and expired ones marked."""
    _require("api_key.read")
    status = request.args.get("status")
    if status not in ("active", "expired", "revoked"):
        status = None
    page = page_number()
    result = key_store.list_page(g.caller, status, page, PAGE_SIZE)
    days = current_app.config["KEY_DORMANT_DAYS"]
    moment = now()
    for key in result["items"]:
        key["dormant"] = is_dormant(key, days, moment)
        key["idle_days_left"] = None
        if key["idle_expires_at"]:
            left = parse(key["idle_expires_at"]) - moment
            key["idle_days_left"] = max(0, left.days + (1 if left.seconds else 0))
    revoked = request.args.get("revoked", "")
    revoked = key_store.get(revoked, g.caller) if ID_RE.fullmatch(revoked) else None
    pages = max(1, -(-result["total"] // PAGE_SIZE))

    def page_url(number):
        query = {"status": status, "page": number}
        return url_for("admin.keys") + "?" + urlencode({k: v for k, v in query.items() if v})

    return render_template(
        "admin/keys.html",
        result=result,
        status=status,
        pages=pages,
        page_url=page_url,
        dormant_days=days,
        idle_days=current_app.config["API_KEY_IDLE_DAYS"],
        revoked=revoked,
    )


def _scope_groups() -> list[tuple[str, list[str]]]:
    """The scopes this administrator may grant, grouped by resource, in catalogue order."""
    grantable = set(key_rules.grantable_scopes(g.caller))
    groups = {}
    for scope in ALL_SCOPES:
        groups.setdefault(scope.split(":", 1)[1], [])
        if scope in grantable:
            groups[scope.split(":", 1)[1]].append(scope)
    return [(resource, scopes) for resource, scopes in groups.items() if scopes]


# The create form's labels, for what the API says of a field.
_LABELS = {"label": "Label", "expires_at": "Expires on"}


def _form_page(form: dict, error: str | None = None, status: int = 200):
    """The create form; ``form`` holds what was typed, and the id the key will take."""
    return (
        render_template(
            "admin/new_key.html",
            groups=_scope_groups(),
            form=form,
            error=error,
            today=now().date().isoformat(),
            key_sig=sign(csrf_token(), "new key " + form["key_id"]),
        ),
        status,
    )


@bp.route("/api-keys/new")
def new_key():
    """The form to create a key: label, grantable scopes, optional expiry date."""
    _require("api_key.create")
    return _form_page({"label": "", "scopes": [], "expires_at": "", "key_id": db.new_id()})


@bp.route("/api-keys", methods=["POST"])
def create_key():
    """Create a key, and answer the only page that will ever show its secret."""
    _require("api_key.create")
    form = {
        "label": request.form.get("label", "")[:200],
        "scopes": request.form.getlist("scopes")[:50],
        "expires_at": request.form.get("expires_at", "")[:64],
        "key_id": request.form.get("key_id", ""),
    }
    sig = request.form.get("key_sig", "")
    if not ID_RE.fullmatch(form["key_id"]) or not hmac.compare_digest(
        sig, sign(csrf_token(), "new key " + form["key_id"])
    ):
        abort(400, "This form is incomplete: reload the page and try again.")
    if db.value("SELECT 1 FROM api_keys WHERE id = :id", {"id": form["key_id"]}):
        return _already_created(form["key_id"])
    try:
        data = {
            "label": form["label"],
            "scopes": form["scopes"],
            "expires_at": form["expires_at"] or None,
        }
        created = key_store.issue(data, g.caller, key_id=form["key_id"])
    except (HTTPException, ShopError) as caught:
        error = as_http(caught)
        if error.code == 409 and db.value(
            "SELECT 1 FROM api_keys WHERE id = :id", {"id": form["key_id"]}
        ):
            return _already_created(form["key_id"])
        body, status, _ = error_response(error)
        return _form_page(form, for_people(body["message"], _LABELS), status)
    return render_template("admin/created.html", key=created)


def _already_created(key_id: str):
    """409 for a form sent twice: the key it made, if this administrator may see it.

    The id comes from the form, so it is looked up as the viewer: another administrator's
    key (an id anyone can sign for their own form) is never named.
    """
    key = key_store.get(key_id, g.caller)
    if key is None:
        abort(409, "This form was already used: open a new one to create another key.")
    return render_template("admin/already_created.html", key=key), 409


def _visible_key(key_id: str) -> dict:
    key = key_store.get(key_id, g.caller) if ID_RE.fullmatch(key_id) else None
    if key is None:
        abort(404, "API key not found.")
    return key


@bp.route("/api-keys/<id:key_id>/revoke")
def revoke_confirm(key_id):
    """Ask before revoking: the key stops working at once and for good."""
    _require("api_key.delete")
    return render_template("admin/revoke.html", key=_visible_key(key_id))


@bp.route("/api-keys/<id:key_id>/revoke", methods=["POST"])
def revoke_key(key_id):
    """Revoke a key at once, then back to the list."""
    _require("api_key.delete")
    if not ID_RE.fullmatch(key_id) or not key_store.revoke(key_id, g.caller):
        abort(404, "API key not found.")
    return redirect(url_for("admin.keys", revoked=key_id), 303)


GRACE_CHOICES = (
    (0, "none: the old key stops at once"),
    (3600, "1 hour"),
    (24 * 3600, "1 day"),
    (7 * 24 * 3600, "7 days"),
)


@bp.route("/api-keys/<id:key_id>/roll")
def roll_confirm(key_id):
    """Ask how long the old key may keep working, then roll."""
    _require("api_key.delete")
    return render_template("admin/roll.html", key=_visible_key(key_id), choices=GRACE_CHOICES)


@bp.route("/api-keys/<id:key_id>/roll", methods=["POST"])
def roll_key(key_id):
    """Roll a key, and answer the only page that will ever show its successor's secret."""
    _require("api_key.delete")
    grace = request.form.get("grace_seconds", "")
    if grace not in {str(seconds) for seconds, _ in GRACE_CHOICES}:
        abort(400, "Choose how long the old key keeps working.")
    old = _visible_key(key_id)
    created = key_store.roll_from(key_id, {"grace_seconds": int(grace)}, g.caller)
    return render_template(
        "admin/created.html", key=created, rolled=key_store.get(old["id"], g.caller)
    )
