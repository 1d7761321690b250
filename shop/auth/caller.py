"""Who is calling: the one object the rest of the service asks about identity and rights."""

from dataclasses import dataclass, field

from shop.auth.permissions import SCOPES


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
