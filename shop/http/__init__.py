"""The HTTP edge's plumbing: request hooks, error mapping, OpenAPI, the limiter."""
