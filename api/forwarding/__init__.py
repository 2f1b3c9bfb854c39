"""HTTP handlers of forwarding: deliveries, connection tests, secret rotation, dead letters."""
