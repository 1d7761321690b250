"""Outgoing mail: ``queue`` writes a message into ``mail_outbox`` inside the caller's
transaction; ``deliver_due`` (the worker: ``flask mail work``) sends what is due, so a slow
or absent mail server never holds a web request.

``SMTP_URL`` says where: ``smtps://user:password@host:465`` (TLS from the start),
``smtp://user:password@host:587`` (STARTTLS, required) or ``smtp://host:25?tls=off`` (plain,
for a relay on the same machine). Without ``SMTP_URL`` each message is written to the log
instead (development: the log then holds the links it carries). A failed attempt is retried
after 30 s, doubling up to an hour, 10 attempts in all; the log and the outbox keep only the
kind of error, never the bodies, credentials or tokens. A sent message's bodies are blanked.

An order's e-mail is rendered by the worker, not by the request that causes it (issue 42:
Jinja was 13 % of checkout's CPU): ``queue_order_mail`` keeps in the outbox row the template's
name and a snapshot of what the mail shows (``order_snapshot``, frozen at the event), and
``bodies`` renders them when the message is sent. What is frozen and what is not:
docs/performance.md, "Checkout's order mail".
"""

import contextlib
import functools
import logging
import smtplib
import ssl
import time
from datetime import timedelta
from email.message import EmailMessage
from email.utils import formataddr
from urllib.parse import parse_qs, unquote, urlsplit

import orjson
from flask import current_app, render_template
from jinja2 import TemplateError

from shop import db, money
from shop.clock import iso, iso_in, now, now_iso
from shop.net import deadlines
from shop.site import settings as site

log = logging.getLogger("shop.mail")

BATCH = 100  # messages a pass sends at most, each claimed just before it is sent
CANDIDATES = 5  # due messages looked at per claim: another worker may win the first
MAX_ATTEMPTS = 10
FIRST_RETRY = 30
MAX_RETRY = 3600


# Attachments by reference: a kind (``invoice``) and how to draw it when the message is
# sent, ``draw(ref) -> (filename, content type, bytes)``, or None when it no longer exists.
# A package above this one registers its kind (``shop/invoices/__init__.py``).
ATTACHMENTS: dict = {}
# Which attachment an order's status e-mail carries: ``choose(order, settings) -> "kind:ref" |
# None`` (``settings``: ``site.current()`` when the caller read it, else None),
# registered the same way (the invoice with the paid e-mail, when the shop says so).
ORDER_MAIL_ATTACHMENTS: list = []


def queue(
    recipient: str,
    subject: str,
    text: str,
    html: str | None = None,
    attachment: str | None = None,
    template: str | None = None,
    context: dict | None = None,
) -> str:
    """Put a message in the outbox (in the caller's transaction); answer its id.
    ``attachment``: ``kind:ref`` of ``ATTACHMENTS``, drawn when the message is sent.
    ``template`` and ``context`` (JSON-able): bodies rendered when the message is sent, by
    ``bodies`` (``text`` is then empty)."""
    mail_id = db.new_id()
    moment = now_iso()
    db.send(  # nobody reads its answer: on PostgreSQL it goes with the commit
        "INSERT INTO mail_outbox (id, recipient, subject, text_body, html_body, created_at,"
        " next_attempt_at, attempts, attachment, template, context)"
        " VALUES (:id, :to, :subject, :text, :html, :now, :now, 0, :attachment, :template,"
        " :context)",
        {
            "id": mail_id,
            "to": recipient,
            "subject": subject,
            "text": text,
            "html": html,
            "now": moment,
            "attachment": attachment,
            "template": template,
            "context": None if context is None else orjson.dumps(context, default=str).decode(),
        },
    )
    return mail_id


def bodies(row: dict) -> tuple[str, str | None]:
    """A message's text and HTML bodies: as queued, or rendered now from its ``template``
    and frozen ``context`` (a message queued with ``queue(template=...)``)."""
    if not row.get("template"):
        return row["text_body"], row["html_body"]
    context = orjson.loads(row["context"])
    prepare = _PREPARE.get(row["template"])
    if prepare is not None:
        context = prepare(context)
    return (
        render_template(f"mail/{row['template']}.txt", **context),
        render_template(f"mail/{row['template']}.html", **context),
    )


