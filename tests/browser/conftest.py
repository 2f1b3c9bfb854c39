"""Browser tests: Debian's Chromium driven by Playwright against the real service.

The service, the landing page and the webhook receiver are started once for the package, with the demo
data (its week of clicks and its deliveries to the service's own receivers) and a scene on top of it
(connections whose deliveries end delivered, failed, filtered and dead; a link with clicks from each
platform and a bot). Each test gets a fresh browser context; its page fails the
test on any uncaught script error, on any console error the test did not expect, and on any request for a
sub-resource that is not the service's own (no CDN, no external asset).
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.browser.servers import (
    ADMIN_TOKEN,
    Recorder,
    call,
    recording_server,
    self_signed,
    service,
)
from tests.processes import free_port

CHROMIUM = Path("/usr/bin/chromium")
INSTALL_LOCK = Path(tempfile.gettempdir()) / "linksvc-tests-chromium-install.lock"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
DESKTOP_UA = ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 "
              "Safari/537.36")
USER_AGENTS = {
    "desktop": DESKTOP_UA,
    "android": ("Mozilla/5.0 (Linux; Android 13; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/116.0.0.0 "
                "Mobile Safari/537.36"),
    "ios": ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
            "Version/17.5 Mobile/15E148 Safari/604.1"),
    "bot": "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
}
DEMO = "3f6c1a52-8d4e-4b7a-9c21-5e0f7a9b1d01"
DEMO_SERVER_KEY = "lk_demo_server_4f8a2c9e7b1d3a5f6c8e0b2d"
DEMO_CUSTOMER = "3f6c1a52-0006-4000-8000-000000000001"
DEMO_CAMPAIGN = "3f6c1a52-0004-4000-8000-000000000001"
DEMO_WEBHOOK = "3f6c1a52-0008-4000-8000-000000000001"  # the demo's connections, answered by the service itself
DEMO_META = "3f6c1a52-0008-4000-8000-000000000003"
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


@dataclass
class Scene:
    base: str
    landing: Recorder
    receiver: Recorder
    connections: dict[str, str]
    showcase: dict[str, Any]

    @property
    def admin(self) -> str:
        return f"{self.base}/api/admin/v1/accounts/{DEMO}"

    def dashboard(self, path: str = "") -> str:
        return f"{self.base}/dashboard/{DEMO}{path}"


def wait_for(what: str, check: Any, seconds: float = 15) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _connections(admin: str, receiver: str) -> dict[str, str]:
    closed = f"http://127.0.0.1:{free_port()}/hooks"  # nothing listens there: every try fails
    specs = {
        "Order webhook (local)": {"destination": "webhook", "config": {"endpoint_url": f"{receiver}/hooks",
                                                                       "secret": SECRET}},
        "Broken webhook": {"destination": "webhook", "config": {"endpoint_url": closed, "secret": SECRET}},
        "GA4 web stream (local)": {"destination": "ga4", "config": {"endpoint_url": f"{receiver}/ga4",
                                                                    "measurement_id": "G-TEST1234",
                                                                    "api_secret": "test-secret"}},
    }
    ids = {}
    for name, spec in specs.items():
        status, body = call(f"{admin}/connections", "POST", {"name": name, "event_types": ["PURCHASE"], **spec})
        assert status == 201, body
        ids[name] = body["data"]["id"]
    return ids


def _purchase(base: str) -> None:
    status, body = call(f"{base}/api/storefront/v1/auth/authorize", headers={"x-api-key": DEMO_SERVER_KEY}, token=None)
    assert status == 200, body
    event = {"type": "PURCHASE", "customer_id": DEMO_CUSTOMER, "order_id": "browser-order-1", "currency": "USD",
             "value": 12.5, "products": [{"sku": "LATTE-12"}]}
    status, body = call(f"{base}/api/storefront/v1/behavior/events", "POST", event, token=body["data"])
    assert status == 202, body


def _showcase_link(scene_admin: str, base: str) -> dict[str, Any]:
    link = {"code": "spring-menu", "kind": "email", "campaign_id": DEMO_CAMPAIGN,
            "destination_url": "https://democoffee.example.com/menu/spring?lang=en&utm_source=newsletter#drinks",
            "deeplink": "democoffee://menu/spring", "android": {"package": "com.democoffee.app"},
            "ios": {"app_store_id": "1234567890"}}
    status, body = call(f"{scene_admin}/links", "POST", link)
    assert status == 201, body
    for platform, times in (("desktop", 3), ("android", 2), ("ios", 1), ("bot", 1)):
        for _ in range(times):
            assert call(f"{base}/spring-menu", headers={"User-Agent": USER_AGENTS[platform]}, token=None)[0] == 302
    return dict(body["data"])


@pytest.fixture(scope="package")
def scene(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scene]:
    folder = tmp_path_factory.mktemp("browser")
    with recording_server(self_signed(folder)) as landing, recording_server() as receiver, service(folder) as base:
        admin = f"{base}/api/admin/v1/accounts/{DEMO}"
        connections = _connections(admin, receiver.base)
        _purchase(base)

        def settled() -> bool:
            for connection_id in connections.values():
                status, body = call(f"{admin}/connections/{connection_id}/deliveries")
                if status != 200 or not body["data"] or any(d["state"] == "pending" for d in body["data"]):
                    return False
            return True

        wait_for("the deliveries to settle", settled)
        yield Scene(base, landing, receiver, connections, _showcase_link(admin, base))


def _install_chromium() -> None:
    """The test set-up installs Debian's Chromium when it is missing and it can (root, apt): the README's
    test command then needs nothing installed by hand. Under a file lock: pytest workers (and two test runs)
    that need it at once install it once, the others wait and find it there (two apt-gets at once would fail
    on dpkg's own lock)."""
    if CHROMIUM.exists() or os.geteuid() != 0 or shutil.which("apt-get") is None:
        return
    with open(INSTALL_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        if CHROMIUM.exists():  # installed by whoever held the lock before
            return
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], env=env, check=False, capture_output=True, timeout=600)
        subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], env=env, check=False, capture_output=True,
                       timeout=900)


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    _install_chromium()
    if not CHROMIUM.exists():
        pytest.fail(f"the browser tests need Debian's Chromium at {CHROMIUM}: apt-get install -y chromium",
                    pytrace=False)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the browser tests need Playwright for Python: pip install -e '.[test]'", pytrace=False)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@dataclass
