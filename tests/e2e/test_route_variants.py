"""``python -m linksvc route CODE`` on a link with an A/B split: the variant a click without the link's cookie
gets, and the location its target leads to; a rule that matches comes first."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.test_route_command import linksvc
from tests.factories import A, two_accounts
from tests.processes import service_store

SPLIT_ID = "aaaaaaaa-0131-4000-8000-000000000131"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory, store_choice: str | None) -> Iterator[list[str]]:
    folder = tmp_path_factory.mktemp("route-variants")
    with service_store(folder, store_choice) as store:
        seed = two_accounts()
        account = next(a for a in seed["accounts"] if a["id"] == A)
        base: dict[str, Any] = account["links"][0]
        account["links"].append({
            **base, "id": SPLIT_ID, "code": "splitaa",
            "rules": [{"name": "japan", "conditions": {"countries": ["JP"]},
                       "target": {"destination_url": "https://shop.example/jp"}}],
            "variants": [{"name": "old", "weight": 0},
                         {"name": "new", "weight": 1, "target": {"destination_url": "https://shop.example/new"}}]})
        (folder / "seed.json").write_text(json.dumps(seed))
        loaded = linksvc("seed", str(folder / "seed.json"), *store.args())
        assert loaded.returncode == 0, loaded.stderr
        yield store.args()


def test_route_names_the_variant_and_leads_to_its_target(db: list[str]) -> None:
    run = linksvc("route", "splitaa", "--ip", "8.8.8.8", *db)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[1].startswith("Location: https://shop.example/new?utm_source=linksvc")
    assert (f"variant: the A/B split sends the address 8.8.8.8 and this user agent to variant 'new' "
            f"(weight 1 of 1), its own target; a visitor whose cookie lsv_{SPLIT_ID} names another variant gets "
            "that one") in lines
    answer = json.loads(linksvc("route", "splitaa", "--json", *db).stdout)
    assert (answer["rule"], answer["variant"]) == (None, "new")


def test_a_matching_rule_comes_before_the_split(db: list[str]) -> None:
    answer = json.loads(linksvc("route", "splitaa", "--country", "JP", "--json", *db).stdout)
    assert (answer["rule"], answer["variant"]) == ("japan", None)
    assert answer["location"].startswith("https://shop.example/jp?")
    assert not [step for step in answer["explanation"] if step["step"] == "variant"]
