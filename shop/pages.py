"""Lists and search, below every layer that lists: one page and its total, and LIKE patterns.

Lists answer ``{"items": [...], "page": 1, "page_size": 20, "total": N}``: one query for the
page and, unless the page itself tells it, one for the total. The API's blueprints, the auth
package (API keys) and the console share these.
"""

from shop import db
from shop.clock import iso


def paginate(select_sql: str, count_sql: str, params: dict, args: dict, convert=None) -> dict:
    """Run a page query (``select_sql`` ends with its ORDER BY) and its count query."""
    page, page_size = args["page"], args["page_size"]
    rows = db.query(
        select_sql + " LIMIT :limit OFFSET :offset",
        {**params, "limit": page_size, "offset": (page - 1) * page_size},
    )
    if rows and len(rows) < page_size or not rows and page == 1:
        total = (page - 1) * page_size + len(rows)  # the last page tells the total itself
    else:
        total = db.value(count_sql, params)
    items = [convert(row) for row in rows] if convert else rows
    return {"items": items, "page": page, "page_size": page_size, "total": total}


# Case-insensitive containment: ``LOWER(column) LIKE :q ESCAPE '\'`` with ``like_pattern``.
LIKE = "LIKE :q ESCAPE '\\'"


def like_pattern(text: str) -> str:
    """A LIKE pattern matching ``text`` anywhere, lowercased, wildcards taken literally."""
    escaped = text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class Where:
    """A list's filters: SQL conditions joined with AND, and the values they name.

    Every filtered list builds its WHERE clause here, so that none forgets the ``AND``, the
    empty case or a parameter: ``where.add("o.status = :status", status=...)``, then
    ``select + where.sql()`` and ``paginate(..., where.params, ...)``.
    """

    def __init__(self, *conditions: str, **params):
        self.conditions = list(conditions)
        self.params = dict(params)

    def add(self, condition: str, **params) -> None:
        """Add a condition (SQL with ``:name`` placeholders) and the values it names."""
        self.conditions.append(condition)
        self.params.update(params)

    def sql(self) -> str:
        """`` WHERE a AND b``, or nothing when there is no condition."""
        return " WHERE " + " AND ".join(self.conditions) if self.conditions else ""


def changed_since(
    where: Where,
    args: dict,
    prefix: str = "",
    *,
    updated: bool = True,
    created: str = "created_at",
    tie: str = "id",
) -> str | None:
    """Add a list's ``created_after`` / ``updated_after`` filters (inclusive; the query
    strings' UTC datetimes) to ``where``. With ``updated_after``, answer the ORDER BY of a
    sync, oldest change first and by ``tie`` (the key) on a tie, so that an integration
    fetches only what changed since its last run and pages stay stable while it reads;
    otherwise None (the list keeps its own order). docs/openapi.md#syncing-changes"""
    if args.get("created_after"):
        where.add(f"{prefix}{created} >= :created_after", created_after=iso(args["created_after"]))
    if updated and args.get("updated_after"):
        where.add(f"{prefix}updated_at >= :updated_after", updated_after=iso(args["updated_after"]))
        return f" ORDER BY {prefix}updated_at, {prefix}{tie}"
    return None