class Watched:
    """A page and what went wrong on it; ``expect`` names console errors a test provokes on purpose."""

    page: Any
    origin: str
    problems: list[str] = field(default_factory=list)
    expected: list[re.Pattern[str]] = field(default_factory=list)

    def expect(self, pattern: str) -> None:
        self.expected.append(re.compile(pattern))

    def unexpected(self) -> list[str]:
        return [p for p in self.problems if not any(e.search(p) for e in self.expected)]


def open_page(browser: Any, scene: Scene, viewport: dict[str, int], **options: Any) -> tuple[Any, Watched]:
    """A page in a fresh context; ``options`` go to the context (``timezone_id``, ``locale``, ...)."""
    context = browser.new_context(viewport=viewport, user_agent=DESKTOP_UA, ignore_https_errors=True,
                                  accept_downloads=True, **options)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=scene.base)
    page = context.new_page()
    page.set_default_timeout(10_000)
    watched = Watched(page, scene.base)
    page.on("pageerror", lambda error: watched.problems.append(f"page error: {error}"))
    page.on("console", lambda message: message.type == "error" and watched.problems.append(
        f"console error: {message.text}"))

    def on_request(request: Any) -> None:
        url = request.url
        if request.resource_type != "document" and not url.startswith((scene.base + "/", "blob:", "data:")):
            watched.problems.append(f"request outside the service: {url}")

    page.on("request", on_request)
    return context, watched


@pytest.fixture
def watched(browser: Any, scene: Scene) -> Iterator[Watched]:
    context, page = open_page(browser, scene, DESKTOP)
    yield page
    context.close()
    assert not page.unexpected(), page.unexpected()


def sign_in(watched: Watched, scene: Scene) -> None:
    page = watched.page
    page.goto(f"{scene.base}/dashboard")
    page.get_by_role("button", name="Sign in with the operator token").click()
    page.get_by_label("Operator token").fill(ADMIN_TOKEN)
    page.get_by_role("button", name="Sign in with the token").click()
    page.get_by_role("heading", name="Links", exact=True).wait_for()


def sign_in_as(watched: Watched, scene: Scene, email: str, password: str, code: str | None = None) -> None:
    """A person's sign-in with their email and password (and their authenticator's code, when asked)."""
    page = watched.page
    page.goto(f"{scene.base}/dashboard")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in", exact=True).click()
    if code is not None:
        watched.expect("401")  # the sign-in's first answer: a code is required
        page.get_by_label("One-time code").fill(code)
        page.get_by_role("button", name="Sign in", exact=True).click()
    page.get_by_role("heading", name="Links", exact=True).wait_for()


AXE = Path(__file__).parent / "axe" / "node_modules" / "axe-core" / "axe.min.js"
AXE_INSTALL = "npm ci --prefix tests/browser/axe (npm: apt-get install -y npm; .ci/run does both)"
SERIOUS = ("serious", "critical")


def _install_axe() -> None:
    """The test set-up installs axe-core as the lock file pins it when it is missing (``npm ci``; npm itself from
    Debian when it is missing and it can: root, apt), as it does Chromium: the README's test command needs nothing
    installed by hand. Under the same file lock as Chromium's install."""
    if AXE.exists():
        return
    with open(INSTALL_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if AXE.exists():
            return
        if shutil.which("npm") is None and os.geteuid() == 0 and shutil.which("apt-get") is not None:
            env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
            subprocess.run(["apt-get", "update", "-qq"], env=env, check=False, capture_output=True, timeout=600)
            subprocess.run(["apt-get", "install", "-y", "-qq", "npm"], env=env, check=False, capture_output=True,
                           timeout=900)
        npm = shutil.which("npm")
        if npm is not None:
            subprocess.run([npm, "ci", "--prefix", str(AXE.parents[2]), "--no-audit", "--no-fund", "--silent"],
                           check=False, capture_output=True, timeout=600)


def axe_violations(page: Any) -> list[str]:
    """The serious and critical violations axe-core finds on the page as it is now, one line each (rule, what
    it says, the elements): axe-core is injected from tests/browser/axe, pinned by its package-lock.json. A
    checkout without it fails the test, saying how to install it."""
    _install_axe()
    if not AXE.exists():
        pytest.fail(f"the accessibility check needs axe-core at {AXE}: {AXE_INSTALL}", pytrace=False)
    if not page.evaluate("typeof window.axe === 'object'"):
        page.add_script_tag(path=str(AXE))
    found = page.evaluate("""async () => {
        const result = await window.axe.run(document, { resultTypes: ['violations'] });
        return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.map((n) => n.target.join(' ') + (n.failureSummary ? ': ' + n.failureSummary : '')) }));
    }""")
    return [f"{v['id']} ({v['impact']}): {v['help']}: {'; '.join(v['nodes'][:5])}" for v in found
            if v["impact"] in SERIOUS]
