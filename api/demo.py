"""The receivers the demo's connections deliver to, on the service itself (see
:mod:`linksvc.demo.endpoints`): a webhook sink that checks signatures, and stand-ins for the
vendors' APIs that answer what the vendors document. They exist only while the database holds demo data
(a ``"demo": true`` seed file such as ``fixtures/demo.json`` was loaded); otherwise every path here is a 404,
like any path the service does not serve."""

from __future__ import annotations

from aiohttp import web

from api.appkeys import DB
from api.routing import json_response
from linksvc.clock import utcnow
from linksvc.demo.endpoints import demo_mounted, vendor_answer, webhook_sink

SINK = "/demo/webhook-sink"
VENDORS = "/demo/vendor/{vendor:[a-z0-9_]+}/{rest:.*}"
MAX_BODY = 1024 * 1024


async def _body(request: web.Request) -> bytes:
    if request.content_length is not None and request.content_length > MAX_BODY:
        raise web.HTTPRequestEntityTooLarge(max_size=MAX_BODY, actual_size=request.content_length)
    return await request.read()


async def _mounted_post(request: web.Request) -> None:
    """404 without demo data, as for any path the service does not serve; then only POST is allowed."""
    if not await demo_mounted(request.app[DB]):
        raise web.HTTPNotFound()
    if request.method != "POST":
        raise web.HTTPMethodNotAllowed(request.method, ["POST"])


async def sink(request: web.Request) -> web.Response:
    await _mounted_post(request)
    answer = await webhook_sink(request.app[DB], request.headers, await _body(request), utcnow())
    if answer is None:
        raise web.HTTPNotFound()
    if answer.problem is not None:
        return json_response({"error": "Invalid signature", "details": answer.problem}, status=answer.status)
    return web.Response(status=answer.status)


async def vendor(request: web.Request) -> web.Response:
    await _mounted_post(request)
    answer = vendor_answer(request.match_info["vendor"], request.path, request.query, await _body(request))
    if answer is None:
        raise web.HTTPNotFound()
    return web.Response(status=answer.status, body=answer.body or None, headers=answer.headers)


def add_demo_routes(app: web.Application) -> None:
    app.router.add_route("*", SINK, sink)
    app.router.add_route("*", VENDORS, vendor)
