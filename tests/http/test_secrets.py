"""Secrets are never logged and never shown again after creation.

The secrets: the admin token, API keys (seeded and created through the admin API, SERVER and CLIENT, good,
revoked and made up), bearer tokens (good, expired, revoked, unknown), a webhook's signing secret and every
secret-named member of a connection's ``config`` (``access_token``, ``developer_token``, ``api_secret``,
``password``, ``client_secret``, ``private_key``...) and the credentials of a URL in a config
(``https://user:password@host``, shown as ``https://********@host``). Each test runs a realistic flow through
the service with the logging of ``linksvc serve``: :func:`linksvc.logs.configure_logging` at its most verbose level
(``DEBUG``, JSON lines, to a buffer) and the production access log (:class:`api.access_log.AccessLogger`
on ``linksvc.access``), plus pytest's ``caplog`` handler on the root logger. Then no captured line, no
response after the one that created a secret, no dashboard cookie and no ``/metrics`` text holds one.

Secrets travel in headers (``Authorization``, ``x-api-key``), in bodies, and, by mistake, in query
strings: the access log writes the path without the query, so a secret there is not logged either.
"""

from __future__ import annotations

import asyncio
import base64
import io
import logging
import socket
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from api.access_log import AccessLogger, flush_access_logs
from api.appkeys import DB
from api.auth import SESSION_COOKIE
from linksvc.app import create_app
from linksvc.logs import JsonFormatter, configure_logging
from linksvc.resources.kinds import SECRET_MASK
from linksvc.seed import load_seed
from linksvc.settings import Settings
from storage import documents
from tests.conftest import ADMIN, bearer
from tests.factories import ADMIN_TOKEN, KEYS, A, B, ids, two_accounts
from tests.http.conftest import Receiver

STOREFRONT = "/api/storefront/v1"
ADMIN_API = "/api/admin/v1"
SEEDED_WEBHOOK_SECRET = "whsec_dGVzdHNlY3JldHRlc3RzZWNyZXR0ZXN0c2VjcmV0MTI="  # tests.factories.account_doc
DESKTOP = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36"


@dataclass
class Captured:
    """Every log line of the run: as the service writes them (JSON) and as caplog saw the records."""

    stream: io.StringIO
    caplog: pytest.LogCaptureFixture
    secrets: dict[str, str] = field(default_factory=dict)

    def remember(self, label: str, value: str) -> str:
        assert len(value) >= 8, label  # a short value could occur by chance
        self.secrets[label] = value
        return value

    def lines(self) -> list[str]:
        flush_access_logs()  # the access log's thread writes every line queued so far
        formatter = JsonFormatter()
        from_caplog = []
        for record in self.caplog.records:
            from_caplog.append(formatter.format(record))
            from_caplog.append(record.getMessage())
        return self.stream.getvalue().splitlines() + from_caplog

    def assert_clean(self, text: str, where: str) -> None:
        leaked = [label for label, value in self.secrets.items() if value in text]
        assert not leaked, f"{where} holds {leaked}: {text[:2000]}"

    def assert_logs_clean(self) -> None:
        lines = self.lines()
        loggers = {record.name for record in self.caplog.records}
        # The capture is live: the access log and the service's own error lines are there.
        assert "linksvc.access" in loggers, loggers
        for line in lines:
            self.assert_clean(line, "a log line")


