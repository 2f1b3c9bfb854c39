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
EVEN_ID = "aaaaaaaa-0133-4000-8000-000000000133"


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
        account["links"].append({
            **base, "id": EVEN_ID, "code": "evenaa",
            "variants": [{"name": "A", "weight": 1, "target": {"destination_url": "https://shop.example/a"}},
                         {"name": "B", "weight": 1, "target": {"destination_url": "https://shop.example/b"}}]})
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


def test_route_takes_the_cookie_of_a_returning_visitor(db: list[str]) -> None:
    """``--cookie`` is the browser's Cookie header: the variant it names wins over the hash, as on the resolver;
    a cookie naming a variant of weight 0 is ignored and said so."""
    cookie = f"theme=dark; lsv_{SPLIT_ID}=new"
    run = linksvc("route", "splitaa", "--ip", "8.8.8.8", "--cookie", cookie, *db)
    assert run.returncode == 0, run.stderr
    assert (f"variant: the cookie lsv_{SPLIT_ID} keeps this visitor on variant 'new' (weight 1 of 1), its own "
            "target") in run.stdout.splitlines()
    answer = json.loads(linksvc("route", "splitaa", "--cookie", f"lsv_{SPLIT_ID}=old", "--json", *db).stdout)
    assert answer["variant"] == "new"  # "old" weighs 0: the hash decides
    step = next(s for s in answer["explanation"] if s["step"] == "variant")
    assert step["text"].startswith(f"the cookie lsv_{SPLIT_ID} names 'old', which the split no longer has or "
                                   "weighs 0, so it is ignored; the A/B split sends")


def test_the_cookie_moves_a_visitor_off_the_hashs_variant(db: list[str]) -> None:
    first = json.loads(linksvc("route", "evenaa", "--ip", "8.8.8.8", "--json", *db).stdout)
    other = {"A": "B", "B": "A"}[first["variant"]]
    kept = json.loads(linksvc("route", "evenaa", "--ip", "8.8.8.8", "--cookie", f"lsv_{EVEN_ID}={other}", "--json",
                              *db).stdout)
    assert kept["variant"] == other
    assert kept["location"].startswith(f"https://shop.example/{other.lower()}?")
