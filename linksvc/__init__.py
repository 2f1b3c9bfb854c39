"""The services, a package per domain (links, accounts, campaigns, customers, loyalty, forwarding), the admin
documents (resources), the demo, and what every domain uses (settings, the store seam, errors, the clock)."""
