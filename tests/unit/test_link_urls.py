"""The one check of a link's URLs (linksvc.links.link_urls): which web URLs and deeplinks are accepted and
which are refused with what reason, through the model as the admin API and seed files use it, and how a link
stored before the rules is read at click time."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linksvc.errors import InvalidField
from linksvc.links.link_urls import _PLAIN_HTTPS, deeplink_problem, usable_link, web_url_problem
from linksvc.resources.models import Link
from linksvc.resources.validation import validate

WEB_ACCEPTED = [
    "https://shop.example/",
    "https://shop.example/p?x=1&utm_source=a%20b#top",
    "HTTPS://SHOP.EXAMPLE/P",
    "https://shop.example:8443/a;b=c/d?q=[1]&r=!$'()*+,~",
    "https://shop.example/%0d%0a",  # encoded CR LF are data, not line breaks
    "https://shop.example/%0D%0A?next=%23Intent%3BS.x%3D1%3Bend",
    "https://xn--caf-dma.example/",  # an IDN written in punycode
    "https://[2001:db8::1]/x",
    "https://203.0.113.7/x",
    "https://shop.example/#a#b",  # a second '#' only reaches a browser, never an intent's extras
]
# (URL, the start of the reason)
WEB_REFUSED = [
    ("https://shop.example/a b", "contains unencoded whitespace (U+0020)"),
    ("https://shop.example/\x00", "contains a control character (U+0000)"),
    ("https://shop.example/a\r\nSet-Cookie: x=1", "contains a control character (U+000D)"),
    ("https://shop.example/\t", "contains a control character (U+0009)"),
    ("https://shop.example/\x7f", "contains a control character (U+007F)"),
    ("https://shop.example/\x85", "contains a control character (U+0085)"),
    (" https://shop.example/", "contains unencoded whitespace (U+0020)"),
    ("https://shop.example/\u00a0", "contains unencoded whitespace (U+00A0)"),
    ("https://shop.example/\u2028", "contains unencoded whitespace (U+2028)"),
    ("https://shop.example/\u202e", "contains the non-ASCII character U+202E"),
    ("https://shop.example/caf\u00e9", "contains the non-ASCII character U+00E9"),
    ("https://caf\u00e9.example/", "contains the non-ASCII character U+00E9"),
    *[(f"https://shop.example/{c}", f"contains {c!r}, which must be percent-encoded") for c in '<>"\\^`{|}'],
    ("https://shop.example/50%off", "has a % that does not start an escape"),
    ("https://shop.example/%", "has a % that does not start an escape"),
    ("https://user:pass@shop.example/", "must not carry a user name or password"),
    ("https://shop.example@evil.example/", "must not carry a user name or password"),
    ("https:///no-host", "must be an http or https URL with a host"),
    ("https:shop.example", "must be an http or https URL with a host"),
    ("//shop.example/", "must be an http or https URL with a host"),
    ("ftp://shop.example/", "must be an http or https URL with a host"),
    ("javascript:alert(1)", "must be an http or https URL with a host"),
    ("data:text/html,x", "must be an http or https URL with a host"),
    ("https://shop.example:99999/", "must be an absolute URL"),
    ("https://-bad-.example/", "has an invalid host"),
    ("", "must be an http or https URL with a host"),
]
DEEPLINK_ACCEPTED = [
    "democoffee://menu/item?id=5",
    "democoffee://menu#reviews",
    "DemoCoffee://Menu",
    "my-app+v2.beta://x",
    "myapp:open?x=1",
    "myapp://",
    "myapp://x/%23Intent%3BS.evil%3D1%3Bend",  # encoded: stays data
    "myapp://x?a=1;end",  # ';' before the fragment never reaches the Intent section
    "https://shop.example/app/open?id=5",  # a universal link or app link
    "market://details?id=com.demo.app",
]
DEEPLINK_REFUSED = [
    ("javascript:alert(1)", "must not use the javascript: scheme"),
    ("JAVASCRIPT:alert(1)", "must not use the javascript: scheme"),
    ("JavaScript://%0aalert(1)", "must not use the javascript: scheme"),
    ("java\tscript:alert(1)", "contains a control character (U+0009)"),
    (" javascript:alert(1)", "contains unencoded whitespace (U+0020)"),
    ("\x01javascript:alert(1)", "contains a control character (U+0001)"),
    ("data:text/html,<script>alert(1)</script>", "contains '<'"),
    ("data:text/html;base64,PHNjcmlwdD4=", "must not use the data: scheme"),
    ("vbscript:msgbox(1)", "must not use the vbscript: scheme"),
    ("file:///etc/passwd", "must not use the file: scheme"),
    ("intent://x#Intent;scheme=https;S.evil=1;end", "must not use the intent: scheme"),
    ("Intent:#Intent;end", "must not use the intent: scheme"),
    ("android-app://com.evil/https/x", "must not use the android-app: scheme"),
    ("blob:https://shop.example/1", "must not use the blob: scheme"),
    ("about:blank", "must not use the about: scheme"),
    ("filesystem:https://shop.example/x", "must not use the filesystem: scheme"),
    ("content://com.evil.provider/x", "must not use the content: scheme"),
    ("jar:https://shop.example/a.jar!/x", "must not use the jar: scheme"),
    ("view-source:https://shop.example/", "must not use the view-source: scheme"),
    ("chrome://settings", "must not use the chrome: scheme"),
    ("http://shop.example/app", "must use the app's own scheme or https"),
    ("https:///no-host", "must be an https URL with a host"),
    ("myapp://x#Intent;S.evil=1;end", "must not carry a second #, an #Intent; section or ;end"),
    ("myapp://x#INTENT;scheme=a", "must not carry a second #, an #Intent; section or ;end"),
    ("myapp://x#a;END", "must not carry a second #, an #Intent; section or ;end"),
    ("myapp://x#a#Intent;S.b=1;end", "must not carry a second #, an #Intent; section or ;end"),
    ("myapp://x y", "contains unencoded whitespace (U+0020)"),
    ("myapp://x\r\n", "contains a control character (U+000D)"),
    ("1app://x", "must start with a scheme"),
    ("//shop.example/x", "must start with a scheme"),
    ("menu/item", "must start with a scheme"),
]


@pytest.mark.parametrize("url", WEB_ACCEPTED)
def test_web_urls_accepted(url: str) -> None:
    assert web_url_problem(url) is None


@pytest.mark.parametrize(("url", "reason"), WEB_REFUSED)
def test_web_urls_refused_with_the_reason(url: str, reason: str) -> None:
    problem = web_url_problem(url)
    assert problem is not None and problem.startswith(reason), problem


def test_destinations_are_https_and_fallbacks_http_or_https() -> None:
    assert web_url_problem("http://shop.example/", https_only=True) == "must be an https URL with a host"
    assert web_url_problem("http://shop.example/") is None


@pytest.mark.parametrize("deeplink", DEEPLINK_ACCEPTED)
def test_deeplinks_accepted(deeplink: str) -> None:
    assert deeplink_problem(deeplink) is None


@pytest.mark.parametrize(("deeplink", "reason"), DEEPLINK_REFUSED)
def test_deeplinks_refused_with_the_reason(deeplink: str, reason: str) -> None:
    problem = deeplink_problem(deeplink)
    assert problem is not None and problem.startswith(reason), problem


BASE: dict[str, Any] = {"kind": "push", "destination_url": "https://shop.example/"}
# (changes to a valid link, the field path the refusal names)
MODEL_REFUSED = [
    ({"destination_url": "https://shop.example/a b"}, "destination_url"),
    ({"destination_url": "https://shop.example/" + "a" * 4000}, "destination_url"),
    ({"fallback_url": "https://shop.example/\x00"}, "fallback_url"),
    ({"deeplink": "JAVASCRIPT:alert(1)"}, "deeplink"),
    ({"deeplink": "myapp://x#Intent;S.evil=1;end"}, "deeplink"),
    ({"android": {"package": "com.demo.app", "fallback_url": "data:text/html,x"}}, "android.fallback_url"),
    ({"android": {"package": "com.demo.app;S.x=1"}}, "android.package"),
    ({"ios": {"fallback_url": "https://shop.example/%0"}}, "ios.fallback_url"),
    ({"ios": {"bundle_id": "com.demo;app"}}, "ios.bundle_id"),
    ({"ios": {"team_id": "abc"}}, "ios.team_id"),
    ({"ios": {"app_store_id": "12a"}}, "ios.app_store_id"),
]


@pytest.mark.parametrize(("changes", "field"), MODEL_REFUSED)
def test_the_model_refuses_naming_the_field_path(changes: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidField) as refused:
        validate(Link, {**BASE, **changes}, prefix="accounts[0].links[2]")
    assert refused.value.path == f"accounts[0].links[2].{field}"
    assert refused.value.details["field"] == f"accounts[0].links[2].{field}"


def test_the_model_accepts_every_kind_of_good_url() -> None:
    link = validate(Link, {**BASE, "deeplink": "democoffee://menu#top", "fallback_url": "http://shop.example/f",
                           "android": {"package": "com.demo.app", "fallback_url": "https://shop.example/a"},
                           "ios": {"app_store_id": "123", "bundle_id": "com.demo.app", "team_id": "ABCDE12345",
                                   "fallback_url": "https://shop.example/i"}})
    assert link.deeplink == "democoffee://menu#top"


STORED = {"id": "l-1", "kind": "push", "destination_url": "https://shop.example/", "deeplink": "democoffee://m",
          "fallback_url": "https://shop.example/f", "android": {"package": "com.demo.app", "fallback_url": None},
          "ios": None}
# A link stored before the rules: (changes, what is left of the link, the fields reported)
USABLE = [
    ({}, STORED, []),
    ({"deeplink": "javascript:alert(1)"}, {**STORED, "deeplink": None}, ["deeplink"]),
    ({"fallback_url": "https://shop.example/\r\n"}, {**STORED, "fallback_url": None}, ["fallback_url"]),
    ({"android": {"package": "com.demo.app", "fallback_url": "https://x.example/ y"}}, STORED,
     ["android.fallback_url"]),
    ({"ios": {"fallback_url": "ftp://x.example/"}}, {**STORED, "ios": {"fallback_url": None}}, ["ios.fallback_url"]),
    ({"deeplink": 5}, {**STORED, "deeplink": None}, ["deeplink"]),
    ({"destination_url": "https://shop.example/\x00"}, None, ["destination_url"]),
    ({"destination_url": "javascript:alert(1)", "deeplink": "democoffee://m"}, None, ["destination_url"]),
    ({"destination_url": None}, None, ["destination_url"]),
]


@pytest.mark.parametrize(("changes", "left", "fields"), USABLE)
def test_a_stored_link_loses_the_urls_the_rules_refuse(changes: dict[str, Any], left: dict[str, Any] | None,
                                                       fields: list[str]) -> None:
    usable, problems = usable_link({**STORED, **changes})
    assert usable == left
    assert [problem.split(":")[0] for problem in problems] == fields
    assert all("\r" not in problem and "\x00" not in problem for problem in problems)  # safe to log


# The click path's shortcut (link_urls._PLAIN_HTTPS) may only ever accept what every rule accepts: strings
# built near the edge of its pattern (hosts of every length, labels with hyphens at either end, digits-only
# labels, escapes half written, ports, users, brackets) go through both.
_HOST_LABEL = st.one_of(st.from_regex(r"[a-z0-9]([a-z0-9-]{0,4}[a-z0-9])?", fullmatch=True),
                        st.text("aZ09-_", min_size=0, max_size=70))
_TAIL = st.lists(st.sampled_from(["/", "?", "#", "%", "%2f", "%zz", "%F", "@", ":", "[", "]", " ", "a", "Z", "9", "-",
                                  ".", "~", "!", "$", "&", "'", "(", "*", "+", ",", ";", "=", "\x00", "#Intent;",
                                  ";end", "\u00e9"]), max_size=12).map("".join)


def _mostly(usual: str, *others: str) -> st.SearchStrategy[str]:
    return st.one_of(st.just(usual), st.just(usual), st.just(usual), st.sampled_from(others))


@given(labels=st.lists(_HOST_LABEL, min_size=1, max_size=5),
       tld=_mostly("example", "co", "c", "x1", "-a", "a-", "ex_", ""),
       port=_mostly("", ":8443", ":99999", ":"), user=_mostly("", "u@", "u:p@", "@"),
       slash=_mostly("/", "?", "", "#"), tail=_TAIL, scheme=_mostly("https://", "http://", "HTTPS://", "https:/"))
@settings(max_examples=1500, deadline=None)
def test_the_plain_url_shortcut_accepts_only_what_every_rule_accepts(
        labels: list[str], tld: str, port: str, user: str, slash: str, tail: str, scheme: str) -> None:
    url = f"{scheme}{user}{'.'.join(labels)}.{tld}{port}{slash}{tail}"
    if _PLAIN_HTTPS.fullmatch(url):
        assert web_url_problem(url, https_only=True) is None, url
        assert web_url_problem(url) is None, url
        assert deeplink_problem(url) is None, url


def test_the_plain_url_shortcut_takes_the_usual_links() -> None:
    for url in ("https://shop.example/", "https://www.shop.example/p/1?utm_source=mail&x=%20y",
                "https://a-b.example.co/x;y=1?q=a/b?c"):
        assert _PLAIN_HTTPS.fullmatch(url), url
    for url in ("https://shop.example/#top", "https://u@shop.example/", "https://shop.example:443/",
                "https://203.0.113.7/", "https://SHOP.example/", "https://shop.example/%zz", "https://-a.example/",
                f"https://{'a' * 250}.example/", "http://shop.example/", "https://shop.example/a@b"):
        assert not _PLAIN_HTTPS.fullmatch(url), url
