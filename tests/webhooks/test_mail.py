"""Mail: queued in the request's transaction, sent by the worker through a real SMTP server on
127.0.0.1 (STARTTLS and credentials), retried with backoff while the server is away, written
to the log without SMTP_URL; order confirmation and status e-mails."""

import logging
import shutil
import ssl
import subprocess
import threading
import time
from datetime import timedelta

import pytest

from shop import db, mail
from tests.live import free_port
from tests.mail_helpers import SmtpServer, deliver, html_of, text_of
from tests.orders_helpers import add_product, basket, set_setting

SECRET = "s3cret-pass"


def outbox(app) -> list[dict]:
    with app.app_context():
        return db.query("SELECT * FROM mail_outbox ORDER BY created_at, id")


def queue_one(app, to="someone@example.com"):
    with app.app_context(), db.transaction():
        mail.queue(to, "Hello", "Plain text", "<p>HTML</p>")


def test_a_message_waits_for_the_server_and_is_retried_with_backoff(make_app, clock, caplog):
    port = free_port()
    app = make_app(SMTP_URL=f"smtp://shop:{SECRET}@127.0.0.1:{port}?tls=off")
    queue_one(app)
    with caplog.at_level(logging.INFO, logger="shop.mail"):
        assert deliver(app) == 0  # nobody listens yet
    (row,) = outbox(app)
    assert row["attempts"] == 1 and row["sent_at"] is None
    assert row["last_error"] == "ConnectionRefusedError"
    clock.advance(29)
    assert deliver(app) == 0 and outbox(app)[0]["attempts"] == 1  # not due yet
    clock.advance(1)
    assert deliver(app) == 0 and outbox(app)[0]["attempts"] == 2  # due at 30 s, then 60 s
    server = SmtpServer(port=port, auth=False)
    try:
        clock.advance(59)
        assert deliver(app) == 0
        clock.advance(1)
        # The URL has credentials but this server offers no AUTH: smtplib refuses to send
        # them, and the message waits (the operator's URL is wrong).
        assert deliver(app) == 0 and outbox(app)[0]["last_error"] == "SMTPNotSupportedError"
    finally:
        server.stop()
    assert SECRET not in caplog.text and SECRET not in str(outbox(app))


def test_credentials_reach_the_server_and_no_log(make_app, caplog):
    server = SmtpServer(auth=True)
    try:
        app = make_app(SMTP_URL=f"smtp://shop:{SECRET}@127.0.0.1:{server.port}?tls=off")
        queue_one(app)
        with caplog.at_level(logging.DEBUG):
            assert deliver(app) == 1
        assert server.inbox.logins == ["shop"] and len(server.messages) == 1
        url = f"smtp://shop:wrong@127.0.0.1:{server.port}?tls=off"
        bad = make_app(SMTP_URL=url, SMTP_TIMEOUT=2)
        queue_one(bad)
        assert deliver(bad) == 0
        (refused,) = [row for row in outbox(bad) if row["sent_at"] is None]
        assert refused["attempts"] == 1 and refused["last_error"].startswith("SMTP")
    finally:
        server.stop()
    assert SECRET not in caplog.text


