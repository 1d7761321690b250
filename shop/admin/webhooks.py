"""The console's Webhooks pages: the list with each endpoint's health, the create form with
event checkboxes and the one-time secret, and an endpoint's page with its delivery log,
replay and ping. Every action goes through ``shop.webhooks.store``, as the JSON API does.
"""

from flask import g, redirect, render_template, request, url_for
from werkzeug.exceptions import HTTPException

from shop.admin.views import PAGE_SIZE, _require, bp, for_people
from shop.errors import ShopError
from shop.http import health
from shop.http.errors import as_http, error_response
from shop.webhooks import store
from shop.webhooks.events import EVENTS, allowed_events


@bp.route("/webhooks")
def webhooks():
    """Every webhook, newest first, with its last success and since when it fails; and
    the worker's panel: each endpoint's backlog, oldest pending age, last success and
    failure, and the mail outbox's."""
    _require("webhooks.read")
    return render_template(
        "admin/webhooks.html",
        result=store.list_page(1, 100),
        queue=store.status(),
        outbox=health.outbox_backlog(),
    )


# The create form's labels, for what the API says of a field.
_LABELS = {"url": "Endpoint URL", "description": "Description"}


def _form_page(form: dict, error: str | None = None, status: int = 200):
    choices = allowed_events(g.caller.permissions)
    return (
        render_template("admin/new_webhook.html", form=form, choices=choices, error=error),
        status,
    )


@bp.route("/webhooks/new")
def new_webhook():
    """The form: URL, description, and the events this administrator may receive."""
    _require("webhooks.create")
    return _form_page({"url": "", "description": "", "events": []})


@bp.route("/webhooks", methods=["POST"])
def create_webhook():
    """Create a webhook; answer the only page that shows its signing secret."""
    _require("webhooks.create")
    form = {
        "url": request.form.get("url", "")[:2000],
        "description": request.form.get("description", "")[:500],
        "events": [e for e in request.form.getlist("events")[:50] if e in EVENTS],
    }
    try:
        created = store.create(form, g.caller)
    except (HTTPException, ShopError) as caught:
        error = as_http(caught)
        body, status, _ = error_response(error)
        return _form_page(form, for_people(body["message"], _LABELS), status)
    return render_template("admin/webhook_created.html", hook=created)


@bp.route("/webhooks/<id:webhook_id>")
def webhook(webhook_id):
    """One webhook: its health and its delivery log with replay, and a ping button."""
    _require("webhooks.read")
    hook = store.found(webhook_id)
    log = store.deliveries_page(webhook_id, None, 1, PAGE_SIZE)
    return render_template(
        "admin/webhook.html",
        hook=hook,
        log=log,
        sent=request.args.get("sent"),
    )


@bp.route("/webhooks/<id:webhook_id>/ping", methods=["POST"])
def ping_webhook(webhook_id):
    """Queue a test event, then back to the log, whose top row shows it when it lands."""
    _require("webhooks.update")
    store.ping(webhook_id)
    return redirect(url_for("admin.webhook", webhook_id=webhook_id, sent="ping"), 303)


@bp.route("/webhooks/<id:webhook_id>/deliveries/<id:delivery_id>/retry", methods=["POST"])
def retry_delivery(webhook_id, delivery_id):
    """Queue a replay of a delivery, with its webhook-id, then back to the log."""
    _require("webhooks.update")
    store.retry(webhook_id, delivery_id)
    return redirect(url_for("admin.webhook", webhook_id=webhook_id, sent="replay"), 303)


@bp.route("/webhooks/<id:webhook_id>/enabled", methods=["POST"])
def toggle_webhook(webhook_id):
    """Enable or disable a webhook (enabling clears its failure record)."""
    _require("webhooks.update")
    store.update(webhook_id, {"enabled": request.form.get("enabled") == "1"}, g.caller)
    return redirect(url_for("admin.webhook", webhook_id=webhook_id), 303)
