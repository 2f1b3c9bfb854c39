"""The living demo: the demo account, its clicks and events, and the vendor stand-ins."""
