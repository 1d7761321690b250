"""``python -m shop.server [gunicorn options]``: the Procfile's web process.

Checks every setting first, so that a bad one (``WEB_CONCURRENCY=two``, which gunicorn itself
reads as it is imported) stops the start with one line naming it and exit code 1, then
becomes gunicorn with ``gunicorn.conf.py`` serving ``app:app``.
"""

import sys

from shop import config


def main(argv: list[str]) -> None:
    """Check the settings, then run gunicorn in this process."""
    try:
        config.from_environment()
    except config.ConfigError as error:
        sys.exit(f"shop: {error}")
    from gunicorn.app.wsgiapp import run

    sys.argv = ["gunicorn", "--config", "gunicorn.conf.py", *argv, "app:app"]
    run()


if __name__ == "__main__":
    main(sys.argv[1:])
