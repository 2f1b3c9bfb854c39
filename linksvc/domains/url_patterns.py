"""A domain's allow-list of long-link targets: URL patterns, as Firebase Dynamic Links had them (docs/decisions.md,
"Long links (issue 32)").

A pattern is a regular expression matched over the whole decoded URL (a full match), with two rules of our own so
that an allow-list cannot let everything through by mistake:

- **It names its host.** It begins (after an optional ``^``) with a literal scheme (``https``, ``http`` or
  ``https?``), ``://``, optionally one subdomain wildcard made of host characters only (``([a-z0-9-]+\\.)*``,
  ``[a-z0-9-]+\\.``) or optional literal labels (``(www\\.)?``, ``(www\\.|m\\.)?``), then a literal lower-case
  host of two labels or more, dots escaped (``example\\.com``), an optional port, and then a literal ``/`` or
  ``\\?`` (not made optional) or the pattern's end. After that the path
  and query are free. So ``.*``, ``^https://.*``, ``^https://example.com/.*`` (an unescaped dot matches
  ``exampleXcom``) or ``^https://example\\.com.*`` (``example.com.evil.net``) are refused, each with why.
- **No alternative outside a group** (``^https://a\\.com/x|.*``) and no ``\\Q…\\E`` quoting: either could reach
  past the host.

Patterns are compiled by RE2 (``google-re2``): matching takes time linear in the URL whatever the pattern, so a
pattern such as ``(a+)+$`` cannot make a click take seconds; backreferences and look-arounds, which RE2 does not
have, are refused as invalid. At most :data:`MAX_PATTERNS` per domain, each at most :data:`MAX_LENGTH` characters.

A URL is matched with its scheme and host lower-cased (hosts are case-insensitive; a pattern's host is written in
lower case).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

import re2

from linksvc.errors import InvalidField, Issue

MAX_PATTERNS = 50
MAX_LENGTH = 300
FIELD = "url_patterns"

_CLASS = r"\[-?(?:a-z|A-Z|0-9|[a-zA-Z0-9._])+-?\]"  # host characters only; '-' only first or last (no ranges)
_PINNED = re.compile(
    r"\^?(?:https|http|https\?)://"
    rf"(?:\((?:\?:)?{_CLASS}[+*]\\\.\)[*+?]|{_CLASS}[+*]\\\.)?"  # one subdomain wildcard: ([a-z0-9-]+\.)*
    r"(?:\((?:\?:)?[a-z0-9-]+\\\.(?:\|[a-z0-9-]+\\\.)*\)\?)?"  # or literal labels, optional: (www\.|m\.)?
    r"(?:[a-z0-9-]+\\\.)+[a-z0-9-]+"  # the host, literal: example\.com
    r"(?::[0-9]+)?"  # a port
    r"(?:/(?![?*{])|\\\?(?![?*{])|\$\Z|\Z)"  # then a literal / or ? that is not optional, or the end
)
EXAMPLE = r"^https://example\.com/.*"


def _options() -> Any:
    options = re2.Options()
    options.log_errors = False  # an admin's invalid pattern is an answer, not a line in the service's log
    return options


_OPTIONS = _options()


def _top_level_bar(pattern: str) -> bool:
    """Whether ``pattern`` has a ``|`` outside every group (escapes and character classes skipped)."""
    depth, index, in_class = 0, 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if pattern[index + 1:index + 2] == "]":  # []...] holds a ]
                index += 1
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth <= 0:
            return True
        index += 1
    return False


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return False
    return True


def problem(pattern: str) -> str | None:
    """Why ``pattern`` cannot be on an allow-list, or None."""
    if not pattern.strip():
        return "must not be empty"
    if len(pattern) > MAX_LENGTH:
        return f"must be at most {MAX_LENGTH} characters"
    if not pattern.isprintable() or not _is_utf8(pattern):
        return "must be printable text"
    try:
        re2.compile(pattern, options=_OPTIONS)
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        return f"is not a valid regular expression (RE2 syntax: no backreferences or look-arounds): {reason}"
    if "\\Q" in pattern:
        return "must not use \\Q...\\E quoting"
    if not _PINNED.match(pattern):
        return ("is too broad: it must begin with the scheme and the host, lower case with its dots escaped, then "
                f"a literal / (or \\? or the end), such as {EXAMPLE} or ^https://([a-z0-9-]+\\.)*example\\.com/.*")
    if _top_level_bar(pattern):
        return "is too broad: an alternative (|) must be inside a group after the host; or write two patterns"
    return None


def checked(patterns: Sequence[Any]) -> tuple[str, ...]:
    """The patterns as stored (in order, each once), or InvalidField naming every bad one (``url_patterns[2]``)."""
    issues: list[Issue] = []
    if len(patterns) > MAX_PATTERNS:
        issues.append(Issue(FIELD, f"must hold at most {MAX_PATTERNS} patterns", "too_many_items"))
    seen: set[str] = set()
    for index, pattern in enumerate(patterns):
        path = f"{FIELD}[{index}]"
        if not isinstance(pattern, str):
            issues.append(Issue(path, "must be a string", "type"))
            continue
        if pattern in seen:
            issues.append(Issue(path, "is given twice", "duplicate"))
            continue
        seen.add(pattern)
        found = problem(pattern)
        if found is not None:
            issues.append(Issue(path, found, "invalid" if "too broad" in found or "empty" in found else "pattern"))
    if issues:
        raise InvalidField.of(issues, error="Invalid body")
    return tuple(patterns)


@lru_cache(maxsize=1024)
def _compiled(patterns: tuple[str, ...]) -> tuple[Any, ...]:
    return tuple(re2.compile(pattern, options=_OPTIONS) for pattern in patterns)


def normalised(url: str) -> str:
    """``url`` with its scheme and host lower-cased (what a pattern is matched against)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if not parts.scheme or not parts.netloc:
        return url
    head = f"{parts.scheme}://{parts.netloc}"
    return head.lower() + url[len(head):] if url.lower().startswith(head.lower()) else url


def matches(patterns: Iterable[str], url: str) -> bool:
    """Whether one of ``patterns`` (each checked when stored) matches the whole of ``url``."""
    wanted = tuple(patterns)
    if not wanted:
        return False
    target = normalised(url)
    if not _is_utf8(target):
        return False
    return any(compiled.fullmatch(target) is not None for compiled in _compiled(wanted))
