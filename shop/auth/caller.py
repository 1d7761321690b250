"""Who is calling: the one object the rest of the service asks about identity and rights."""

from dataclasses import dataclass, field

from shop.actor import Actor
from shop.errors import Forbidden
from shop.permissions import SCOPES, scopes_for


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
    # The request's address and User-Agent, set by the edge, for the audit log.
    ip: str | None = None
    user_agent: str | None = None

    def can(self, permission: str) -> bool:
        """Whether the caller holds ``permission`` right now."""
        return permission in self.permissions

    def has_scope(self, scope: str) -> bool:
        """Whether an API key caller holds ``scope`` with at least one right left in it."""
        return scope in self.scopes and bool(SCOPES.get(scope, frozenset()) & self.permissions)

    def denial(self, permission: str, *, key_scopes=(), purpose: str | None = None) -> str:
        """The words of a 403 for lacking ``permission``: an API key is told the scope it
        needs (or, holding it, that its owner no longer holds the permission); anyone else
        the permission. ``purpose`` (``prune entries``) says what was refused."""
        to = f"to {purpose} " if purpose else ""
        if self.kind != "api_key":
            return f"Access denied: {to}this needs the permission {permission}."
        scopes = tuple(key_scopes) or scopes_for(permission)
        held = [scope for scope in scopes if scope in self.scopes]
        if held:
            return (
                f"Access denied: {to}this API key's scope {held[0]} no longer carries"
                f" {permission}: the key's owner does not hold it now."
            )
        if not scopes:
            return f"Access denied: {to}API keys cannot do this; sign in as an administrator."
        return f"Access denied: {to}this API key needs the scope {' or '.join(scopes)}."

    @property
    def is_owner(self) -> bool:
        """Whether this is an administrator with the owner role."""
        return self.kind == "admin" and self.role == "owner"

    @property
    def actor(self) -> Actor:
        """This caller as the audit log names it, from the request's address."""
        label = self.label if self.kind in ("api_key", "system") else self.email
        return Actor(self.kind, self.id, label, self.ip, self.user_agent)


def require(caller: Caller, permission: str, *, key_scopes=(), purpose: str | None = None):
    """403 unless ``caller`` holds ``permission`` (an API key: or one of ``key_scopes``).

    The one permission check, for route guards, console pages and views that need a further
    permission (``purpose`` names it: ``prune entries``); its words are ``Caller.denial``'s.
    """
    if caller.can(permission):
        return
    if (
        caller.kind == "api_key"
        and purpose is None
        and any(caller.has_scope(scope) for scope in key_scopes)
    ):
        return
    raise Forbidden(caller.denial(permission, key_scopes=key_scopes, purpose=purpose))
