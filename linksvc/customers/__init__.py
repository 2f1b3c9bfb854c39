"""Customers: contacts and customers, the wallet, one-time codes, migration under rate limits."""