def _message(row: dict) -> EmailMessage:
    message = EmailMessage()
    message["From"] = formataddr((site.current()["shop_name"], current_app.config["MAIL_FROM"]))
    message["To"] = row["recipient"]
    message["Subject"] = row["subject"]
    # Derived from the message's id: every attempt carries the same one, so a message sent
    # twice is recognisable as one.
    domain = current_app.config["MAIL_FROM"].split("@")[-1]
    message["Message-ID"] = f"<{row['id']}@{domain}>"
    text, html = bodies(row)
    message.set_content(text)
    if html:
        message.add_alternative(html, subtype="html")
    drawn = _attachment(row.get("attachment"))
    if drawn is not None:
        filename, content_type, data = drawn
        main, _, sub = content_type.partition("/")
        message.add_attachment(data, maintype=main, subtype=sub, filename=filename)
    return message


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """The system's trusted certificates, loaded once per process and only for TLS."""
    return ssl.create_default_context()


class _Session:
    """One SMTP connection for a pass, opened at its first message and reused; a failure
    drops it, and the next message opens another."""

    def __init__(self):
        self.client = None

    def _open(self, deadline: float) -> smtplib.SMTP:
        url = urlsplit(current_app.config["SMTP_URL"])
        options = {k: v[-1] for k, v in parse_qs(url.query).items()}
        timeout = current_app.config["SMTP_TIMEOUT"]
        if url.scheme == "smtps":
            client = smtplib.SMTP_SSL(timeout=timeout, context=_tls_context())
        elif url.scheme == "smtp":
            client = smtplib.SMTP(timeout=timeout)
        else:
            raise ValueError("SMTP_URL must start with smtp:// or smtps://")
        # The watchdog cuts a greeting (or anything after) that drips past the deadline.
        watch = deadlines.WATCHDOG.arm(client, deadline)
        try:
            default_port = 465 if url.scheme == "smtps" else 587
            client._host = url.hostname  # noqa: SLF001 - as SMTP(host) sets it: TLS checks it
            client.connect(url.hostname, url.port or default_port)
            if url.scheme == "smtp" and options.get("tls", "starttls") != "off":
                client.starttls(context=_tls_context())
            if url.username:
                client.login(unquote(url.username), unquote(url.password or ""))
        except BaseException:
            client.close()
            raise
        finally:
            deadlines.WATCHDOG.disarm(watch)
        return client

    def send(self, message: EmailMessage, deadline: float) -> None:
        """Send one message, cut at ``deadline`` (``time.monotonic()``); raise on failure."""
        if self.client is None:
            self.client = self._open(deadline)
        watch = deadlines.WATCHDOG.arm(self.client, deadline)
        try:
            self.client.send_message(message)
        except BaseException:
            self.close()
            raise
        finally:
            deadlines.WATCHDOG.disarm(watch)

    def close(self) -> None:
        if self.client is not None:
            with contextlib.suppress(OSError, smtplib.SMTPException):
                self.client.quit()
            self.client.close()
            self.client = None


def _attachment(reference: str | None):
    """The attachment ``kind:ref`` drawn now, or None (none, or its kind is unknown)."""
    if not reference:
        return None
    kind, _, ref = reference.partition(":")
    draw = ATTACHMENTS.get(kind)
    return draw(ref) if draw is not None else None


def _due(moment, limit: int = CANDIDATES) -> list[dict]:
    """The first ``limit`` messages due at ``moment``: each one's id and lease as seen."""
    return db.query(
        "SELECT id, next_attempt_at FROM mail_outbox"
        " WHERE next_attempt_at IS NOT NULL AND next_attempt_at <= :now"
        " ORDER BY next_attempt_at LIMIT :batch",
        {"now": iso(moment), "batch": limit},
    )


