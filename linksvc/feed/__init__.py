"""The live feed of an account's clicks and events as they are stored (issue 37): server-sent events."""
