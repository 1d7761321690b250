"""One blueprint module per resource."""


def register_blueprints(api) -> None:
    """Register every resource's blueprint on the flask-smorest Api."""
    from shop.api import (
        api_keys,
        audit_log,
        auth,
        categories,
        collections,
        content,
        customers,
        orders,
        payments,
        products,
        roles,
        settings,
        users,
        webhooks,
    )

    api.register_converter(content.KeyConverter, content.key_parameter_schema)
    for module in (
        auth,
        users,
        roles,
        api_keys,
        audit_log,
        products,
        categories,
        collections,
        content,
        settings,
        customers,
        orders,
        payments,
        webhooks,
    ):
        api.register_blueprint(module.blp)