def _budget() -> int:
    """Seconds one message may take at most, whatever the server does: opening the
    connection (greeting, STARTTLS, login) and sending, each ``SHOP_SMTP_TIMEOUT``. Cut at
    that deadline (smtplib's own timeout bounds each read only)."""
    return 2 * current_app.config["SMTP_TIMEOUT"]


def _claim(row: dict, lease: str) -> dict | None:
    """Hold a message until ``lease`` and answer it, unless another worker took it first."""
    return db.one(
        "UPDATE mail_outbox SET next_attempt_at = :lease"
        " WHERE id = :id AND next_attempt_at = :seen"
        " RETURNING id, recipient, subject, text_body, html_body, attempts, attachment,"
        " template, context",
        {"lease": lease, "id": row["id"], "seen": row["next_attempt_at"]},
    )


def _claim_next() -> dict | None:
    """The next due message, claimed for as long as sending it may take (``_budget``) and
    ``SHOP_WORKER_LEASE_MARGIN``; None when none is due (or others took every candidate)."""
    lease = iso_in(_budget() + current_app.config["WORKER_LEASE_MARGIN"])
    for row in _due(now()):
        held = _claim(row, lease)
        if held is not None:
            return {**held, "lease": lease}
    return None


def _release(row: dict) -> None:
    """Give a claimed message back, due now (the worker is stopping)."""
    db.execute(
        "UPDATE mail_outbox SET next_attempt_at = :now WHERE id = :id AND next_attempt_at = :lease",
        {"now": now_iso(), "id": row["id"], "lease": row["lease"]},
    )


def deliver_due(stop=None) -> int:
    """Send the messages that are due (up to ``BATCH``), one SMTP connection for the lot;
    answer how many were sent.

    Each is claimed just before it is sent, for as long as sending it may take: a worker
    holds one message at a time, so a killed worker's message is due again after one
    message's budget and ``SHOP_WORKER_LEASE_MARGIN`` (50 s at the defaults), whatever the
    backlog. A claimed message is sent only by its holder; it is cut at its deadline, which
    its lease outlives, and its outcome is written as soon as it is known: in the same
    transaction as the claim of the next message (one write transaction a message, not
    two: on SQLite each is a turn at the writer lock beside checkout's), or alone when no
    other is claimed. When ``stop`` is set (SIGTERM) no other is claimed, and one whose
    sending the stop cut is released at once.
    """
    session, sent, outcome = _Session(), 0, None
    try:
        for _ in range(BATCH):
            if stop is not None and stop.is_set():
                break
            recorded, held = _record_and_claim(outcome)
            sent, outcome = sent + recorded, None
            if held is None:
                break
            error = _deliver(held, session)
            if error is not None and stop is not None and stop.is_set():
                _release(held)  # cut by the stop: due again at once, no attempt counted
                continue
            outcome = (held, error)
        if outcome is not None:
            with db.transaction():
                sent += _record(*outcome)
    finally:
        session.close()
    return sent


def _record_and_claim(outcome) -> tuple[int, dict | None]:
    """In one transaction, the last attempt's ``outcome`` (if any) and the claim of the next
    due message: (1 if that attempt was sent, the message claimed or None). When the claim
    fails, the outcome is still written on its own before the error goes on, so a sent
    message is never sent again for it."""
    try:
        with db.transaction():
            recorded = _record(*outcome) if outcome is not None else 0
            return recorded, _claim_next()
    except Exception:
        if outcome is not None:
            with db.transaction():
                _record(*outcome)
        raise


def _record(row: dict, error: Exception | None) -> int:
    """Write a sent or failed attempt's outcome (in the caller's transaction; on PostgreSQL
    sent with the claim that follows, ``db.send``); answer 1 if it was sent."""
    if error is None:
        _sent(row)
        return 1
    _failed(row, error)
    return 0


