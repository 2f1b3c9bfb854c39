"""The ownership proof of a custom domain: fetch ``{scheme}://{host}/.well-known/linksvc-verify/{token}`` and
compare the body with the token. Every way it can fail is a sentence for the person setting the domain up,
never an exception: a refused connection, a timeout, a status other than 200, another body.
"""

from __future__ import annotations

import aiohttp

VERIFY_PATH = "/.well-known/linksvc-verify/{token}"
MAX_BODY = 4096  # a token is under 100 bytes: more is the wrong body, whatever it says


def verification_url(scheme: str, host: str, token: str) -> str:
    return f"{scheme}://{host}{VERIFY_PATH.format(token=token)}"


async def fetch_problem(scheme: str, host: str, token: str, connect: str, timeout: float) -> dict[str, str] | None:
    """None when the domain serves the token; else what happened: ``{problem, message, url}``."""
    url = verification_url(scheme, host, token)
    # Tests (and a proxy on another address) give the address to connect to; the Host header stays the domain.
    target = f"{scheme}://{connect}{VERIFY_PATH.format(token=token)}" if connect else url
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session, \
                session.get(target, headers={"Host": host}, allow_redirects=False,
                            server_hostname=host if connect and scheme == "https" else None) as response:
            body = await response.content.read(MAX_BODY + 1)
            status = response.status
    except TimeoutError:
        return _problem("timeout", f"no answer from {host} within {timeout:g} s", url)
    except aiohttp.ClientConnectorError as exc:
        refused = isinstance(exc.os_error, ConnectionRefusedError)
        return _problem("connection_refused" if refused else "connection_failed",
                        f"could not connect to {host}: {'connection refused' if refused else exc.os_error}", url)
    except (aiohttp.ClientError, OSError, ValueError) as exc:
        return _problem("connection_failed", f"the request to {host} failed: {exc or type(exc).__name__}", url)
    if status != 200:
        return _problem("status", f"{url} answered status {status}, not 200", url)
    if body.strip() != token.encode():
        return _problem("wrong_body", f"{url} answered 200 but its body is not the token", url)
    return None


def _problem(problem: str, message: str, url: str) -> dict[str, str]:
    return {"problem": problem, "message": message, "url": url}
