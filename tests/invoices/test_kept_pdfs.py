"""An issued document's PDF is made once and kept (issue 42, migration 0052): the worker
draws it after issue (``flask jobs run --once``), a download that finds none draws and keeps
it, and every later download serves the kept bytes, the same bytes a fresh drawing of the
snapshot gives; lists never read them. Through HTTP and the CLI, on both engines."""

import json
import threading

from shop.invoices import pdf
from tests.invoices.test_invoices import _created, _order, _pay, taxed  # noqa: F401 - fixture


def _run_worker(app) -> None:
    result = app.test_cli_runner().invoke(args=["jobs", "run", "--once"])
    assert result.exit_code == 0, result.output


def _kept(app, table: str, **where) -> list[dict]:
    """The documents of ``table`` matching ``where`` with their kept PDF and snapshot."""
    ((column, value),) = where.items()
    with app.app_context():
        rows = app.extensions["shop.db"].query(
            f"SELECT id, number, pdf, snapshot FROM {table} WHERE {column} = :v", {"v": value}
        )
    return [{**row, "pdf": None if row["pdf"] is None else bytes(row["pdf"])} for row in rows]


def _fresh(row: dict) -> bytes:
    """A fresh drawing of the document's snapshot."""
    return pdf.render(json.loads(row["snapshot"]))


def test_the_worker_keeps_an_issued_invoices_pdf_and_downloads_serve_those_bytes(
    app,
    owner_client,
    customer_client,
    taxed,  # noqa: F811 - the fixture
):
    order = _order(app, customer_client, taxed)
    _pay(owner_client, order["id"])
    [row] = _kept(app, "invoices", order_id=order["id"])
    assert row["pdf"] is None  # the payment's transaction drew nothing
    _run_worker(app)
    [row] = _kept(app, "invoices", order_id=order["id"])
    assert row["pdf"] == _fresh(row)  # the same bytes as a fresh drawing of its snapshot
    url = f"/orders/{order['id']}/invoice"
    for reader in (owner_client, customer_client):
        response = reader.get(url)
        assert response.status_code == 200 and response.data == row["pdf"]
        assert response.mimetype == "application/pdf"
        assert response.headers["Content-Disposition"] == (
            f'attachment; filename="{row["number"]}.pdf"'
        )
        assert "no-store" in response.headers["Cache-Control"]  # as before: never cached
    by_number = owner_client.get(f"/orders/{order['id']}/invoices/{row['number']}")
    assert by_number.status_code == 200 and by_number.data == row["pdf"]
    # Kept means kept: the bytes as made are served, whatever this release would draw now
    # (as a document made by an earlier release's drawing code).
    made_earlier = row["pdf"].replace(b"%%EOF", b"%%EOF\n% drawn by an earlier release")
    with app.app_context():
        app.extensions["shop.db"].execute(
            "UPDATE invoices SET pdf = :pdf WHERE id = :id", {"pdf": made_earlier, "id": row["id"]}
        )
    assert owner_client.get(url).data == made_earlier
    _run_worker(app)  # the worker does not draw a kept document again
    assert _kept(app, "invoices", order_id=order["id"])[0]["pdf"] == made_earlier
    # The lists show the same items as before, and no PDF.
    listed = owner_client.get(f"/orders/{order['id']}/invoices").json["items"]
    assert [item["number"] for item in listed] == [row["number"]]
    assert all("pdf" not in item for item in listed)


def test_a_download_that_finds_no_pdf_draws_keeps_and_serves_it(
    app,
    owner_client,
    customer_client,
    taxed,  # noqa: F811 - the fixture
):
    order = _order(app, customer_client, taxed)
    _pay(owner_client, order["id"])
    url = f"/orders/{order['id']}/invoice"
    first = owner_client.get(url)
    assert first.status_code == 200
    [row] = _kept(app, "invoices", order_id=order["id"])
    assert row["pdf"] == first.data == _fresh(row)
    assert customer_client.get(url).data == first.data
    _run_worker(app)
    assert _kept(app, "invoices", order_id=order["id"])[0]["pdf"] == first.data


def test_credit_notes_are_kept_by_the_worker_or_their_first_download(
    app,
    owner_client,
    customer_client,
    taxed,  # noqa: F811 - the fixture
):
    order = _order(app, customer_client, taxed, lines=((1200, 3),))
    _pay(owner_client, order["id"])
    url = f"/orders/{order['id']}/refunds"
    first = _created(owner_client.post(url, json={"lines": [{"line": 1, "quantity": 1}]}))
    downloaded = owner_client.get(f"{url}/{first['id']}/credit-note")  # before the worker
    assert downloaded.status_code == 200
    second = _created(owner_client.post(url, json={"amount_cents": 600}))
    notes = {row["id"]: row for row in _kept(app, "credit_notes", order_id=order["id"])}
    assert len(notes) == 2
    kept_first = [row for row in notes.values() if row["pdf"] is not None]
    assert [row["pdf"] for row in kept_first] == [downloaded.data]
    assert downloaded.data == _fresh(kept_first[0])
    _run_worker(app)
    for row in _kept(app, "credit_notes", order_id=order["id"]):
        assert row["pdf"] == _fresh(row)
        by_number = owner_client.get(f"/orders/{order['id']}/credit-notes/{row['number']}")
        assert by_number.status_code == 200 and by_number.data == row["pdf"]
    second_pdf = owner_client.get(f"{url}/{second['id']}/credit-note")
    assert second_pdf.status_code == 200
    assert second_pdf.headers["Content-Disposition"].startswith("attachment; filename=")
    listed = owner_client.get(f"/orders/{order['id']}/credit-notes").json["items"]
    assert len(listed) == 2 and all("pdf" not in item for item in listed)


def test_two_first_downloads_at_once_serve_the_same_bytes_and_keep_one(
    app,
    owner_client,
    customer_client,
    make_key,
    taxed,  # noqa: F811 - the fixture
):
    order = _order(app, customer_client, taxed)
    _pay(owner_client, order["id"])
    key = make_key("read:order")
    start, answers = threading.Barrier(2), []

    def download():
        client = app.test_client()
        client.environ_base["HTTP_AUTHORIZATION"] = key.environ_base["HTTP_AUTHORIZATION"]
        start.wait(timeout=30)
        response = client.get(f"/orders/{order['id']}/invoice")
        answers.append((response.status_code, response.data))

    threads = [threading.Thread(target=download) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    [row] = _kept(app, "invoices", order_id=order["id"])
    assert answers == [(200, row["pdf"])] * 2 and row["pdf"] == _fresh(row)
