"""Admin documents of every domain: their models, what differs by kind, and the one save path."""
