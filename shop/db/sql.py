"""Statement text and parameters: placeholders rewritten for psycopg, SQLite's dialect,
lists for ``IN`` and the constraint a failed write names. Pure functions of their input."""

import re
import sqlite3
import sys
from functools import lru_cache

_WRITE_VERBS = ("insert", "update", "delete", "replace", "create", "drop", "alter")


@lru_cache(maxsize=1024)
def translate(sql: str) -> str:
    """Rewrite ``:name`` placeholders as ``%(name)s`` and escape ``%`` for psycopg.

    Quoted strings, identifiers and ``--`` comments are copied as they are (but for ``%``),
    and ``::`` casts are left alone.
    """
    out = []
    i, n = 0, len(sql)
    while i < n:
        ch = sql[i]
        if ch == "-" and sql.startswith("--", i):
            end = sql.find("\n", i)
            end = n if end == -1 else end
            out.append(sql[i:end].replace("%", "%%"))
            i = end
        elif ch in "'\"":
            end = sql.index(ch, i + 1) + 1
            out.append(sql[i:end].replace("%", "%%"))
            i = end
        elif ch == "%":
            out.append("%%")
            i += 1
        elif ch == ":" and i + 1 < n and sql[i + 1] == ":":
            out.append("::")
            i += 2
        elif ch == ":" and i + 1 < n and (sql[i + 1].isalpha() or sql[i + 1] == "_"):
            match = re.compile(r"[A-Za-z_]\w*").match(sql, i + 1)
            out.append(f"%({match.group()})s")
            i = match.end()
        else:
            out.append(ch)
            i += 1
    return "".join(out)


_STRING_AGG = re.compile(r"\bstring_agg\s*\(", re.IGNORECASE)


@lru_cache(maxsize=1024)
def for_sqlite(sql: str) -> str:
    """PostgreSQL's ``string_agg(value, separator)`` as SQLite's built-in ``group_concat``.

    Same result (NULLs skipped, NULL when there are none), computed in C: a Python aggregate
    cost a callback per row on every session and key resolution.
    """
    return _STRING_AGG.sub("group_concat(", sql)


@lru_cache(maxsize=1024)
def is_write(sql: str) -> bool:
    """Whether a statement changes data (counted apart in ``stats``)."""
    return sql.lstrip().split(None, 1)[0].lower() in _WRITE_VERBS


def in_list(name: str, values) -> tuple[str, dict]:
    """``(:name0, :name1, ...)`` and its parameters, for ``IN``: one statement whatever the
    list's length, its SQL holding only numbered placeholders."""
    params = {f"{name}{i}": value for i, value in enumerate(values)}
    return "(" + ", ".join(f":{key}" for key in params) + ")", params


def adapt(params):
    """Booleans become 0/1: both engines store flags as integers."""
    if not params:
        return {}
    if isinstance(params, dict):
        return {k: int(v) if isinstance(v, bool) else v for k, v in params.items()}
    return [int(v) if isinstance(v, bool) else v for v in params]


# -- the module-level verbs, bound to the current app's database --------------------------


_SQLITE_UNIQUE = re.compile(r"UNIQUE constraint failed: \w+\.(\w+)")
_PG_UNIQUE_KEY = re.compile(r"Key \((?:lower\()?(\w+)")


def psycopg_errors(*names: str) -> tuple[type[Exception], ...]:
    """psycopg's exception classes called ``names`` (``"Error"``, ``"DataError"``...) once it
    is loaded, else none. Only a PostgreSQL database loads it (~10 MB that a SQLite shop's
    processes do not hold), and none of its errors can be raised before. For ``except``
    clauses: ``except (sqlite3.Error, *db.psycopg_errors("Error"))``."""
    psycopg = sys.modules.get("psycopg")
    return tuple(getattr(psycopg, name) for name in names) if psycopg is not None else ()


def unique_violation(error: BaseException) -> str | None:
    """The column whose unique constraint ``error`` reports, or None for any other error.

    A check-then-insert inside a transaction can still lose a race on PostgreSQL (read
    committed): the constraint decides, and this names what it refused on either engine.
    """
    if isinstance(error, sqlite3.IntegrityError):
        match = _SQLITE_UNIQUE.search(str(error))
        return match.group(1) if match else None
    if type(error).__name__ == "UniqueViolation":  # psycopg.errors.UniqueViolation
        detail = getattr(getattr(error, "diag", None), "message_detail", None) or ""
        match = _PG_UNIQUE_KEY.search(detail)
        return match.group(1) if match else "value"
    return None
