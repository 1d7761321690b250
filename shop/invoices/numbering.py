"""Gap-free document numbers: one counter row per series and calendar year.

``take`` bumps the row in the caller's transaction, so a number is used only if the document
that takes it is committed with it: a rollback gives it back, never leaving a gap, and two
transactions never get the same one (PostgreSQL: the row's lock until commit; SQLite: the
one writer). Numbers read ``{prefix}{year}-{count:06d}``: ``INV-2026-000001``.
"""

from shop import db

INVOICE, CREDIT_NOTE = "invoice", "credit_note"


def take(series: str, prefix: str, year: int) -> str:
    """The next number of ``series`` in ``year``, in the caller's transaction."""
    db.execute(
        "INSERT INTO invoice_counters (series, year, last_number) VALUES (:series, :year, 0)"
        " ON CONFLICT (series, year) DO NOTHING",
        {"series": series, "year": year},
    )
    count = db.value(
        "UPDATE invoice_counters SET last_number = last_number + 1"
        " WHERE series = :series AND year = :year RETURNING last_number",
        {"series": series, "year": year},
    )
    return format_number(prefix, year, count)


def format_number(prefix: str, year: int, count: int) -> str:
    """A document number as printed: ``INV-`` 2026 1 -> ``INV-2026-000001``."""
    return f"{prefix}{year}-{count:06d}"
