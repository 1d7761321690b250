"""The console's catalogue and content pages (issue 37): products (list, create, edit,
variants, images), the catalogue file (import, export), categories, collections and the
content registry. Each module registers its pages on the console's blueprint ``bp``."""

from shop.admin.catalogue import content, files, groups, products, variants  # noqa: F401
