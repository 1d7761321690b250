"""Who is calling: the one object the rest of the service asks about identity and rights."""

from dataclasses import dataclass, field

from shop.auth.permissions import SCOPES, scopes_for
from shop.errors import abort


@dataclass(frozen=True, slots=True)
class Caller:
    """The authenticated caller of a request, kept on ``g.caller``.

    ``kind`` is ``admin``, ``customer`` or ``api_key``. For an API key, ``permissions`` are
    its scopes' permissions intersected with its owner's current permissions, and ``id`` is
    the key's id.
    """

    kind: str
    id: str
    email: str | None = None
    name: str | None = None
    role: str | None = None
    permissions: frozenset = field(default_factory=frozenset)
    session_id: str | None = None
    scopes: frozenset = field(default_factory=frozenset)
    owner_id: str | None = None
    label: str | None = None
    # An administrator without two-factor sign-in while the shop's settings require it.
    needs_two_factor: bool = False

    def can(self, permission: str) -> bool:
        """Whether the caller holds ``permission`` right now."""
        return permission in self.permissions

    def has_scope(self, scope: str) -> bool:
        """Whether an API key caller holds ``scope`` with at least one right left in it."""
        return scope in self.scopes and bool(SCOPES.get(scope, frozenset()) & self.permissions)

    @property
    def is_owner(self) -> bool:
        """Whether this is an administrator with the owner role."""
        return self.kind == "admin" and self.role == "owner"

    @property
    def actor(self) -> dict:
        """How the audit log names this caller."""
        label = self.label if self.kind == "api_key" else self.email
        return {"kind": self.kind, "id": self.id, "label": label}


def require(caller: Caller, permission: str, *, key_scopes=(), purpose: str | None = None):
    """403 unless ``caller`` holds ``permission`` (an API key: or one of ``key_scopes``).

    The one permission check and its message, for route guards, console pages and views that
    need a further permission. A key is told the scope it needs; anyone else, or anyone
    asked for the permission ``purpose`` names (``to prune entries``), the permission.
    """
    if caller.can(permission):
        return
    if caller.kind == "api_key" and purpose is None:
        if any(caller.has_scope(scope) for scope in key_scopes):
            return
        needed = " or ".join(key_scopes or scopes_for(permission))
        abort(403, f"Access denied: this API key needs the scope {needed}.")
    to = f"to {purpose} " if purpose else ""
    abort(403, f"Access denied: {to}this needs the permission {permission}.")
