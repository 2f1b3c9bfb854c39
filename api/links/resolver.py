"""``GET /{code}`` and ``HEAD /{code}``: resolve a link, redirect, and record the click off the path.

Resolve, respond, then track: the click goes into the recorder's buffer and is written in a batch
later; HEAD answers the same without recording anything. Unknown codes are 404 and disabled or expired
links 410, both as a small HTML page (people land here, not programs). A link stored before today's URL
rules with a destination they refuse is 502, also a page, with a warning in the log naming the link and the
field (the link's owner has to fix it); its click is not recorded, since it went nowhere.
"""

from __future__ import annotations

import html
import logging
import time

from aiohttp import web

from api.appkeys import CLICKS, DB, SETTINGS
from api.routing import json_response
from linksvc.jsoncodec import dumpb
from linksvc.links import service
from linksvc.links.clicks import Click
from linksvc.links.decide import decide, unavailable
from linksvc.links.devices import classify
from linksvc.links.tracking_ids import new_tracking_id

log = logging.getLogger("linksvc.resolver")
CODE_ROUTE = "/{code:[A-Za-z0-9][A-Za-z0-9_-]{2,63}}"
NO_STORE = "no-store"


def _page(status: int, title: str, text: str) -> web.Response:
    body = (f"<!doctype html><html lang=en><meta charset=utf-8><meta name=viewport content='width=device-width'>"
            f"<title>{html.escape(title)}</title><body style='font-family:sans-serif;margin:3em auto;max-width:30em'>"
            f"<h1>{html.escape(title)}</h1><p>{html.escape(text)}</p></body></html>")
    return web.Response(status=status, text=body, content_type="text/html", headers={"Cache-Control": NO_STORE})


async def resolve(request: web.Request) -> web.StreamResponse:
    code = request.match_info["code"]
    stored = await service.link_of_code(request.app[DB], code)
    if stored is None:
        return _page(404, "Link not found", "There is no link at this address.")
    link = stored.link
    now = time.time()
    if unavailable(link, now) is not None:
        return _page(410, "Link no longer available", "This link has been switched off or has expired.")
    settings = request.app[SETTINGS]
    headers = request.headers
    user_agent = headers.get("User-Agent", "")
    device = classify(user_agent)
    query = {key: request.query[key] for key in request.query} if request.query_string else {}
    decision = decide(
        link, device, query, "application/json" in headers.get("Accept", ""),
        f"{settings.public_url}/{code}", new_tracking_id(), settings.service_label,
    )
    if decision.skipped:
        log.warning("link %s (%s) has URLs the link rules refuse: %s", stored.id, code, "; ".join(decision.skipped))
    if decision.answer == "broken":
        return _page(502, "Link cannot be opened", "This link points to an address that is not valid.")
    if request.method == "GET":
        request.app[CLICKS].record(Click(
            stored.account_id, stored.id, decision.tracking_id, now, device.platform, device.bot, decision.answer,
            user_agent, headers.get("Referer", ""), decision.utm,
        ))
    if decision.status == 302 and decision.location is not None:
        return web.Response(status=302, headers={"Location": decision.location, "Cache-Control": NO_STORE})
    return web.Response(status=decision.status, body=dumpb(decision.body), content_type="application/json",
                        headers={"Cache-Control": NO_STORE})


async def apple_app_site_association(request: web.Request) -> web.Response:
    return json_response(await service.apple_app_site_association(request.app[DB]))


async def asset_links(request: web.Request) -> web.Response:
    return json_response(await service.asset_links(request.app[DB]))


def add_resolver_routes(app: web.Application) -> None:
    app.router.add_get("/.well-known/apple-app-site-association", apple_app_site_association)
    app.router.add_get("/.well-known/assetlinks.json", asset_links)
    # GET routes answer HEAD too (aiohttp adds it), without a body.
    app.router.add_get(CODE_ROUTE, resolve)


