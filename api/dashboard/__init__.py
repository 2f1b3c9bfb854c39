"""The back-office dashboard at ``/dashboard``: a static single-page front end over the admin API.

This module serves the page and its assets and keeps the sign-in: ``POST /dashboard/session`` opens a
server-side session when the body holds the admin token (:mod:`linksvc.accounts.sessions`), or a person's email
and password, and their one-time code when they enrolled a second factor (:mod:`linksvc.people.service`), and sets the
``linksvc_admin`` cookie to its random id (HttpOnly, ``SameSite=Strict``, ``Path=/``, and ``Secure`` when
the request came over https or ``LINKSVC_PUBLIC_URL`` is https); ``DELETE`` ends the session in the store
and clears the cookie; ``GET`` says whether the browser is signed in (so the page never has to provoke a 401
to find out). Everything else the page does goes through the admin API (``api.auth`` accepts the cookie
there with the dashboard's header), so the dashboard can do nothing the API does not allow. All of it answers
only on the service's own hosts (:mod:`api.hosts`): never on a tenant's domain, whose DNS the tenant controls.
Every page path (``/dashboard/...``) answers the same ``index.html``; the script reads the path.

``GET /dashboard/roles`` answers the role → permissions table of :mod:`linksvc.people.roles`, the one the admin
API decides by; the page shows a person only the controls their role in the account allows. ``POST
/dashboard/totp-qr`` draws the ``otpauth://`` URI of a second factor being enrolled as a QR code (SVG, segno) for a
signed-in browser, so that an authenticator app can scan it: the URI came from this service a moment before.

The assets are the files of ``static/``, read once at start-up, answered with an ``ETag`` and a
Content-Security-Policy that allows nothing but this origin: no CDN, no inline script.

Sign-in attempts are throttled per client address (:mod:`api.accounts.throttle`, kind ``sign_in``): a wrong
token, password or code posted counts. A session cookie that is not valid does not: its id is 32 random bytes
looked up in the store, so it tells nothing about the admin token, and an expired one is what a returning browser
holds.
"""

from __future__ import annotations

import hashlib
import mimetypes
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from api.accounts.throttle import attempt
from api.appkeys import DB, SETTINGS
from api.auth import SESSION_COOKIE
from api.routing import json_response, read_json
from linksvc.accounts import sessions as dashboard_sessions
from linksvc.errors import Unauthorized
from linksvc.links.qr import qr_image
from linksvc.people import roles
from linksvc.people import service as people
from linksvc.resources.validation import validate

STATIC_DIR = Path(__file__).parent / "static"
SESSION_BODY_BYTES = 4096
NO_STORE = {"Cache-Control": "no-store"}
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


@dataclass(frozen=True)
class Asset:
    body: bytes
    content_type: str
    etag: str


def load_assets(folder: Path = STATIC_DIR) -> dict[str, Asset]:
    assets = {}
    for path in sorted(folder.iterdir()):
        if path.is_file() and not path.name.startswith("."):
            body = path.read_bytes()
            content_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            if path.suffix == ".js":
                content_type = "text/javascript"  # module scripts need a JavaScript type, whatever the OS table says
            assets[path.name] = Asset(body, content_type, '"' + hashlib.sha256(body).hexdigest()[:32] + '"')
    return assets


ASSETS: web.AppKey[dict[str, Asset]] = web.AppKey("dashboard_assets", dict)


def _asset_response(request: web.Request, asset: Asset, cache: str) -> web.StreamResponse:
    headers = {**SECURITY_HEADERS, "Cache-Control": cache, "ETag": asset.etag}
    if request.headers.get("If-None-Match") == asset.etag:
        return web.Response(status=304, headers=headers)
    charset = "utf-8" if asset.content_type.startswith(("text/", "image/svg")) else None
    return web.Response(body=asset.body, content_type=asset.content_type, charset=charset, headers=headers)


async def page(request: web.Request) -> web.StreamResponse:
    """Every dashboard path: the one page; the script shows what the path names."""
    return _asset_response(request, request.app[ASSETS]["index.html"], "no-cache")


async def static(request: web.Request) -> web.StreamResponse:
    asset = request.app[ASSETS].get(request.match_info["name"])
    if asset is None:
        raise web.HTTPNotFound(text="no such dashboard file")
    return _asset_response(request, asset, "no-cache")


