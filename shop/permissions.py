"""The permission catalogue, the built-in roles and the API-key scopes, in one place: the
ground's vocabulary of rights (identity, webhooks and the edge read it; it imports nothing).

Permissions have the form ``resource.action``. Scopes have the form ``read:<r>`` or
``write:<r>``; each scope stands for a fixed set of permissions (``SCOPES``). A key's rights
on a request are the permissions of its scopes intersected with its owner's permissions.
"""

from functools import lru_cache

CATALOGUE = {
    "products": ("read", "create", "update", "delete"),
    "categories": ("read", "create", "update", "delete"),
    "collections": ("read", "create", "update", "delete"),
    "content": ("read", "create", "update", "delete"),
    "orders": ("read", "update_status", "refund", "edit"),
    # After the sale (issue 41): staff receive returns and make orders for customers.
    "returns": ("read", "update"),
    "draft_orders": ("read", "create", "update", "delete"),
    "customers": ("read", "update", "delete"),
    "settings": ("read", "update"),
    "users": ("read", "create", "update", "delete"),
    "roles": ("read", "create", "update", "delete"),
    "api_key": ("create", "read", "delete"),
    "audit": ("read",),
    "webhooks": ("read", "create", "update", "delete"),
    "shipping": ("read", "create", "update", "delete"),
    "tax": ("read", "create", "update", "delete"),
    "discounts": ("read", "create", "update", "delete"),
}

ALL_PERMISSIONS = frozenset(
    f"{resource}.{action}" for resource, actions in CATALOGUE.items() for action in actions
)


def _of(*resources: str) -> frozenset[str]:
    """Every permission of the given resources."""
    return frozenset(p for p in ALL_PERMISSIONS if p.split(".", 1)[0] in resources)


OWNER_ROLE = "owner"

BUILTIN_ROLES = {
    OWNER_ROLE: ALL_PERMISSIONS,
    "admin": ALL_PERMISSIONS - _of("users", "roles"),
    # Pricing (issue 26): editors run the promotions; support reads what an order was priced by.
    "editor": _of("products", "categories", "collections", "content", "api_key", "discounts"),
    "support": _of("orders", "customers", "returns", "draft_orders")
    | {"products.read", "shipping.read", "tax.read", "discounts.read"},
}

# Scope resource -> (RBAC resource, permissions of read:<r>, permissions of write:<r>).
# Write is the composite of create, update and delete (spec 2.2); it does not imply read.
SCOPES = {}
for _scope_resource, _rbac_resource in (
    ("product", "products"),
    ("category", "categories"),
    ("collection", "collections"),
    ("content", "content"),
    ("order", "orders"),
    ("customer", "customers"),
    ("setting", "settings"),
    ("webhook", "webhooks"),
    ("shipping", "shipping"),
    ("tax", "tax"),
    ("discount", "discounts"),
    ("return", "returns"),
    ("draft_order", "draft_orders"),
):
    _perms = _of(_rbac_resource)
    SCOPES[f"read:{_scope_resource}"] = frozenset(p for p in _perms if p.endswith(".read"))
    SCOPES[f"write:{_scope_resource}"] = frozenset(p for p in _perms if not p.endswith(".read"))

ALL_SCOPES = tuple(sorted(SCOPES))


def scope_permissions(scopes) -> frozenset[str]:
    """The union of the permissions the given (valid) scopes stand for."""
    result = frozenset()
    for scope in scopes:
        result |= SCOPES.get(scope, frozenset())
    return result


def scopes_for(permission: str) -> tuple[str, ...]:
    """The scopes that carry a permission (empty for api_key, users, roles and audit)."""
    return tuple(scope for scope in ALL_SCOPES if permission in SCOPES[scope])


# The permissions of the user ``u`` (its role's and its own), as ``rights_of`` reads
# them: a fragment of a SELECT that joins ``users u``.
OWNER_PERMISSIONS_SQL = """
           (SELECT string_agg(rp.permission, ' ') FROM role_permissions rp
             WHERE rp.role_id = u.role_id) AS role_permissions,
           (SELECT string_agg(up.permission, ' ') FROM user_permissions up
             WHERE up.user_id = u.id) AS extra_permissions"""


def rights_of(row: dict) -> frozenset[str]:
    """A key's rights now: its scopes' permissions, within its owner's (admin-made keys).

    ``row`` holds ``scopes``, ``source``, ``role_permissions`` and ``extra_permissions``
    (the owner's, space-separated, as ``_RESOLVE`` aggregates them).
    """
    return key_rights(
        row["scopes"],
        row["source"] == "admin",
        row["role_permissions"] or "",
        row["extra_permissions"] or "",
    )


@lru_cache(maxsize=4096)
def key_rights(
    scopes: str, within_owner: bool, role_permissions: str, extra_permissions: str
) -> frozenset[str]:
    """``rights_of`` from the row's texts, kept per distinct texts.

    A pure function of what the request's own statement read: a changed scope, role or
    grant is a different argument, so nothing here outlives the database's answer.
    """
    rights = scope_permissions(scopes.split())
    if within_owner:
        rights &= frozenset(f"{role_permissions} {extra_permissions}".split())
    return rights


@lru_cache(maxsize=4096)
def scope_set(scopes: str) -> frozenset[str]:
    """A key's stored scopes (space-separated) as a set, kept per distinct text."""
    return frozenset(scopes.split())
