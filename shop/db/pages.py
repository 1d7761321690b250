"""Lists and search, below every layer that lists: one page and its total, and LIKE patterns.

Lists answer ``{"items": [...], "page": 1, "page_size": 20, "total": N, "total_is_exact":
true, "next_cursor": "..."}``: one query for the page and, unless the page itself tells it,
one for the total. The API's blueprints, the auth package (API keys) and the console share
these. docs/openapi.md#lists says what a client sees.

A page is read by its sort's key (keyset pagination) when the request sends the ``cursor``
of the page before: ``WHERE (created_at, id) < (:last_created_at, :last_id)`` reads the next
rows straight from the sort's index, so page 5,000 costs what page 1 does; ``page`` (an
OFFSET) keeps working for the clients that use it. A total is exact when a kept counter
(``shop/db/totals.py``) or the page itself tells it; otherwise the rows are counted up to
``LIST_TOTAL_CAP`` (``SHOP_LIST_TOTAL_CAP``), so a filtered total never scans a big table.
"""

import base64
import binascii
import functools
import hashlib
import json

from flask import current_app

from shop import db
from shop.clock import iso
from shop.errors import Invalid

_CURSOR_VERSION = 1
_NOT_OURS = "cursor: not a cursor this service made; pass `next_cursor` as it came."
_MAX_KEY_TEXT = 1000  # a key value longer than any column we sort by is not ours

# A page's LIMIT written out for each page size the API accepts (1 to 100), not a parameter:
# PostgreSQL keeps one (generic) plan of a prepared statement only when it knows the LIMIT;
# with ``LIMIT $1`` it guesses a tenth of the table, finds that plan dearer than one made
# for the value and so planned the page again on every request (issue 29: ~0.4-0.6 ms of
# the server's CPU per orders page, ~0.25 ms per product page). The texts are ours: a page
# size picks one, as ``visible_only`` picks a product's statement; any other size takes the
# parameter. A first page (an OFFSET of 0) has no OFFSET clause, for the same reason.
_LIMITS = {size: f" LIMIT {size + 1}" for size in range(1, 101)}

# The key of a list's ``args`` that holds the request's path and filters, as the edge read
# them (``shop.api.common.Parser``): a cursor is good only for the list it came from.
ASKED = "asked"

# ``paginate``'s ``narrow`` when only the number of matches can tell: count them first (up to
# the cap, as the total is counted anyway) and find-then-sort when they are within it.
IF_FEW = "if few"


