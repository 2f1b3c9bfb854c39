"""Loyalty rules: campaign status and wallets."""
