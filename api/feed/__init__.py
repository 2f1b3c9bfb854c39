"""The live feed's handler (issue 37)."""
