"""The database schema's versions: the migrations in ``migrations/``, run forward and recorded,
and what follows every upgrade (the built-in roles, the list totals, the search index). It sits
above the domains whose setup an upgrade finishes (``shop.auth``, ``shop.catalogue``) and below
the edge that checks the version on every request (``shop.http``) and the CLI."""
