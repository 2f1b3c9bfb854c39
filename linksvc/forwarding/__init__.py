"""Forwarding accepted events to destinations (product decisions, section 10): the outbox, the dispatcher,
one pure mapping per destination, and the export job."""