@pytest.fixture
def certificate(tmp_path):
    """A self-signed certificate for 127.0.0.1, trusted through SSL_CERT_FILE."""
    if not shutil.which("openssl"):
        pytest.skip("STARTTLS test: the openssl command is not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


@pytest.mark.live
def test_starttls_with_credentials(make_app, certificate, monkeypatch):
    cert, key = certificate
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    server = SmtpServer(auth=True, tls_context=context)
    try:
        app = make_app(SMTP_URL=f"smtp://shop:{SECRET}@127.0.0.1:{server.port}")
        queue_one(app)
        assert deliver(app) == 0  # the server's certificate is not trusted yet
        assert outbox(app)[0]["last_error"] == "SSLCertVerificationError"
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        mail._tls_context.cache_clear()  # built once per process: a new trust store = restart
        with app.app_context():
            db.execute("UPDATE mail_outbox SET next_attempt_at = created_at")
        assert deliver(app) == 1
        assert server.inbox.logins == ["shop"] and len(server.messages) == 1
    finally:
        server.stop()
        mail._tls_context.cache_clear()  # not the test's trust store for the tests after


def test_without_smtp_url_mail_goes_to_the_log(make_app, caplog):
    app = make_app(SMTP_URL=None)
    queue_one(app, to="dev@example.com")
    with caplog.at_level(logging.INFO, logger="shop.mail"):
        assert deliver(app) == 1
    assert "SMTP_URL not set" in caplog.text and "dev@example.com" in caplog.text
    assert "Plain text" in caplog.text
    assert outbox(app)[0]["sent_at"] is not None


def test_smtp_url_needs_a_public_url():
    from shop.config import ConfigError, from_environment

    with pytest.raises(ConfigError, match="SHOP_PUBLIC_URL"):
        from_environment({"SMTP_URL": "smtps://mail.example:465"})
    config = from_environment(
        {"SMTP_URL": "smtps://mail.example:465", "SHOP_PUBLIC_URL": "https://shop.example/"}
    )
    assert config["PUBLIC_URL"] == "https://shop.example"


def test_two_workers_never_send_a_message_twice(make_app, smtp):
    app = make_app(SMTP_URL=smtp.url)
    for number in range(3):
        queue_one(app, to=f"r{number}@example.com")
    with app.app_context():
        seen_by_both = mail._due(mail.now())
        lease = mail.iso_in(60)
        assert all(mail._claim(row, lease) for row in seen_by_both)  # the first worker
        assert not any(mail._claim(row, lease) for row in seen_by_both)  # the second one
        assert mail.deliver_due() == 0  # held by the first worker for its lease
    assert len(seen_by_both) == 3 and smtp.messages == []


def test_two_workers_at_once_send_each_message_once_and_record_it(make_app, smtp):
    # Each message's outcome is written in the transaction that claims the next one (issue
    # 42): two workers racing through one backlog still send each message once.
    app = make_app(SMTP_URL=smtp.url)
    for number in range(30):
        queue_one(app, to=f"r{number}@example.com")
    start, sent = threading.Barrier(2), []

    def worker():
        with app.app_context():
            start.wait(timeout=30)
            sent.append(mail.deliver_due())

    workers = [threading.Thread(target=worker) for _ in range(2)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join(timeout=120)
    ids = [message["Message-ID"] for message in smtp.messages]
    assert len(sent) == 2 and sum(sent) == 30
    assert len(ids) == 30 and len(set(ids)) == 30
    rows = outbox(app)
    assert all(r["sent_at"] and r["next_attempt_at"] is None and r["attempts"] == 1 for r in rows)


def test_a_pass_sends_over_one_connection_with_a_message_id_per_message(make_app, smtp):
    app = make_app(SMTP_URL=smtp.url)
    for number in range(3):
        queue_one(app, to=f"r{number}@example.com")
    ids = [row["id"] for row in outbox(app)]
    assert deliver(app) == 3
    assert len({message.peer for message in smtp.messages}) == 1
    by_recipient = {message.rcpt_tos[0]: message["Message-ID"] for message in smtp.messages}
    assert [by_recipient[f"r{n}@example.com"] for n in range(3)] == [
        f"<{mail_id}@localhost>" for mail_id in ids
    ]
    # A re-send of the same message carries the same Message-ID: recognisable as one.
    with app.app_context(), app.test_request_context():
        row = db.one("SELECT * FROM mail_outbox WHERE id = :id", {"id": ids[0]})
        assert mail._message(row)["Message-ID"] == f"<{ids[0]}@localhost>"


def test_sent_and_abandoned_mail_is_pruned_after_the_retention_days(make_app, clock, smtp):
    app = make_app(SMTP_URL=smtp.url, MAIL_RETENTION_DAYS=30)
    queue_one(app, to="old@example.com")
    assert deliver(app) == 1
    clock.advance(29 * 86400)
    queue_one(app, to="recent@example.com")
    assert deliver(app) == 1
    with app.app_context(), db.transaction():  # one still waiting for its next attempt
        mail.queue("waiting@example.com", "Later", "text")
        db.execute("UPDATE mail_outbox SET next_attempt_at = '2999-01-01T00:00:00+00:00'"
                   " WHERE recipient = 'waiting@example.com'")  # fmt: skip
    clock.advance(2 * 86400)
    result = app.test_cli_runner().invoke(args=["jobs", "run", "--once"])
    assert result.exit_code == 0, result.output
    assert [row["recipient"] for row in outbox(app)] == [
        "recent@example.com",
        "waiting@example.com",
    ]


def test_order_confirmation_and_status_mails(app, smtp, customer_client, owner_client):
    app.config["SMTP_URL"] = smtp.url
    set_setting(app, "shop_name", "Tea & Co")
    teapot = add_product(app, "Teapot <large>", price_cents=2550, stock=5)
    order = customer_client.post("/payments/checkout", json=basket((teapot, 2))).json
    moved = owner_client.patch(f"/orders/{order['id']}/status", json={"status": "cancelled"})
    assert moved.status_code == 200, moved.json
    assert deliver(app) == 2
    confirmed, cancelled = smtp.messages
    assert confirmed["To"] == "customer@example.com"
    assert confirmed["Subject"] == f"Tea & Co: order {order['number']} confirmed"
    assert "Tea & Co" in confirmed["From"]
    text = text_of(confirmed)
    assert "2 x Teapot <large>" in text and "€51.00" in text and "Tea & Co" in text
    html = html_of(confirmed)
    assert "Teapot &lt;large&gt;" in html and "Tea &amp; Co" in html and "€51.00" in html
    assert cancelled["Subject"] == f"Tea & Co: order {order['number']} is cancelled"
    assert "has been cancelled" in text_of(cancelled)


def test_a_failed_checkout_queues_no_mail(app, customer_client):
    teapot = add_product(app, "Teapot", stock=1)
    response = customer_client.post("/payments/checkout", json=basket((teapot, 2)))
    assert response.status_code == 409
    assert outbox(app) == []


def _on_each_message(smtp, react) -> None:
    """Call ``react(message_id)`` as the server accepts each message (before answering)."""
    keep = smtp.inbox.handle_DATA

    async def handle_data(server, session, envelope):
        answer = await keep(server, session, envelope)
        react(smtp.messages[-1]["Message-ID"])
        return answer

    smtp.inbox.handle_DATA = handle_data


def test_a_message_another_worker_claimed_meanwhile_is_not_sent_again(make_app, smtp):
    app = make_app(SMTP_URL=smtp.url)
    for number in range(3):
        queue_one(app, to=f"r{number}@example.com")
    stolen = []

    def another_worker_takes_one(message_id):
        if stolen:
            return
        with app.app_context():  # its lease ran out and another worker claimed it
            unsent = db.query("SELECT id FROM mail_outbox WHERE sent_at IS NULL ORDER BY id")
            row = next(r for r in unsent if f"<{r['id']}@" not in message_id)
            db.execute(
                "UPDATE mail_outbox SET next_attempt_at = '2999-01-01T00:00:00.000000Z'"
                " WHERE id = :id",
                row,
            )
            stolen.append(row["id"])

    _on_each_message(smtp, another_worker_takes_one)
    assert deliver(app) == 2
    sent = {message["Message-ID"] for message in smtp.messages}
    assert len(sent) == 2 and f"<{stolen[0]}@localhost>" not in sent
    (taken,) = [row for row in outbox(app) if row["id"] == stolen[0]]
    assert taken["attempts"] == 0 and taken["next_attempt_at"].startswith("2999")  # left alone


def test_a_worker_holds_one_message_at_a_time_for_one_messages_budget(make_app, clock, smtp):
    # Issue 35, finding 11: a pass claimed its whole batch for count x budget + margin, so
    # a killed worker's last messages waited up to half an hour.
    app = make_app(SMTP_URL=smtp.url, SMTP_TIMEOUT=10, WORKER_LEASE_MARGIN=30)
    for number in range(3):
        queue_one(app, to=f"r{number}@example.com")
    lease = mail.iso(clock() + timedelta(seconds=2 * 10 + 30))  # one message's budget + margin
    held = []

    def look(message_id):
        with app.app_context():
            sql = (
                "SELECT id, next_attempt_at FROM mail_outbox"
                " WHERE sent_at IS NULL AND next_attempt_at > :now"
            )
            held.append(db.query(sql, {"now": mail.now_iso()}))

    _on_each_message(smtp, look)
    assert deliver(app) == 3
    sent = [message["Message-ID"] for message in smtp.messages]
    assert [[f"<{row['id']}@localhost>" for row in rows] for rows in held] == [[m] for m in sent]
    assert all(rows[0]["next_attempt_at"] == lease for rows in held)


def test_a_stop_releases_the_claimed_messages_not_yet_tried(make_app, smtp):
    app = make_app(SMTP_URL=smtp.url)
    for number in range(3):
        queue_one(app, to=f"r{number}@example.com")
    stop = threading.Event()
    _on_each_message(smtp, lambda _: stop.set())  # SIGTERM while the first is sent
    with app.app_context():
        assert mail.deliver_due(stop=stop) == 1
        now = mail.now_iso()
    waiting = [row for row in outbox(app) if row["sent_at"] is None]
    assert len(smtp.messages) == 1 and len(waiting) == 2
    assert all(row["attempts"] == 0 and row["next_attempt_at"] <= now for row in waiting)


@pytest.mark.live
def test_a_greeting_that_drips_for_ever_is_cut_at_the_messages_deadline(make_app):
    from tests.mail_helpers import SlowSmtp

    relay = SlowSmtp(greeting_lines=1000, gap=0.3)  # each read quick, the greeting endless
    try:
        app = make_app(SMTP_URL=relay.url, SMTP_TIMEOUT=1)
        queue_one(app)
        started = time.monotonic()
        assert deliver(app) == 0
        elapsed = time.monotonic() - started
    finally:
        relay.stop()
    assert elapsed < 3.5  # cut at 2 x SHOP_SMTP_TIMEOUT; smtplib's own timeout never fires
    (row,) = outbox(app)
    assert row["attempts"] == 1 and row["sent_at"] is None and row["last_error"]
