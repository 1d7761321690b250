"""shop: the back-end HTTP API of an online shop."""

import logging

from flask import Flask, send_from_directory


def create_app(config: dict | None = None) -> Flask:
    """Build the application: settings, database, extensions, blueprints, hooks and CLI.

    ``config`` overrides the settings read from the environment (tests pass their own).
    Nothing here touches the database: a worker boots while it is down, and the schema is
    changed only by ``flask db upgrade`` (the Procfile's release step).
    """
    from shop import admin, cli, db, storefront
    from shop import config as settings
    from shop.api import register_blueprints
    from shop.api.common import Api
    from shop.auth.keys import cache as key_cache
    from shop.auth.keys import store as key_store
    from shop.http import client_address, context, errors, hooks, inbound, key_usage
    from shop.http.decorators import run_route_guard
    from shop.http.extensions import limiter
    from shop.http.openapi import SECURITY_SCHEMES
    from shop.net import announcements
    from shop.schema import migrate
    from shop.webhooks import outbox, worker

    app = hooks.App(__name__, static_folder=None)
    try:
        app.config.update(settings.from_environment())
    except settings.ConfigError as error:
        raise SystemExit(f"shop: {error}") from None  # one line, no traceback, exit code 1
    app.config.update(config or {})
    settings.check(app.config)
    derived = dict(
        # flask-limiter: memory storage for one process, Redis for several (README).
        RATELIMIT_STORAGE_URI=app.config["REDIS_URL"] or "memory://",
        RATELIMIT_HEADERS_ENABLED=False,
        # "5 a minute" holds over any minute, not per calendar-like window.
        RATELIMIT_STRATEGY="moving-window",
        # A Redis that is down or hung costs a request at most REDIS_TIMEOUT; the limiter then
        # counts in this process's memory until Redis answers again (docs/operations.md).
        RATELIMIT_STORAGE_OPTIONS={
            "socket_timeout": app.config["REDIS_TIMEOUT"],
            "socket_connect_timeout": app.config["REDIS_TIMEOUT"],
        },
        RATELIMIT_IN_MEMORY_FALLBACK_ENABLED=True,
        # flask-smorest / OpenAPI.
        API_TITLE="shop",
        API_VERSION="1.0.0",
        OPENAPI_VERSION="3.0.3",
        OPENAPI_URL_PREFIX="/",
        OPENAPI_JSON_PATH="openapi.json",
        OPENAPI_SWAGGER_UI_PATH="/swagger",
        OPENAPI_SWAGGER_UI_URL="/swagger-ui-assets/",
        API_SPEC_OPTIONS={
            "info": {
                "description": (
                    "The back-end API of an online shop. Humans sign in at `/auth/login` and"
                    " carry a session cookie; machines send `Authorization: Bearer eck_...`"
                    ' with a scoped API key. Every error is `{"message": "..."}`.'
                    " Conventions: docs/openapi.md."
                )
            },
            # Relative: the server that serves this description.
            "servers": [{"url": "/", "description": "This shop."}],
            "components": {"securitySchemes": SECURITY_SCHEMES},
        },
    )
    for key, value in derived.items():
        app.config.setdefault(key, value)
    app.config.setdefault("MIGRATIONS_DIR", migrate.MIGRATIONS_DIR)
    _configure_logging(app)

    # The one place the client's address is decided (shop/http/client_address.py).
    app.wsgi_app = client_address.wrap(
        app.wsgi_app, app.config["TRUSTED_PROXIES"], bool(app.config.get("TRUSTED_HOSTS"))
    )

    database = db.Database(
        app.config["DATABASE_URL"],
        app.config["DB_CONNECT_TIMEOUT"],
        app.config["DB_STATEMENT_TIMEOUT"],
    )
    app.extensions["shop.db"] = database
    limiter.init_app(app)

    api = Api(app)
    hooks.swagger_page_headers(app)  # the Swagger page's own headers, set by its view
    errors.register(app)
    for integrity_error in _integrity_errors(app.extensions["shop.db"].engine):
        app.register_error_handler(integrity_error, errors.unique_violation)
    register_blueprints(api)
    app.register_blueprint(admin.bp)
    api.serve_error_pages(admin.bp.url_prefix, admin.routing_error_page)
    storefront.register(app)
    if app.config["STOREFRONT"]:
        api.serve_error_pages(app.config["STOREFRONT_PREFIX"], storefront.not_found_page)

    import swagger_ui_bundle

    @app.get("/swagger-ui-assets/<path:filename>", endpoint="swagger_ui_assets")
    def swagger_ui_assets(filename):
        """Swagger UI's files, served locally: no CDN needed."""
        return send_from_directory(swagger_ui_bundle.swagger_ui_path, filename, max_age=86400)

    @app.get("/favicon.ico", endpoint="favicon")
    def favicon():
        """The shop's icon, for browsers at the console, the index and Swagger UI."""
        return send_from_directory(admin.bp.static_folder, "favicon.ico", max_age=86400)

    # Request hooks: HTTP plumbing (shop/http/hooks.py) around who is calling (shop/auth).
    # after_request hooks run last-registered first: cookies, then the response's finish.
    app.before_request(hooks.start_timer)  # first in, last out: times the whole request
    app.after_request(hooks.count_response)
    app.before_request(inbound.refuse_bad_characters)
    app.before_request(hooks.require_current_schema)
    if app.config["SQL_COUNT_HEADERS"]:
        app.before_request(hooks.start_sql_count)
        app.after_request(hooks.sql_count_headers)
    app.after_request(hooks.finish_response)
    app.before_request(context.load_caller)
    app.before_request(context.require_two_factor)
    app.before_request(run_route_guard)
    app.after_request(context.session_cookies)
    key_usage.init_app(app)
    announcements.init_app(app)  # before the caches that listen to it
    key_cache.init_app(app)
    outbox.init_app(app)
    # Webhooks sit below identity: a key's event reaches only an owner who may read the key.
    worker.record_rule("api_key", key_store.readable_by)

    cli.register(app)
    return app


def _integrity_errors(engine: str) -> list[type[Exception]]:
    """The integrity error classes of sqlite3 and, on PostgreSQL, psycopg's: a SQLite shop's
    processes never load psycopg (shop/db/sql.py, ``psycopg_errors``)."""
    import sqlite3

    if engine != "postgresql":
        return [sqlite3.IntegrityError]
    import psycopg

    return [sqlite3.IntegrityError, psycopg.IntegrityError]


def _configure_logging(app: Flask) -> None:
    from shop import logs

    level = getattr(logging, app.config["LOG_LEVEL"], logging.INFO)
    # flask-limiter says there when Redis is lost and found again; it only has a NullHandler.
    for name in ("shop", "flask-limiter"):
        logger = logging.getLogger(name)
        logger.setLevel(level)
        if not any(isinstance(h, logging.StreamHandler) for h in logger.handlers):
            handler = logging.StreamHandler()
            formatter = logs.EscapingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
            handler.setFormatter(formatter)
            logger.addHandler(handler)
