"""Loyalty: behavior events ingested as batches, their attribution, earning and tiers, the ledger, reversal."""