@pytest.fixture
def captured(caplog: pytest.LogCaptureFixture) -> Iterator[Captured]:
    """The service's logging set-up at DEBUG, writing to a buffer; caplog's handler beside it."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    levels = {name: logger.level for name, logger in logging.root.manager.loggerDict.items()
              if isinstance(logger, logging.Logger)}
    configure_logging("DEBUG", "json")
    stream = io.StringIO()
    service_handler = root.handlers[0]
    assert isinstance(service_handler, logging.StreamHandler)
    service_handler.setStream(stream)
    caplog.handler.setLevel(logging.DEBUG)
    root.addHandler(caplog.handler)
    yield Captured(stream, caplog, {"admin token": ADMIN_TOKEN})
    root.handlers[:] = handlers
    root.setLevel(level)
    for name, old in levels.items():
        logging.getLogger(name).setLevel(old)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
async def service(aiohttp_client: Any, tmp_path: Path, captured: Captured) -> AsyncIterator[TestClient]:
    """The app served as ``linksvc serve`` serves it: the same access logger on ``linksvc.access``."""
    settings = Settings(db_path=str(tmp_path / "secrets.db"), admin_token=ADMIN_TOKEN, load_demo=False,
                        allow_private_destinations=True, db_synchronous="NORMAL", delivery_backoff_seconds=0.01,
                        delivery_max_tries=2, delivery_timeout_seconds=2)
    server = TestServer(create_app(settings), host="127.0.0.1")
    await server.start_server(access_log_class=AccessLogger, access_log=logging.getLogger("linksvc.access"))
    client: TestClient = await aiohttp_client(server)
    await load_seed(client.app[DB], two_accounts(), allow_private=True)
    for (account, kind), key in KEYS.items():
        captured.remember(f"seeded {kind} key of {account[:4]}", key)
    captured.remember("seeded webhook secret", SEEDED_WEBHOOK_SECRET)
    yield client


async def _authorize(client: TestClient, key: str) -> str:
    response = await client.get(f"{STOREFRONT}/auth/authorize", headers={"x-api-key": key})
    assert response.status == 200, await response.text()
    return str((await response.json())["data"])


async def _status(client: TestClient, method: str, path: str, expected: int, **kwargs: Any) -> str:
    response = await client.request(method, path, allow_redirects=False, **kwargs)
    text = await response.text()
    assert response.status == expected, (method, path, text)
    return text


# --- API keys and tokens -------------------------------------------------------------------------------------

async def test_keys_and_tokens_stay_out_of_logs_and_reads(service: TestClient, captured: Captured) -> None:
    client = service
    # A new account and its keys, through the admin API: each secret is in the 201 and never again.
    account = "cccccccc-0000-4000-8000-000000000003"
    await _status(client, "POST", f"{ADMIN_API}/accounts", 201, headers=ADMIN,
                  json={"id": account, "name": "Secrets Inc", "environment": "production"})
    created: dict[str, dict[str, Any]] = {}
    for kind in ("SERVER", "CLIENT"):
        response = await client.post(f"{ADMIN_API}/accounts/{account}/api-keys", headers=ADMIN,
                                     json={"kind": kind, "name": f"{kind.lower()} key"})
        assert response.status == 201
        created[kind] = (await response.json())["data"]
        captured.remember(f"created {kind} key", created[kind]["key"])

    # Tokens from each kind of key, used on the storefront.
    tokens = {kind: captured.remember(f"{kind} token", await _authorize(client, view["key"]))
              for kind, view in created.items()}
    seeded_token = captured.remember("seeded SERVER token", await _authorize(client, KEYS[(A, "SERVER")]))
    client_token = captured.remember("seeded CLIENT token", await _authorize(client, KEYS[(A, "CLIENT")]))
    await _status(client, "GET", f"{STOREFRONT}/brands", 200, headers=bearer(tokens["SERVER"]))
    await _status(client, "GET", f"{STOREFRONT}/tiers", 200, headers=bearer(tokens["CLIENT"]))
    await _status(client, "GET", f"{STOREFRONT}/customers?document_number=CC100", 200, headers=bearer(seeded_token))
    await _status(client, "POST", f"{STOREFRONT}/behavior/events", 202, headers=bearer(seeded_token),
                  json={"type": "PURCHASE", "customer_id": "cust-aaaa", "order_id": "o-secret", "currency": "COP",
                        "value": 10, "products": [{"sku": "A"}]})

    # Refusals with secrets in headers: 401, 403, 404, 405.
    made_up_key = captured.remember("made-up key", "lk_made_up_key_0000000000000000000000000")
    made_up_token = captured.remember("made-up token", "lt_made_up_token_00000000000000000000000")
    wrong_admin = captured.remember("wrong admin token", "not-the-admin-token-9876543210")
    await _status(client, "GET", f"{STOREFRONT}/auth/authorize", 401, headers={"x-api-key": made_up_key})
    await _status(client, "GET", f"{STOREFRONT}/brands", 401, headers=bearer(made_up_token))
    await _status(client, "GET", f"{STOREFRONT}/brands", 401, headers={"Authorization": f"Token {made_up_token}"})
    await _status(client, "GET", f"{STOREFRONT}/brands", 401, headers={"Authorization": created["SERVER"]["key"]})
    await _status(client, "GET", f"{STOREFRONT}/brands", 401, headers=bearer(created["SERVER"]["key"]))
    await _status(client, "GET", f"{ADMIN_API}/accounts", 401, headers=bearer(wrong_admin))
    await _status(client, "GET", f"{ADMIN_API}/accounts", 401, headers=bearer(seeded_token))
    await _status(client, "GET", f"{STOREFRONT}/brands", 401, headers=ADMIN)
    await _status(client, "GET", f"{STOREFRONT}/customers?document_number=CC100", 403, headers=bearer(client_token))
    await _status(client, "GET", f"{STOREFRONT}/brands", 403, headers={**bearer(seeded_token), "x-account-id": B})
    await _status(client, "GET", f"{ADMIN_API}/accounts/{A}/api-keys/{ids(A)['brands']}", 404, headers=ADMIN)
    await _status(client, "GET", f"{STOREFRONT}/no-such-route", 404,
                  headers={**bearer(seeded_token), "x-api-key": made_up_key})
    await _status(client, "POST", f"{STOREFRONT}/auth/authorize", 405, headers={"x-api-key": KEYS[(A, "SERVER")]})
    # ... in bodies (400s) ...
    await _status(client, "POST", f"{STOREFRONT}/behavior/events", 400, headers=bearer(seeded_token),
                  json={"type": "PURCHASE", "customer_id": made_up_token, "api_key": made_up_key})
    await _status(client, "POST", f"{STOREFRONT}/behavior/events", 400, headers=bearer(seeded_token),
                  data=f'{{"token": "{made_up_token}", '.encode())
    await _status(client, "POST", f"{ADMIN_API}/accounts/{account}/api-keys", 400, headers=ADMIN,
                  json={"kind": "SERVER", "key": made_up_key})
    # ... and in query strings, where no secret belongs.
    await _status(client, "GET", f"{STOREFRONT}/brands?access_token={seeded_token}&api_key={made_up_key}", 200,
                  headers=bearer(seeded_token))
    await _status(client, "GET", f"{STOREFRONT}/campaigns?from=0&to=9&token={made_up_token}", 200,
                  headers=bearer(seeded_token))
    await _status(client, "GET", f"{STOREFRONT}/customers?document_number={made_up_token}", 404,
                  headers=bearer(seeded_token))
    await _status(client, "GET", f"/lnkaaaa?utm_source=mail&token={made_up_token}&key={made_up_key}", 302,
                  headers={"User-Agent": DESKTOP})

    # An expired token and a revoked key's token.
    async with client.app[DB].transaction() as tx:
        await tx.execute("UPDATE access_tokens SET expires_at = '2000-01-01T00:00:00.000000Z' WHERE kind = 'CLIENT'")
    await _status(client, "GET", f"{STOREFRONT}/tiers", 401, headers=bearer(tokens["CLIENT"]))
    revoke = await client.delete(f"{ADMIN_API}/accounts/{account}/api-keys/{created['SERVER']['id']}", headers=ADMIN)
    assert revoke.status == 200
    captured.assert_clean(await revoke.text(), "the revocation")
    await _status(client, "GET", f"{STOREFRONT}/brands", 401, headers=bearer(tokens["SERVER"]))
    await _status(client, "GET", f"{STOREFRONT}/auth/authorize", 401, headers={"x-api-key": created["SERVER"]["key"]})

    # Reads after creation: the prefix at most, never the key.
    for path in (f"{ADMIN_API}/accounts/{account}/api-keys", f"{ADMIN_API}/accounts/{A}/api-keys",
                 f"{ADMIN_API}/accounts/{account}/api-keys/{created['CLIENT']['id']}", f"{ADMIN_API}/accounts",
                 f"{ADMIN_API}/accounts/{account}"):
        captured.assert_clean(await _status(client, "GET", path, 200, headers=ADMIN), f"GET {path}")
    listed = (await (await client.get(f"{ADMIN_API}/accounts/{account}/api-keys", headers=ADMIN)).json())["data"]
    assert all("key" not in view and len(view["prefix"]) <= 8 for view in listed)
    captured.assert_logs_clean()


# --- Connection secrets ------------------------------------------------------------------------------------------

async def test_connection_secrets_are_masked_on_every_read_and_never_logged(service: TestClient,
                                                                           captured: Captured) -> None:
    client = service
    collection = f"{ADMIN_API}/accounts/{A}/connections"
    closed = f"http://127.0.0.1:{_closed_port()}"
    webhook_secret = captured.remember("webhook secret", "whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTIz")
    configs = {
        "webhook": {"endpoint_url": f"{closed}/hook", "secret": webhook_secret,
                    "password": captured.remember("webhook password", "hunter2-hunter2-hunter2"),
                    "client_secret": captured.remember("client secret", "cs_live_0123456789abcdef"),
                    "private_key": captured.remember("private key", "-----BEGIN PRIVATE KEY-----MIIEvQ")},
        "meta": {"endpoint_url": closed, "pixel_id": "1234567890",
                 "access_token": captured.remember("meta access token", "EAAB-meta-access-token-0123456789")},
        "ga4": {"endpoint_url": closed, "measurement_id": "G-SECRETS1",
                "api_secret": captured.remember("ga4 api secret", "ga4-api-secret-0123456789")},
        "google_ads": {"endpoint_url": closed, "customer_id": "1234567890", "conversion_action_id": "42",
                       "access_token": captured.remember("google access token", "ya29.google-access-token-01"),
                       "developer_token": captured.remember("developer token", "dev-token-0123456789ab"),
                       "refresh_token": captured.remember("refresh token", "1//refresh-token-0123456789")},
        "tiktok": {"endpoint_url": closed, "pixel_code": "PIXELCODE01",
                   "access_token": captured.remember("tiktok access token", "tiktok-access-token-0123456789")},
    }
    made: dict[str, str] = {}
    for destination, config in configs.items():
        response = await client.post(collection, headers=ADMIN, json={
            "destination": destination, "name": f"{destination} out", "enabled": True, "forward_events": True,
            "forward_purchases": True, "event_types": ["PURCHASE"], "config": config})
        text = await response.text()
        assert response.status == 201, text
        captured.assert_clean(text, f"the created {destination} connection")  # masked even in the 201
        view = (await response.json())["data"]
        assert view["config"]["endpoint_url"] == config["endpoint_url"]
        secret_names = [k for k in config if k != "endpoint_url" and not k.endswith(("_id", "_code"))]
        assert all(view["config"][k] == SECRET_MASK for k in secret_names), view["config"]
        made[destination] = view["id"]

    # A bad connection with secrets in the body: a 400 that does not repeat them.
    bad_secret = captured.remember("refused webhook secret", "not-a-whsec-secret-0123456789")
    text = await _status(client, "POST", collection, 400, headers=ADMIN, json={
        "event_types": ["PURCHASE"],
        "destination": "webhook", "config": {"endpoint_url": "https://hooks.example.com/in", "secret": bad_secret}})
    captured.assert_clean(text, "the refused connection")
    text = await _status(client, "POST", collection, 400, headers=ADMIN, json={
        "event_types": ["PURCHASE"],
        "destination": "nowhere", "config": {"secret": bad_secret, "access_token": configs["meta"]["access_token"]}})
    captured.assert_clean(text, "the refused connection")

    # Editing with the masked values sent back keeps the secrets; a read never shows them.
    hook = f"{collection}/{made['webhook']}"
    current = (await (await client.get(hook, headers=ADMIN)).json())["data"]
    body = {k: v for k, v in current.items() if k not in ("created_at", "updated_at")}
    body["name"] = "renamed"
    captured.assert_clean(await _status(client, "PUT", hook, 200, headers=ADMIN, json=body), "the PUT answer")
    captured.assert_clean(await _status(client, "PATCH", hook, 200, headers=ADMIN, json={"enabled": True}),
                          "the PATCH answer")
    rotated = captured.remember("rotated webhook secret", "whsec_cm90YXRlZHJvdGF0ZWRyb3RhdGVkcm90YXRlZA==")
    patched = await _status(client, "PATCH", hook, 200, headers=ADMIN,
                            json={"config": {**body["config"], "secret": rotated}})
    captured.assert_clean(patched, "the rotation answer")

    # An event goes out to all of them; every destination is down, so every delivery fails and says why.
    token = await _authorize(client, KEYS[(A, "SERVER")])
    captured.remember("SERVER token", token)
    sent = await client.post(f"{STOREFRONT}/behavior/events", headers=bearer(token), json={
        "type": "PURCHASE", "customer_id": "cust-aaaa", "order_id": "o-down", "currency": "COP", "value": 10,
        "products": [{"sku": "A"}], "analytics": {"client_id": "555.666"}, "click_ids": {"gclid": "gclid-1"}})
    assert sent.status == 202, await sent.text()
    event_id = (await sent.json())["data"]["id"]
    deliveries_path = f"{ADMIN_API}/accounts/{A}/events/{event_id}/deliveries"
    for _ in range(500):
        found = (await (await client.get(deliveries_path, headers=ADMIN)).json())["data"]
        if found and all(d["state"] != "pending" for d in found):
            break
        await asyncio.sleep(0.02)
    assert {d["destination"] for d in found if d["state"] == "dead"} == set(configs), found
    assert all(d["last_error"] for d in found if d["state"] == "dead")

    # Every read of connections and deliveries: masked or absent.
    reads = [collection, f"{collection}?limit=100", deliveries_path,
             *(f"{collection}/{doc_id}" for doc_id in made.values()),
             *(f"{collection}/{doc_id}/deliveries" for doc_id in made.values()),
             f"{collection}/{ids(A)['connections']}"]
    for path in reads:
        captured.assert_clean(await _status(client, "GET", path, 200, headers=ADMIN), f"GET {path}")
    seeded = (await (await client.get(f"{collection}/{ids(A)['connections']}", headers=ADMIN)).json())["data"]
    assert seeded["config"]["secret"] == SECRET_MASK
    captured.assert_logs_clean()


# --- The dashboard cookie and the metrics ------------------------------------------------------------------------

async def test_the_session_cookie_and_the_metrics_hold_no_secret(service: TestClient, captured: Captured) -> None:
    client = service
    token = captured.remember("SERVER token", await _authorize(client, KEYS[(A, "SERVER")]))
    wrong = captured.remember("wrong admin token", "wrong-admin-token-0123456789")
    await _status(client, "POST", "/dashboard/session", 401, json={"token": wrong})
    response = await client.post("/dashboard/session", json={"token": ADMIN_TOKEN})
    assert response.status == 200
    captured.assert_clean(await response.text(), "the sign-in answer")
    cookie = response.cookies[SESSION_COOKIE]
    captured.assert_clean(cookie.value, "the session cookie")
    captured.assert_clean(response.headers.get("Set-Cookie", ""), "the Set-Cookie header")
    dashboard = {"X-Requested-With": "linksvc-dashboard"}
    await _status(client, "GET", f"{ADMIN_API}/accounts/{A}/connections", 200, headers=dashboard)
    await _status(client, "GET", f"{STOREFRONT}/brands?x-api-key={KEYS[(B, 'CLIENT')]}", 200, headers=bearer(token))
    await _status(client, "GET", f"{STOREFRONT}/brands", 401, headers=bearer(wrong))
    client.session.cookie_jar.clear()
    metrics = await _status(client, "GET", "/metrics", 200)
    assert "linksvc_http_requests" in metrics
    captured.assert_clean(metrics, "/metrics")
    captured.assert_logs_clean()


# --- Credentials in URLs -----------------------------------------------------------------------------------------

async def test_url_credentials_are_masked_everywhere_and_kept_when_sent_back(service: TestClient, captured: Captured,
                                                                            receiver: Receiver) -> None:
    client = service
    collection = f"{ADMIN_API}/accounts/{A}/connections"
    password = captured.remember("endpoint password", "pa55w0rd")
    stored_url = f"https://user:{password}@hooks.example.com/x"
    mirror = f"https://{password}@mirror.example.com/y?q=1"
    hook_secret = "whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTIz"

    async def stored_config(doc_id: str) -> dict[str, Any]:
        row = await documents.get(client.app[DB].reader, "connections", A, doc_id)
        assert row is not None
        config: dict[str, Any] = row.body["config"]
        return config

    response = await client.post(collection, headers=ADMIN, json={
        "event_types": ["PURCHASE"], "destination": "webhook", "name": "with credentials", "enabled": False,
        "config": {"endpoint_url": stored_url, "secret": hook_secret, "extra": {"mirrors": [mirror]}}})
    text = await response.text()
    assert response.status == 201, text
    captured.assert_clean(text, "the created connection")
    view = (await response.json())["data"]
    assert view["config"]["endpoint_url"] == f"https://{SECRET_MASK}@hooks.example.com/x"
    assert view["config"]["extra"]["mirrors"] == [f"https://{SECRET_MASK}@mirror.example.com/y?q=1"]
    item = f"{collection}/{view['id']}"
    for path in (item, collection, f"{collection}?limit=100"):
        captured.assert_clean(await _status(client, "GET", path, 200, headers=ADMIN), f"GET {path}")

    # The masked value sent back unchanged keeps the stored credentials; so does a new path on the same host.
    current = (await (await client.get(item, headers=ADMIN)).json())["data"]
    body = {k: v for k, v in current.items() if k not in ("created_at", "updated_at")}
    captured.assert_clean(await _status(client, "PUT", item, 200, headers=ADMIN, json={**body, "name": "kept"}),
                          "the PUT answer")
    assert await stored_config(view["id"]) == {"endpoint_url": stored_url, "secret": hook_secret,
                                               "extra": {"mirrors": [mirror]}}
    moved = {**body["config"], "endpoint_url": f"https://{SECRET_MASK}@HOOKS.example.com/z?v=2"}
    captured.assert_clean(await _status(client, "PATCH", item, 200, headers=ADMIN, json={"config": moved}),
                          "the PATCH answer")
    assert (await stored_config(view["id"]))["endpoint_url"] == f"https://user:{password}@HOOKS.example.com/z?v=2"
    # ... but never to another host: the client must type the credentials again.
    elsewhere = {**body["config"], "endpoint_url": f"https://{SECRET_MASK}@attacker.example.net/x"}
    refused = await client.patch(item, headers=ADMIN, json={"config": elsewhere})
    assert refused.status == 400
    assert (await refused.json())["details"]["field"] == "config.endpoint_url"
    captured.assert_clean(await refused.text(), "the refusal")
    assert (await stored_config(view["id"]))["endpoint_url"] == f"https://user:{password}@HOOKS.example.com/z?v=2"

    # Delivered: a connection edited through its masked view still sends its credentials (Basic, from the URL).
    live_url = receiver.url("/in").replace("http://", f"http://user:{password}@")
    closed = f"http://user:{password}@127.0.0.1:{_closed_port()}/hook"
    made = {}
    for name, url in (("live", live_url), ("down", closed)):
        created = await client.post(collection, headers=ADMIN, json={
            "destination": "webhook", "name": name, "event_types": ["PURCHASE"],
            "config": {"endpoint_url": url, "secret": hook_secret}})
        assert created.status == 201, await created.text()
        made[name] = (await created.json())["data"]
        captured.assert_clean(await created.text(), f"the created {name} connection")
    live = made["live"]
    edited = {k: v for k, v in live.items() if k not in ("created_at", "updated_at")} | {"name": "live, renamed"}
    await _status(client, "PUT", f"{collection}/{live['id']}", 200, headers=ADMIN, json=edited)
    token = await _authorize(client, KEYS[(A, "SERVER")])
    captured.remember("SERVER token", token)
    sent = await client.post(f"{STOREFRONT}/behavior/events", headers=bearer(token), json={
        "type": "PURCHASE", "customer_id": "cust-aaaa", "order_id": "o-url", "currency": "COP", "value": 10,
        "products": [{"sku": "A"}]})
    assert sent.status == 202, await sent.text()
    event_id = (await sent.json())["data"]["id"]
    deliveries_path = f"{ADMIN_API}/accounts/{A}/events/{event_id}/deliveries"
    mine = {live["id"], made["down"]["id"]}
    for _ in range(500):
        found = [d for d in (await (await client.get(deliveries_path, headers=ADMIN)).json())["data"]
                 if d["connection_id"] in mine]
        # The purchase makes several deliveries per connection, all in the event's own transaction.
        if {d["connection_id"] for d in found} == mine and all(d["state"] != "pending" for d in found):
            break
        await asyncio.sleep(0.02)
    states = {d["connection_id"]: d for d in found}
    assert states[live["id"]]["state"] == "delivered", found
    assert states[made["down"]["id"]]["state"] == "dead" and states[made["down"]["id"]]["last_error"], found
    basic = base64.b64encode(f"user:{password}".encode()).decode()
    # One request per webhook kind the purchase made (accepted, reward issued...): each with the credentials.
    assert receiver.received and {r["headers"].get("Authorization") for r in receiver.received} == {f"Basic {basic}"}
    for path in (deliveries_path, f"{collection}/{made['down']['id']}/deliveries", f"{collection}/{live['id']}"):
        captured.assert_clean(await _status(client, "GET", path, 200, headers=ADMIN), f"GET {path}")
    captured.assert_logs_clean()
