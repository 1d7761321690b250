"""Who acts, as the audit log and an order's history name them, and from which address.

The edge builds the actor of a request (``shop.http.context``); the CLI, the worker and the
sweeps name themselves with ``system``. Use cases take it as an explicit ``actor`` argument.
"""

from dataclasses import dataclass, replace


@dataclass(frozen=True, slots=True)
class Actor:
    """``kind`` is ``admin``, ``customer``, ``api_key``, ``anonymous``, ``system`` or ``cli``
    (None: nobody is named); ``ip`` and ``user_agent`` are the request's, if one asked."""

    kind: str | None = None
    id: str | None = None
    label: str | None = None
    ip: str | None = None
    user_agent: str | None = None

    @property
    def names(self) -> dict:
        """How records name this actor: ``{"kind", "id", "label"}``."""
        return {"kind": self.kind, "id": self.id, "label": self.label}

    def acting_as(self, kind: str, id: str | None = None, label: str | None = None) -> "Actor":
        """The same request's address and agent, naming someone else (an anonymous sign-in
        naming the email it tried, a key naming itself)."""
        return replace(self, kind=kind, id=id, label=label)


def system(label: str) -> Actor:
    """The service acting on its own (a sweep, a job, a payment provider's webhook)."""
    return Actor(kind="system", label=label)


# The flask CLI: an operator at the machine, with no address.
CLI = Actor(kind="cli", label="flask CLI")
# No one named: the entry's actor is null (the CLI's catalogue commands).
NOBODY = Actor()
