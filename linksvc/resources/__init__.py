"""Account resources: their models, what differs by kind, and the one save path."""
