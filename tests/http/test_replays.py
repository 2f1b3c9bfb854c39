"""Replays against real receivers on 127.0.0.1 that deduplicate the way the vendors do (a webhook by its
``webhook-id``, Meta by ``event_id``): a replay of a range sends every event again, and each is counted once; a
new connection gets the past; the connection's rules as they are now; one account's replay never touches
another's events; the admin API's answers to a wrong range. Both stores."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp.test_utils import TestClient
from standardwebhooks.webhooks import Webhook

from tests.conftest import ADMIN, bearer, token_for
from tests.factories import B
from tests.http.conftest import Receiver
from tests.http.test_forwarding import ADMIN_API, API, SECRET, connect, purchase, send, settled

ADMIN_ROOT = "/api/admin/v1/accounts"


def moment(delta: timedelta = timedelta()) -> str:
    return (datetime.now(UTC) + delta).isoformat()


async def replay(client: TestClient, connection_id: str, start: str, end: str, api: str = ADMIN_API) -> dict[str, Any]:
    response = await client.post(f"{api}/connections/{connection_id}/replays", json={"from": start, "to": end},
                                 headers=ADMIN)
    assert response.status == 202, await response.text()
    return dict((await response.json())["data"])


async def finished(client: TestClient, connection_id: str, replay_id: str, seconds: float = 15) -> dict[str, Any]:
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        response = await client.get(f"{ADMIN_API}/connections/{connection_id}/replays/{replay_id}", headers=ADMIN)
        assert response.status == 200, await response.text()
        found = dict((await response.json())["data"])
        if found["state"] in ("done", "failed"):
            return found
        assert asyncio.get_running_loop().time() < deadline, found
        await asyncio.sleep(0.05)


def webhook_counts(receiver: Receiver, path: str = "/hook") -> tuple[Counter[str], dict[str, str]]:
    """What a receiver deduplicating by ``webhook-id`` sees: how often each id arrived, and the id each
    (event, type) came with."""
    seen: Counter[str] = Counter()
    ids: dict[str, str] = {}
    for r in receiver.received:
        if r["path"] == path:
            Webhook(SECRET).verify(r["body"], r["headers"])  # every one signed, replays too
            msg = r["headers"]["webhook-id"]
            seen[msg] += 1
            key = f"{r['json']['data'].get('id') or r['json']['data'].get('event_id')}/{r['json']['type']}"
            assert ids.setdefault(key, msg) == msg, f"{key} came with two webhook-ids"
    return seen, ids


def meta_counts(receiver: Receiver) -> Counter[str]:
    """How often each ``event_id`` reached the Meta-like receiver (Meta keeps one per event_id)."""
    return Counter(e["event_id"] for r in receiver.received if r["path"].startswith("/meta") for e in r["json"]["data"])


async def test_a_replay_is_counted_once_by_receivers_that_deduplicate(service: TestClient,
                                                                      receiver: Receiver) -> None:
    start = moment(-timedelta(minutes=1))
    hook = await connect(service, "webhook", {"endpoint_url": receiver.url("/hook"), "secret": SECRET})
    meta = await connect(service, "meta", {"endpoint_url": receiver.url("/meta"), "pixel_id": "1",
                                           "access_token": "t"})
    events = [await send(service, purchase(f"o-{n}")) for n in range(3)]
    for event_id in events:
        await settled(service, event_id)
    live_hooks, live_ids = webhook_counts(receiver)
    assert set(live_hooks.values()) == {1} and meta_counts(receiver) == Counter(
        {f"order-o-{n}": 1 for n in range(3)})

    for connection_id in (hook, meta):
        queued = await replay(service, connection_id, start, moment(timedelta(minutes=1)))
        assert (queued["state"], queued["events_total"]) == ("queued", 3)
        done = await finished(service, connection_id, queued["id"])
        assert (done["state"], done["events_found"], done["pending"], done["failed"], done["progress"]) == (
            "done", 3, 0, 0, 1.0)
        assert done["sent"] == done["deliveries"] > 0

    # The receivers saw every message twice, and kept each once: the replay sent the same keys.
    hooks, ids = webhook_counts(receiver)
    assert ids == live_ids and set(hooks) == set(live_hooks) and set(hooks.values()) == {2}
    assert meta_counts(receiver) == Counter({f"order-o-{n}": 2 for n in range(3)})
    # The admin API shows the replay's deliveries beside the live ones, with the same message ids.
    response = await service.get(f"{ADMIN_API}/events/{events[0]}/deliveries", headers=ADMIN)
    shown = (await response.json())["data"]
    by_kind = Counter((d["connection_id"], d["kind"], d["message_id"]) for d in shown)
    assert set(by_kind.values()) == {2} and {d["replay_id"] is None for d in shown} == {True, False}


async def test_a_new_connection_gets_the_past_and_the_rules_as_they_are_now(service: TestClient,
                                                                           receiver: Receiver) -> None:
    start = moment(-timedelta(minutes=1))
    bought = await send(service, purchase("o-9"))
    viewed = await send(service, {"type": "page_view", "customer_id": "cust-aaaa"})
    hook = await connect(service, "webhook", {"endpoint_url": receiver.url("/hook"), "secret": SECRET},
                         event_types=["PURCHASE"])
    first = await finished(service, hook, (await replay(service, hook, start, moment()))["id"])
    # The page view is not among the connection's types: skipped, not sent.
    assert (first["events_total"], first["events_found"], first["skipped"], first["failed"]) == (2, 2, 1, 0)
    hooks, ids = webhook_counts(receiver)
    assert sorted(ids) == [f"{bought}/event.accepted", f"{bought}/reward.issued", f"{bought}/tier.changed"]
    assert set(hooks.values()) == {1}

    # The page view is let through now: the next replay sends it (and the purchase's messages again, same ids).
    response = await service.patch(f"{ADMIN_API}/connections/{hook}", json={"event_types": ["PURCHASE", "page_view"]},
                                   headers=ADMIN)
    assert response.status == 200, await response.text()
    second = await finished(service, hook, (await replay(service, hook, start, moment()))["id"])
    assert (second["skipped"], second["failed"], second["state"]) == (0, 0, "done")
    hooks, again = webhook_counts(receiver)
    assert again == {**ids, f"{viewed}/event.accepted": again[f"{viewed}/event.accepted"]}
    assert hooks[again[f"{viewed}/event.accepted"]] == 1 and {hooks[m] for m in ids.values()} == {2}
    response = await service.get(f"{ADMIN_API}/connections/{hook}/replays", headers=ADMIN)
    assert [r["id"] for r in (await response.json())["data"]] == [second["id"], first["id"]]


async def test_a_replay_sends_only_its_own_accounts_events(service: TestClient, receiver: Receiver) -> None:
    start = moment(-timedelta(minutes=1))
    ours = await send(service, {"type": "page_view", "customer_id": "cust-aaaa"})
    headers = bearer(await token_for(service, B))
    response = await service.post(f"{API}/behavior/events", json={"type": "page_view"}, headers=headers)
    assert response.status in (202, 400), await response.text()
    hook = await connect(service, "webhook", {"endpoint_url": receiver.url("/hook"), "secret": SECRET})
    done = await finished(service, hook, (await replay(service, hook, start, moment()))["id"])
    assert done["events_total"] == done["events_found"] == 1
    assert [r["json"]["data"]["id"] for r in receiver.received] == [ours]
    # Another account's path does not know the connection or its replay.
    for path in (f"connections/{hook}/replays", f"connections/{hook}/replays/{done['id']}"):
        response = await service.get(f"{ADMIN_ROOT}/{B}/{path}", headers=ADMIN)
        assert response.status == 404, await response.text()
    response = await service.post(f"{ADMIN_ROOT}/{B}/connections/{hook}/replays", headers=ADMIN,
                                  json={"from": start, "to": moment()})
    assert response.status == 404


async def test_a_range_that_is_not_one_is_refused(service: TestClient, receiver: Receiver) -> None:
    hook = await connect(service, "webhook", {"endpoint_url": receiver.url("/hook"), "secret": SECRET})
    url = f"{ADMIN_API}/connections/{hook}/replays"
    now = datetime.now(UTC)
    cases = [
        ({"from": now.isoformat(), "to": (now - timedelta(hours=1)).isoformat()}, "to"),
        ({"from": "yesterday", "to": now.isoformat()}, "from"),
        ({"from": (now - timedelta(days=93)).isoformat(), "to": now.isoformat()}, "to"),
        ({"from": (now + timedelta(hours=1)).isoformat(), "to": (now + timedelta(hours=2)).isoformat()}, "from"),
        ({"from": now.isoformat()}, "to"),
    ]
    for body, field in cases:
        response = await service.post(url, json=body, headers=ADMIN)
        assert response.status == 400, (body, await response.text())
        answer = await response.json()
        assert set(answer) == {"error", "details"} and answer["details"]["field"] == field, answer
    response = await service.patch(f"{ADMIN_API}/connections/{hook}", json={"enabled": False}, headers=ADMIN)
    assert response.status == 200
    response = await service.post(url, json={"from": (now - timedelta(hours=1)).isoformat(), "to": now.isoformat()},
                                  headers=ADMIN)
    assert response.status == 409 and (await response.json())["error"] == "Not replayable"
    response = await service.get(f"{url}/rpl_nothing", headers=ADMIN)
    assert response.status == 404 and (await response.json())["error"] == "Replay not found"