class SessionIn(BaseModel):
    """The operator's sign-in: the admin token."""

    model_config = ConfigDict(extra="forbid")
    token: str = Field(min_length=1, max_length=1000, description="the admin token (LINKSVC_ADMIN_TOKEN)")


class PersonSessionIn(BaseModel):
    """A person's sign-in (a body with ``email``): their email and password, and their authenticator's code
    once they enrolled a second factor."""

    model_config = ConfigDict(extra="forbid")
    email: str = Field(min_length=1, max_length=320)
    password: str = Field(min_length=1, max_length=1000)
    code: str | None = Field(default=None, min_length=1, max_length=10, description="the authenticator's code")


def _secure_cookie(request: web.Request) -> bool:
    """Secure over https: seen directly, or behind a TLS-terminating proxy that the public URL names."""
    return request.secure or request.app[SETTINGS].public_url.lower().startswith("https:")


async def session_state(request: web.Request) -> web.Response:
    signed = await dashboard_sessions.session_of(request.app[DB], request.app[SETTINGS].admin_token,
                                                 request.cookies.get(SESSION_COOKIE))
    state: dict[str, object] = {"signed_in": signed is not None}
    if signed is not None and signed.person_id is not None:
        state["person_id"] = signed.person_id
    return json_response({"data": state}, headers=NO_STORE)


async def role_grants(request: web.Request) -> web.Response:
    """Each role's permissions (``links:write``, ``members:read``...): the same table the admin API checks."""
    table = {role: sorted(roles.GRANTS[role]) for role in roles.ROLES}
    return json_response({"data": table}, headers={"Cache-Control": "no-cache"})


class QrIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    uri: str = Field(min_length=10, max_length=1000, pattern=r"^otpauth://totp/",
                     description="the otpauth:// URI of POST /people/me/totp")


async def totp_qr(request: web.Request) -> web.Response:
    body = validate(QrIn, await read_json(request, SESSION_BODY_BYTES))
    signed = await dashboard_sessions.session_of(request.app[DB], request.app[SETTINGS].admin_token,
                                                 request.cookies.get(SESSION_COOKIE))
    if signed is None or signed.person_id is None:
        raise Unauthorized("Sign in first", "a person signed in to the dashboard enrols a second factor")
    image, content_type = qr_image(body.uri, "svg", 6)
    return web.Response(body=image, content_type=content_type, charset="utf-8", headers=NO_STORE)


async def sign_in(request: web.Request) -> web.Response:
    raw = await read_json(request, SESSION_BODY_BYTES)
    person = isinstance(raw, dict) and "email" in raw
    body = validate(PersonSessionIn, raw) if person else validate(SessionIn, raw)
    token, email, password, code = ((None, body.email, body.password, body.code) if isinstance(body, PersonSessionIn)
                                    else (body.token, None, None, None))
    async with attempt(request, "sign_in"):
        session = await people.sign_in_any(request.app[DB], request.app[SETTINGS].admin_token, token, email,
                                           password, code, replacing=request.cookies.get(SESSION_COOKIE))
    response = json_response({"data": {"signed_in": True}}, headers=NO_STORE)
    response.set_cookie(SESSION_COOKIE, session.session_id, max_age=session.max_age, path="/",
                        httponly=True, samesite="Strict", secure=_secure_cookie(request))
    return response


async def sign_out(request: web.Request) -> web.Response:
    await dashboard_sessions.sign_out(request.app[DB], request.cookies.get(SESSION_COOKIE))
    response = json_response({"data": {"signed_in": False}}, headers=NO_STORE)
    response.del_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="Strict", secure=_secure_cookie(request))
    return response


def add_dashboard_routes(app: web.Application) -> None:
    """Before the resolver's routes: ``dashboard`` is a reserved link code."""
    app[ASSETS] = load_assets()
    app.router.add_get("/dashboard/static/{name}", static)
    app.router.add_get("/dashboard/session", session_state)
    app.router.add_post("/dashboard/session", sign_in)
    app.router.add_delete("/dashboard/session", sign_out)
    app.router.add_get("/dashboard/roles", role_grants)
    app.router.add_post("/dashboard/totp-qr", totp_qr)
    app.router.add_get("/dashboard", page)
    app.router.add_get("/dashboard/{tail:.*}", page)
