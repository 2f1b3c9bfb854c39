"""HTTP: a folder of handlers per domain, the storefront and admin APIs put together, endpoint declarations,
errors, OpenAPI and metrics."""
