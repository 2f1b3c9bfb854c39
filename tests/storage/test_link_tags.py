"""A link's tags and folder (issue 36) as the store keeps them, on both stores: copied out of the document by every
save (seed file, admin API), replaced when the document changes, gone with the link, scoped by account."""

from __future__ import annotations

from typing import Any

from aiohttp.test_utils import TestClient

from api.appkeys import DB
from linksvc.seed import load_seed
from storage import link_tags
from tests.conftest import ADMIN
from tests.factories import A, B, ids, two_accounts

LINK = f"/api/admin/v1/accounts/{A}/links/{ids(A)['links']}"


def _organised(tags: list[str], folder: str | None) -> dict[str, Any]:
    doc = two_accounts()
    doc["accounts"][0]["links"][0] |= {"tags": tags, "folder": folder}
    doc["accounts"][1]["links"][0] |= {"tags": ["b-only"], "folder": "B folder"}
    return doc


async def test_seed_copies_tags_and_folder_and_a_reload_keeps_them(client: TestClient) -> None:
    db = client.app[DB]
    await load_seed(db, _organised([" spring ", "email", "spring"], "Campaigns/2026"), allow_private=True)
    link_id = ids(A)["links"]
    assert await link_tags.tags_of(db.reader, A, [link_id]) == {link_id: ["email", "spring"]}
    assert await link_tags.folders_of(db.reader, A) == {link_id: "Campaigns/2026"}
    body = (await (await client.get(LINK, headers=ADMIN)).json())["data"]
    assert (body["tags"], body["folder"]) == (["spring", "email"], "Campaigns/2026")  # trimmed, once, as sent
    # the same file again changes nothing; the other account's tags stay its own
    assert set((await load_seed(db, _organised(["spring", "email"], "Campaigns/2026"), allow_private=True))
               .values()) == {0}
    assert [(t.name, t.links) for t in await link_tags.tag_counts(db.reader, A)] == [("email", 1), ("spring", 1)]
    assert [(t.name, t.links) for t in await link_tags.tag_counts(db.reader, B)] == [("b-only", 1)]
    assert [(f.name, f.links) for f in await link_tags.folder_counts(db.reader, B)] == [("B folder", 1)]


async def test_admin_saves_replace_the_copy_and_a_deleted_link_leaves_none(client: TestClient) -> None:
    db = client.app[DB]
    await load_seed(db, _organised(["a", "b"], "One"), allow_private=True)
    link_id = ids(A)["links"]
    response = await client.patch(LINK, json={"tags": ["b", "c"], "folder": None}, headers=ADMIN)
    assert response.status == 200, await response.text()
    assert await link_tags.tags_of(db.reader, A, [link_id]) == {link_id: ["b", "c"]}
    assert await link_tags.folders_of(db.reader, A) == {}
    # a PATCH of another field keeps them
    response = await client.patch(LINK, json={"disabled": True}, headers=ADMIN)
    assert (await response.json())["data"]["tags"] == ["b", "c"]
    assert await link_tags.tags_of(db.reader, A, [link_id]) == {link_id: ["b", "c"]}
    # a link of B is not A's, whatever its id
    assert await link_tags.tags_of(db.reader, A, [ids(B)["links"]]) == {}
    assert (await client.delete(LINK, headers=ADMIN)).status == 204
    assert await link_tags.tag_counts(db.reader, A) == []


async def test_invalid_tags_and_folders_are_refused_naming_the_field(client: TestClient) -> None:
    await load_seed(client.app[DB], two_accounts(), allow_private=True)
    response = await client.patch(LINK, json={"tags": ["ok", "a,b", "x" * 51, ""], "folder": "bad\nname"},
                                  headers=ADMIN)
    assert response.status == 400
    paths = {issue["path"] for issue in (await response.json())["details"]["issues"]}
    assert paths == {"tags[1]", "tags[2]", "tags[3]", "folder"}
