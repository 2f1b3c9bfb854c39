"""HTTP handlers of loyalty: the storefront's behavior events and reversals."""