def prune() -> int:
    """Forget sent and abandoned messages after ``SHOP_MAIL_RETENTION_DAYS`` (a job of the
    worker): recipients and subjects are not kept for ever."""
    cutoff = iso(now() - timedelta(days=current_app.config["MAIL_RETENTION_DAYS"]))
    with db.transaction():
        db.execute(
            "DELETE FROM mail_outbox WHERE next_attempt_at IS NULL AND created_at < :cutoff",
            {"cutoff": cutoff},
        )
    return 0


def _deliver(row: dict, session: _Session) -> Exception | None:
    """Send one message (to the log without ``SMTP_URL``); answer the error, if any."""
    try:
        if current_app.config["SMTP_URL"]:
            session.send(_message(row), time.monotonic() + _budget())
            log.info("mail %s sent to %s", row["id"], row["recipient"])
        else:
            log.info(
                "mail %s (SMTP_URL not set, development)\nTo: %s\nSubject: %s\n\n%s",
                row["id"],
                row["recipient"],
                row["subject"],
                bodies(row)[0],
            )
    except (OSError, smtplib.SMTPException, ValueError) as error:
        return error
    except (TemplateError, LookupError, TypeError) as error:  # a snapshot it cannot render
        log.exception("mail %s: its template %s failed", row["id"], row.get("template"))
        return error
    return None


def _sent(row: dict) -> None:
    db.send(
        "UPDATE mail_outbox SET sent_at = :now, next_attempt_at = NULL,"
        " attempts = attempts + 1, text_body = '', html_body = NULL, context = NULL,"
        " last_error = NULL"
        " WHERE id = :id",
        {"now": now_iso(), "id": row["id"]},
    )


def _failed(row: dict, error: Exception) -> None:
    """Schedule the next attempt (or give up), keeping only the kind of error."""
    attempts = row["attempts"] + 1
    reason = type(error).__name__
    if isinstance(error, smtplib.SMTPResponseException):
        reason += f" {error.smtp_code}"
    if attempts >= MAX_ATTEMPTS:
        log.error(
            "mail %s to %s: gave up after %d attempts (%s)",
            row["id"],
            row["recipient"],
            attempts,
            reason,
        )
        next_at, failed_at = None, now_iso()
    else:
        delay = min(FIRST_RETRY * 2 ** (attempts - 1), MAX_RETRY)
        log.warning(
            "mail %s to %s: attempt %d failed (%s); next in %d s",
            row["id"],
            row["recipient"],
            attempts,
            reason,
            delay,
        )
        next_at = iso_in(delay)
        failed_at = None
    db.send(
        "UPDATE mail_outbox SET attempts = :attempts, next_attempt_at = :next,"
        " failed_at = :failed, last_error = :reason WHERE id = :id",
        {
            "attempts": attempts,
            "next": next_at,
            "failed": failed_at,
            "reason": reason,
            "id": row["id"],
        },
    )


def queue_rendered(recipient: str, subject: str, template: str, **context) -> str:
    """Queue ``mail/<template>.txt`` and ``.html`` rendered with ``context`` and the shop's name."""
    if "shop_name" not in context:  # not setdefault: its default would read the settings
        context["shop_name"] = site.current()["shop_name"]
    attachment = context.pop("attachment", None)
    text = render_template(f"mail/{template}.txt", **context)
    html = render_template(f"mail/{template}.html", **context)
    return queue(recipient, subject, text, html, attachment)


ORDER_HEADLINES = {
    "pending": "Thank you: we have your order and are waiting for its payment.",
    "paid": "Thank you: your order is paid and we are preparing it.",
    "partially_shipped": "Part of your order is on its way.",
    "shipped": "Your order is on its way.",
    "delivered": "Your order has been delivered.",
    "cancelled": "Your order has been cancelled.",
    "refunded": "Your order has been refunded.",
}


def _display(cents: int, currency: str) -> str:
    """An amount as the mail shows it: by the currency's exponent, with Babel (€51.00, ¥1,200)."""
    return money.display(cents, currency)


