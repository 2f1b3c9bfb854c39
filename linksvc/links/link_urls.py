"""The one check of a link's URLs. It runs when a link is saved (the admin API's create, PUT, PATCH and UTM
edit, the preview, seed files: all through the field types of :class:`~linksvc.resources.models.Link`) and
again on each click, where a link stored before these rules loses the URLs they refuse
(:func:`usable_link`).

    web URLs     destination_url (https only), fallback_url, android.fallback_url, ios.fallback_url: absolute
                 http or https with a valid host, without a user name or password
    deeplink     the app's own scheme (``myapp://...``) or an https universal link or app link; never a scheme
                 that runs code, reads local data or builds an Android intent (:data:`BLOCKED_SCHEMES`), nor
                 plain http (not a universal link); no ``#Intent;`` or ``;end`` in its fragment
    all of them  only the characters RFC 3986 allows unencoded: ASCII letters and digits, ``-._~:/?#[]@!$&'()*+,;=``
                 and ``%XX`` escapes. Control characters, whitespace, ``<>"\\^`{|}`` and non-ASCII text must be
                 percent-encoded (``%0D%0A`` is fine: encoded, it is data).

A deeplink (or the destination, when there is none) becomes the data part of an Android intent URL
(:func:`linksvc.links.appstores.intent_url`); that function also escapes what could end the data part,
so these refusals are a second wall, and they tell the author at once instead of on a phone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Annotated, Any

from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError
from yarl import URL

from linksvc.errors import InvalidField
from linksvc.resources.urls import check_web_url

BLOCKED_SCHEMES = frozenset({
    "javascript", "vbscript", "data", "blob", "file", "filesystem", "content", "jar", "about", "view-source",
    "chrome", "intent", "android-app",
})
"""Schemes a deeplink may not use (any case): they run script, read local or browser data, or (intent:,
android-app:) make Android build an intent whose extras the link would choose."""

_URL_CHAR = r"A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%"
_NOT_URL_CHAR = re.compile(f"[^{_URL_CHAR}]")
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
URL_TEXT = re.compile(f"[A-Za-z][A-Za-z0-9+.\\-]*:[{_URL_CHAR}]*")
"""An absolute URL of RFC 3986 characters only: what a ``Location`` header may carry."""


def _describe(char: str) -> str:
    code = f"U+{ord(char):04X}"
    if ord(char) < 0x20 or ord(char) == 0x7F or 0x80 <= ord(char) < 0xA0:
        return f"a control character ({code})"
    if char.isspace():
        return f"unencoded whitespace ({code})"
    if not char.isascii():
        return f"the non-ASCII character {code}; percent-encode it (a host in punycode)"
    return f"{char!r}, which must be percent-encoded"


def url_text_problem(value: str) -> str | None:
    """What is wrong with the characters of ``value`` as a URL, or None."""
    bad = _NOT_URL_CHAR.search(value)
    if bad is not None:
        return f"contains {_describe(bad.group())}"
    if _BAD_ESCAPE.search(value):
        return "has a % that does not start an escape such as %25"
    return None


def web_url_problem(value: str, https_only: bool = False) -> str | None:
    """What is wrong with ``value`` as a link's web destination or fallback, or None."""
    problem = url_text_problem(value)
    if problem is not None:
        return problem
    try:
        check_web_url(value, "", https_only=https_only)
    except InvalidField as refused:
        return refused.message
    url = URL(value)  # parsed once by check_web_url already (yarl caches it)
    if url.raw_user is not None or url.raw_password is not None:
        return "must not carry a user name or password"
    return None


