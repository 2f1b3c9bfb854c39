"""``python -m linksvc route CODE`` on links that are not open now or ask for a password (issue 34): it says
"not yet valid", "expired" or "click limit reached" and what the resolver answers instead."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.factories import A, two_accounts
from tests.processes import service_store

CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36"
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"


def linksvc(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "linksvc", *args], capture_output=True, text=True, timeout=60,
                          check=False)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory, store_choice: str | None) -> Iterator[list[str]]:
    folder: Path = tmp_path_factory.mktemp("route-life")
    with service_store(folder, store_choice) as store:
        seed = two_accounts()
        account = next(a for a in seed["accounts"] if a["id"] == A)
        base = {"kind": "external", "destination_url": "https://shop.example/sale"}
        account["links"] += [
            {**base, "id": "aaaaaaaa-0130-4000-8000-000000000130", "code": "soonaaa",
             "valid_since": "2099-01-01T00:00:00Z", "pending_url": "https://shop.example/soon"},
            {**base, "id": "aaaaaaaa-0131-4000-8000-000000000131", "code": "overaaa",
             "expires_at": "2020-01-01T00:00:00Z", "expired_url": "https://shop.example/over"},
            {**base, "id": "aaaaaaaa-0132-4000-8000-000000000132", "code": "lockaaa", "password": "s3cret words"},
        ]
        (folder / "seed.json").write_text(json.dumps(seed))
        loaded = linksvc("seed", str(folder / "seed.json"), *store.args())
        assert loaded.returncode == 0, loaded.stderr
        yield store.args()


@pytest.mark.parametrize(("code", "lines"), [
    ("soonaaa", ["302 Found", "Location: https://shop.example/soon",
                 "route: the link is not yet valid: valid since 2099-01-01T00:00:00.000000Z -> 302 to its pending_url "
                 "https://shop.example/soon (no click recorded)"]),
    ("overaaa", ["302 Found", "Location: https://shop.example/over",
                 "route: the link is expired at 2020-01-01T00:00:00.000000Z -> 302 to its expired_url "
                 "https://shop.example/over (no click recorded)"]),
])
def test_route_says_why_a_link_is_not_open(db: list[str], code: str, lines: list[str]) -> None:
    run = linksvc("route", code, "--user-agent", CHROME, *db)
    assert run.returncode == 0, run.stderr
    shown = run.stdout.splitlines()
    assert shown[:2] == lines[:2] and lines[2] in shown


def test_route_of_a_protected_link(db: list[str]) -> None:
    person = linksvc("route", "lockaaa", "--user-agent", CHROME, *db).stdout.splitlines()
    assert person[0] == "302 Found" and person[1].startswith("Location: https://shop.example/sale?tracking_id=")
    assert any(line.startswith("password: the link is password-protected") for line in person)
    bot = linksvc("route", "lockaaa", "--user-agent", GOOGLEBOT, "--json", *db)
    answer = json.loads(bot.stdout)
    assert answer["status"] == 200 and answer["location"] is None and answer["answer"] == "password_page"
    assert "shop.example" not in bot.stdout and "s3cret" not in bot.stdout and "argon2" not in bot.stdout
