"""Custom domains in the dashboard: add a domain, read and copy the DNS record to create, verify it (live: the
record goes), see why
another one is not verified, and create a link that resolves only on the live domain; then edit a live domain's
long-link URL patterns (add one, so a long link to it is followed; see an invalid one refused in the API's words;
remove them, so it is refused again).

The service runs behind a small proxy, as in production: the verification fetch connects to the proxy
(``LINKSVC_DOMAIN_VERIFY_CONNECT``), which forwards every host to the service, except the host
``broken.democoffee.example``, for which it answers a page of its own (the domain points somewhere else).
Screenshots go to docs/screenshots/ with ``LINKSVC_SCREENSHOTS=1``, else to a temporary folder.
"""

from __future__ import annotations

import os
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import DEMO, DESKTOP, PHONE, Scene, open_page, sign_in
from tests.browser.servers import Recorder, call, service
from tests.browser.test_screenshots import DOCS_SCREENSHOTS

LIVE = "links.democoffee.example"
BROKEN = "broken.democoffee.example"


class Proxy:
    """A plain HTTP proxy on a free loopback port that forwards to ``target`` with the request's Host."""

    def __init__(self) -> None:
        self.target = ""
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                host = self.headers.get("Host", "")
                if host.startswith("broken."):
                    status, body = 200, b"<!doctype html><title>Parked</title><h1>This domain is parked</h1>"
                else:
                    request = urllib.request.Request(proxy.target + self.path, headers={"Host": host})
                    try:
                        with urllib.request.urlopen(request, timeout=5) as answer:
                            status, body = answer.status, answer.read()
                    except urllib.error.HTTPError as exc:
                        status, body = exc.code, exc.read()
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self.server.server_address[1])
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def behind_proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scene]:
    proxy = Proxy()
    extra = {"LINKSVC_DOMAIN_VERIFY_SCHEME": "http", "LINKSVC_DOMAIN_VERIFY_CONNECT": f"127.0.0.1:{proxy.port}"}
    try:
        with service(tmp_path_factory.mktemp("domains"), extra) as base:
            proxy.target = base
            yield Scene(base, Recorder(base), Recorder(base), {}, {})
    finally:
        proxy.close()


@pytest.mark.parametrize(("width", "viewport"), [("desktop", DESKTOP), ("phone", PHONE)])
def test_add_verify_and_use_a_domain(browser: Any, behind_proxy: Scene, width: str, viewport: dict[str, int],
                                     tmp_path: Path) -> None:
    scene = behind_proxy
    shots = DOCS_SCREENSHOTS if os.environ.get("LINKSVC_SCREENSHOTS") == "1" else tmp_path
    shots.mkdir(parents=True, exist_ok=True)
    context, watched = open_page(browser, scene, viewport)
    page = watched.page
    # The failed verification and the refused host answer 422 and 400: the browser logs those loads.
    watched.expect(r"status of 422|status of 400")
    live, broken = f"{width}.{LIVE}", BROKEN.replace("broken.", f"broken.{width}.")
    try:
        sign_in(watched, scene)
        page.get_by_role("link", name="Domains").click()
        page.get_by_role("heading", name="Domains", exact=True).wait_for()

        # A host that is not a DNS name is refused, naming the field.
        page.get_by_label("Host").fill("not a host")
        page.get_by_role("button", name="Add domain").click()
        page.locator('[data-field="host"] .field-error').filter(has_text="DNS name").wait_for()

        for host in (live, broken):
            page.get_by_label("Host").fill(host)
            page.get_by_role("button", name="Add domain").click()
            page.locator(f'tr[data-domain="{host}"][data-status="pending"]').wait_for()
        stored = {d["host"]: d for d in call(f"{scene.base}/api/admin/v1/accounts/{DEMO}/domains")[1]["data"]}
        row = page.locator(f'tr[data-domain="{live}"]')
        # The DNS record the verification expects: the service's public host is an address here (an A record).
        assert stored[live]["verification"]["dns"] == {"type": "A", "name": live, "value": "127.0.0.1"}
        assert row.locator('[data-role="dns-type"]').inner_text() == "A"
        assert row.locator('[data-role="dns-name"]').inner_text() == live
        assert row.locator('[data-role="dns-value"]').inner_text() == "127.0.0.1"
        row.get_by_role("button", name=f"Copy the value of the DNS record of {live}").click()
        assert page.evaluate("navigator.clipboard.readText()") == "127.0.0.1"
        row.get_by_role("button", name=f"Copy the name of the DNS record of {live}").click()
        assert page.evaluate("navigator.clipboard.readText()") == live

        page.get_by_role("button", name=f"Verify {live}").click()
        page.locator(f'tr[data-domain="{live}"][data-status="live"]').wait_for()
        page.locator(".verify-result .ok").filter(has_text=f"{live} is live").wait_for()
        # Live: the record and the Verify button are gone, the row says so (and still after a reload).
        for _ in range(2):
            row.locator('[data-role="live"]').filter(has_text=f"Live: the account's links resolve on {live}").wait_for()
            assert row.locator('[data-role="dns"]').count() == 0
            assert row.get_by_role("button", name=f"Verify {live}").count() == 0
            page.reload()
        page.locator(f'tr[data-domain="{broken}"] [data-role="dns"]').wait_for()

        page.get_by_role("button", name=f"Verify {broken}").click()
        alert = page.get_by_role("alert").filter(has_text=f"{broken} is not verified")
        alert.wait_for()
        assert "answered 200 but its body is not the token" in alert.inner_text()
        assert page.locator(f'tr[data-domain="{broken}"]').get_attribute("data-status") == "pending"
        page.evaluate("document.getElementById('toast').classList.remove('shown')")  # not over the table
        page.screenshot(path=str(shots / f"domains-{width}.png"), full_page=True, animations="disabled")

        # A link that resolves only on the live domain: its short URL is on that domain.
        page.goto(f"{scene.base}/dashboard/{DEMO}/links/new")
        page.get_by_label("Domain").select_option(live)
        page.get_by_label("Destination URL").fill("https://democoffee.example.com/domains")
        page.get_by_role("button", name="Create link").click()
        page.locator('input[name="short_url"]').wait_for()
        short_url = page.locator('input[name="short_url"]').input_value()
        assert short_url.startswith(f"http://{live}/"), short_url
    finally:
        context.close()
    assert not watched.unexpected(), watched.unexpected()


