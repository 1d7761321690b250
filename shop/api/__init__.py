"""One blueprint module per resource."""


def register_blueprints(api) -> None:
    """Register every resource's blueprint on the flask-smorest Api."""
    from shop.api import (
        addresses,
        api_keys,
        audit_log,
        auth,
        categories,
        collections,
        content,
        customers,
        discounts,
        health,
        images,
        invoices,
        orders,
        password_reset,
        payments,
        product_files,
        products,
        refunds,
        roles,
        service,
        settings,
        shipping_methods,
        stripe_webhook,
        tax_rates,
        two_factor,
        users,
        variants,
        webhooks,
    )

    api.register_converter(content.KeyConverter, content.key_parameter_schema)
    # The order of the tags in the description: as a shop owner reads, administration last.
    for module in (
        products,
        variants,
        images,
        categories,
        collections,
        orders,
        invoices,
        product_files,
        refunds,
        payments,
        stripe_webhook,
        shipping_methods,
        tax_rates,
        discounts,
        customers,
        content,
        settings,
        service,
        health,
        auth,
        addresses,
        two_factor,
        password_reset,
        users,
        roles,
        api_keys,
        webhooks,
        audit_log,
    ):
        api.register_blueprint(module.blp)
