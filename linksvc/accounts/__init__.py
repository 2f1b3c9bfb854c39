"""Accounts: accounts, API keys, access tokens, dashboard sessions, failed-login throttling."""
