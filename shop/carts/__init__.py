"""Carts (issue 38): a basket kept on the server that any visitor fills and completes, with
or without an account. ``store`` (the cart and its lines), ``present`` (how a cart reads:
availability and the quote's totals), ``completing`` (the order, through
``checkout.placing``), ``claiming`` (a guest cart taken by a signed-in customer, merged),
``reminders`` (carts left behind, and their expiry). docs/orders.md has the rules."""
