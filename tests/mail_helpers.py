"""A real SMTP server on 127.0.0.1 (aiosmtpd) that keeps what it receives, for the mail tests;
the outbox as a recipient would read it (``outbox_mails``)."""

import email
import re
from email import policy

from tests.live import free_port


class Inbox:
    """An aiosmtpd handler that keeps every message, parsed."""

    def __init__(self):
        self.messages = []
        self.logins = []

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 - aiosmtpd's name
        message = email.message_from_bytes(envelope.content, policy=policy.default)
        message.rcpt_tos = envelope.rcpt_tos
        message.peer = session.peer  # the client's address and port: one per connection
        self.messages.append(message)
        return "250 Message accepted"

    def authenticate(self, server, session, envelope, mechanism, auth_data):
        """Accept one user (``shop`` / ``s3cret-pass``) and remember who logged in."""
        from aiosmtpd.smtp import AuthResult

        ok = auth_data.login == b"shop" and auth_data.password == b"s3cret-pass"
        if ok:
            self.logins.append(auth_data.login.decode())
        return AuthResult(success=ok)


class SmtpServer:
    """aiosmtpd's Controller on a port of 127.0.0.1; ``url`` for SMTP_URL."""

    def __init__(self, port=None, auth=False, tls_context=None):
        from aiosmtpd.controller import Controller

        self.inbox = Inbox()
        self.port = port or free_port()
        options = {}
        if auth:
            options.update(authenticator=self.inbox.authenticate, auth_required=True)
            options["auth_require_tls"] = tls_context is not None
        if tls_context is not None:
            options.update(tls_context=tls_context, require_starttls=True)
        self.controller = Controller(self.inbox, hostname="127.0.0.1", port=self.port, **options)
        self.controller.start()
        self.url = f"smtp://127.0.0.1:{self.port}?tls=off"

    @property
    def messages(self):
        return self.inbox.messages

    def stop(self):
        self.controller.stop()


def text_of(message) -> str:
    """The plain-text part of a message."""
    return message.get_body(preferencelist=("plain",)).get_content()


def html_of(message) -> str:
    """The HTML part of a message."""
    return message.get_body(preferencelist=("html",)).get_content()


def link_in(message) -> str:
    """The one https link of a message's text."""
    links = re.findall(r"https?://\S+", text_of(message))
    assert len(links) == 1, text_of(message)
    return links[0]


def deliver(app) -> int:
    """Run the mail worker once (``flask mail work --once``); answer how many it sent."""
    result = app.test_cli_runner().invoke(args=["mail", "work", "--once"])
    assert result.exit_code == 0, result.output
    return int(result.output.split()[1])


class SlowSmtp:
    """A bare SMTP server on 127.0.0.1 that drips its greeting (``greeting_lines`` lines,
    ``gap`` seconds apart: each read is quick, the greeting as a whole is not) and takes
    ``data_delay`` seconds to accept each message; it keeps what it accepts. One thread per
    connection; ``stop`` closes them all."""

    def __init__(self, greeting_lines=3, gap=0.4, data_delay=0.0):
        import socket
        import threading

        self.greeting_lines, self.gap, self.data_delay = greeting_lines, gap, data_delay
        self.messages, self.connections = [], []
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"smtp://127.0.0.1:{self.listener.getsockname()[1]}?tls=off"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        import threading

        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                self.connections.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        try:
            for _ in range(self.greeting_lines - 1):
                conn.sendall(b"220-slow relay\r\n")
                if self.stopped.wait(self.gap):  # the fault itself: a slow greeting
                    return
            conn.sendall(b"220 slow relay ready\r\n")
            lines = conn.makefile("rb")
            while line := lines.readline():
                verb = line[:4].upper()
                if verb in (b"EHLO", b"HELO", b"MAIL", b"RCPT", b"RSET", b"NOOP"):
                    conn.sendall(b"250 ok\r\n")
                elif verb == b"DATA":
                    conn.sendall(b"354 go ahead\r\n")
                    data = []
                    while (part := lines.readline()) not in (b".\r\n", b""):
                        data.append(part)
                    if self.stopped.wait(self.data_delay):
                        return
                    message = email.message_from_bytes(b"".join(data), policy=policy.default)
                    with self.lock:
                        self.messages.append(message)
                    conn.sendall(b"250 accepted\r\n")
                elif verb == b"QUIT":
                    conn.sendall(b"221 bye\r\n")
                    return
                else:
                    conn.sendall(b"502 not here\r\n")
        except OSError:
            return
        finally:
            conn.close()

    def stop(self):
        self.stopped.set()
        self.listener.close()
        import socket
        from contextlib import suppress

        with self.lock:
            for conn in self.connections:
                with suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
                conn.close()


def outbox_mails(where: str = "1 = 1", params: dict | None = None) -> list[dict]:
    """The outbox's messages matching ``where`` (in an app context), their bodies as sent: an
    order's e-mail is rendered by the worker (shop/mail ``bodies``), not when it is queued."""
    from shop import db, mail

    rows = db.query(f"SELECT * FROM mail_outbox WHERE {where} ORDER BY created_at, id", params)
    rendered = []
    for row in rows:
        text, html = mail.bodies(row)
        rendered.append({**row, "text_body": text, "html_body": html})
    return rendered
