"""People, members, personal access tokens, the audit log."""
