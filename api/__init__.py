"""HTTP: the storefront and admin APIs, their endpoint declarations, errors, OpenAPI and metrics."""
