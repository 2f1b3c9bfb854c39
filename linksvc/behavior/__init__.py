"""Behavior events: ingest, attribution, earning and reversal (product decisions, sections 8 and 9)."""
