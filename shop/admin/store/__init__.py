"""The console's store pages (issue 37): customers, discount codes, shipping methods, tax
rates, settings, staff and roles. Each module registers its pages on the console's ``bp``."""

from shop.admin.store import customers, discounts, settings, shipping, staff, tax  # noqa: F401