def deeplink_problem(value: str) -> str | None:
    """What is wrong with ``value`` as a link's deeplink, or None."""
    problem = url_text_problem(value)
    if problem is not None:
        return problem
    match = _SCHEME.match(value)
    if match is None:
        return "must start with a scheme, such as myapp:// or https://"
    scheme = match.group(1).lower()
    if scheme in BLOCKED_SCHEMES:
        return f"must not use the {scheme}: scheme"
    if scheme == "http":
        return "must use the app's own scheme or https (plain http is not a universal link or app link)"
    if scheme == "https":
        problem = web_url_problem(value, https_only=True)
        if problem is not None:
            return problem
    _, _, fragment = value.partition("#")
    lowered = fragment.lower()
    if "#" in fragment or lowered.startswith("intent;") or ";end" in lowered:
        return "must not carry a second #, an #Intent; section or ;end in its fragment"
    return None


def _rule(problem_of: Callable[[str], str | None]) -> Callable[[str], str]:
    def check(value: str) -> str:
        problem = problem_of(value)
        if problem is not None:
            raise PydanticCustomError("url", problem)
        return value
    return check


# Lengths are checked first, so the rules never read a huge value.
HttpsUrl = Annotated[str, Field(max_length=4000), AfterValidator(_rule(lambda v: web_url_problem(v, https_only=True)))]
WebUrl = Annotated[str, Field(max_length=2000), AfterValidator(_rule(web_url_problem))]
Deeplink = Annotated[str, Field(max_length=2000), AfterValidator(_rule(deeplink_problem))]


# The plain https URL most links hold: a lower-case DNS name of at most 253 characters with a letter-only
# top-level label (never an address literal), no port, no user, no fragment, then a path and query of RFC 3986
# characters other than ``@`` with every ``%`` an escape. Every rule above accepts such a URL (a property test,
# tests/unit/test_link_urls.py, holds them to it), so a click reads it with one regular expression instead of
# parsing it; anything else goes through the rules.
_PLAIN_HTTPS = re.compile(
    r"https://(?=[a-z0-9.-]{1,253}(?:[/?]|\Z))(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}"
    r"(?:[/?](?:[A-Za-z0-9\-._~!$&'()*+,;=:/?]|%[0-9A-Fa-f]{2})*)?"
)


def _checked(rule: Callable[[str], str | None]) -> Callable[[str], str | None]:
    """``rule`` with its plain-URL shortcut, then a cache: stored links are a bounded set of strings that clicks
    repeat, each checked once per process (one dict lookup a field, keyed by the string alone)."""
    cached = lru_cache(maxsize=8192)(rule)

    def check(value: str) -> str | None:
        return None if _PLAIN_HTTPS.fullmatch(value) else cached(value)
    return check


_stored_destination = _checked(lambda value: web_url_problem(value, https_only=True))
_stored_fallback = _checked(web_url_problem)
_stored_deeplink = _checked(deeplink_problem)


def _problem(rule: Callable[[str], str | None], value: Any) -> str | None:
    if value is None:
        return None
    return rule(value) if isinstance(value, str) else "must be a string"


def usable_link(link: Mapping[str, Any]) -> tuple[Mapping[str, Any] | None, list[str]]:
    """A stored link with the URLs today's rules refuse taken out (a link saved before them), and what was
    wrong (``"field: problem"``). A refused deeplink or fallback is skipped as if absent; a refused
    destination leaves nothing to send a click to, and the link is None."""
    destination = link.get("destination_url")
    problem = "is missing" if destination is None else _problem(_stored_destination, destination)
    if problem is not None:
        return None, [f"destination_url: {problem}"]
    changes: dict[str, Any] = {}
    problems: list[str] = []
    for field, rule in (("deeplink", _stored_deeplink), ("fallback_url", _stored_fallback)):
        problem = _problem(rule, link.get(field))
        if problem is not None:
            changes[field] = None
            problems.append(f"{field}: {problem}")
    for app in ("android", "ios"):
        settings = link.get(app)
        if isinstance(settings, dict):  # stored JSON objects (a Mapping check costs more than the rest)
            problem = _problem(_stored_fallback, settings.get("fallback_url"))
            if problem is not None:
                changes[app] = {**settings, "fallback_url": None}
                problems.append(f"{app}.fallback_url: {problem}")
    return ({**link, **changes} if changes else link), problems