def paginate(
    select: str,
    count_from: str,
    where: "Where",
    order: str,
    args: dict,
    convert=None,
    exact_total: str | None = None,
    narrow: bool | str = False,
    dense: "Where | None" = None,
    count_in_order: bool = False,
    total_in_page: bool = False,
) -> dict:
    """A page of ``select`` (``SELECT ... FROM ...``, no WHERE) filtered by ``where`` on
    ``count_from`` and sorted by ``order`` (its last column unique), with its total:
    ``exact_total`` (SQL of a kept or narrow count, given ``where``'s values) or the matches
    counted up to the cap. ``args`` holds ``page``, ``page_size`` and ``cursor`` (from the
    same list, sort and filters, else 400). ``narrow``: find the few matches first, then sort
    them (``IF_FEW``: the capped count decides; ``dense`` is the filters spelled for the
    index walk); ``count_in_order``: count along the page's own index; ``total_in_page``:
    ``exact_total`` is read by the page's own statement (a count of the filter's index
    range, one statement less). Why and the figures:
    docs/performance.md, "Lists at any depth" and "The orders list".
    """
    page_size = args["page_size"]
    counted = None
    if narrow == IF_FEW:
        counted = _capped_count(count_from, where) if exact_total is None else None
        narrow = counted is not None and counted[1]
    keys = _sort_keys(order)
    binding = _binding(select, where, keys, args)
    before, values = _start(args, binding, len(keys))  # rows of the list before this page
    condition = dense if counted is not None and not narrow and dense is not None else where
    if values is not None:
        condition = Where(*condition.conditions, **condition.params)
        condition.add(_after(keys), **{f"_c{i}": v for i, v in enumerate(values)})
    # The page's keys first, from the filtered table alone, then its rows: a filter no index
    # serves in the sort's order sorts narrow rows, not every match with its subqueries.
    order_by = " ORDER BY " + ", ".join(f"{e} DESC" if desc else e for e, desc in keys)
    unique = keys[-1][0]
    limit = _LIMITS.get(page_size, " LIMIT :_limit")
    limit += "" if args.get("cursor") or before == 0 else " OFFSET :_offset"
    page_of = f"SELECT {unique} FROM {count_from}{condition.sql()}{order_by}{limit}"
    columns = ", ".join(f"{expr} AS _k{i}" for i, (expr, _) in enumerate(keys))
    found = ""
    if narrow:  # find the few matches first, then sort them (see the docstring)
        named = ", ".join(f"{expr} AS _n{i}" for i, (expr, _) in enumerate(keys))
        found = f"WITH matches AS MATERIALIZED (SELECT {named} FROM {count_from}{condition.sql()}) "
        page_of = (
            f"SELECT _n{len(keys) - 1} FROM matches ORDER BY "
            + ", ".join(f"_n{i} DESC" if desc else f"_n{i}" for i, (_, desc) in enumerate(keys))
            + limit
        )
        if counted is None:  # every match is at hand: the total comes with the page
            columns += ", (SELECT COUNT(*) FROM matches) AS _matched"
    elif total_in_page and exact_total is not None:
        columns += f", ({exact_total}) AS _total"
    try:
        rows = db.query(
            f"{found}SELECT {columns}, {select.lstrip().removeprefix('SELECT')}"
            f" WHERE {_among(unique, page_of)}{order_by}",
            {**condition.params, "_limit": page_size + 1, "_offset": before},
        )
    except db.psycopg_errors("DataError", "ProgrammingError"):
        # The tag is a checksum, not a signature: a cursor made by hand with a text where the
        # sort's column is a number passes it, and PostgreSQL refuses the comparison.
        if values is None:
            raise
        raise Invalid(_NOT_OURS) from None
    more = len(rows) > page_size
    rows = rows[:page_size]
    last = [rows[-1][f"_k{i}"] for i in range(len(keys))] if rows else None
    matched = rows[0].get("_matched") if rows else None
    counted_here = rows[0].get("_total") if rows else None
    for row in rows:
        for i in range(len(keys)):
            del row[f"_k{i}"]
        row.pop("_matched", None)
        row.pop("_total", None)
    exact = True
    if not more and (rows or before == 0 or args.get("cursor")):
        total = before + len(rows)  # the last page tells the total itself
    elif matched is not None:  # the matches after a cursor, or all of them
        total = matched + (before if args.get("cursor") else 0)
    elif counted_here is not None:
        total = counted_here
    elif exact_total is not None:
        total = db.value(exact_total, where.params)
    else:
        in_order = order_by if count_in_order else ""
        total, exact = counted or _capped_count(count_from, where, in_order)
        total = total if exact else max(total, before + len(rows))
    items = [convert(row) for row in rows] if convert else rows
    return {
        "items": items,
        "page": before // page_size + 1,
        "page_size": page_size,
        "total": total,
        "total_is_exact": exact,
        "next_cursor": _encode(binding, before + len(rows), last) if more else None,
    }


def _among(unique: str, page_of: str) -> str:
    """The condition that picks the page's rows by their keys (``page_of``): an array on
    PostgreSQL, so its plan is kept (docs/performance.md, "The cursor page's plan"); ``IN``
    on SQLite.
    """
    if db.get_db().engine == "postgresql":
        return f"{unique} = ANY(ARRAY({page_of}))"
    return f"{unique} IN ({page_of})"


def paginate_rows(rows: list, args: dict) -> dict:
    """A page of a list made whole in memory (one's own live sessions: a handful), in the
    same envelope; its cursor's key is the position, as the list is not read by index."""
    page_size = args["page_size"]
    binding = _binding("rows", Where(), [("position", False)], args)
    before, _ = _start(args, binding, 1)
    items = rows[before : before + page_size]
    after = before + len(items)
    return {
        "items": items,
        "page": before // page_size + 1,
        "page_size": page_size,
        "total": len(rows),
        "total_is_exact": True,
        "next_cursor": _encode(binding, after, [after]) if after < len(rows) else None,
    }


def _start(args: dict, binding: str, count: int) -> tuple[int, list | None]:
    """The rows before the page asked for, and the cursor's key values (None by ``page``)."""
    if not args.get("cursor"):
        return (args["page"] - 1) * args["page_size"], None
    if args.get("page", 1) != 1:
        raise Invalid("cursor, page: give one of them (the cursor knows its page).")
    return _decode(args["cursor"], binding, count)


def _capped_count(count_from: str, where: "Where", order_by: str = "") -> tuple[int, bool]:
    """The rows ``where`` selects (in ``order_by``, if given), counted up to the cap:
    (count, whether it is exact)."""
    cap = current_app.config["LIST_TOTAL_CAP"]
    found = db.value(count_sql(count_from, where, order_by), {**where.params, "_cap": cap + 1})
    return (found, True) if found <= cap else (cap, False)


