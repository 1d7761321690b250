"""The domain's refusals: what a use case raises when it will not do what was asked.

Each names the kind of refusal, never a status code; the HTTP edge maps them to responses
once (``shop/http/errors.py``), the CLI to its exit messages. ``message`` is what the person
or program asking is told. ``withheld`` is ``(permission, shorter message)`` when the message
discloses what only a holder of ``permission`` may read (an order's refundable amount): the
edge tells anyone else the shorter one. ``headers`` go with the answer (``WWW-Authenticate``).
"""

from shop.outages import Unavailable  # noqa: F401 - a dependency that cannot be reached


class ShopError(Exception):
    """A refusal; subclasses say which kind."""

    def __init__(
        self,
        message: str,
        headers: dict | None = None,
        *,
        withheld: tuple[str, str] | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.headers = headers or {}
        self.withheld = withheld


class Invalid(ShopError):
    """The input breaks a rule: a field's value, a combination, a limit."""


class Unauthenticated(ShopError):
    """Who is asking is not known (no or a wrong credential)."""


class Forbidden(ShopError):
    """Who is asking may not do this."""


class NotFound(ShopError):
    """What was asked for does not exist (or may not be seen)."""


class Conflict(ShopError):
    """The thing's current state does not allow it (a status, a stock, a duplicate)."""


class TooLarge(ShopError):
    """The input is larger than the limit."""


class Unsupported(ShopError):
    """The input's kind is not one the shop reads (an image format)."""


class Deferred(ShopError):
    """Not now: a service the use case needs did not answer; try again after ``headers``'
    Retry-After."""


class Throttled(ShopError):
    """Too many attempts in a window; try again after ``headers``' Retry-After."""


class ProviderRefused(ShopError):
    """A payment provider said no: to this request (it does not fit what the provider holds),
    or, when ``ours``, to the shop's own credentials, which the operator must fix."""

    def __init__(self, message: str, *, ours: bool = False):
        super().__init__(message)
        self.ours = ours
