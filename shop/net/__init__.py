"""Calls this process makes over the network: deadlines, a bulkhead and a breaker; the
announcements that make every node forget what it keeps in memory; the JSON text it sends
(``jsontext``: API responses and webhook bodies)."""
