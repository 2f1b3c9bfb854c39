"""People and roles: people, memberships, personal access tokens, one-time links, the audit log."""
