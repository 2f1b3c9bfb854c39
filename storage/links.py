"""Links read by their code: the resolver's lookup, the code checks of the admin API and the apps of every link.

The ``links`` table is one of the resource tables ``storage.documents`` writes (its ``OWNS``); this module only
reads it.
"""

from __future__ import annotations

from storage.db import Conn, Row, fetch_all, fetch_one

OWNS: tuple[str, ...] = ()


async def link_by_code(conn: Conn, code: str) -> Row | None:
    return await fetch_one(conn, "SELECT id, account_id, body FROM links WHERE code = ?", (code,))


async def other_link_with_code(conn: Conn, code: str, link_id: str) -> Row | None:
    """A link other than ``link_id`` at ``code`` (codes are unique across accounts)."""
    return await fetch_one(conn, "SELECT id FROM links WHERE code = ? AND id != ?", (code, link_id))


async def code_is_free(conn: Conn, code: str) -> bool:
    """Whether no link has ``code``."""
    return await fetch_one(conn, "SELECT 1 FROM links WHERE code = ?", (code,)) is None


async def app_settings(conn: Conn) -> list[Row]:
    """The android and ios settings of every link that has any (for the .well-known files)."""
    return await fetch_all(
        conn,
        "SELECT json_extract(body, '$.android') AS android, json_extract(body, '$.ios') AS ios FROM links "
        "WHERE json_type(body, '$.android') = 'object' OR json_type(body, '$.ios') = 'object'",
    )
