"""Extension objects shared by the blueprints, bound to an app in ``create_app``."""

from functools import partial

import flask_limiter
from flask import current_app, g, request
from flask.globals import request_ctx
from flask_limiter.util import get_qualified_name

from shop.http import limit_windows
from shop.http.openapi import rate_limited


def client_key() -> str:
    """Whom a rate limit counts: the client address, under this deployment's key prefix.

    The address is the TCP peer's, or the one ProxyFix took from X-Forwarded-For when
    SHOP_TRUSTED_PROXIES > 0. The prefix (SHOP_RATELIMIT_KEY_PREFIX) lets several shops, or
    tests, share one Redis; it is read per request because the limiter object outlives apps.
    """
    return f"{current_app.config['RATELIMIT_KEY_PREFIX']}:{request.remote_addr or '-'}"


def caller_key(scope: str):
    """A key function counting per caller (the API key, or the signed-in user; else
    ``anonymous``) under ``scope``, for limits on what one caller may start."""

    def key() -> str:
        caller = g.get("caller")
        who = f"{caller.kind}:{caller.id}" if caller else "anonymous"
        return f"{current_app.config['RATELIMIT_KEY_PREFIX']}:{scope}:{who}"

    return key


class Limiter(flask_limiter.Limiter):
    """flask-limiter's Limiter, without its before_request pass while only views carry limits.

    Our limits are all ``@limiter.limit`` on view methods, checked when the view is called.
    The before_request pass applies only default, application, blueprint and meta limits:
    with none of them configured it resolves and evaluates an empty set on every request,
    a tenth to a quarter of a read's CPU time. It runs again as soon as one is configured.
    """

    def init_app(self, app):
        """Bind to ``app`` with a new storage, not yet known to be unreachable.

        One limiter object serves every app a process builds (the tests build many):
        flask-limiter would otherwise keep counting in its in-memory fallback because an
        earlier app's Redis was down.
        """
        first = self not in app.extensions.get("limiter", ())
        super().init_app(app)
        self._storage_dead = False
        if not self.enabled:
            return
        # Hits that also read their window, for the RateLimit fields (shop/http/limit_windows.py).
        if self._strategy != "moving-window":
            raise ValueError("shop's limits are moving windows (RATELIMIT_STRATEGY)")
        self._limiter = limit_windows.MovingWindow(self._storage)
        if self._in_memory_fallback_enabled:
            self._fallback_limiter = limit_windows.MovingWindow(self._fallback_storage)
        if first:
            self._replace_response_hooks(app)

    def _replace_response_hooks(self, app) -> None:
        """Swap flask-limiter's after_request hook for ours (the RateLimit fields) and its
        teardown for one that does nothing on a request no limit looked at (why:
        docs/performance.md, "Cheap reads: the keyed read and the lists").
        """
        inject = flask_limiter.Limiter._Limiter__inject_headers
        release = self._Limiter__release_context
        after = app.after_request_funcs.setdefault(None, [])
        for i, hook in enumerate(after):
            if isinstance(hook, partial) and hook.func is inject and hook.args == (self,):
                after[i] = self._add_rate_limit_fields
        teardown = app.teardown_request_funcs.setdefault(None, [])
        for i, hook in enumerate(teardown):
            if hook == release:
                teardown[i] = self._if_limited(hook)

    def _add_rate_limit_fields(self, response):
        """after_request: the RateLimit fields of every limit this request was counted against
        (none, and nothing to do, on a request no limit looked at)."""
        if g._get_current_object().get("rate_windows"):
            contexts = getattr(request_ctx._get_current_object(), "_limiter_request_context", None)
            names = {}
            if contexts is not None and self in contexts:
                for counted in contexts[self].view_rate_limits:
                    names[counted.key] = counted.request_args[-1] if counted.shared else "route"
            limit_windows.add_fields(response, names)
        return response

    def _if_limited(self, hook):
        """``hook(value)``, run only when this request has a limiter context of ours."""

        def run(value):
            contexts = getattr(request_ctx._get_current_object(), "_limiter_request_context", None)
            if contexts is None or self not in contexts:
                return value
            return hook(value)

        return run

    def limit(self, *args, **kwargs):
        """flask-limiter's ``limit``; the route also documents 429 with ``Retry-After``."""
        return _documented(super().limit(*args, **kwargs))

    def shared_limit(self, *args, **kwargs):
        """flask-limiter's ``shared_limit``; the route also documents 429."""
        return _documented(super().shared_limit(*args, **kwargs))

    def _check_request_limit(self, callable_name=None, in_middleware=True):
        """Check the limits of this request (the before_request pass only when it has any)."""
        if in_middleware and not self._app_wide_limits():
            return
        super()._check_request_limit(callable_name=callable_name, in_middleware=in_middleware)

    def count_refused(self, view) -> None:
        """Count a request that ``view``'s guard refuses against the view's own limits.

        Guards run before the view (``run_route_guard``), so without this a refused request
        would never reach the limit decorator: anonymous checkouts would go uncounted while
        the README says invalid requests count. Raises ``RateLimitExceeded`` when over.
        """
        func = view
        while func is not None:
            # flask-limiter marks its wrapper with a weak proxy of itself: compare with ==.
            if getattr(func, "__wrapper-limiter-instance", None) == self:
                name = get_qualified_name(func.__wrapped__)
                self._check_request_limit(callable_name=name, in_middleware=False)
                return
            func = getattr(func, "__wrapped__", None)

    def _app_wide_limits(self) -> bool:
        manager = self.limit_manager
        return bool(
            manager._default_limits
            or manager._application_limits
            or manager._blueprint_limits
            or self._meta_limits
        )


def _documented(decorator):
    """``decorator`` (a view's rate limit) that also documents the 429 in OpenAPI."""

    def apply(func):
        limited = decorator(func)
        return rate_limited(limited) if callable(limited) else limited

    return apply


# Storage comes from the app config (RATELIMIT_STORAGE_URI): memory for one process, Redis
# for several.
limiter = Limiter(key_func=client_key)
