"""``python -m linksvc route CODE`` on links that are not open now or ask for a password (issue 34): it says
"not yet valid", "expired" or "click limit reached" and what the resolver answers instead."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.factories import ADMIN_TOKEN, A, two_accounts
from tests.processes import NoRedirect, ServiceStore, free_port, ready, serve_command, service_store, stop

CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36"
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"


def linksvc(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "linksvc", *args], capture_output=True, text=True, timeout=60,
                          check=False)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, store_choice: str | None) -> Iterator[ServiceStore]:
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
        yield store


@pytest.fixture(scope="module")
def db(served: ServiceStore) -> list[str]:
    return served.args()


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


def _password_cookie(served: ServiceStore, tmp_path: Path, code: str, password: str) -> str:
    """The cookie the running service sets when a browser posts the link's right password."""
    port = free_port()
    env = {**os.environ, "LINKSVC_ADMIN_TOKEN": ADMIN_TOKEN, "LINKSVC_LOAD_DEMO": "0", "LINKSVC_LOG_LEVEL": "WARNING"}
    with (tmp_path / "server.log").open("wb") as log:
        process = subprocess.Popen(serve_command(port, served), env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        assert ready(f"http://127.0.0.1:{port}"), (tmp_path / "server.log").read_text()
        request = urllib.request.Request(f"http://127.0.0.1:{port}/{code}", method="POST", headers={
            "User-Agent": CHROME, "Content-Type": "application/x-www-form-urlencoded"},
            data=urllib.parse.urlencode({"password": password}).encode())
        try:
            urllib.request.build_opener(NoRedirect).open(request, timeout=10)
        except urllib.error.HTTPError as answer:
            assert answer.code == 302, answer.code
            return str(answer.headers["Set-Cookie"]).split(";")[0]
        raise AssertionError("the right password was not answered with a redirect")
    finally:
        stop(process)


def test_route_with_the_cookie_of_a_password_given_before(served: ServiceStore, tmp_path: Path) -> None:
    """With ``--cookie``, the Cookie header is all the browser sends: the password cookie the service set lets
    the click through, as the resolver does; without it (or a forged one), the password page."""
    cookie = _password_cookie(served, tmp_path, "lockaaa", "s3cret words")
    assert cookie.startswith("linksvc_pw_lockaaa=")
    run = linksvc("route", "lockaaa", "--user-agent", CHROME, "--cookie", f"a=1; {cookie}", *served.args())
    assert run.returncode == 0, run.stderr
    shown = run.stdout.splitlines()
    assert shown[0] == "302 Found" and shown[1].startswith("Location: https://shop.example/sale?")
    assert any(line.startswith("password: the link is password-protected and the cookie linksvc_pw_lockaaa (valid "
                               "until ") for line in shown)
    for sent, why in (("a=1", "the cookie has no linksvc_pw_lockaaa"),
                      (cookie[:-4] + "0000", "its cookie linksvc_pw_lockaaa is not valid")):
        answer = json.loads(linksvc("route", "lockaaa", "--user-agent", CHROME, "--cookie", sent, "--json",
                                    *served.args()).stdout)
        assert (answer["status"], answer["answer"], answer["location"]) == (200, "password_page", None)
        assert why in answer["explanation"][-1]["text"]
