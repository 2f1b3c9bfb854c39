"""HTTP handlers of accounts: the admin API's accounts and keys, failed-login throttling."""
