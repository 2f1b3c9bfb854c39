"""HTTP handlers of customers: the storefront\x27s contact search, customer lookup, one-time codes, migration."""
