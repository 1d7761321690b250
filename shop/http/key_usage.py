"""The request hooks that count API key use: after each request its key's use (noted on ``g``
by ``context.load_caller``) goes into this process's buffer (``shop.auth.keys.usage``), and
the one request an interval that the buffer chooses writes the batch in its teardown."""

from flask import g

from shop.auth.keys import usage
from shop.clock import clock_of


def init_app(app) -> None:
    """The buffer of ``app`` and the hooks that count into it."""
    buffer = usage.init_app(app)
    config = app.config

    def after_request(response):
        """Count a keyed request; note when this process's interval is up.

        It runs on every request, so it reads the app, the clock and the key's facts
        (``g.api_key_use``) without Flask's proxies where it can.
        """
        state = g._get_current_object()
        if buffer.counted(state.get("api_key_use"), response.status_code, clock_of(config)):
            state.key_usage_flush = True
        return response

    app.after_request(after_request)
    app.teardown_request(teardown_request)


def teardown_request(error=None) -> None:
    """teardown_request: the one request an interval that writes this process's batch.

    It runs once the answer is made (its status and headers are final), so the batch never
    changes what the request answered, and it cannot fail it: ``flush`` never raises.
    """
    if g._get_current_object().get("key_usage_flush"):
        usage.flush_batch()
