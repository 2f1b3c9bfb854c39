"""Schemathesis against the admin API's OpenAPI document of the real server (tests/fuzz/conftest.py), in three
runs, each over the operations of some of the document's tags and each in a test file of its own
(``test_admin_*.py``). A run is one schemathesis process that waits on the server for every request; the suite
gives each file to one pytest-xdist worker (``--dist loadfile``), so the three runs go to three workers instead of
one run taking minutes on one. A resource's operations share a tag, so the stateful phase still chains each
resource's create, read, change and delete. Every operation of the served document is in one of the runs
(``test_admin_people.py`` checks it). Each run has a server of its own (``service``,
tests/fuzz/conftest.py), so that one run's generated requests (a wrong admin token thirty times, say, which the
service then refuses from that address for ten minutes) do not change what the next run's server answers."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fuzz.conftest import ACCOUNT, ADMIN_TOKEN, config, run_schemathesis
from tests.processes import call

DOCUMENT = "/api/admin/v1/openapi.json"
RUNS = {
    "links": ("links", "domains", "campaigns", "customers", "contacts"),
    "forwarding and catalog": ("deliveries", "connections", "events", "feed", "dead-letters", "reports", "brands",
                               "tiers", "rewards", "custom-event-types", "api-keys"),
    "people and accounts": ("people", "members", "accounts", "personal-tokens", "audit-log", "meta"),
}


def every_operation_is_in_one_run(service: str) -> None:
    status, document, _ = call(service + DOCUMENT)
    assert status == 200
    tags = [tuple(operation.get("tags", ())) for path in document["paths"].values()
            for method, operation in path.items() if method in ("get", "put", "post", "patch", "delete")]
    runs = [tag for group in RUNS.values() for tag in group]
    assert len(runs) == len(set(runs)), "a tag in two runs"
    assert [t for t in tags if len(t) != 1 or t[0] not in runs] == [], "operations no run covers"


def fuzz(service: str, tmp_path: Path, run: str) -> None:
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}", "Content-Type": "application/json"}
    # Every operation works on the demo account, so that the generated requests reach past the account
    # lookup; DELETE /accounts/{account_id} gets an account of its own, as deleting the demo account would
    # turn every later request into a 404.
    deleted: tuple[dict[str, object], ...] = ()
    if "accounts" in RUNS[run]:
        status, body, _ = call(service + "/api/admin/v1/accounts", headers, "POST",
                               json.dumps({"name": "Fuzz: to be deleted", "environment": "sandbox"}).encode())
        assert status == 201, body
        deleted = ({"include-name": "DELETE /accounts/{account_id}",
                    "parameters": {"path.account_id": body["data"]["id"]}},)
    toml = config(
        auth={"admin": {"bearer": ADMIN_TOKEN}},
        parameters={"path.account_id": ACCOUNT},
        operations=(*deleted,
                    # the live feed answers a stream that lasts as long as its client: tests/http/test_feed.py
                    {"include-name": "GET /accounts/{account_id}/feed", "enabled": False},
                    # a connection's body holds its config to its destination's model (`if`/`then` per destination
                    # beside `additionalProperties: false`), which schemathesis cannot generate from ("Schema
                    # Error"); tests/http/test_connection_configs.py covers those two operations
                    {"include-name": "POST /accounts/{account_id}/connections", "enabled": False},
                    {"include-name": "PUT /accounts/{account_id}/connections/{id}", "enabled": False}),
    )
    run_schemathesis(service, DOCUMENT, toml, tmp_path, RUNS[run])