def count_sql(count_from: str, where: "Where", order_by: str = "") -> str:
    """The capped count's statement (``:_cap`` rows at most)."""
    return (
        f"SELECT COUNT(*) FROM (SELECT 1 FROM {count_from}{where.sql()}{order_by}"
        " LIMIT :_cap) capped"
    )


def _sort_keys(order: str) -> list[tuple[str, bool]]:
    """``ORDER BY a DESC, b`` as ``[("a", True), ("b", False)]``."""
    keys = []
    for term in order.strip().removeprefix("ORDER BY").split(","):
        expr, _, direction = term.strip().partition(" ")
        keys.append((expr, direction.strip().upper() == "DESC"))
    return keys


def _after(keys: list[tuple[str, bool]]) -> str:
    """The condition of the rows after ``:_c0, :_c1, ...`` in the order of ``keys``.

    One direction is a row-value comparison, which both engines read as an index range;
    mixed directions spell it out: ``a > :_c0 OR (a = :_c0 AND b < :_c1)``.
    """
    marks = [f":_c{i}" for i in range(len(keys))]
    exprs = [expr for expr, _ in keys]
    if len({desc for _, desc in keys}) == 1:
        sign = "<" if keys[0][1] else ">"
        if len(keys) == 1:
            return f"{exprs[0]} {sign} {marks[0]}"
        return f"({', '.join(exprs)}) {sign} ({', '.join(marks)})"
    terms = []
    for i, (expr, desc) in enumerate(keys):
        equal = [f"{exprs[j]} = {marks[j]}" for j in range(i)]
        terms.append(" AND ".join([*equal, f"{expr} {'<' if desc else '>'} {marks[i]}"]))
    return "(" + " OR ".join(f"({term})" for term in terms) + ")"


def _binding(select: str, where: "Where", keys: list, args: dict) -> str:
    """What a cursor is good for: this list and sort, and the filters as the request gave
    them (``args[ASKED]``, from the edge: the SQL's own values may change between pages, a
    list of keys compares with now)."""
    asked = _frozen(args.get(ASKED, []))
    return _bound(select, tuple(where.conditions), _frozen(keys), asked)


@functools.lru_cache(maxsize=1024)
def _bound(select: str, conditions: tuple, keys: tuple, asked: tuple) -> str:
    """``_binding``'s digest, computed once per list, sort and asked filters: encoding and
    hashing it was ~3 % of a product page's CPU (issue 42). Tuples encode as the lists they
    stand for, so the digest, and every cursor already handed out, stays the same."""
    text = json.dumps([_fingerprint(select), conditions, keys, asked])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _frozen(value):
    """``value`` with its lists as tuples (hashable), for ``_bound``'s cache."""
    if type(value) is list or type(value) is tuple:
        return tuple(_frozen(item) for item in value)
    return value


@functools.lru_cache(maxsize=256)
def _fingerprint(select: str) -> str:
    """A list's SELECT, hashed once: the orders list's is 3 kB of JSON-building SQL, and
    encoding and hashing it on every request cost ~40 µs (issue 29)."""
    return hashlib.sha256(select.encode()).hexdigest()


def _tag(binding: str, values: list) -> str:
    """The cursor's check: its list and the kinds of its key values (a key value of another
    kind would be compared with a column of another type)."""
    kinds = "".join("n" if v is None else "i" if isinstance(v, int) else "s" for v in values)
    return hashlib.sha256(f"{binding}:{kinds}".encode()).hexdigest()[:16]


def _encode(binding: str, before: int, values: list) -> str:
    """The opaque cursor of the page after the one whose last row has ``values``."""
    text = json.dumps([_CURSOR_VERSION, _tag(binding, values), before, values])
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _decode(cursor: str, binding: str, count: int) -> tuple[int, list]:
    """The rows before the cursor's page and its key values; 400 unless the cursor is one
    this list, sort and filters made."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        version, tag, before, values = json.loads(raw)
    except (ValueError, TypeError, RecursionError, binascii.Error):  # RecursionError: [[[[...
        raise Invalid(_NOT_OURS) from None
    shaped = (
        version == _CURSOR_VERSION
        and type(before) is int
        and 0 <= before < 2**62
        and isinstance(values, list)
        and len(values) == count
        and all(
            v is None
            or (type(v) is int and -(2**63) <= v < 2**63)
            or (type(v) is str and len(v) <= _MAX_KEY_TEXT)
            for v in values
        )
    )
    if not shaped:
        raise Invalid(_NOT_OURS)
    if tag != _tag(binding, values):
        raise Invalid(
            "cursor: it belongs to another list, sort or filters; send the same ones as the"
            " request that answered it, or start again without a cursor.",
        )
    return before, values


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
