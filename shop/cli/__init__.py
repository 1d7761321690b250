"""flask commands: ``db status|upgrade|backup|restore`` (shop/cli/database.py), ``users
create|list|reset-two-factor`` (users.py), ``api-keys create|list|roll|revoke`` (api_keys.py),
``jobs run [--once]``, ``webhooks work|status``, ``mail work --once`` (workers.py, the worker
itself in jobs.py), ``products export|import`` (products.py), ``payments`` (payments.py) and
``demo`` (demo.py).

Run them as ``flask --app app <command>``. A bad argument prints a clear message and exits 1.
"""

from flask import Flask

from shop.cli.api_keys import api_keys_group
from shop.cli.database import db_group, init_db_command
from shop.cli.demo import demo_command
from shop.cli.payments import payments_group
from shop.cli.products import products_group
from shop.cli.users import users_group
from shop.cli.workers import jobs_group, mail_group, webhooks_group


def register(app: Flask) -> None:
    """Attach the commands to the app."""
    for command in (
        db_group,
        products_group,
        init_db_command,
        users_group,
        api_keys_group,
        jobs_group,
        webhooks_group,
        mail_group,
        demo_command,
        payments_group,
    ):
        app.cli.add_command(command)
