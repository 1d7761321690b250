"""An issued document's PDF, made once and kept (``pdf`` of ``invoices`` and
``credit_notes``, migration 0052): every download and the e-mail attachment serve those
bytes, so a document stays what it was when first drawn even if a later release draws PDFs
differently, and a download costs a read, not a render.

Who makes it: the worker, after issue (``keep_due``, a queue of ``flask jobs run``: the
documents whose ``pdf`` is NULL, newest first), so the transaction that pays an order never
pays for a drawing; or the first download that finds none (``pdf_of``): it draws outside any
transaction, then keeps the bytes with one short guarded write (``WHERE pdf IS NULL``: the
first to keep wins, and every drawing of a snapshot is the same bytes anyway). Documents of
earlier releases are filled the same way. Why and what it costs: docs/invoicing.md, "The
kept PDF".
"""

import json
import logging

from shop import db
from shop.invoices import pdf
from shop.outages import Unavailable

log = logging.getLogger("shop.invoices")

INVOICES, CREDIT_NOTES = "invoices", "credit_notes"
TABLES = (INVOICES, CREDIT_NOTES)
BATCH = 20  # documents a worker pass draws at most (~5 ms each): a backlog after an upgrade
# is worked off a pass at a time, never a core's worth of drawing at once
_FAILED: set = set()  # (table, id) whose drawing raised in this process: not tried again


def pdf_of(table: str, document: dict) -> bytes:
    """The document's PDF (``document``: its row with ``id``, ``pdf`` and the parsed
    ``snapshot``): the kept bytes, or drawn now and kept."""
    if document["pdf"] is not None:
        return bytes(document["pdf"])
    drawn = pdf.render(document["snapshot"])
    try:
        keep(table, document["id"], drawn)
    except Unavailable as error:  # the download is served; the next one or the worker keeps it
        log.warning("%s %s: its PDF was not kept (%s)", table, document["id"], error)
    return drawn


def keep(table: str, document_id: str, drawn: bytes) -> bool:
    """Keep ``drawn`` as the document's PDF unless one is kept already (one short write of its
    own, or part of the caller's transaction); whether this call kept it."""
    return (
        db.execute(
            f"UPDATE {_table(table)} SET pdf = :pdf WHERE id = :id AND pdf IS NULL",
            {"pdf": drawn, "id": document_id},
        )
        == 1
    )


def keep_due(stop=None, batch: int = BATCH) -> int:
    """The worker's pass: draw and keep the PDFs of up to ``batch`` documents that have none,
    newest first (each drawn outside any transaction, kept by its own write); answer how many
    it kept. A document whose drawing raises is logged and left to the downloads (which then
    fail as loudly) until the worker restarts."""
    done = 0
    for table in TABLES:
        for row in _due(table, batch - done):
            if stop is not None and stop.is_set():
                return done
            try:
                drawn = pdf.render(json.loads(row["snapshot"]))
            except Exception:  # noqa: BLE001 - one bad snapshot must not stop the others
                log.exception("%s %s: its PDF could not be drawn", table, row["id"])
                _FAILED.add((table, row["id"]))
                continue
            done += keep(table, row["id"], drawn)
        if done >= batch:
            break
    return done


def _due(table: str, limit: int) -> list[dict]:
    """Up to ``limit`` documents of ``table`` without a PDF, newest first (its ``_unkept``
    index), leaving out those this process failed to draw."""
    if limit <= 0:
        return []
    skipped = sum(1 for failed, _ in _FAILED if failed == table)
    rows = db.query(
        f"SELECT id, snapshot FROM {_table(table)} WHERE pdf IS NULL"
        " ORDER BY issued_at DESC LIMIT :limit",
        {"limit": limit + skipped},
    )
    return [row for row in rows if (table, row["id"]) not in _FAILED][:limit]


def _table(table: str) -> str:
    if table not in TABLES:
        raise ValueError(f"not a document table: {table}")
    return table
