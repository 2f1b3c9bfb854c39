"""Errors either store raises the same way."""

from __future__ import annotations

OWNS: tuple[str, ...] = ()  # no table: errors only


class StoreUnavailable(Exception):
    """The store named by the settings cannot be opened (no server there, refused credentials, a folder that
    cannot be made): one sentence saying where and why, for the command line to print instead of a trace."""
