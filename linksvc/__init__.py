"""The service: wiring, settings, accounts, resources, seed files, the storefront rules and loyalty."""