LONG = "long.democoffee.example"  # a live domain of its own, for the long-link patterns
PARTNER = "https://offers.partner.example/spring"  # on no host of the demo account's links or domains
GOOD = r"https://offers\.partner\.example/.*"
TOO_BROAD = r"https://partner.example/.*"  # an unescaped dot: refused


def _long_link(scene: Scene, target: str) -> tuple[int, str | None]:
    """A long link on the domain LONG whose link is ``target``: (status, Location)."""
    request = urllib.request.Request(f"{scene.base}/?link={urllib.parse.quote(target, safe='')}",
                                     headers={"Host": LONG})
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(request, timeout=10) as answer:
            return answer.status, answer.headers.get("Location")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("Location")


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def test_edit_the_long_link_patterns_of_a_domain(browser: Any, behind_proxy: Scene, tmp_path: Path) -> None:
    scene = behind_proxy
    shots = DOCS_SCREENSHOTS if os.environ.get("LINKSVC_SCREENSHOTS") == "1" else tmp_path
    shots.mkdir(parents=True, exist_ok=True)
    api = f"{scene.base}/api/admin/v1/accounts/{DEMO}/domains"
    status, body = call(api, "POST", {"host": LONG})
    assert status == 201, body
    domain = f"{api}/{body['data']['id']}"
    status, body = call(f"{domain}/verify", "POST")
    assert status == 200 and body["data"]["status"] == "live", body
    assert _long_link(scene, PARTNER) == (400, None)  # no pattern yet: the long link is refused

    context, watched = open_page(browser, scene, DESKTOP)
    page = watched.page
    watched.expect(r"status of 400")  # the refused pattern
    try:
        sign_in(watched, scene)
        page.get_by_role("link", name="Domains").click()
        page.get_by_role("heading", name="Where long links may lead").wait_for()
        form = page.get_by_role("form", name=f"URL patterns of {LONG}")
        form.get_by_text(f"No patterns: long links on {LONG} lead only").wait_for()

        # A valid pattern: saved, read back by the API, and the long link to it is followed.
        form.get_by_role("button", name=f"Add a pattern for {LONG}").click()
        assert form.get_by_label("Pattern 1", exact=True).evaluate("node => node === document.activeElement")
        form.get_by_label("Pattern 1", exact=True).fill(GOOD)
        form.get_by_role("button", name=f"Save patterns of {LONG}").click()
        form.get_by_role("status").filter(has_text=f"Saved: 1 pattern for long links on {LONG}.").wait_for()
        assert call(domain)[1]["data"]["url_patterns"] == [GOOD]
        status, location = _long_link(scene, PARTNER)
        assert status == 302 and (location or "").startswith(f"{PARTNER}?tracking_id="), (status, location)

        # An invalid one: the API's words beside it, after its label; nothing saved.
        status, refused = call(domain, "PATCH", {"url_patterns": [GOOD, TOO_BROAD]})
        assert status == 400 and refused["details"]["field"] == "url_patterns[1]", refused
        form.get_by_role("button", name=f"Add a pattern for {LONG}").click()
        second = form.get_by_label("Pattern 2", exact=True)
        second.fill(TOO_BROAD)
        form.get_by_role("button", name=f"Save patterns of {LONG}").click()
        error = form.locator('[data-field="url_patterns[1]"] .field-error')
        error.filter(has_text="Pattern 2 is too broad").wait_for()
        assert error.inner_text() == f"Pattern 2 {refused['details']['message']}"
        assert second.get_attribute("aria-invalid") == "true"
        assert form.locator('[data-field="url_patterns[0]"] .field-error').inner_text() == ""
        assert call(domain)[1]["data"]["url_patterns"] == [GOOD]
        page.evaluate("document.getElementById('toast').classList.remove('shown')")
        form.screenshot(path=str(shots / "domain-patterns-desktop.png"), animations="disabled")

        # Removed: the invalid one, then the valid one; the long link is refused again.
        form.get_by_role("button", name=f"Remove pattern 2 of {LONG}").click()
        form.get_by_role("button", name=f"Remove pattern 1 of {LONG}").click()
        form.get_by_role("button", name=f"Save patterns of {LONG}").click()
        form.get_by_role("status").filter(has_text=f"Saved: 0 patterns for long links on {LONG}.").wait_for()
        assert call(domain)[1]["data"]["url_patterns"] == []
        assert _long_link(scene, PARTNER) == (400, None)
        form.get_by_text(f"No patterns: long links on {LONG} lead only").wait_for()
    finally:
        context.close()
    assert not watched.unexpected(), watched.unexpected()
