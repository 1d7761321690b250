"""One attempt's HTTP exchange (``delivery.post``, its request written and its answer read by
``shop/webhooks/delivery.py`` itself) against a receiver on 127.0.0.1 that answers scripted
bytes: the request as http.client wrote it, chunked and HTTP/1.0 answers, ``100 Continue``,
bodies cut short or too long, a broken status line, and which answers leave the connection
for the next attempt. No database: the attempt is the network's alone."""

import socket
import threading
from contextlib import suppress

import pytest

from shop.webhooks import delivery


class Scripted:
    """A receiver answering each request with the next of ``answers`` (bytes), each
    connection kept open until the answer says to close it (``None`` after it)."""

    def __init__(self, *answers):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/hook?x=1"
        self.answers = list(answers)
        self.requests, self.connections = [], 0
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while self.answers:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                reader = conn.makefile("rb")
                while self.answers:
                    request = self.read(reader)
                    if request is None:
                        break
                    self.requests.append(request)
                    answer = self.answers.pop(0)
                    with suppress(OSError):
                        conn.sendall(answer)
                    if self.answers and self.answers[0] is None:
                        self.answers.pop(0)
                        break
                reader.close()

    @staticmethod
    def read(reader) -> tuple[list[bytes], bytes] | None:
        head = []
        while (line := reader.readline()) not in (b"\r\n", b""):
            head.append(line.rstrip(b"\r\n"))
        if not head:
            return None
        length = next(int(h.split(b":")[1]) for h in head if h.lower().startswith(b"content-"))
        return head, reader.read(length)

    def stop(self):
        self.listener.close()


def post(receiver, connections, body=b'{"a":1}'):
    return delivery.post(
        receiver.url, body, {"webhook-id": "msg_1"}, timeout=5, allow_private=True,
        connections=connections,
    )  # fmt: skip


@pytest.fixture
def connections():
    pool = delivery.Connections()
    yield pool
    pool.close()


OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


def test_the_request_is_the_one_http_client_wrote_in_one_piece(connections):
    receiver = Scripted(OK)
    try:
        outcome = post(receiver, connections, body="é".encode())
    finally:
        receiver.stop()
    assert (outcome.status_code, outcome.excerpt, outcome.error) == (200, "ok", None)
    (head, body), port = receiver.requests[0], receiver.port
    assert head == [
        b"POST /hook?x=1 HTTP/1.1",
        f"Host: 127.0.0.1:{port}".encode(),
        b"Accept-Encoding: identity",
        b"Content-Length: 2",
        b"webhook-id: msg_1",
        b"Content-Type: application/json",
        b"User-Agent: shop-webhooks/1",
        b"Connection: keep-alive",
    ]
    assert body == "é".encode()


def test_chunked_and_continue_answers_are_read_and_their_connection_kept(connections):
    chunked = (
        b"HTTP/1.1 100 Continue\r\n\r\n"
        b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: t\r\n\r\n"
    )
    receiver = Scripted(chunked, b"HTTP/1.1 204 No Content\r\n\r\n", OK)
    try:
        outcomes = [post(receiver, connections) for _ in range(3)]
    finally:
        receiver.stop()
    answered = [(o.status_code, o.excerpt) for o in outcomes]
    assert answered == [(201, "abcde"), (204, ""), (200, "ok")]
    assert receiver.connections == 1


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",  # HTTP/1.0 closes by default
        b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
        b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nok",  # cut short: closed early
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        + f"{delivery.MAX_READ + 10:x}\r\n".encode() + b"o" * (delivery.MAX_READ + 10)
        + b"\r\n0\r\n\r\n",  # past what is read: the rest is left unread
    ],
)  # fmt: skip
def test_an_answer_not_read_whole_or_closing_is_not_kept(connections, answer):
    receiver = Scripted(answer, None, OK)
    try:
        first, second = post(receiver, connections), post(receiver, connections)
    finally:
        receiver.stop()
    assert first.status_code == 200 and first.excerpt.startswith(("ok", "oo"))
    assert (second.status_code, second.excerpt) == (200, "ok")
    assert receiver.connections == 2


def test_an_answer_that_is_not_http_is_the_attempts_error_not_the_workers(connections):
    receiver = Scripted(b"SMTP ready\r\n\r\n", None, OK)
    try:
        broken, fine = post(receiver, connections), post(receiver, connections)
    finally:
        receiver.stop()
    assert broken.status_code is None and broken.error.startswith("BadStatusLine")
    assert (fine.status_code, receiver.connections) == (200, 2)


def test_a_target_with_a_space_is_refused_as_http_client_refuses_it(connections):
    outcome = delivery.post(
        "http://127.0.0.1:9/a b", b"{}", {}, timeout=1, allow_private=True, connections=connections
    )
    assert outcome.status_code is None
    assert outcome.error.startswith("InvalidURL: URL can't contain control characters.")
