"""Links read by their code: the resolver's lookup, the code checks of the admin API and the apps of every link.

The ``links`` table is one of the resource tables ``storage.documents`` writes (its ``OWNS``); this module only
reads it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from storage.db import Conn, WouldWait, dialect, fetch_all, fetch_one, json_member

OWNS: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class StoredLink:
    """A link as stored: its id, its account and its body (the link's settings, decoded here)."""

    id: str
    account_id: str
    link: dict[str, Any]


@dataclass(frozen=True, slots=True)
class AppSettings:
    """The apps of one link: its ``android`` and ``ios`` objects (None when it has none)."""

    android: dict[str, Any] | None
    ios: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class EncodedLink:
    """A link as stored, its body still the stored JSON: a third of the memory of the decoded link, for the
    links a worker holds (:meth:`decoded` gives each request its own body)."""

    id: str
    account_id: str
    body: bytes

    def decoded(self) -> StoredLink:
        return StoredLink(self.id, self.account_id, orjson.loads(self.body))


async def link_by_code(conn: Conn, code: str) -> StoredLink | None:
    encoded = await encoded_link_by_code(conn, code)
    return None if encoded is None else encoded.decoded()


_BY_CODE = "SELECT id, account_id, body FROM links WHERE code = ?"


async def encoded_link_by_code(conn: Conn, code: str) -> EncodedLink | None:
    return _encoded(await fetch_one(conn, _BY_CODE, (code,)))


def encoded_link_by_code_now(conn: Conn, code: str) -> EncodedLink | None:
    """:func:`encoded_link_by_code` without awaiting, on a plain ``sqlite3`` connection (the event loop's reader:
    one indexed read, a few microseconds), for a path that answers at once (the resolver's fast lane). Raises
    :class:`~storage.db.WouldWait` on any other connection, before reading anything."""
    if not isinstance(conn, sqlite3.Connection):
        raise WouldWait(type(conn).__name__)
    return _encoded(conn.execute(_BY_CODE, (code,)).fetchone())


def _encoded(row: Any) -> EncodedLink | None:
    if row is None:
        return None
    body = row[2]
    return EncodedLink(row[0], row[1], body if isinstance(body, bytes) else body.encode())


async def encoded_links(conn: Conn, limit: int) -> list[tuple[str, EncodedLink]]:
    """Up to ``limit`` links by code, the most recently changed first (what a worker holds from its start)."""
    rows = await fetch_all(
        conn, "SELECT code, id, account_id, body FROM links ORDER BY updated_at DESC LIMIT ?", (limit,))
    return [(row[0], EncodedLink(row[1], row[2], row[3].encode())) for row in rows]


CODES_A_STATEMENT = 500  # codes looked up by one statement of :func:`links_at_codes`


async def links_at_codes(conn: Conn, codes: Sequence[str]) -> dict[str, StoredLink]:
    """The links at ``codes`` by code (codes no link has are absent): a statement per 500 codes, for a set of
    links written at once (the Dynamic Links importer)."""
    found: dict[str, StoredLink] = {}
    wanted = list(dict.fromkeys(codes))
    for start in range(0, len(wanted), CODES_A_STATEMENT):
        part = wanted[start:start + CODES_A_STATEMENT]
        marks = ", ".join("?" for _ in part)
        for row in await fetch_all(conn, f"SELECT code, id, account_id, body FROM links WHERE code IN ({marks})",
                                   tuple(part)):
            body = row[3]
            found[str(row[0])] = StoredLink(row[1], row[2], orjson.loads(body))
    return found


async def other_link_with_code(conn: Conn, code: str, link_id: str) -> str | None:
    """The id of a link other than ``link_id`` at ``code`` (codes are unique across accounts)."""
    row = await fetch_one(conn, "SELECT id FROM links WHERE code = ? AND id != ?", (code, link_id))
    return None if row is None else str(row[0])


async def code_is_free(conn: Conn, code: str) -> bool:
    """Whether no link has ``code``."""
    return await fetch_one(conn, "SELECT 1 FROM links WHERE code = ?", (code,)) is None


def _object(text: str | None) -> dict[str, Any] | None:
    """A JSON object extracted by ``json_extract`` (text), decoded; None for SQL NULL or an empty value."""
    return orjson.loads(text) if text else None


async def links_naming_domain(conn: Conn, account_id: str, host: str, except_code: str = "") -> int:
    """How many of the account's links name ``host`` as their ``domain`` (the one at ``except_code`` aside)."""
    member = json_member(conn, "body", "domain")
    row = await fetch_one(conn, f"SELECT count(*) FROM links WHERE account_id = ? AND {member} = ? AND code <> ?",
                          (account_id, host, except_code))
    return int(row[0]) if row else 0


async def account_app_settings(conn: Conn) -> list[tuple[str, AppSettings]]:
    """The android and ios settings of every link that has any, with its account (the .well-known files of
    custom domains list only their account's apps)."""
    android, ios = json_object(conn, "android"), json_object(conn, "ios")
    rows = await fetch_all(conn, f"SELECT account_id, {android[0]}, {ios[0]} FROM links WHERE {android[1]} OR {ios[1]}")
    return [(str(row[0]), AppSettings(_object(row[1]), _object(row[2]))) for row in rows]


async def app_settings_of_account(conn: Conn, account_id: str) -> list[AppSettings]:
    """The android and ios settings of the account's links that have any (what its association files list)."""
    android, ios = json_object(conn, "android"), json_object(conn, "ios")
    rows = await fetch_all(conn, f"SELECT {android[0]}, {ios[0]} FROM links WHERE account_id = ? "
                                 f"AND ({android[1]} OR {ios[1]})", (account_id,))
    return [AppSettings(_object(row[0]), _object(row[1])) for row in rows]


@dataclass(frozen=True, slots=True)
class LinkTargets:
    """Where one link leads: its URLs (destination, fallbacks, deeplink; those it has) and its apps."""

    urls: tuple[str, ...]
    android_package: str | None
    ios_bundle_id: str | None
    ios_app_store_id: str | None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


async def account_link_targets(conn: Conn, account_id: str) -> list[LinkTargets]:
    """Where each of the account's links leads (the long links' own targets: linksvc.links.long_links), in one
    statement; the bodies are read in full only for their URL and app members."""
    members = [json_member(conn, "body", name) for name in ("destination_url", "fallback_url", "deeplink")]
    android, ios = json_object(conn, "android")[0], json_object(conn, "ios")[0]
    rows = await fetch_all(conn, f"SELECT {', '.join(members)}, {android}, {ios} FROM links WHERE account_id = ?",
                           (account_id,))
    found = []
    for row in rows:
        apps = [value if isinstance(value, dict) else _object(value) or {} for value in (row[3], row[4])]
        urls = (row[0], row[1], row[2], apps[0].get("fallback_url"), apps[1].get("fallback_url"))
        found.append(LinkTargets(tuple(url for url in urls if isinstance(url, str) and url),
                                 _text(apps[0].get("package")), _text(apps[1].get("bundle_id")),
                                 _text(apps[1].get("app_store_id"))))
    return found


def json_object(conn: Conn, member: str) -> tuple[str, str]:
    """The SQL of a JSON member that is an object, and of the test that it is one, in the connection's dialect."""
    if dialect(conn) == "postgresql":
        return f"body -> '{member}'", f"jsonb_typeof(body -> '{member}') = 'object'"
    return f"json_extract(body, '$.{member}')", f"json_type(body, '$.{member}') = 'object'"
