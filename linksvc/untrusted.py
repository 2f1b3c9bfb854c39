"""Values from the open internet made safe to log, store and forward.

aiohttp decodes header bytes as UTF-8 with ``surrogateescape``: a header holding bytes that are not UTF-8
arrives as a ``str`` with lone surrogates, which SQLite, orjson and every vendor API refuse. Every header
value that reaches a log line, the store or a destination goes through :func:`safe_text` first: invalid
bytes become U+FFFD, control characters are written as ``\\xNN`` escapes (so a log line or a CSV cell
cannot be split or forged), and the length is capped.

JSON bodies are bounded in depth (:func:`nesting_exceeds`): orjson parses at most 1,024 levels and
serialises at most 254, and every recursive walk of ours has a bound too; 64 levels is far more than any
event or resource needs.
"""

from __future__ import annotations

import re
from typing import Any

MAX_JSON_DEPTH = 64
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _escape(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def safe_text(value: str, limit: int) -> str:
    """``value`` as valid UTF-8 text without control characters, at most ``limit`` characters long."""
    if value.isascii() and value.isprintable():  # the common case: nothing to do but the cap
        return value[:limit]
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: the bytes aiohttp could not decode, or escapes
        try:
            raw = value.encode("utf-8", "surrogateescape")  # back to the bytes that came: one U+FFFD per fault
        except UnicodeEncodeError:
            raw = value.encode("utf-8", "surrogatepass")
        value = raw.decode("utf-8", "replace")
    return _CONTROL.sub(_escape, value)[:limit]


def nesting_exceeds(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """True when a parsed JSON value nests objects and arrays deeper than ``limit`` levels (the value
    itself being level 1). Iterative, and it visits only containers: the leaves of a flat body cost
    nothing but the scan of their parent."""
    if not isinstance(value, dict | list):
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        for child in children:
            if isinstance(child, dict | list) and child:
                stack.append((child, depth + 1))
            elif isinstance(child, dict | list) and depth + 1 > limit:
                return True
    return False
