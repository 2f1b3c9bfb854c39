"""Reports read from the rollups kept as clicks and events are written."""
