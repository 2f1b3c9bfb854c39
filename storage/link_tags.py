"""A link's tags and folder as the list, the bulk actions and the report look them up (issue 36), and the
colours of an account's tags.

The link's document holds them (``tags``, ``folder``); saving it copies the folder into ``links.folder`` (a filter
column of :mod:`storage.documents`) and the tags into ``link_tags``, written here alone, so that a filter or a
report's grouping finds them by index without decoding a document. Every query names its account.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from storage.db import Conn, Tx, execute, execute_many, fetch_all, fetch_one

OWNS = ("link_tags", "tag_colors")
IDS_A_STATEMENT = 500


@dataclass(frozen=True, slots=True)
class NameCount:
    """A tag or folder name of an account and how many of its links carry it."""

    name: str
    links: int


async def replace_tags(tx: Tx, account_id: str, link_id: str, tags: Sequence[str]) -> None:
    """The link's rows made ``tags`` (its document's, as saved)."""
    await execute(tx, "DELETE FROM link_tags WHERE account_id = ? AND link_id = ?", (account_id, link_id))
    if tags:
        await execute_many(tx, "INSERT INTO link_tags (link_id, account_id, tag) VALUES (?, ?, ?)",
                           [(link_id, account_id, tag) for tag in dict.fromkeys(tags)])


async def set_color(tx: Tx, account_id: str, tag: str, color: str | None) -> bool:
    """The tag's colour in the account made ``color`` (None: none). Whether anything changed."""
    row = await fetch_one(tx, "SELECT color FROM tag_colors WHERE account_id = ? AND tag = ?", (account_id, tag))
    if (None if row is None else str(row[0])) == color:
        return False
    await execute(tx, "DELETE FROM tag_colors WHERE account_id = ? AND tag = ?", (account_id, tag))
    if color is not None:
        await execute(tx, "INSERT INTO tag_colors (account_id, tag, color) VALUES (?, ?, ?)", (account_id, tag, color))
    return True


async def colors(conn: Conn, account_id: str) -> dict[str, str]:
    """The colour of each of the account's tags that has one."""
    rows = await fetch_all(conn, "SELECT tag, color FROM tag_colors WHERE account_id = ?", (account_id,))
    return {str(row[0]): str(row[1]) for row in rows}


async def tags_of(conn: Conn, account_id: str, link_ids: Sequence[str]) -> dict[str, list[str]]:
    """The tags of each of ``link_ids`` (of the account; a link without tags is absent), in name order."""
    found: dict[str, list[str]] = {}
    wanted = list(dict.fromkeys(link_ids))
    for start in range(0, len(wanted), IDS_A_STATEMENT):
        part = wanted[start:start + IDS_A_STATEMENT]
        marks = ", ".join("?" for _ in part)
        rows = await fetch_all(
            conn, f"SELECT link_id, tag FROM link_tags WHERE account_id = ? AND link_id IN ({marks}) "
                  "ORDER BY link_id, tag", (account_id, *part))
        for row in rows:
            found.setdefault(str(row[0]), []).append(str(row[1]))
    return found


async def folders_of(conn: Conn, account_id: str) -> dict[str, str]:
    """The folder of each of the account's links that is in one, by link id."""
    rows = await fetch_all(conn, "SELECT id, folder FROM links WHERE account_id = ? AND folder IS NOT NULL",
                           (account_id,))
    return {str(row[0]): str(row[1]) for row in rows}


async def all_tags_of(conn: Conn, account_id: str) -> dict[str, list[str]]:
    """The tags of every tagged link of the account, by link id."""
    rows = await fetch_all(conn, "SELECT link_id, tag FROM link_tags WHERE account_id = ? ORDER BY link_id, tag",
                           (account_id,))
    found: dict[str, list[str]] = {}
    for row in rows:
        found.setdefault(str(row[0]), []).append(str(row[1]))
    return found


async def tag_counts(conn: Conn, account_id: str) -> list[NameCount]:
    """The account's tags, each with its number of links, by name."""
    rows = await fetch_all(conn, "SELECT tag, count(*) FROM link_tags WHERE account_id = ? GROUP BY tag ORDER BY tag",
                           (account_id,))
    return [NameCount(str(row[0]), int(row[1])) for row in rows]


async def folder_counts(conn: Conn, account_id: str) -> list[NameCount]:
    """The account's folders, each with its number of links, by name."""
    rows = await fetch_all(
        conn, "SELECT folder, count(*) FROM links WHERE account_id = ? AND folder IS NOT NULL GROUP BY folder "
              "ORDER BY folder", (account_id,))
    return [NameCount(str(row[0]), int(row[1])) for row in rows]
