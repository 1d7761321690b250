"""Calls this process makes over the network: deadlines, a bulkhead and a breaker."""
