"""Calls this process makes over the network: deadlines, a bulkhead and a breaker; the
announcements that make every node forget what it keeps in memory."""
