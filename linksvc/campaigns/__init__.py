"""Campaigns: status, listing and counting, the catalog (brands, tiers)."""
