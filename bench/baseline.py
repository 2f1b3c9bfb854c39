"""The bare baselines: aiohttp handlers returning a fixed small JSON body (``/bare``) or a fixed 302
(``/{code}``), no middleware, no access log.

Run by the benchmarks in its own process (``python -m bench.baseline --port P``) so that every figure of
the service has a reference measured in the same run, with the same load settings, on the same machine.
"""

from __future__ import annotations

import argparse

from aiohttp import web

BODY = b'{"data":{"id":"6c1f0b8e-5a2d-4e3b-9f47-b3c2d1e0a001","ok":true}}'
REDIRECT_TO = "https://shop.benchcoffee.example/offers/1?utm_source=newsletter&utm_medium=email"


async def handler(request: web.Request) -> web.Response:
    return web.Response(body=BODY, content_type="application/json")


async def redirect(request: web.Request) -> web.Response:
    # The query is echoed so that a load script's markers show in Location, exactly as with the service.
    location = f"{REDIRECT_TO}&{request.query_string}" if request.query_string else REDIRECT_TO
    return web.Response(status=302, headers={"Location": location, "Cache-Control": "no-store"})


async def healthz(request: web.Request) -> web.Response:
    return web.Response(body=b'{"status":"ok"}', content_type="application/json")


def make_app() -> web.Application:
    app = web.Application()
    app.router.add_get("/bare", handler)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/{code:[A-Za-z0-9][A-Za-z0-9_-]{2,63}}", redirect)
    return app


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.baseline", description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args(argv)
    web.run_app(make_app(), host="127.0.0.1", port=args.port, access_log=None, print=None)


if __name__ == "__main__":
    main()
