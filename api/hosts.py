"""Which hosts serve what: the middleware that keeps every route but a few to the service's own hosts.

A tenant's domain (live or pending) is a host whose DNS the tenant controls: a cookie set there, a page shown
there, is the tenant's to read or to replace. So a route answers on every host only when it is declared so
(:func:`on_every_host`): the resolver's (``/{code}``, ``/?link=``, the association files), the domain's
verification token and the health checks (``/healthz``, ``/readyz``). Every other route (the dashboard and its
sign-in, the admin and storefront APIs and their OpenAPI documents, ``/metrics``, ``/tls/allowed``, the demo's
receivers), and any route added later without the declaration, answers only on the service's own hosts
(:meth:`linksvc.domains.hosts.SharedHosts.own`: the shared hosts and IP addresses). Anywhere else the request
gets the 404 ``{error, details}`` of a path the service does not serve, whatever its method, so a tenant's
domain does not even tell which paths exist. The host is :func:`api.domains.host_of_request`'s: the request
target's authority when it is in absolute form, else the ``Host`` header.

The fast lanes (:mod:`api.server`) bypass the middleware: they take only origin-form targets, the resolver's
applies the link host rule itself and the customer lookup's answers only on an own host.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from api.errors import no_route
from linksvc.domains.hosts import SharedHosts, target_host

SHARED_HOSTS: web.AppKey[SharedHosts] = web.AppKey("shared_hosts", SharedHosts)
EVERY_HOST: web.AppKey[set[web.AbstractResource]] = web.AppKey("every_host", set)


def host_of_request(request: web.Request) -> str:
    """The host the request is for: its target's authority when the target is in absolute form, else its
    ``Host`` header (:func:`linksvc.domains.hosts.target_host`)."""
    return target_host(request.raw_path, request.headers.get("Host", ""))


def on_every_host(app: web.Application, *routes: web.AbstractRoute) -> None:
    """Declares that ``routes`` (their resources, so HEAD with GET) answer on every host, tenants' domains too."""
    resources = app.get(EVERY_HOST)
    if resources is None:
        resources = app[EVERY_HOST] = set()
    resources.update(route.resource for route in routes if route.resource is not None)


@web.middleware
async def host_middleware(request: web.Request, handler: Any) -> web.StreamResponse:
    """A route not declared :func:`on_every_host` answers only on an own host; elsewhere 404 ``{error, details}``."""
    resource = request.match_info.route.resource
    if (resource is not None and resource in request.app.get(EVERY_HOST, ())) \
            or request.app[SHARED_HOSTS].own(host_of_request(request)):
        return await handler(request)
    return no_route(request, 404)