def order_snapshot(order: dict) -> dict:
    """What an order's e-mail shows, frozen when its event happens: the fields the ``order``
    templates read, nothing else (no address, payments or history)."""
    method = order.get("shipping_method")
    return {
        "number": order["number"],
        "status": order["status"],
        "currency": order["currency"],
        "created_at": order["created_at"],
        "customer": {"name": order["customer"].get("name"), "email": order["customer"]["email"]},
        "items": [
            {
                "name": item["name"],
                "quantity": item["quantity"],
                "line_total_cents": item["line_total_cents"],
            }
            for item in order["items"]
        ],
        "subtotal_cents": order["subtotal_cents"],
        "discount_cents": order.get("discount_cents"),
        "discount_code": order.get("discount_code"),
        "shipping_method": {"name": method["name"]} if method else None,
        "shipping_cents": order.get("shipping_cents"),
        "tax_lines": [
            {"name": tax["name"], "rate": tax["rate"], "amount_cents": tax["amount_cents"]}
            for tax in order.get("tax_lines") or ()
        ],
        "prices_include_tax": order.get("prices_include_tax"),
        "total_cents": order["total_cents"],
    }


def _order_context(frozen: dict) -> dict:
    """The ``order`` templates' context from a queued snapshot: the headline and the amounts'
    format follow from the frozen status and currency."""
    order = frozen["order"]
    return {
        **frozen,
        "headline": ORDER_HEADLINES.get(order["status"], f"Your order is {order['status']}."),
        "money": functools.partial(_display, currency=order["currency"]),
    }


def _edit_context(frozen: dict) -> dict:
    """The ``order_edited`` templates' context: the amounts' format from the frozen currency."""
    return {**frozen, "money": functools.partial(_display, currency=frozen["order"]["currency"])}


# Templates rendered at send time, and what each adds to its frozen context.
_PREPARE = {"order": _order_context, "order_edited": _edit_context}


def queue_order_mail(
    order: dict, placed: bool, shop_name: str | None = None, link: str | None = None
) -> str | None:
    """Queue the confirmation (``placed``) or status e-mail of an order to its customer,
    rendered by the worker from ``order_snapshot(order)`` (``bodies``).

    ``order`` has at least number, status, currency, created_at, items (name, quantity,
    line_total_cents), customer (email, name) and the priced breakdown (subtotal_cents,
    discount_cents, discount_code, shipping_cents, shipping_method, tax_lines,
    prices_include_tax, total_cents), as the order shows it. ``link``: where a guest
    follows the order (its token is in it), in the confirmation only.
    """
    recipient = order["customer"]["email"]
    if not recipient:  # an erased customer
        return None
    settings = None if shop_name else site.current()  # read once, for the attachment too
    shop_name = shop_name or settings["shop_name"]
    if placed:
        subject = f"{shop_name}: order {order['number']} confirmed"
    else:
        subject = f"{shop_name}: order {order['number']} is {order['status']}"
    chosen = (choose(order, settings) for choose in ORDER_MAIL_ATTACHMENTS)
    return queue(
        recipient,
        subject,
        "",
        attachment=next((found for found in chosen if found), None),
        template="order",
        context={"order": order_snapshot(order), "shop_name": shop_name, "link": link},
    )


def queue_edit_mail(
    order: dict,
    recipient: str,
    edited: bool = False,
    refund_cents: int = 0,
    balance_due_cents: int = 0,
    link: str | None = None,
) -> str:
    """Queue the customer's mail of an order ``edited`` (its new lines and totals, the
    ``refund_cents`` on its way or the ``balance_due_cents``), or of its balance alone, with
    the pay ``link`` of a card order's balance; rendered by the worker from
    ``order_snapshot(order)`` (``bodies``)."""
    shop_name = site.current()["shop_name"]
    if edited:
        subject = f"{shop_name}: order {order['number']} was changed"
    else:
        shown = _display(balance_due_cents, order["currency"])
        subject = f"{shop_name}: order {order['number']}, {shown} to pay"
    context = {"order": order_snapshot(order), "shop_name": shop_name, "edited": edited}
    context |= {"refund_cents": refund_cents, "balance_due_cents": balance_due_cents}
    return queue(recipient, subject, "", template="order_edited", context=context | {"link": link})
